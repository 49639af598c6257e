package pgtest

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
)

// The recipe of the upgrade images.
//
//go:embed image/upgrade.Dockerfile
var upgradeDockerfile []byte

// Upgrade is a container for pg_upgrade from PostgreSQL Old to New: the
// image of New's server (the one this test binary runs, with the
// extension when [MainExtension] chose it) with Old's binaries and the
// shared libraries they need beside it (image/upgrade.Dockerfile says
// how, and why). It runs one server at a time, on the same address:
// Old's, started by [NewUpgrade], then New's, once [Upgrade.Run] has
// upgraded the cluster. It is removed when the test ends.
type Upgrade struct {
	Old, New int
	URL      string // the maintenance database of the server that runs, from this machine
	ctr      testcontainers.Container
}

// upgradePassword is the superuser's password in upgrade containers (their
// port is published on the loopback only where the daemon allows it).
const upgradePassword = "postgres"

// NewUpgrade builds the image for an upgrade from major version old to
// new (once; later runs reuse it), starts a container of it, and in it a
// fresh cluster of old, and returns when that server accepts connections.
// It skips t when the servers come from a URL.
func NewUpgrade(t testing.TB, old, new int) *Upgrade {
	t.Helper()
	Heavy(t)
	ss := Servers(t)
	if ss[0].Image == "" {
		t.Skipf("pgtest: an upgrade needs images; %s is set", EnvURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	img, err := upgradeImage(ctx, old, new)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	ctr, err := testcontainers.Run(ctx, img,
		testcontainers.WithEntrypoint("sleep", "infinity"),
		// Both clusters live in /tmp: a tmpfs, not the daemon's storage
		// driver. The container runs until the test ends, so it keeps them.
		testcontainers.WithTmpfs(map[string]string{"/tmp": "rw,mode=1777"}),
		testcontainers.WithExposedPorts("5432/tcp"),
		testcontainers.WithLabels(containerLabels()),
		publishPort(loopbackHost(), "5432/tcp"),
	)
	if ctr != nil {
		t.Cleanup(func() { _ = testcontainers.TerminateContainer(ctr) })
	}
	if err != nil {
		t.Fatalf("pgtest: starting %s: %v", img, err)
	}
	host, err := ctr.Host(ctx)
	if err != nil {
		t.Fatal(err)
	}
	port, err := ctr.MappedPort(ctx, "5432/tcp")
	if err != nil {
		t.Fatal(err)
	}
	u := &Upgrade{Old: old, New: new, ctr: ctr,
		URL: fmt.Sprintf("postgres://postgres:%s@%s:%d/postgres?sslmode=disable", upgradePassword, host, port.Num())}
	if out, err := u.Command(ctx, "bash", "-ec", initCluster(old, "/tmp/old")+startCluster(old, "/tmp/old")); err != nil {
		t.Fatalf("pgtest: starting PostgreSQL %d: %v\n%s", old, err, out)
	}
	if err := u.ping(ctx); err != nil {
		t.Fatalf("pgtest: PostgreSQL %d started but does not serve: %v", old, err)
	}
	return u
}

// Run stops Old's server, makes a cluster of New with the same settings,
// runs New's pg_upgrade (copy mode) and starts New's server on the same
// address. It returns pg_upgrade's output, and an error that holds it
// when a step failed.
func (u *Upgrade) Run(ctx context.Context) (string, error) {
	script := fmt.Sprintf("/usr/lib/postgresql/%d/bin/pg_ctl -D /tmp/old -w -m fast stop\n", u.Old) +
		initCluster(u.New, "/tmp/new") +
		fmt.Sprintf("cd /tmp && /usr/lib/postgresql/%[2]d/bin/pg_upgrade -b /usr/lib/postgresql/%[1]d/bin -B /usr/lib/postgresql/%[2]d/bin "+
			"-d /tmp/old -D /tmp/new -U postgres -s /tmp -o '-c jit=off' --no-sync\n", u.Old, u.New) +
		startCluster(u.New, "/tmp/new")
	out, err := u.Command(ctx, "bash", "-ec", script)
	if err != nil {
		return out, err
	}
	return out, u.ping(ctx)
}

// Command runs a program in the container, as the user postgres, and
// returns its output (stdout and stderr); see [Server.Command].
func (u *Upgrade) Command(ctx context.Context, cmd ...string) (string, error) {
	code, r, err := u.ctr.Exec(ctx, cmd, tcexec.Multiplexed(), tcexec.WithUser("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: running %s: %w", cmd[0], err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return string(out), err
	}
	if code != 0 {
		return string(out), fmt.Errorf("pgtest: %s exited with status %d:\n%s", cmd[0], code, lastLines(string(out), 40))
	}
	return string(out), nil
}

// initCluster is the shell that makes a cluster of PostgreSQL major in
// dir (without syncing it to disk) as the image's entrypoint does (superuser postgres with a password,
// UTF8), without data checksums (18 enables them by default, and
// pg_upgrade wants both clusters alike), reached from any address with
// the password.
func initCluster(major int, dir string) string {
	checksums := ""
	if major >= 18 {
		checksums = "--no-data-checksums"
	}
	return fmt.Sprintf(`printf %%s %[3]s > /tmp/pw
/usr/lib/postgresql/%[1]d/bin/initdb -D %[2]s -U postgres --pwfile=/tmp/pw -E UTF8 --auth-local=trust --auth-host=scram-sha-256 --no-sync %[4]s >/dev/null
printf '\nhost all all all scram-sha-256\n' >> %[2]s/pg_hba.conf
`, major, dir, upgradePassword, checksums)
}

// startCluster is the shell that starts the cluster in dir, listening on
// every address, in the background; throwaway, like the shared servers
// (no fsync, no full-page writes).
func startCluster(major int, dir string) string {
	return fmt.Sprintf("/usr/lib/postgresql/%d/bin/pg_ctl -D %s -w -l %s.log -o \"-c listen_addresses='*' -c jit=off -c max_connections=200 -c fsync=off -c full_page_writes=off\" start >/dev/null\n",
		major, dir, dir)
}

func (u *Upgrade) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startupTimeout)
	defer cancel()
	for {
		err := execOn(ctx, u.URL, "SELECT 1")
		if err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// upgradeImage returns localhost/ulidflake/postgres-upgrade:OLD-NEW,
// building it from the images of the two versions (those this test binary
// runs: built first when missing) unless one of the same recipe and
// images exists. A file lock serialises the test processes that build it.
func upgradeImage(ctx context.Context, old, new int) (string, error) {
	env, err := probeDocker(ctx)
	if err != nil {
		return "", err
	}
	defer env.cli.Close()
	oldImg, err := env.image(ctx, strconv.Itoa(old))
	if err != nil {
		return "", err
	}
	newImg, err := env.image(ctx, strconv.Itoa(new))
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(oldImg, "localhost/ulidflake/") || !strings.HasPrefix(newImg, "localhost/ulidflake/") {
		return "", fmt.Errorf("an upgrade image is built from the project's Debian images, not %s and %s", oldImg, newImg)
	}
	h := sha256.New()
	h.Write(upgradeDockerfile)
	for _, ref := range []string{oldImg, newImg} {
		img, err := env.cli.ImageInspect(ctx, ref)
		if err != nil {
			return "", err
		}
		h.Write([]byte(img.ID))
	}
	hash := hex.EncodeToString(h.Sum(nil))[:16]
	img := fmt.Sprintf("localhost/ulidflake/postgres-upgrade:%d-%d", old, new)
	if imageLabel(ctx, env.cli, img, "org.ulidflake.upgrade") == hash {
		return img, nil
	}
	unlock, err := lockFile(filepath.Join(os.TempDir(), fmt.Sprintf("ulidflake-pgtest-upgrade-%d-%d.lock", old, new)))
	if err != nil {
		return "", err
	}
	defer unlock()
	if imageLabel(ctx, env.cli, img, "org.ulidflake.upgrade") == hash {
		return img, nil
	}
	dir, err := os.MkdirTemp("", "ulidflake-upgrade-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), upgradeDockerfile, 0o644); err != nil {
		return "", err
	}
	say("pgtest: building %s from %s and %s (once)\n", img, oldImg, newImg)
	cmd := exec.CommandContext(ctx, "docker", "build", "--quiet", "--force-rm", "--tag", img,
		"--build-arg", "OLD_IMAGE="+oldImg, "--build-arg", "NEW_IMAGE="+newImg,
		"--build-arg", "OLD="+strconv.Itoa(old), "--build-arg", "HASH="+hash, dir)
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", img, err, lastLines(string(out), 30))
	}
	return img, nil
}
