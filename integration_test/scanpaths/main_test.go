// Package scanpaths_test runs every scan and encode path of an ID (database/sql
// through pgx's stdlib and lib/pq, pgx in every query exec mode with and
// without pgxtype, GORM with gormplugin) over the same inputs, and asserts
// one verdict per input and type: the rule of flake.ID.Scan and
// flake.ID.Value (internal/bigint), whatever the path.
package scanpaths_test

import (
	"testing"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestMain needs no migrations: the tests use plain bigint and text columns.
func TestMain(m *testing.M) { pgtest.Main(m, nil) }
