package migrate_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// With no Schema, Migrate works in the first existing schema of the
// caller's search_path. When the install is further along the path
// (search_path = tenant, public with the install in public), Down and a
// dry run plan from tenant, the schema their steps change: they neither
// install versions into tenant nor touch public's install.
func TestMigrateDownReadsThePinnedSchema(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, pdb *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		db, name := itest.EmptyDBNamed(t, pdb.Server)
		_, err := migrations.Migrate(ctx, db)
		require.NoError(t, err)
		for _, q := range []string{`CREATE SCHEMA tenant`, `ALTER DATABASE ` + name + ` SET search_path = tenant, public`} {
			_, err = db.ExecContext(ctx, q)
			require.NoError(t, err, q)
		}
		db.SetMaxIdleConns(0) // new connections read the database's setting

		var out bytes.Buffer
		steps, err := migrations.Migrate(ctx, db, migrations.WithDirection(migrations.DirectionDown), migrations.WithDryRun(&out))
		require.NoError(t, err)
		require.Empty(t, steps, "the dry run planned from public's version table")
		require.Empty(t, out.String())
		steps, err = migrations.Migrate(ctx, db, migrations.WithDirection(migrations.DirectionDown))
		require.NoError(t, err)
		require.Empty(t, steps, "Down changed something")

		var inTenant, versions int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM pg_catalog.pg_proc
			WHERE pronamespace = 'tenant'::regnamespace`).Scan(&inTenant))
		require.Zero(t, inTenant, "Down installed functions into tenant")
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM public.ulid_flake_migrations`).Scan(&versions))
		require.Equal(t, migrations.Latest(), versions, "public's install changed")

		// Named, public's install goes down one version.
		steps, err = migrations.Migrate(ctx, db, migrations.WithDirection(migrations.DirectionDown), migrations.WithSchema("public"))
		require.NoError(t, err)
		require.Len(t, steps, 1)
		require.Equal(t, migrations.Latest(), steps[0].Version)
	})
}
