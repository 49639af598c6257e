// Package gorm_test tests package gormplugin with GORM on real PostgreSQL
// and on SQLite: every create path, upserts, associations, composite keys,
// schema-named tables, per-entity ID types.
package gorm_test

import (
	"testing"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestMain builds every test database from a template migrated to the
// latest version.
func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }
