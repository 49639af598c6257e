// Package sqlfn_test tests the SQL functions on real PostgreSQL: what the
// generators guarantee, mixed generators, search_path safety, schema names,
// parallel plans and plan caching.
package sqlfn_test

import (
	"testing"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestMain builds every test database from a template migrated to the
// latest version.
func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }
