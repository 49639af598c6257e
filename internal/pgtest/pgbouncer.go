package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// PgBouncer starts a PgBouncer in front of the server, in pool mode mode
// ("session" or "transaction") with poolSize server connections per
// database and user, and returns the URL of db through it. It runs from the
// project's own image (Debian's pgbouncer package; built if missing) as a
// container of its own, listening on the loopback, and is stopped when t
// ends. It skips t when the server is not a container.
func (s *Server) PgBouncer(t testing.TB, db *DB, mode string, poolSize int) string {
	t.Helper()
	Heavy(t)
	if s.ctr == nil {
		t.Skipf("pgtest: PgBouncer needs the server in a container; %s is set", EnvURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startupTimeout+time.Minute)
	defer cancel()
	ip, err := s.ctr.ContainerIP(ctx)
	if err != nil {
		t.Fatalf("pgtest: PgBouncer: the server's address: %v", err)
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	user := u.User.Username()
	pass, _ := u.User.Password()
	ini := fmt.Sprintf(`[databases]
* = host=%s port=5432

[pgbouncer]
listen_addr = 0.0.0.0
listen_port = 6432
auth_type = plain
auth_file = /tmp/userlist.txt
pool_mode = %s
default_pool_size = %d
max_client_conn = 1000
ignore_startup_parameters = extra_float_digits
server_reset_query =
unix_socket_dir =
logfile =
`, ip, mode, poolSize)
	users := fmt.Sprintf("%q %q\n", user, pass)
	img := s.Image
	if !localImageTag.MatchString(img) {
		img = LocalImage(t, AllVersions[len(AllVersions)-1]) // official images have no pgbouncer
	}
	ctr, err := testcontainers.Run(ctx, img,
		testcontainers.WithCmd("pgbouncer", "/tmp/pgbouncer.ini"),
		testcontainers.WithFiles(
			testcontainers.ContainerFile{Reader: strings.NewReader(ini), ContainerFilePath: "/tmp/pgbouncer.ini", FileMode: 0o644},
			testcontainers.ContainerFile{Reader: strings.NewReader(users), ContainerFilePath: "/tmp/userlist.txt", FileMode: 0o644},
		),
		testcontainers.WithExposedPorts("6432/tcp"),
		testcontainers.WithLabels(containerLabels()),
		testcontainers.WithWaitStrategyAndDeadline(startupTimeout, wait.ForListeningPort("6432/tcp").WithStartupTimeout(startupTimeout)),
		publishPort(loopbackHost(), "6432/tcp"),
	)
	if ctr != nil {
		t.Cleanup(func() { _ = testcontainers.TerminateContainer(ctr) })
	}
	if err != nil {
		t.Fatalf("pgtest: starting PgBouncer from %s: %v", img, err)
	}
	host, err := ctr.Host(ctx)
	if err != nil {
		t.Fatal(err)
	}
	port, err := ctr.MappedPort(ctx, "6432/tcp")
	if err != nil {
		t.Fatal(err)
	}
	bu, _ := url.Parse(db.URL)
	bu.Host = directHost(ctx, ctr, "6432", fmt.Sprintf("%s:%d", host, port.Num()))
	return bu.String()
}
