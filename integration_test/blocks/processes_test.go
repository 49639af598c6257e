package blocks_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
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
	childAge = 500 * time.Millisecond
)

// runChild is one instance in a process of its own: it writes as a writer
// does and prints each ID with the times around its New, one per line.
func runChild() int {
	w, _ := strconv.Atoi(os.Getenv(envW))
	n, _ := strconv.Atoi(os.Getenv(envN))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	got, err := writer(ctx, os.Getenv(envChild), w, n, blocks.WithSize(32), blocks.WithValidity(childAge))
	out := bufio.NewWriter(os.Stdout)
	for _, h := range got {
		fmt.Fprintf(out, "%d %d %d\n", h.id, h.before.UnixNano(), h.after.UnixNano())
	}
	out.Flush()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestProcesses: 256 instances, each a process of its own (this test
// binary, started again), write at once: every ID is written once, beside
// DEFAULT ones, in the time order stated. It runs on the newest server
// only: TestInstances covers every version with 256 instances, and 256
// race-built processes per version would take most of go test's
// 10-minute limit on a busy machine.
func TestProcesses(t *testing.T) {
	// Not parallel: its 256 instances hold one or two connections each, of
	// the server's 500; beside another such test they would run out.
	servers := pgtest.Servers(t)
	newest := servers[len(servers)-1]
	for _, s := range servers {
		if s.Major > newest.Major {
			newest = s
		}
	}
	t.Run(newest.Name, func(t *testing.T) {
		db := newest.NewDB(t)
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		sdb := itest.StdDB(t, db)
		_, err := sdb.ExecContext(ctx, itemsTable)
		require.NoError(t, err)
		const per = 200
		all := collect(t, instances, func(w int) ([]handed, error) {
			cmd := exec.CommandContext(ctx, os.Args[0])
			cmd.Env = append(os.Environ(), envChild+"="+db.URL, envW+"="+strconv.Itoa(w), envN+"="+strconv.Itoa(per))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			got, perr := parseHanded(out)
			if err != nil || perr != nil {
				return got, fmt.Errorf("process %d: %v %v: %s", w, err, perr, stderr.String())
			}
			return got, nil
		})
		require.Len(t, all, instances*per)
		requireWritten(t, ctx, sdb, all, instances*3*per/100)
		requireTimeOrder(t, all, childAge)
	})
}

// parseHanded reads a child's lines.
func parseHanded(out []byte) ([]handed, error) {
	var got []handed
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var id, before, after int64
		if _, err := fmt.Sscan(sc.Text(), &id, &before, &after); err != nil {
			return got, fmt.Errorf("line %q: %w", sc.Text(), err)
		}
		got = append(got, handed{flake.ID(id), time.Unix(0, before), time.Unix(0, after)})
	}
	return got, sc.Err()
}
