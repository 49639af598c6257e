package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Cluster is a private Docker network of PostgreSQL servers of one major
// version, for topology tests: a primary with a streaming replica, or
// several nodes that replicate to each other. The servers run the project's
// own image (localhost/ulidflake/postgres:N, which has pg_basebackup),
// reach each other by name on the network, and publish their port on the
// loopback only. Everything is removed when the test ends.
type Cluster struct {
	Major int
	image string
	nw    *testcontainers.DockerNetwork
}

// Node is one server of a [Cluster].
type Node struct {
	Name  string // its host name on the network
	Major int
	URL   string // its maintenance database, from this machine
	ctr   testcontainers.Container
}

// clusterPassword is the superuser's password on cluster nodes (they listen
// on the loopback and the private network only).
const clusterPassword = "postgres"

var (
	clusterOnce sync.Once
	clusterSkip string
)

// TopologyVersions returns the major versions topology tests run on: those
// of ULIDFLAKE_PG_IMAGES (bare versions or the project's images), or
// the versions of the run ([DefaultVersions], or [AllVersions] with ULIDFLAKE_FULL=1). It skips t when the servers come from a URL or Docker
// is not usable: clusters need containers.
func TopologyVersions(t testing.TB) []int {
	t.Helper()
	Heavy(t)
	clusterOnce.Do(func() {
		if os.Getenv(EnvURL) != "" {
			clusterSkip = fmt.Sprintf("topology tests start clusters of their own in Docker; %s is set", EnvURL)
			return
		}
		env, err := probeDocker(context.Background())
		if err == nil {
			err = dockerHealthy(context.Background())
		}
		if err != nil {
			clusterSkip = fmt.Sprintf("topology tests need Docker: %v", err)
			return
		}
		if docker == nil {
			docker = env
		} else {
			env.cli.Close()
		}
	})
	if clusterSkip != "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("pgtest: %s=1 but %s", EnvRequire, clusterSkip)
		}
		t.Skip(clusterSkip)
	}
	v := os.Getenv(EnvImages)
	if v == "" {
		return versions()
	}
	var majors []int
	for _, img := range strings.Split(v, ",") {
		img = strings.TrimSpace(img)
		if m, err := strconv.Atoi(img); err == nil {
			majors = append(majors, m)
		} else if m := localImageTag.FindStringSubmatch(img); m != nil {
			n, _ := strconv.Atoi(m[1])
			majors = append(majors, n)
		}
	}
	return majors
}

// NewCluster creates a Docker network for servers of major version major.
func NewCluster(t testing.TB, major int) *Cluster {
	t.Helper()
	Heavy(t)
	img := LocalImage(t, major)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nw, err := tcnetwork.New(ctx, tcnetwork.WithLabels(containerLabels()))
	if err != nil {
		t.Fatalf("pgtest: creating a Docker network: %v", err)
	}
	t.Cleanup(func() { _ = nw.Remove(context.Background()) })
	return &Cluster{Major: major, image: img, nw: nw}
}

// serverArgs are the settings of every node: logical WAL (a superset of
// what streaming needs) and room for replication connections. Like the
// shared servers, the nodes are throwaway: no fsync and no full-page
// writes, which guard against a machine's crash, not a server's. A
// killed node (Kill) loses nothing it acknowledged: synchronous_commit
// stays on, and the kernel keeps what the server wrote.
var serverArgs = []string{
	"postgres", "-c", "wal_level=logical", "-c", "max_wal_senders=10", "-c", "max_replication_slots=10",
	"-c", "max_connections=200", "-c", "hot_standby=on", "-c", "wal_keep_size=512MB",
	"-c", "fsync=off", "-c", "full_page_writes=off",
}

// Primary starts a writable server: a fresh data directory whose pg_hba
// also lets the superuser connect for replication.
func (c *Cluster) Primary(t testing.TB, name string) *Node {
	t.Helper()
	hba := `echo "host replication all all scram-sha-256" >> "$PGDATA/pg_hba.conf"` + "\n"
	return c.start(t, name, []testcontainers.ContainerCustomizer{
		testcontainers.WithCmd(serverArgs...),
		testcontainers.WithFiles(testcontainers.ContainerFile{
			Reader: strings.NewReader(hba), ContainerFilePath: "/docker-entrypoint-initdb.d/replication.sh", FileMode: 0o644,
		}),
		testcontainers.WithWaitStrategyAndDeadline(startupTimeout, wait.ForLog("database system is ready to accept connections").
			WithOccurrence(2).WithStartupTimeout(startupTimeout)),
	})
}

// Replica starts an asynchronous streaming replica of primary: a base
// backup taken with pg_basebackup -R, then a hot standby.
func (c *Cluster) Replica(t testing.TB, name string, primary *Node) *Node {
	t.Helper()
	script := fmt.Sprintf(`set -e
until pg_isready -q -h %[1]s; do sleep 0.2; done
PGPASSWORD=%[2]s pg_basebackup -h %[1]s -U postgres -D "$PGDATA" -R -X stream -c fast --no-sync
chmod 700 "$PGDATA"
exec %[3]s`, primary.Name, clusterPassword, strings.Join(serverArgs, " "))
	return c.start(t, name, []testcontainers.ContainerCustomizer{
		testcontainers.WithCmd("bash", "-c", script),
		testcontainers.WithWaitStrategyAndDeadline(startupTimeout, wait.ForLog("database system is ready to accept read-only connections").
			WithStartupTimeout(startupTimeout)),
	})
}

// Copy starts a copy of primary as a server of its own: a base backup
// taken with pg_basebackup, started without standby.signal. It keeps the
// primary's system identifier and timeline, and none of its replication
// slots (pg_basebackup leaves them out).
func (c *Cluster) Copy(t testing.TB, name string, primary *Node) *Node {
	t.Helper()
	script := fmt.Sprintf(`set -e
until pg_isready -q -h %[1]s; do sleep 0.2; done
PGPASSWORD=%[2]s pg_basebackup -h %[1]s -U postgres -D "$PGDATA" -X stream -c fast --no-sync
chmod 700 "$PGDATA"
exec %[3]s`, primary.Name, clusterPassword, strings.Join(serverArgs, " "))
	return c.start(t, name, []testcontainers.ContainerCustomizer{
		testcontainers.WithCmd("bash", "-c", script),
		testcontainers.WithWaitStrategyAndDeadline(startupTimeout, wait.ForLog("database system is ready to accept connections").
			WithStartupTimeout(startupTimeout)),
	})
}

func (c *Cluster) start(t testing.TB, name string, opts []testcontainers.ContainerCustomizer) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startupTimeout+time.Minute)
	defer cancel()
	opts = append(opts,
		testcontainers.WithEnv(map[string]string{"POSTGRES_PASSWORD": clusterPassword, "POSTGRES_INITDB_ARGS": "--no-sync"}),
		dataVolume(),
		testcontainers.WithExposedPorts("5432/tcp"),
		testcontainers.WithLabels(containerLabels()),
		tcnetwork.WithNetwork([]string{name}, c.nw),
		publishPort(loopbackHost(), "5432/tcp"),
	)
	ctr, err := testcontainers.Run(ctx, c.image, opts...)
	if ctr != nil {
		t.Cleanup(func() { _ = testcontainers.TerminateContainer(ctr) })
	}
	if err != nil {
		t.Fatalf("pgtest: starting %s (%s): %v", name, c.image, err)
	}
	host, err := ctr.Host(ctx)
	if err != nil {
		t.Fatal(err)
	}
	port, err := ctr.MappedPort(ctx, "5432/tcp")
	if err != nil {
		t.Fatal(err)
	}
	n := &Node{Name: name, Major: c.Major, ctr: ctr,
		URL: fmt.Sprintf("postgres://postgres:%s@%s:%d/postgres?sslmode=disable", clusterPassword, host, port.Num())}
	if err := n.ping(ctx); err != nil {
		t.Fatalf("pgtest: %s started but does not serve: %v", name, err)
	}
	return n
}

// ping waits until the node accepts connections.
func (n *Node) ping(ctx context.Context) error {
	for {
		err := n.Exec(ctx, "SELECT 1")
		if err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// DB returns the URL of database name on the node.
func (n *Node) DB(name string) string { return withDatabase(n.URL, name) }

// HostPort returns where the node is reached from this machine.
func (n *Node) HostPort() (string, uint16) {
	u, _ := url.Parse(n.URL)
	p, _ := strconv.Atoi(u.Port())
	return u.Hostname(), uint16(p)
}

// ConnInfo returns a libpq connection string for database db that other
// nodes of the cluster use to reach this one.
func (n *Node) ConnInfo(db string) string {
	return fmt.Sprintf("host=%s port=5432 user=postgres password=%s dbname=%s", n.Name, clusterPassword, db)
}

// Exec runs SQL on the node's maintenance database.
func (n *Node) Exec(ctx context.Context, sql string, args ...any) error {
	return execOn(ctx, n.URL, sql, args...)
}

func execOn(ctx context.Context, u, sql string, args ...any) error {
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = pool.Exec(ctx, sql, args...)
	return err
}

// Kill stops the node at once (SIGKILL), as a crashed machine does.
func (n *Node) Kill(ctx context.Context) error {
	zero := time.Duration(0)
	return n.ctr.Stop(ctx, &zero)
}

// CaughtUp waits until replica has replayed everything primary has written.
func CaughtUp(ctx context.Context, primary, replica *Node) error {
	var lsn string
	if err := queryOn(ctx, primary.URL, `SELECT pg_current_wal_lsn()::text`, &lsn); err != nil {
		return err
	}
	for {
		var done bool
		err := queryOn(ctx, replica.URL, `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, &done, lsn)
		if err != nil || done {
			return err
		}
		if err := pause(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("replica %s did not catch up to %s: %w", replica.Name, lsn, err)
		}
	}
}

// Detach stops the replica receiving WAL (its primary_conninfo emptied): it
// keeps what it has replayed, and misses every later write of the primary.
func (n *Node) Detach(ctx context.Context) error {
	if err := n.Exec(ctx, `ALTER SYSTEM SET primary_conninfo = ''`); err != nil {
		return err
	}
	if err := n.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
		return err
	}
	for {
		var receiving bool
		if err := queryOn(ctx, n.URL, `SELECT EXISTS (SELECT 1 FROM pg_stat_wal_receiver)`, &receiving); err != nil || !receiving {
			return err
		}
		if err := pause(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("%s still receives WAL: %w", n.Name, err)
		}
	}
}

// Promote makes a replica a primary and returns once it accepts writes.
func (n *Node) Promote(ctx context.Context) error {
	var ok bool
	if err := queryOn(ctx, n.URL, `SELECT pg_promote(true, 60)`, &ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: pg_promote did not finish", n.Name)
	}
	return nil
}

func queryOn(ctx context.Context, u, sql string, dst any, args ...any) error {
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		return err
	}
	defer pool.Close()
	return pool.QueryRow(ctx, sql, args...).Scan(dst)
}

// pause sleeps d, and reports ctx's error when it has ended.
func pause(ctx context.Context, d time.Duration) error {
	time.Sleep(d)
	return ctx.Err()
}
