package pgtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/ulidflake/ulidflake/migrations"
)

// Servers are shared by every test binary of a run: one container per
// image and settings, named after them, found or started under a file lock
// by the first binary that needs it and reused by the others. Nothing stops
// it at the end of a binary; a watchdog inside the container stops the
// server (and Docker removes the container) once no client has been
// connected for idleExit. A killed run therefore leaves a server that
// either serves the next run or goes away by itself.
//
// The servers are throwaway: data on tmpfs, fsync, synchronous_commit and
// full_page_writes off. Their settings are the union of what any test
// binary needs (logical replication, many sessions), so that every binary
// of a run shares them.
var sharedSettings = []string{
	"fsync=off",
	"synchronous_commit=off",
	"full_page_writes=off",
	"max_connections=1000",
	"wal_level=logical",
	"max_wal_senders=20",
	"max_replication_slots=20",
}

// idleExit is how long a shared server lives with no client: long enough
// to bridge the compilation of the next test binary of a run.
const idleExit = 120 * time.Second

// sharedData is where the shared servers keep their data: a tmpfs.
const sharedData = "/pgtest"

// watchdog stops the server once no client has been connected for
// idleExit. It runs beside the entrypoint, as an orphan of the container's
// init (tini, --init), so that it is no child of the postmaster.
const watchdog = `idle=0
while sleep 5; do
	n=$(PGPASSWORD="$POSTGRES_PASSWORD" psql -h 127.0.0.1 -U "$POSTGRES_USER" -d postgres -Atqc \
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()" 2>/dev/null) || continue
	if [ "$n" = 0 ]; then idle=$((idle + 5)); else idle=0; fi
	if [ "$idle" -ge "$IDLE_EXIT" ]; then
		kill -INT "$(head -1 "$PGDATA/postmaster.pid")"
		exit 0
	fi
done`

// compactSettings returns the settings of the shared servers and those of
// [Settings], sorted, each once.
func compactSettings() []string {
	return slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(sharedSettings), extraSettings...))))
}

// sharedName names the container of an image and settings: the image's ID
// (a rebuilt image gets a new server) and the settings.
func sharedName(ctx context.Context, img string, settings []string) (string, error) {
	inspect, err := docker.cli.ImageInspect(ctx, img)
	if err != nil {
		return "", fmt.Errorf("image %q: %w", img, err)
	}
	h := sha256.New()
	io.WriteString(h, inspect.ID)
	for _, s := range settings {
		io.WriteString(h, "\x00"+s)
	}
	major := "x"
	if m := majorInTag.FindStringSubmatch(img[strings.LastIndex(img, "/")+1:]); m != nil {
		major = m[1]
	}
	kind := "pg"
	if strings.Contains(img, "postgres-ext") {
		kind = "ext"
	}
	return fmt.Sprintf("ulidflake-pgtest-%s%s-%s", kind, major, hex.EncodeToString(h.Sum(nil))[:10]), nil
}

// startShared finds or starts the shared server of img, and prepares the
// template of setup on it.
func startShared(ctx context.Context, img string, setup Setup) (*Server, error) {
	settings := compactSettings()
	name, err := sharedName(ctx, img, settings)
	if err != nil {
		return nil, err
	}
	unlock, err := lockFile(filepath.Join(os.TempDir(), name+".lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	var s *Server
	for attempt := 0; ; attempt++ {
		s, err = runShared(ctx, img, name, settings)
		if err == nil || attempt == 1 {
			break
		}
		// A server that was stopping (its watchdog) when we found it: once more.
		removeContainer(ctx, name)
	}
	if err != nil {
		return nil, err
	}
	if err := s.prepareTemplate(ctx, setup); err != nil {
		s.admin.Close()
		return nil, fmt.Errorf("building the template database on %s: %w", name, err)
	}
	s.dropLeftovers(ctx)
	return s, nil
}

// runShared starts the container name, or reuses it when it runs, and
// connects to it.
func runShared(ctx context.Context, img, name string, settings []string) (*Server, error) {
	ctx, cancel := context.WithTimeout(ctx, startupTimeout+time.Minute)
	defer cancel()
	script := "( ( " + watchdog + " ) </dev/null >/dev/null 2>&1 & ) ; exec docker-entrypoint.sh \"$@\""
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithReuseByName(name),
		tcpostgres.WithDatabase("postgres"),
		// Ready once the server answers on TCP: the entrypoint's first
		// server, which runs the init scripts, listens on no TCP port. Not
		// the log: every binary that reuses the server would read it whole
		// through Docker, tens of thousands of lines by the end of a run.
		testcontainers.WithWaitStrategyAndDeadline(startupTimeout,
			wait.ForExec([]string{"pg_isready", "-q", "-h", "127.0.0.1", "-p", "5432"}).WithStartupTimeout(startupTimeout),
			wait.ForListeningPort("5432/tcp").WithStartupTimeout(startupTimeout)),
		testcontainers.WithEntrypoint("/bin/sh", "-c", script, "sh"),
		testcontainers.WithEnv(map[string]string{
			"PGDATA":    sharedData + "/data",
			"IDLE_EXIT": fmt.Sprint(int(idleExit.Seconds())),
		}),
		testcontainers.WithTmpfs(map[string]string{sharedData: "rw,mode=1777"}),
		testcontainers.WithLabels(map[string]string{labelOwner: "1", labelShared: "1"}),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			init := true
			hc.Init = &init
			hc.AutoRemove = true
		}),
	}
	for _, kv := range settings {
		opts = append(opts, testcontainers.WithCmdArgs("-c", kv))
	}
	if loopbackHost() {
		opts = append(opts, publishOn(true, ""))
	}
	ctr, err := tcpostgres.Run(ctx, img, opts...)
	if err != nil {
		return nil, fmt.Errorf("starting PostgreSQL image %q as %s: %w\n\t%s", img, name, err, startHint(img, err))
	}
	u, err := ctr.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		return nil, fmt.Errorf("%s: connection string: %w", name, err)
	}
	if pu, err := url.Parse(u); err == nil {
		pu.Host = directHost(ctx, ctr, "5432", pu.Host)
		u = pu.String()
	}
	s, err := connect(ctx, u, img)
	if err != nil {
		return nil, fmt.Errorf("%s started but does not serve: %w", name, err)
	}
	if m := majorInTag.FindStringSubmatch(img[strings.LastIndex(img, "/")+1:]); m != nil {
		if want := m[1]; want != fmt.Sprint(s.Major) {
			s.admin.Close()
			return nil, fmt.Errorf("image %q runs PostgreSQL %d, not the %s its tag promises", img, s.Major, want)
		}
	}
	s.ctr = ctr
	s.shared = true
	return s, nil
}

// removeContainer removes a container by name, if there is one.
func removeContainer(ctx context.Context, name string) {
	_, _ = docker.cli.ContainerRemove(ctx, name, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
}

// templateKey names the template of a setup: the migrations' content for
// [Migrated] (a changed migration gets a new template), "empty" for nil,
// and for any other setup its name and this test binary's content.
func templateKey(setup Setup) (string, error) {
	h := sha256.New()
	switch {
	case setup == nil:
		io.WriteString(h, "empty")
	case reflect.ValueOf(setup).Pointer() == reflect.ValueOf(Setup(Migrated)).Pointer():
		all, err := migrations.All()
		if err != nil {
			return "", err
		}
		io.WriteString(h, "migrated")
		for _, m := range all {
			fmt.Fprintf(h, "\x00%d\x00%s\x00%s", m.Version, m.Up, m.Down)
		}
		hashMigrationsSource(h)
	default:
		io.WriteString(h, runtime.FuncForPC(reflect.ValueOf(setup).Pointer()).Name())
		exe, err := os.Executable()
		if err != nil {
			return "", err
		}
		f, err := os.Open(exe)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if _, err := io.Copy(h, f); err != nil {
			return "", err
		}
	}
	return "tpl_" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// migrationsSource are the files, relative to the repository's root, that
// decide what [Migrated] installs beside the migrations' SQL: package
// migrations' Go code and embedded SQL (the version table, the install on
// a node alone) and Migrated itself; not their tests.
var migrationsSource = []string{"migrations/*.go", "migrations/*.sql", "migrations/internal/pgsql/*.go", "internal/pgtest/pgtest.go"}

// hashMigrationsSource adds migrationsSource to h, read from the source
// tree this file was compiled from, so that a change to Migrate's Go side
// gets a new template too while a server of an earlier run still serves.
// Without the tree (a binary built elsewhere, -trimpath) it adds nothing.
func hashMigrationsSource(h io.Writer) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return
	}
	root := filepath.Join(filepath.Dir(file), "..", "..")
	for _, pattern := range migrationsSource {
		files, _ := filepath.Glob(filepath.Join(root, pattern))
		for _, f := range files { // Glob sorts
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			if b, err := os.ReadFile(f); err == nil {
				fmt.Fprintf(h, "\x00%s\x00%s", filepath.Base(f), b)
			}
		}
	}
}

// prepareTemplate makes the template of setup on the server, unless a test
// binary made it before. An advisory lock serialises the binaries; the
// template is built under another name and renamed when it is complete,
// so that a killed build leaves no half-made template.
func (s *Server) prepareTemplate(ctx context.Context, setup Setup) error {
	name, err := templateKey(setup)
	if err != nil {
		return err
	}
	conn, err := s.admin.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(hashtext($1))", name); err != nil {
		return err
	}
	defer conn.Exec(context.Background(), "SELECT pg_advisory_unlock(hashtext($1))", name)
	s.template = name
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil || exists {
		return err
	}
	building := fmt.Sprintf("%s_b%d", name, os.Getpid())
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+building); err != nil {
		return err
	}
	tc, err := pgx.Connect(ctx, withDatabase(s.URL, building))
	if err != nil {
		return err
	}
	if setup != nil {
		err = setup(ctx, tc)
	}
	tc.Close(context.Background())
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "ALTER DATABASE "+building+" RENAME TO "+name)
	return err
}

// leftover matches the databases of a test process: those named by
// [UniqueName] and a template it was building.
var leftover = regexp.MustCompile(`^(?:t_([0-9]+)_[0-9]+(?:_.*)?|tpl_[0-9a-f]+_b([0-9]+))$`)

// dropLeftovers drops the databases of test processes of this machine that
// are gone (killed before their cleanup ran).
func (s *Server) dropLeftovers(ctx context.Context) {
	rows, err := s.admin.Query(ctx, "SELECT datname FROM pg_database")
	if err != nil {
		return
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	for _, n := range names {
		m := leftover.FindStringSubmatch(n)
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1] + m[2])
		if pid == os.Getpid() || processAlive(pid) {
			continue
		}
		_, _ = s.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{n}.Sanitize()+" WITH (FORCE)")
	}
}
