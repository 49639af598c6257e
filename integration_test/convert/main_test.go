// Package convert_test tests the way off BIGSERIAL (bigserial.ConvertSerial
// and `ulidflake convert`) on real PostgreSQL: hostile names and settings,
// dependent objects, the way back.
package convert_test

import (
	"testing"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestMain builds every test database from a template migrated to the
// latest version.
func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }
