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

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestMain builds every test database from a template with ulidflake's
// migrations and the extension installed in public.
func TestMain(m *testing.M) {
	pgtest.MainExtension(m, func(ctx context.Context, conn *pgx.Conn) error {
		if err := pgtest.Migrated(ctx, conn); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, `CREATE EXTENSION ulid_flake_ext`)
		return err
	}, "../../extension")
}
