package pgtest

import (
	"os"
	"testing"
)

// EnvFull asks for the whole suite, as CI runs it: every version of
// [AllVersions] and the heavy scenarios ([Heavy]).
const EnvFull = "ULIDFLAKE_FULL"

// AllVersions are the PostgreSQL major versions the project supports and
// CI tests on (ULIDFLAKE_FULL=1). 19 is a release candidate, from Debian's
// experimental (image/build.sh).
var AllVersions = []int{15, 17, 18, 19}

// DefaultVersions are the versions a plain `go test work` runs on: the
// newest release, so that a run stays within minutes. CI runs them all.
var DefaultVersions = []int{18}

// Full reports whether ULIDFLAKE_FULL=1 asks for the whole suite.
func Full() bool { return os.Getenv(EnvFull) == "1" }

// versions returns the versions to run on when ULIDFLAKE_PG_IMAGES does not
// say.
func versions() []int {
	if Full() {
		return AllVersions
	}
	return DefaultVersions
}

// Heavy skips t unless ULIDFLAKE_FULL=1: scenarios that take minutes or
// start servers of their own (hundreds of processes, clusters,
// pg_upgrade, restarts) run in CI, not in every `go test work`.
func Heavy(t testing.TB) {
	t.Helper()
	if !Full() {
		t.Skipf("heavy scenario: runs with %s=1, as CI does (.ci/run)", EnvFull)
	}
}

// Spread returns the share of all that a quick run runs in round i of n:
// the elements whose index is i modulo n. With ULIDFLAKE_FULL=1 it returns
// all. A test that loops over n variants and, in each, over kinds of
// something spreads the kinds over the variants: a quick run then runs
// every kind once, CI every pair.
func Spread[T any](all []T, i, n int) []T {
	if Full() || n <= 1 {
		return all
	}
	var share []T
	for j, v := range all {
		if j%n == i%n {
			share = append(share, v)
		}
	}
	return share
}

// Scale returns full with ULIDFLAKE_FULL=1 and quick otherwise: the volume
// (rows, IDs, rounds) of a test that proves by numbers. CI runs the full
// volume on every version; a quick run proves the same behaviour smaller.
func Scale(full, quick int) int {
	if Full() {
		return full
	}
	return quick
}
