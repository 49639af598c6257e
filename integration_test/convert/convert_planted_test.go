package convert_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/migrations/bigserial"
)

// TestConvertIgnoresPlantedFunctions: the functions are installed in a
// schema off the search_path (ids); a role plants ulid_flake_min and
// ulid_flake in public, or in its own session's pg_temp (which needs no
// grant at all), to be found first. A superuser's conversion uses the
// install in ids, and none of the planted functions runs.
func TestConvertIgnoresPlantedFunctions(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		for _, where := range []string{"public", "pg_temp"} {
			sdb := itest.EmptyDB(t, db.Server)
			role := "planter_c_" + pgtest.UniqueName() // roles are the server's: unique across runs
			_, err := sdb.ExecContext(ctx, `DROP ROLE IF EXISTS `+role+`; CREATE ROLE `+role+`; GRANT CREATE ON SCHEMA public TO `+role+`;
				CREATE SCHEMA ids; CREATE TABLE public.customers (id serial PRIMARY KEY, name text)`)
			require.NoError(t, err)
			t.Cleanup(func() { _, _ = db.Exec(context.Background(), `DROP ROLE IF EXISTS `+role) })
			_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
			require.NoError(t, err)
			planter, err := sdb.Conn(ctx) // kept open: its pg_temp lives as long as it does
			require.NoError(t, err)
			defer planter.Close()
			escalate := fmt.Sprintf(`LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'ALTER ROLE %s SUPERUSER'; RETURN 42; END $$`, role)
			_, err = planter.ExecContext(ctx, `SET ROLE `+role+`;
				CREATE FUNCTION `+where+`.ulid_flake_min(timestamptz) RETURNS bigint `+escalate+`;
				CREATE FUNCTION `+where+`.ulid_flake() RETURNS bigint `+escalate)
			require.NoError(t, err)

			c, err := bigserial.ConvertSerial(ctx, sdb, "customers", "id")
			require.NoError(t, err)
			require.Contains(t, c.Up, `"ids".ulid_flake()`)
			require.NotContains(t, strings.ToLower(c.Up), `"pg_temp_`)
			require.NoError(t, c.Apply(ctx, sdb, migrations.DirectionUp))
			var id int64
			require.NoError(t, sdb.QueryRowContext(ctx, `INSERT INTO public.customers (name) VALUES ('a') RETURNING id`).Scan(&id))
			require.Greater(t, id, int64(1)<<40)
			var super bool
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = $1`, role).Scan(&super))
			require.False(t, super, "a function planted in %s ran as the superuser", where)
			_, err = planter.ExecContext(ctx, `RESET ROLE`)
			require.NoError(t, err)
		}
	})
}
