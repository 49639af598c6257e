// Package nodes_test runs `ulidflake nodes` on databases of the shared
// server: installs made separately, each told a SID or not, the same
// database twice, a hostile install schema, an install planted by a role
// that may create a schema, and a database with no install.
package nodes_test

import (
	"testing"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }
