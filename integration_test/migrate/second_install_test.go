package migrate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestMigrateRefusesASecondInstall: on a database with an install in
// schema ids, a newcomer's Migrate without WithSchema (search_path's
// public, empty) is refused with ErrSchema naming ids and WithSchema, and
// creates nothing in public; WithSchema("ids") reaches the install, and
// WithSchema("public") makes a second install on purpose.
func TestMigrateRefusesASecondInstall(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.EmptyDB(t, db.Server)
		_, err := sdb.ExecContext(ctx, `CREATE SCHEMA ids`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.NoError(t, err)

		steps, err := migrations.Migrate(ctx, sdb)
		require.ErrorIs(t, err, migrations.ErrSchema)
		require.Empty(t, steps)
		require.ErrorContains(t, err, `schema "ids"`)
		require.ErrorContains(t, err, `WithSchema("ids")`)
		var n int
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*) FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
			WHERE n.nspname = 'public'`).Scan(&n))
		require.Zero(t, n, "nothing created in public")

		steps, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.NoError(t, err)
		require.Empty(t, steps)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("public"))
		require.NoError(t, err, "a second install on purpose")
	})
}

// A sequence named ulid_flake_seq that another role made in its own
// schema is no install: Migrate without WithSchema installs as asked,
// rather than refusing and pointing at that role's schema.
func TestMigrateSecondInstallIgnoresOthersSequences(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		app := "app_" + name
		loginRole(t, db.Server, app, name)
		_, err := sdb.ExecContext(ctx, `CREATE SCHEMA `+app+` AUTHORIZATION `+app)
		require.NoError(t, err)
		_, err = openAs(t, db.Server, name, app).ExecContext(ctx, `CREATE SEQUENCE `+app+`.ulid_flake_seq`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err, "another role's sequence was taken for an install")
	})
}
