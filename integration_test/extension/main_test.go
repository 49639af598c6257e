// Package extension_test tests the C extension ulid_flake_ext
// (extension/ at the repository root) on real PostgreSQL: its IDs against
// ulid_flake() and package flake, uniqueness across backends, and that
// ulid_flake_next(nextval(...)), declared STABLE, behaves as a VOLATILE
// default in every statement form.
//
// The servers run localhost/ulidflake/postgres-ext:N, built on demand from
// extension/image (pgtest.MainExtension); no other test binary starts them.
package extension_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestMain builds every test database from a template with ulidflake's
// migrations and the extension installed in public.
func TestMain(m *testing.M) {
	// Logical replication between two databases of one server
	// (TestExtensionStateReplicated).
	pgtest.Settings("wal_level=logical")
	pgtest.MainExtension(m, func(ctx context.Context, conn *pgx.Conn) error {
		if err := pgtest.Migrated(ctx, conn); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, `CREATE EXTENSION ulid_flake_ext`)
		return err
	}, "../../extension")
}

// run is pgtest.Run on a database whose state is its own. Each test
// database is a copy of the template (CREATE DATABASE ... TEMPLATE), so
// its ulid_flake_state names the template's database, which the module
// refuses until ulid_flake_check_node() (what Migrate runs at every start)
// draws the copy its own offset.
func run(t *testing.T, fn func(t *testing.T, db *pgtest.DB)) {
	t.Helper()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		_, err := db.Exec(context.Background(), `SELECT ulid_flake_check_node()`)
		require.NoError(t, err, "ulid_flake_check_node() on a copy of the template")
		fn(t, db)
	})
}
