package extension_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestExtensionInstallSchemaAlone: beside the extension, issue 38's two
// findings. Overloads that every call of ulid_flake_next and of the
// generators ulid_flake_block calls also matches (a defaulted argument
// more), planted in the install schema by a superuser (no other role may
// create there), change nothing: the extension's default and ulid_flake_block
// make IDs for the superuser and for an application role, and no planted
// body runs. Once the application role may create in the schema, Migrate
// and the migration files refuse (ErrForeignOwner, 55U05), naming it.
func TestExtensionInstallSchemaAlone(t *testing.T) {
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		exec := func(q string) { t.Helper(); _, err := db.Exec(ctx, q); require.NoError(t, err, q) }
		app := "app_" + db.Name
		exec(fmt.Sprintf(`CREATE ROLE %[1]s LOGIN PASSWORD 'pw'; GRANT USAGE ON SCHEMA public TO %[1]s;
			CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT ulid_flake_next(nextval('ulid_flake_seq')), k int);
			GRANT INSERT, SELECT ON orders TO %[1]s;
			CREATE TABLE planted_ran (what text); GRANT INSERT ON planted_ran TO PUBLIC`, app))
		t.Cleanup(func() {
			_, _ = db.Exec(context.Background(), fmt.Sprintf(`DROP OWNED BY %[1]s; DROP ROLE %[1]s`, app))
		})
		for _, plant := range []string{
			`ulid_flake_next(seq bigint DEFAULT NULL, x integer DEFAULT 0) RETURNS bigint`,
			`ulid_flake(x integer DEFAULT 0) RETURNS bigint`,
			`ulid_flake_node_sid(x integer DEFAULT 0) RETURNS integer`,
			`ulid_flake_scalable(sid integer DEFAULT NULL, x integer DEFAULT 0) RETURNS bigint`,
		} {
			exec(`CREATE FUNCTION public.` + plant + ` LANGUAGE plpgsql AS
				$$ BEGIN INSERT INTO public.planted_ran VALUES ('` + strings.Fields(plant)[0] + `'); RETURN NULL; END $$`)
		}
		ac := connectAs(t, db, app)
		for _, q := range []func(string) error{
			func(s string) error { _, err := db.Exec(ctx, s); return err },
			func(s string) error { _, err := ac.Exec(ctx, s); return err },
		} {
			require.NoError(t, q(`INSERT INTO public.orders (k) VALUES (1)`))
			require.NoError(t, q(`SELECT public.ulid_flake_block(3)`))
		}
		var n int
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM public.orders WHERE id > 1048576`).Scan(&n))
		require.Equal(t, 2, n)
		var ran *string
		require.NoError(t, db.QueryRow(ctx, `SELECT string_agg(what, ', ') FROM public.planted_ran`).Scan(&ran))
		require.Nil(t, ran, "planted overloads ran")

		exec(`DROP FUNCTION public.ulid_flake_next(bigint, integer), public.ulid_flake(integer), public.ulid_flake_node_sid(integer),
			public.ulid_flake_scalable(integer, integer)`)
		exec(`GRANT CREATE ON SCHEMA public TO ` + app)
		sdb := itest.StdDB(t, db)
		_, err := migrations.Migrate(ctx, sdb, migrations.WithDirection(migrations.DirectionDown))
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		require.ErrorContains(t, err, app+" may create in it")
		all, err := migrations.All()
		require.NoError(t, err)
		_, err = db.Exec(ctx, all[len(all)-1].Down)
		require.Equal(t, "55U05", sqlState(err), "%v", err)
		exec(`REVOKE CREATE ON SCHEMA public FROM ` + app)
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
	})
}
