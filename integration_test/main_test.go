// Package integration_test runs ulidflake end to end against real
// PostgreSQL servers; see internal/pgtest for how the servers are chosen.
package integration_test

import (
	"testing"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestMain builds every test database from a template migrated to the
// latest version: ulid_flake() and its companions are installed.
func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }
