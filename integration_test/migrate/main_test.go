// Package migrate_test tests the installers of the SQL functions on real
// PostgreSQL: migrations.Migrate with concurrent callers, rolling deploys,
// clones and other tools' installs, and golang-migrate and goose beside an
// app's own migrations.
package migrate_test

import (
	"testing"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestMain builds every test database from a template migrated to the
// latest version.
func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }
