package blocks_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// The environment of a process TestProcesses starts: the database's URL,
// the writer's number and how many IDs it makes.
const (
	envChild = "ULIDFLAKE_BLOCKS_CHILD_URL"
	envW     = "ULIDFLAKE_BLOCKS_CHILD_W"
	envN     = "ULIDFLAKE_BLOCKS_CHILD_N"
)

// runChild is one instance in a process of its own, with the default
// validity: it writes as a writer does and prints each ID with the times
// around its New, one per line, then a line of what its reservations and
// waits met (reservedStats).
func runChild() int {
	w, _ := strconv.Atoi(os.Getenv(envW))
	n, _ := strconv.Atoi(os.Getenv(envN))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var st reservedStats
	got, err := writer(ctx, os.Getenv(envChild), w, n, blocks.WithSize(32), blocks.WithObserver(observerFunc(st.observe)))
	out := bufio.NewWriter(os.Stdout)
	for _, h := range got {
		fmt.Fprintf(out, "%d %d %d\n", h.id, h.before.UnixNano(), h.after.UnixNano())
	}
	fmt.Fprintf(out, "stats %d %d %d %d %d\n", st.reserves.Load(), st.tooOld.Load(), st.failed.Load(), st.slowest.Load(), st.pastTimeout.Load())
	out.Flush()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// reservedStats counts a Source's reservations: all, those that arrived
// older than the validity, those that failed otherwise, the slowest round
// trip (ns); and the calls that waited for a block longer than
// DefaultTimeout, which a Source with the default timeout would have
// ended with ErrUnavailable.
type reservedStats struct {
	reserves, tooOld, failed, slowest, pastTimeout atomic.Int64
}

func (st *reservedStats) observe(e event) {
	if e.Kind == eventBlockWait && e.Duration > blocks.DefaultTimeout {
		st.pastTimeout.Add(1)
	}
	if e.Kind != eventReserve {
		return
	}
	st.reserves.Add(1)
	switch {
	case errors.Is(e.Err, blocks.ErrBlockTooOld):
		st.tooOld.Add(1)
	case e.Err != nil:
		st.failed.Add(1)
	}
	for d := int64(e.Duration); ; {
		if m := st.slowest.Load(); d <= m || st.slowest.CompareAndSwap(m, d) {
			break
		}
	}
}

// add adds a process's line of stats to st.
func (st *reservedStats) add(line string) error {
	var v [5]int64
	if _, err := fmt.Sscan(strings.TrimPrefix(line, "stats "), &v[0], &v[1], &v[2], &v[3], &v[4]); err != nil {
		return fmt.Errorf("line %q: %w", line, err)
	}
	st.reserves.Add(v[0])
	st.tooOld.Add(v[1])
	st.failed.Add(v[2])
	if v[3] > st.slowest.Load() {
		st.slowest.Store(v[3])
	}
	st.pastTimeout.Add(v[4])
	return nil
}

// TestProcesses: 256 instances, each a process of its own (this test
// package, built again without -race: childBinary) with the default
// validity (1 s), write at once,
// directly and through PgBouncer in transaction pooling (4 server
// connections): every ID is written once, beside DEFAULT ones, in the
// time order stated. It logs, failed or not, what the reservations met:
// those that arrived older than the validity (dropped, and reserved
// again), other failures, the slowest round trip, and the calls that
// waited longer than the default timeout (10 s; the instances wait up to
// 2 minutes, so that a busy machine does not fail the test);
// docs/deployments.md records them. It runs on the newest server only:
// TestInstances covers every version with 256 instances.
func TestProcesses(t *testing.T) {
	pgtest.Heavy(t)
	// Not parallel: its 256 instances hold one or two connections each, of
	// the server's 1,000; beside another such test they would run out.
	child := childBinary(t)
	servers := pgtest.Servers(t)
	newest := servers[len(servers)-1]
	for _, s := range servers {
		if s.Major > newest.Major {
			newest = s
		}
	}
	for _, path := range []string{"direct", "pgbouncer-transaction"} {
		t.Run(newest.Name+"/"+path, func(t *testing.T) {
			db := newest.NewDB(t)
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			sdb := itest.StdDB(t, db)
			_, err := sdb.ExecContext(ctx, itemsTable)
			require.NoError(t, err)
			u := db.URL
			if path == "pgbouncer-transaction" {
				u = db.Server.PgBouncer(t, db, "transaction", 4) + "&default_query_exec_mode=exec"
			}
			const per = 200
			var st reservedStats
			defer func() {
				t.Logf("%d processes, %s, on %d CPUs: %d reservations, %d arrived older than WithValidity(%v), %d failed otherwise, "+
					"slowest round trip %v; %d calls waited longer than %v", instances, path, runtime.NumCPU(),
					st.reserves.Load(), st.tooOld.Load(), blocks.DefaultValidity, st.failed.Load(),
					time.Duration(st.slowest.Load()).Round(time.Millisecond), st.pastTimeout.Load(), blocks.DefaultTimeout)
			}()
			all := collect(t, instances, func(w int) ([]handed, error) {
				cmd := exec.CommandContext(ctx, child)
				cmd.Env = append(os.Environ(), envChild+"="+u, envW+"="+strconv.Itoa(w), envN+"="+strconv.Itoa(per))
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				got, perr := parseHanded(out, &st)
				if err != nil || perr != nil {
					return got, fmt.Errorf("process %d: %v %v: %s", w, err, perr, stderr.String())
				}
				return got, nil
			})
			require.Len(t, all, instances*per)
			requireWritten(t, ctx, sdb, all, instances*3*per/100)
			requireTimeOrder(t, all, blocks.DefaultValidity)
		})
	}
}

// childBinary builds this test package into a binary for TestProcesses'
// instances, without -race whatever the test runs with. The race
// detector multiplies a process's CPU and memory several times: 256
// race-built processes on 2 cores took the CPU the server needed to
// answer them, and round trips grew past a minute. Data races are the
// goroutine tests' to find (TestInstances runs 256 instances in one
// process); this test is about separate processes. It builds with the go
// command on PATH, as go test itself is run; from the build cache that is
// a link.
func childBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "blocks-instance")
	out, err := exec.Command("go", "test", "-c", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "building the instances' binary (go test -c, without -race): %s", out)
	return bin
}

// parseHanded reads a child's lines, adding its stats to st.
func parseHanded(out []byte, st *reservedStats) ([]handed, error) {
	var got []handed
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "stats ") {
			if err := st.add(sc.Text()); err != nil {
				return got, err
			}
			continue
		}
		var id, before, after int64
		if _, err := fmt.Sscan(sc.Text(), &id, &before, &after); err != nil {
			return got, fmt.Errorf("line %q: %w", sc.Text(), err)
		}
		got = append(got, handed{flake.ID(id), time.Unix(0, before), time.Unix(0, after)})
	}
	return got, sc.Err()
}
