package migrate_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestMigrateRefusesPlantedObjects: a role that may create objects in the
// install schema (public on clusters upgraded from PostgreSQL 14, or a
// database owner) plants what Migrate would adopt, write into or call: a
// ulid_flake_state table with a ulid_flake_check_node() that makes its
// caller's victim superuser, or a version table with such a trigger. A
// superuser's Migrate refuses them (ErrForeignOwner) and runs none of it.
func TestMigrateRefusesPlantedObjects(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		for i, plant := range []string{
			`CREATE TABLE public.ulid_flake_state ();
			CREATE FUNCTION public.ulid_flake_check_node() RETURNS boolean LANGUAGE plpgsql AS
				$$ BEGIN EXECUTE 'ALTER ROLE %[1]s SUPERUSER'; RETURN true; END $$`,
			`CREATE TABLE public.ulid_flake_migrations (version int PRIMARY KEY, name text NOT NULL,
				applied_at timestamptz NOT NULL DEFAULT now());
			CREATE FUNCTION public.escalate() RETURNS trigger LANGUAGE plpgsql AS
				$$ BEGIN EXECUTE 'ALTER ROLE %[1]s SUPERUSER'; RETURN NEW; END $$;
			CREATE TRIGGER escalate BEFORE INSERT ON public.ulid_flake_migrations
				FOR EACH ROW EXECUTE FUNCTION public.escalate()`,
			// Adopted as version 5 (an install by another tool) and called.
			`CREATE FUNCTION public.ulid_flake_decode(s text, prefix text) RETURNS bigint LANGUAGE plpgsql AS
				$$ BEGIN EXECUTE 'ALTER ROLE %[1]s SUPERUSER'; RETURN 42; END $$`,
			`CREATE FUNCTION public.ulid_flake_at(t timestamptz) RETURNS bigint LANGUAGE plpgsql AS
				$$ BEGIN EXECUTE 'ALTER ROLE %[1]s SUPERUSER'; RETURN 42; END $$`,
			// Adopted as version 5; then the generators would call it.
			`CREATE FUNCTION public.ulid_flake_set_epoch(epoch_ms bigint) RETURNS void LANGUAGE sql AS 'SELECT';
			CREATE FUNCTION public.ulid_flake_epoch_ms() RETURNS bigint LANGUAGE plpgsql AS
				$$ BEGIN EXECUTE 'ALTER ROLE %[1]s SUPERUSER'; RETURN 0; END $$`,
			`CREATE FUNCTION public.ulid_flake_epoch_ms() RETURNS bigint LANGUAGE plpgsql AS
				$$ BEGIN EXECUTE 'ALTER ROLE %[1]s SUPERUSER'; RETURN 0; END $$`,
		} {
			sdb := itest.EmptyDB(t, db.Server)
			role := "planter_" + pgtest.UniqueName() // roles are the server's: unique across runs
			_, err := sdb.ExecContext(ctx, `DROP ROLE IF EXISTS `+role+`; CREATE ROLE `+role+`; GRANT CREATE ON SCHEMA public TO `+role)
			require.NoError(t, err)
			t.Cleanup(func() { _, _ = db.Exec(context.Background(), `DROP ROLE IF EXISTS `+role) })
			conn, err := sdb.Conn(ctx)
			require.NoError(t, err)
			_, err = conn.ExecContext(ctx, `SET ROLE `+role+`; `+fmt.Sprintf(plant, role)+`; RESET ROLE`)
			require.NoError(t, err)
			require.NoError(t, conn.Close())

			_, err = migrations.Migrate(ctx, sdb)
			require.ErrorIs(t, err, migrations.ErrForeignOwner, "plant %d", i)
			require.ErrorContains(t, err, role)
			var super bool
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = $1`, role).Scan(&super))
			require.False(t, super, "plant %d ran as the superuser", i)
			_, err = sdb.ExecContext(ctx, `DROP OWNED BY `+role)
			require.NoError(t, err)
		}
	})
}
