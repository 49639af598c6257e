// Package integration_test runs ulidflake end to end against real
// PostgreSQL servers; see internal/pgtest for how the servers are chosen.
package integration_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestMain builds every test database from a template migrated to the
// latest version: ulid_flake() and its companions are installed.
func TestMain(m *testing.M) {
	pgtest.Main(m, func(ctx context.Context, conn *pgx.Conn) error {
		db := stdlib.OpenDB(*conn.Config())
		defer db.Close()
		_, err := migrations.Migrate(ctx, db)
		return err
	})
}
