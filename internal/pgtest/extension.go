package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// extensionDir is the directory of the PostgreSQL extension whose images
// the servers run (set by MainExtension), "" for the plain images.
var extensionDir string

// MainExtension is [Main] for the tests of the C extension in dir (the
// repository's extension/ directory): each server runs
// localhost/ulidflake/postgres-ext:N, the image localhost/ulidflake/postgres:N
// with the extension installed, which dir/image/build.sh builds when it is
// missing or its sources changed. Only the test binaries that call it start
// these servers; the others keep the plain images. ULIDFLAKE_PG_IMAGES
// chooses the versions as for Main (a bare version), and an image name or
// ULIDFLAKE_TEST_DATABASE_URL is taken as given: the tests then need the
// extension installed there.
func MainExtension(m *testing.M, setup Setup, dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		os.Exit(2)
	}
	extensionDir = abs
	Main(m, setup)
}

// extensionImage returns localhost/ulidflake/postgres-ext:N, building the
// base image and then it when they are missing or out of date. A file lock
// serialises the test processes that build it.
func (env *dockerEnv) extensionImage(ctx context.Context, major int) (string, error) {
	if _, err := env.localImage(ctx, major); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(os.TempDir(), fmt.Sprintf("ulidflake-pgtest-ext-image-%d.lock", major)))
	if err != nil {
		return "", err
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(extensionDir, "image", "build.sh"), strconv.Itoa(major))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building the extension's image for PostgreSQL %d (%s/image/build.sh): %w\n%s",
			major, extensionDir, err, lastLines(string(out), 30))
	}
	return fmt.Sprintf("localhost/ulidflake/postgres-ext:%d", major), nil
}
