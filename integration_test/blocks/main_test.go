// Package blocks_test tests package blocks and ulid_flake_block on real
// PostgreSQL: many instances at once (goroutines, then processes),
// directly and through PgBouncer, across a server restart, a crashed
// instance, a failover that loses writes, an unreachable database, and
// GORM.
package blocks_test

import (
	"os"
	"testing"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestMain builds every test database from a template migrated to the
// latest version. A process started by TestProcesses runs its instance
// instead.
func TestMain(m *testing.M) {
	if os.Getenv(envChild) != "" {
		os.Exit(runChild())
	}
	pgtest.Main(m, pgtest.Migrated)
}
