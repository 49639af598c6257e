// Package lease_test tests package sidlease on real PostgreSQL: directly and
// through PgBouncer, with competing holders, takeovers and restarts.
// leasefail tests lost writes, partitions and skewed clocks.
package lease_test

import (
	"testing"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestMain builds every test database from a template migrated to the
// latest version.
// Its tests use little CPU (they sleep through leases' validity): the
// whole suite runs them two per CPU too.
func TestMain(m *testing.M) {
	pgtest.LightOnCPU()
	pgtest.Main(m, pgtest.Migrated)
}
