// Package pgtest runs the module's database tests on real PostgreSQL
// servers: containers started with testcontainers-go, or an existing server.
//
// A test package calls [Main] from TestMain and [Run] from each test:
//
//	func TestMain(m *testing.M) { pgtest.Main(m, nil) }
//
//	func TestSomething(t *testing.T) {
//		pgtest.Run(t, func(t *testing.T, db *pgtest.DB) { ... })
//	}
//
// Run runs the function once per server, as subtests named by server
// version (pg18; pg15, pg17, pg18, pg19 in CI), each with a fresh database
// cloned from a template, so tests may call t.Parallel. The servers start
// when the first test asks for them: a run that selects no database test
// starts nothing, and a binary with no test to run builds no image.
//
// One server per version serves every test binary of a run (shared.go):
// the first binary that needs it starts it, the others find it by name,
// and it stops by itself once no client has been connected for two
// minutes. It is a throwaway server: data on tmpfs, fsync off. Templates
// are made once per server and kept, named by what they hold (for
// [Migrated], the migrations and the source of package migrations), so a
// binary only clones.
//
// With no configuration, on any machine with a Docker Engine, the server
// is PostgreSQL 18 ([DefaultVersions]); ULIDFLAKE_FULL=1, as CI sets it,
// runs every supported version ([AllVersions]) and the heavy scenarios
// ([Heavy]: clusters, pg_upgrade, PgBouncer, restarts, hundreds of
// processes). The images are
//
//   - the official postgres:N-alpine images, when they are here or a
//     registry provides them;
//   - otherwise the project's own localhost/ulidflake/postgres:N, built
//     from Debian packages by image/build.sh (once: later runs reuse it),
//     which the harness says in one line.
//
// The harness also works out what testcontainers-go would otherwise need to
// be told: without a registry the Ryuk reaper cannot run, so it is disabled
// and the harness removes containers that killed test processes left
// behind; when the daemon runs in this machine's network namespace, ports
// are published on 127.0.0.1 only, and the shared servers and PgBouncers
// are reached at their address on Docker's bridge network, past Docker's
// userland proxy (directHost).
//
// The environment overrides all of it:
//
//	ULIDFLAKE_FULL               1: every supported version and the heavy scenarios (CI)
//	ULIDFLAKE_TEST_DATABASE_URL  an existing server (postgres://user:pass@host:port/db);
//	                             the tests create and drop databases on it
//	ULIDFLAKE_PG_IMAGES          images to start, comma-separated; a bare major
//	                             version (18) means the default choice above
//	ULIDFLAKE_REQUIRE_POSTGRES   1: fail instead of skipping when no server can be had
//	TESTCONTAINERS_*             testcontainers-go's own settings
//
// With neither a URL nor a usable Docker, the database tests skip with a
// message saying how to run them. cmd/testcost reports what a run cost.
package pgtest

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/ulidflake/ulidflake/migrations"
)

// Environment variables.
const (
	EnvURL     = "ULIDFLAKE_TEST_DATABASE_URL"
	EnvImages  = "ULIDFLAKE_PG_IMAGES"
	EnvRequire = "ULIDFLAKE_REQUIRE_POSTGRES"
)

// Server is one PostgreSQL server the tests run on.
type Server struct {
	Name  string // subtest name: "pg" and the major version
	Major int    // server major version
	Image string // the image it runs, "" for a URL
	URL   string // connection URL of its maintenance database

	admin    *pgxpool.Pool
	ctr      *tcpostgres.PostgresContainer // nil for a URL
	shared   bool                          // a shared server (shared.go): never stopped by this process
	template string                        // the database NewDB clones
}

// DB is a fresh database on a server, for one test.
type DB struct {
	*pgxpool.Pool
	Server *Server
	Name   string
	URL    string
}

// Setup prepares the template database every test database is cloned from
// (runs migrations, say). It may be nil.
type Setup func(ctx context.Context, conn *pgx.Conn) error

// Migrated is the Setup that installs package migrations (ulid_flake() and
// its companions) in the template.
func Migrated(ctx context.Context, conn *pgx.Conn) error {
	db := stdlib.OpenDB(*conn.Config())
	defer db.Close()
	_, err := migrations.Migrate(ctx, db)
	return err
}

var (
	mainSetup  Setup
	mainCalled bool
	startOnce  sync.Once
	servers    []*Server
	stops      []func()
	afterAll   struct {
		sync.Mutex
		fns []func()
	}
	skipWhy  string
	startErr error
	docker   *dockerEnv // nil with a URL or without Docker
)

// Main runs the tests and then stops the servers that they started. It
// exits the process with the tests' status.
func Main(m *testing.M, setup Setup) {
	mainSetup, mainCalled = setup, true
	tclog.SetDefault(quietLogger{})
	if hasWork(m) {
		prepareImages(context.Background())
	}
	raiseParallel()
	code := m.Run()
	end()
	if docker != nil {
		docker.cli.Close()
	}
	os.Exit(code)
}

// parallelPerCPU is how many parallel tests [Main] runs at once per CPU
// when -parallel is not given. A database test spends most of its time
// waiting: for the server, for a lease's or a block's validity, for a
// container. go test's default, one per CPU, left those waits one after
// another on a 2-core machine. Not more than two: at four, tests whose
// lease must be renewed every V/4 (V = 1 s) failed when the machine was
// busy (TestSIDLeaseLostClaim, 2 runs of 3). The whole suite
// (ULIDFLAKE_FULL=1: four servers, -race, the heavy scenarios) keeps go
// test's one per CPU, where its binaries keep both cores busy, except in
// packages that call [LightOnCPU].
const parallelPerCPU = 2

var lightOnCPU bool

// LightOnCPU says that the package's tests use little CPU (they sleep
// through leases' validity, say), so that the whole suite
// (ULIDFLAKE_FULL=1) runs them parallelPerCPU per CPU as a quick run
// does: at one per CPU, the lease binaries left the cores two-thirds
// idle. Call it in TestMain before [Main]. Measured on the 2-core
// machine with -race on four versions: lease and leasefail took 181 and
// 113 s instead of 306 and 196 s, all passing.
func LightOnCPU() { lightOnCPU = true }

// raiseParallel sets -test.parallel to parallelPerCPU per CPU, unless the
// command line set it or the whole suite runs a package that does not
// call [LightOnCPU]. The flags are parsed (hasWork).
func raiseParallel() {
	if Full() && !lightOnCPU {
		return
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && flag.Lookup("test.parallel") != nil {
		_ = flag.Set("test.parallel", strconv.Itoa(parallelPerCPU*runtime.GOMAXPROCS(0)))
	}
}

// Servers returns the servers, starting them on the first call. It skips t
// when there are none, or fails it when ULIDFLAKE_REQUIRE_POSTGRES=1 or
// when a server could not be started.
func Servers(t testing.TB) []*Server {
	t.Helper()
	if !mainCalled {
		t.Fatal("pgtest: call pgtest.Main from TestMain")
	}
	startOnce.Do(func() {
		servers, stops, skipWhy, startErr = start(context.Background(), mainSetup)
		if startErr != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", startErr)
		}
	})
	if startErr != nil {
		t.Fatalf("pgtest: %v", startErr)
	}
	if skipWhy != "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("pgtest: %s=1 but %s", EnvRequire, skipWhy)
		}
		t.Skip(skipWhy)
	}
	return servers
}

// Run runs fn once per server, as a subtest named by the server version,
// with a fresh database.
func Run(t *testing.T, fn func(t *testing.T, db *DB)) {
	t.Helper()
	for _, s := range Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			fn(t, s.NewDB(t))
		})
	}
}

// NewDB creates a database cloned from the template and drops it when the
// test ends.
func (s *Server) NewDB(t testing.TB) *DB {
	t.Helper()
	db, drop, err := s.newDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})
	return db
}

var nameSeq atomic.Int64

// UniqueName returns a database name that no other test process uses on a
// shared server: "t_", this process's id and a counter. A test that makes
// databases of its own names them with it (a suffix may follow), so that
// the harness drops them when a killed run left them behind.
func UniqueName() string { return fmt.Sprintf("t_%d_%d", os.Getpid(), nameSeq.Add(1)) }

// newDB creates a database cloned from the template, and the function that
// drops it. FILE_COPY copies the template's files; the default since
// PostgreSQL 15, WAL_LOG, also writes every page of them to the WAL, which
// a throwaway server does not need.
func (s *Server) newDB(ctx context.Context) (*DB, func() error, error) {
	name := UniqueName()
	if _, err := s.admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s STRATEGY FILE_COPY", name, s.template)); err != nil {
		return nil, nil, fmt.Errorf("pgtest: creating database %s on %s: %w", name, s.Name, err)
	}
	dbURL := withDatabase(s.URL, name)
	drop := func() error {
		if _, err := s.admin.Exec(context.Background(), fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name)); err != nil {
			return fmt.Errorf("pgtest: dropping database %s: %w", name, err)
		}
		return nil
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		_ = drop()
		return nil, nil, fmt.Errorf("pgtest: connecting to %s: %w", name, err)
	}
	// A clone is a copy of the template's install: its ID functions make no
	// ID until the node check runs, as Migrate runs it at an application's
	// start.
	if _, err := pool.Exec(ctx, checkClone); err != nil {
		pool.Close()
		_ = drop()
		return nil, nil, fmt.Errorf("pgtest: checking the install of %s: %w", name, err)
	}
	return &DB{Pool: pool, Server: s, Name: name, URL: dbURL}, func() error { pool.Close(); return drop() }, nil
}

// checkClone runs ulid_flake_check_node() of every install in the
// database (migration version 5 on), as Migrate does at start.
const checkClone = `DO $check$
DECLARE f regprocedure;
BEGIN
	FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc AS p
		WHERE p.proname = 'ulid_flake_check_node' AND p.pronargs = 0 AND p.prorettype = 'pg_catalog.bool'::pg_catalog.regtype LOOP
		EXECUTE pg_catalog.format('SELECT %s', f);
	END LOOP;
END
$check$`

// MainWithDB is [Main] for test files that a code generator writes and that
// read their database from a package variable (Bob's factory tests): before
// the tests run, it makes a database on the first server and passes it to
// use. Without a server, use is not called and those tests skip. A run
// that selects none of the binary's tests starts no server, as with Main.
func MainWithDB(m *testing.M, setup Setup, use func(*DB)) {
	mainSetup, mainCalled = setup, true
	tclog.SetDefault(quietLogger{})
	if !hasWork(m) {
		os.Exit(m.Run())
	}
	prepareImages(context.Background())
	startOnce.Do(func() { servers, stops, skipWhy, startErr = start(context.Background(), mainSetup) })
	code := 0
	switch {
	case startErr != nil:
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", startErr)
		code = 1
	case skipWhy != "" && os.Getenv(EnvRequire) == "1":
		fmt.Fprintf(os.Stderr, "pgtest: %s=1 but %s\n", EnvRequire, skipWhy)
		code = 1
	case skipWhy != "":
		code = m.Run()
	default:
		db, drop, err := servers[0].newDB(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
			break
		}
		use(db)
		code = m.Run()
		if err := drop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	end()
	os.Exit(code)
}

// AfterAll registers f to run once every test of the binary has ended,
// before [Main] exits: for what tests share for the whole run (a binary
// built once, say) and must not outlive it.
func AfterAll(f func()) {
	afterAll.Lock()
	defer afterAll.Unlock()
	afterAll.fns = append(afterAll.fns, f)
}

// end runs the AfterAll functions and stops what this process started.
func end() {
	afterAll.Lock()
	fns := afterAll.fns
	afterAll.Unlock()
	for _, f := range append(fns, stops...) {
		f()
	}
}

// start finds or starts the servers the environment asks for. It returns a
// reason to skip when there is nothing to run on, and an error when what was
// asked for does not work.
func start(ctx context.Context, setup Setup) (srv []*Server, stop []func(), skip string, err error) {
	if u := os.Getenv(EnvURL); u != "" {
		s, err := connect(ctx, u, "")
		if err == nil {
			if err = s.prepareTemplate(ctx, setup); err != nil {
				s.admin.Close()
			}
		}
		if err != nil {
			return nil, nil, "", fmt.Errorf("%s=%s: %w\n\tCheck that the server is running and the URL is right", EnvURL, redact(u), err)
		}
		s.dropLeftovers(ctx)
		return []*Server{s}, []func(){s.admin.Close}, "", nil
	}
	env, err := probeDocker(ctx)
	if err == nil {
		err = dockerHealthy(ctx)
	}
	if err != nil {
		return nil, nil, fmt.Sprintf("no PostgreSQL to test on: Docker is not usable (%v) and %s is not set. "+
			"Start Docker, or point %s at a server (postgres://user:pass@localhost:5432/postgres).", err, EnvURL, EnvURL), nil
	}
	docker = env
	// Each server is found (or built) and started on its own, at once.
	type started struct {
		s    *Server
		term func()
		err  error
	}
	names := imageNames()
	results := make([]started, len(names))
	var wg sync.WaitGroup
	for i, img := range names {
		wg.Go(func() {
			r := &results[i]
			if img, r.err = env.image(ctx, img); r.err == nil {
				if r.s, r.err = startShared(ctx, img, setup); r.err == nil {
					r.term = r.s.admin.Close
				}
			}
		})
	}
	wg.Wait()
	for _, r := range results {
		if r.term != nil {
			stop = append(stop, r.term)
		}
		if r.err != nil && err == nil {
			err = r.err
		}
		srv = append(srv, r.s)
	}
	if err != nil {
		return nil, stop, "", err
	}
	if len(srv) == 0 {
		return nil, nil, "", fmt.Errorf("%s=%q names no image", EnvImages, os.Getenv(EnvImages))
	}
	return srv, stop, "", nil
}

// imageNames returns the servers to start: ULIDFLAKE_PG_IMAGES, or the
// default versions.
func imageNames() []string {
	var names []string
	if v := os.Getenv(EnvImages); v != "" {
		for _, img := range strings.Split(v, ",") {
			if img = strings.TrimSpace(img); img != "" {
				names = append(names, img)
			}
		}
		return names
	}
	for _, v := range versions() {
		names = append(names, strconv.Itoa(v))
	}
	return names
}

// image returns the image to run for name (a major version, or an image),
// building the project's image when it is missing or out of date.
func (env *dockerEnv) image(ctx context.Context, name string) (string, error) {
	if major, err := strconv.Atoi(name); err == nil {
		if extensionDir != "" {
			return env.extensionImage(ctx, major)
		}
		return env.resolveImage(ctx, major)
	}
	if m := localImageTag.FindStringSubmatch(name); m != nil {
		major, _ := strconv.Atoi(m[1])
		if _, err := env.localImage(ctx, major); err != nil {
			return "", err
		}
	}
	return name, nil
}

// prepareImages finds or builds the servers' images before the tests run:
// a build takes minutes on a fresh machine, and go test's -timeout counts
// from m.Run, not from here. Errors are left for the tests to report.
func prepareImages(ctx context.Context) {
	if os.Getenv(EnvURL) != "" {
		return
	}
	env, err := probeDocker(ctx)
	if err != nil {
		return
	}
	defer env.cli.Close()
	if dockerHealthy(ctx) != nil {
		return
	}
	var wg sync.WaitGroup
	for _, name := range imageNames() {
		wg.Go(func() { _, _ = env.image(ctx, name) })
	}
	wg.Wait()
}

func dockerHealthy(ctx context.Context) (err error) {
	defer func() {
		// testcontainers panics when it finds no Docker host at all.
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return err
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return p.Health(ctx)
}

var (
	majorInTag    = regexp.MustCompile(`:(\d+)`)
	localImageTag = regexp.MustCompile(`^localhost/ulidflake/postgres:(\d+)$`)
)

// startupTimeout is how long a server may take to start: minutes, not
// seconds, when other test binaries keep both cores busy.
const startupTimeout = 4 * time.Minute

// startContainer starts img with the testcontainers postgres module and
// checks that it runs the major version its tag promises.
func startContainer(ctx context.Context, img string, hostPort string) (*Server, func(), error) {
	ctx, cancel := context.WithTimeout(ctx, startupTimeout+time.Minute)
	defer cancel()
	opts := []testcontainers.ContainerCustomizer{
		tcpostgres.WithDatabase("postgres"),
		// tcpostgres.BasicWaitStrategies, with room for a busy machine: its
		// 60 s deadline ran out beside other test binaries on two cores.
		testcontainers.WithWaitStrategyAndDeadline(startupTimeout,
			wait.ForLog("database system is ready to accept connections").WithOccurrence(2).WithStartupTimeout(startupTimeout),
			wait.ForListeningPort("5432/tcp").WithStartupTimeout(startupTimeout)),
		// Room for tests that hold many sessions at once, in parallel.
		testcontainers.WithCmdArgs("-c", "max_connections=500"),
		testcontainers.WithLabels(containerLabels()),
		testcontainers.WithEnv(map[string]string{"POSTGRES_INITDB_ARGS": "--no-sync"}),
		dataVolume(),
	}
	for _, kv := range extraSettings {
		opts = append(opts, testcontainers.WithCmdArgs("-c", kv))
	}
	if loopbackHost() || hostPort != "" {
		opts = append(opts, publishOn(loopbackHost(), hostPort))
	}
	ctr, err := tcpostgres.Run(ctx, img, opts...)
	var term func()
	if ctr != nil {
		term = func() { _ = testcontainers.TerminateContainer(ctr) }
	}
	if err != nil {
		return nil, term, fmt.Errorf("starting PostgreSQL image %q: %w\n\t%s", img, err, startHint(img, err))
	}
	u, err := ctr.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		return nil, term, fmt.Errorf("image %q: connection string: %w", img, err)
	}
	s, err := connect(ctx, u, img)
	if err == nil {
		if err = s.prepareTemplate(ctx, nil); err != nil {
			s.admin.Close()
		}
	}
	if err != nil {
		return nil, term, fmt.Errorf("image %q started but does not serve: %w", img, err)
	}
	if m := majorInTag.FindStringSubmatch(img[strings.LastIndex(img, "/")+1:]); m != nil {
		if want, _ := strconv.Atoi(m[1]); want != s.Major {
			return nil, term, fmt.Errorf("image %q runs PostgreSQL %d, not the %d its tag promises", img, s.Major, want)
		}
	}
	s.ctr = ctr
	return s, func() { s.admin.Close(); term() }, nil
}

// NewContainer starts a server of its own for t, from the first image of
// ULIDFLAKE_PG_IMAGES, published on a fixed host port so that [Server.Restart]
// keeps its address. It skips t when the servers come from a URL.
func NewContainer(t testing.TB) *Server {
	t.Helper()
	Heavy(t)
	ss := Servers(t)
	if ss[0].Image == "" {
		t.Skipf("pgtest: a container of its own needs images; %s is set", EnvURL)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	s, term, err := startContainer(context.Background(), ss[0].Image, port)
	if term != nil {
		t.Cleanup(term)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Restart stops and starts the server's container, as a server restart
// does: every session ends. It returns when the server accepts connections.
func (s *Server) Restart(ctx context.Context) error {
	if s.ctr == nil {
		return fmt.Errorf("pgtest: %s is not a container", s.Name)
	}
	timeout := 10 * time.Second
	if err := s.ctr.Stop(ctx, &timeout); err != nil {
		return err
	}
	if err := s.ctr.Start(ctx); err != nil {
		return err
	}
	deadline := time.Now().Add(startupTimeout)
	for {
		err := s.admin.Ping(ctx)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// loopbackHost reports whether the containers' ports are reached on this
// machine's loopback (found out by the harness, or said with
// TESTCONTAINERS_HOST_OVERRIDE=localhost): then they are published on
// 127.0.0.1 only, not on every interface.
func loopbackHost() bool {
	if docker != nil {
		return docker.loopback
	}
	h := os.Getenv("TESTCONTAINERS_HOST_OVERRIDE")
	return h == "localhost" || h == "127.0.0.1"
}

// publishOn binds the container's port 5432 on the loopback only (or on
// every interface), on hostPort or, when it is "", a free port.
func publishOn(loopback bool, hostPort string) testcontainers.CustomizeRequestOption {
	return publish(loopback, "5432/tcp", hostPort)
}

// publishPort publishes a container port on a free host port, on the
// loopback only when loopback is true.
func publishPort(loopback bool, port string) testcontainers.CustomizeRequestOption {
	return publish(loopback, port, "")
}

func publish(loopback bool, port, hostPort string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
		b := network.PortBinding{HostPort: hostPort}
		if loopback {
			b.HostIP = netip.MustParseAddr("127.0.0.1")
		}
		hc.PortBindings = network.PortMap{network.MustParsePort(port): {b}}
	})
}

func startHint(img string, err error) string {
	msg := strings.ToLower(err.Error())
	switch {
	case strings.Contains(msg, "ryuk") || strings.Contains(msg, "reaper"):
		return "The Ryuk reaper could not start: set TESTCONTAINERS_RYUK_DISABLED=true."
	case strings.Contains(msg, "wait until ready") || strings.Contains(msg, "deadline exceeded"):
		return "The container started but its port could not be reached. If Docker publishes ports on this machine's " +
			"loopback, set TESTCONTAINERS_HOST_OVERRIDE=localhost; if elsewhere, set it to that host."
	default:
		return fmt.Sprintf("Check that Docker can run %q, or leave %s unset to let the harness choose (and build) images.", img, EnvImages)
	}
}

// connect opens the maintenance pool and reads the version. The pool
// keeps a connection open: a shared server's watchdog counts it as a user.
func connect(ctx context.Context, u, img string) (*Server, error) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(u)
	if err != nil {
		return nil, err
	}
	cfg.MinConns = 1
	admin, err := pgxpool.NewWithConfig(cctx, cfg)
	if err != nil {
		return nil, err
	}
	var num int
	if err := admin.QueryRow(cctx, "SELECT current_setting('server_version_num')::int").Scan(&num); err != nil {
		admin.Close()
		return nil, err
	}
	return &Server{Name: fmt.Sprintf("pg%d", num/10000), Major: num / 10000, Image: img, URL: u, admin: admin}, nil
}

// withDatabase returns the URL u with its database replaced by name.
func withDatabase(u, name string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.Path = "/" + name
	return p.String()
}

// redact hides the password in a URL for messages.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}

// quietLogger keeps testcontainers' progress lines out of test output.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}
