package pgtest

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// The image recipe, run when no registry can provide an image.
//
//go:embed image/build.sh image/docker-entrypoint.sh
var imageFiles embed.FS

// Labels on the containers the harness starts, so that a later run can
// remove the ones a killed test process left behind.
const (
	labelOwner = "org.ulidflake.pgtest"
	labelPID   = "org.ulidflake.pgtest.pid"
	labelHost  = "org.ulidflake.pgtest.host"
	// labelShared marks a shared server (shared.go), which stops by itself.
	labelShared = "org.ulidflake.pgtest.shared"
)

// dockerEnv is what the harness found out about the Docker Engine before
// testcontainers-go reads its configuration.
type dockerEnv struct {
	cli      *client.Client
	loopback bool // the daemon publishes ports on this machine's loopback
	registry bool // images can be pulled
	noRyuk   bool // the harness, not the Ryuk reaper, removes what it leaves behind
}

// probeDocker connects to the Docker Engine that testcontainers-go would use
// (DOCKER_HOST, or the local socket) and works out what the environment
// variables used to have to say. It must run before the first call into
// testcontainers-go, which reads its configuration once.
func probeDocker(ctx context.Context) (*dockerEnv, error) {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return nil, err
	}
	env := &dockerEnv{cli: cli}

	// Where published ports can be reached. testcontainers-go guesses the
	// bridge gateway when it finds /.dockerenv; that is wrong when the daemon
	// runs in this very network namespace (its bridge is one of our
	// interfaces), and then the loopback is right. Published ports are then
	// bound to 127.0.0.1 only.
	switch h := os.Getenv("TESTCONTAINERS_HOST_OVERRIDE"); {
	case h != "":
		env.loopback = h == "localhost" || h == "127.0.0.1"
	case sharesDaemonNetwork(pctx, cli):
		env.loopback = true
		os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "localhost")
	}

	// Whether a registry answers: pull the smallest image the harness may
	// need anyway, the reaper's. Without a registry, the reaper cannot run
	// either, and the harness cleans up after itself.
	env.registry = imagePresent(ctx, cli, reaperImage) || pull(ctx, cli, reaperImage, time.Minute) == nil
	if v := os.Getenv("TESTCONTAINERS_RYUK_DISABLED"); v != "" {
		env.noRyuk = v == "true" || v == "1"
	} else if !env.registry {
		env.noRyuk = true
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	if env.noRyuk {
		removeOrphans(ctx, cli)
	}
	return env, nil
}

// reaperImage is the Ryuk image of the testcontainers-go version in go.mod
// (internal/config.ReaperDefaultImage).
const reaperImage = "testcontainers/ryuk:0.14.0"

// sharesDaemonNetwork reports whether one of this machine's interfaces has
// an address in the subnet of the daemon's default bridge network: then the
// tests run in the daemon's network namespace, and ports it publishes are on
// our loopback.
func sharesDaemonNetwork(ctx context.Context, cli *client.Client) bool {
	if !strings.HasPrefix(cli.DaemonHost(), "unix://") {
		return false
	}
	nw, err := cli.NetworkInspect(ctx, "bridge", client.NetworkInspectOptions{})
	if err != nil {
		return false
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, cfg := range nw.Network.IPAM.Config {
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if ok && cfg.Subnet.IsValid() && cfg.Subnet.Contains(ip.Unmap()) {
				return true
			}
		}
	}
	return false
}

func imagePresent(ctx context.Context, cli *client.Client, ref string) bool {
	_, err := cli.ImageInspect(ctx, ref)
	return err == nil
}

// imageLabel returns the value of an image's label, "" when the image or
// the label is missing.
func imageLabel(ctx context.Context, cli *client.Client, ref, label string) string {
	img, err := cli.ImageInspect(ctx, ref)
	if err != nil || img.Config == nil {
		return ""
	}
	return img.Config.Labels[label]
}

func pull(ctx context.Context, cli *client.Client, ref string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := cli.ImagePull(ctx, ref, client.ImagePullOptions{})
	if err != nil {
		return err
	}
	defer resp.Close()
	return resp.Wait(ctx)
}

// resolveImage returns the image to run for a major version: the official
// postgres:N-alpine when it is here or a registry provides it, otherwise
// the project's own localhost/ulidflake/postgres:N, built from Debian
// packages when it is missing or its recipe changed.
func (env *dockerEnv) resolveImage(ctx context.Context, major int) (string, error) {
	official := fmt.Sprintf("postgres:%d-alpine", major)
	if imagePresent(ctx, env.cli, official) {
		return official, nil
	}
	if env.registry {
		if err := pull(ctx, env.cli, official, 5*time.Minute); err == nil {
			return official, nil
		}
	}
	return env.localImage(ctx, major)
}

// LocalImage returns the project's own image for a major version
// (localhost/ulidflake/postgres:N, with pgbouncer), building it first when
// it is missing or out of date. Tests that need pgbouncer use it.
func LocalImage(t interface {
	Helper()
	Fatalf(string, ...any)
}, major int) string {
	t.Helper()
	env, err := probeDocker(context.Background())
	if err != nil {
		t.Fatalf("pgtest: Docker: %v", err)
	}
	defer env.cli.Close()
	img, err := env.localImage(context.Background(), major)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return img
}

// localImage builds localhost/ulidflake/postgres:N unless an image with the
// same recipe exists. A file lock serialises the test processes that
// `go test ./...` runs at once, so the image is built once.
func (env *dockerEnv) localImage(ctx context.Context, major int) (string, error) {
	img := fmt.Sprintf("localhost/ulidflake/postgres:%d", major)
	recipe, err := imageRecipe()
	if err != nil {
		return "", err
	}
	if imageLabel(ctx, env.cli, img, "org.ulidflake.recipe") == recipe {
		return img, nil
	}
	unlock, err := lockFile(filepath.Join(os.TempDir(), fmt.Sprintf("ulidflake-pgtest-image-%d.lock", major)))
	if err != nil {
		return "", err
	}
	defer unlock()
	if imageLabel(ctx, env.cli, img, "org.ulidflake.recipe") == recipe {
		return img, nil // another test process built it while we waited
	}
	say("pgtest: no registry: building %s from Debian packages (once, about a minute)\n", img)
	if err := buildImage(ctx, major); err != nil {
		return "", fmt.Errorf("no registry to pull postgres:%d-alpine from, and building %s failed: %w\n\t"+
			"Build it by hand (root, Debian apt) with internal/pgtest/image/build.sh %d, "+
			"or point %s at an image or %s at a server", major, img, err, major, EnvImages, EnvURL)
	}
	return img, nil
}

// imageRecipe hashes the recipe files as build.sh does.
func imageRecipe() (string, error) {
	h := sha256.New()
	for _, f := range []string{"image/build.sh", "image/docker-entrypoint.sh"} {
		b, err := imageFiles.ReadFile(f)
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// buildImage writes the embedded recipe to a temporary directory and runs
// it.
func buildImage(ctx context.Context, major int) error {
	if os.Geteuid() != 0 {
		return errors.New("building needs root (mmdebstrap)")
	}
	dir, err := os.MkdirTemp("", "ulidflake-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, f := range []string{"build.sh", "docker-entrypoint.sh"} {
		b, err := imageFiles.ReadFile("image/" + f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o755); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", filepath.Join(dir, "build.sh"), strconv.Itoa(major)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w\n%s", err, lastLines(string(out), 20))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// removeOrphans removes the containers that test processes of this machine
// started and did not remove because they were killed (without the Ryuk
// reaper, nothing else would).
func removeOrphans(ctx context.Context, cli *client.Client) {
	host, _ := os.Hostname()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", labelOwner+"=1", labelHost+"="+host),
	})
	if err != nil {
		return
	}
	for _, c := range list.Items {
		pid, err := strconv.Atoi(c.Labels[labelPID])
		if err != nil || processAlive(pid) {
			continue
		}
		_, _ = cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	}
}

// containerLabels marks a container as this process's.
func containerLabels() map[string]string {
	host, _ := os.Hostname()
	return map[string]string{labelOwner: "1", labelPID: strconv.Itoa(os.Getpid()), labelHost: host}
}

// say writes a line where the person running go test sees it: go test
// shows a passing package's output only with -v, so the line goes to the
// terminal when there is one, and to stderr (shown on failure) otherwise.
func say(format string, args ...any) {
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		fmt.Fprintf(tty, format, args...)
		tty.Close()
		return
	}
	fmt.Fprintf(os.Stderr, format, args...)
}

// directHost returns the address at which the tests reach port of ctr
// without Docker's userland proxy: the container's address on the bridge
// network, when the tests run in the daemon's network namespace
// ([loopbackHost]) and that address answers. The proxy (docker-proxy)
// copies every byte of every connection through a process of its own, on
// the cores the tests need. It returns published, the published
// host:port, when the container cannot be reached directly.
func directHost(ctx context.Context, ctr testcontainers.Container, port, published string) string {
	if !loopbackHost() {
		return published
	}
	ip, err := ctr.ContainerIP(ctx)
	if err != nil || ip == "" {
		return published
	}
	addr := net.JoinHostPort(ip, port)
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return published
	}
	c.Close()
	return addr
}

// dataVolume puts the server's data directory (the image's PGDATA) on an
// anonymous Docker volume: on the host's file system, not through the
// daemon's storage driver (fuse-overlayfs here, a process that every write
// crosses). Unlike a tmpfs, a volume outlives a stop, so a node or server
// that a test restarts keeps its data; Docker removes it with the
// container (testcontainers and the harness remove volumes too).
func dataVolume() testcontainers.CustomizeRequestOption {
	return testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeVolume, Target: "/var/lib/postgresql/data"})
	})
}
