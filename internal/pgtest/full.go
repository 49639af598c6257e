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
