package extension_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestExtensionStateOwner: the module reads ulid_flake_state only when a
// superuser owns it, or a role with the privileges of both the schema's
// owner and the owner of the schema's ulid_flake_seq (the install's
// owner); anything else is 55000, naming the table and its owner, with a
// hint, in a session that made IDs before as in a new one.
//
//   - public (pg_database_owner's from PostgreSQL 15 on), the install given
//     to the database owner: read; once the database has another owner,
//     refused; given the schema back, read again.
//   - A superuser installs in schema ids, which then goes to role X and
//     then to role Y. Y drops the table (nothing depends on it) and makes
//     its own with offset 0 and a 2020 epoch: refused, also in sessions
//     that made IDs before; once X owns the schema again, Y's table is
//     still refused (it is not the install's owner's).
func TestExtensionStateOwner(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		exec := func(q string) { t.Helper(); _, err := db.Exec(ctx, q); require.NoError(t, err, q) }
		x, y := "x_"+db.Name, "y_"+db.Name
		exec(fmt.Sprintf(`CREATE ROLE %[1]s LOGIN PASSWORD 'pw'; CREATE ROLE %[2]s LOGIN PASSWORD 'pw'`, x, y))
		t.Cleanup(func() {
			_, _ = db.Exec(context.Background(), fmt.Sprintf(`REASSIGN OWNED BY %[1]s, %[2]s TO CURRENT_USER; DROP OWNED BY %[1]s, %[2]s; DROP ROLE %[1]s, %[2]s`, x, y))
		})
		// before: a session that has made IDs (and so read the state).
		before, err := pgx.Connect(ctx, db.URL)
		require.NoError(t, err)
		defer before.Close(ctx)
		call := func(c *pgx.Conn, schema string) error {
			var id int64
			return c.QueryRow(ctx, fmt.Sprintf(`SELECT %[1]s.ulid_flake_next(nextval('%[1]s.ulid_flake_seq'))`, schema)).Scan(&id)
		}
		works := func(schema string) {
			t.Helper()
			require.NoError(t, call(before, schema))
			c, err := pgx.Connect(ctx, db.URL)
			require.NoError(t, err)
			defer c.Close(ctx)
			require.NoError(t, call(c, schema))
		}
		refused := func(schema, owner, hint string) {
			t.Helper()
			fresh, err := pgx.Connect(ctx, db.URL)
			require.NoError(t, err)
			defer fresh.Close(ctx)
			for _, c := range []*pgx.Conn{before, fresh} {
				err := call(c, schema)
				require.Equal(t, "55000", sqlState(err), "%v", err)
				var pe *pgconn.PgError
				require.ErrorAs(t, err, &pe)
				require.Contains(t, pe.Message, schema+".ulid_flake_state is owned by role "+owner)
				require.Contains(t, pe.Hint, hint)
			}
		}

		// public, with the install given to the database owner x.
		major := db.Server.Major
		if major >= 15 {
			var nspowner string
			require.NoError(t, db.QueryRow(ctx, `SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'public'`).Scan(&nspowner))
			require.Equal(t, "pg_database_owner", nspowner)
		} else {
			exec(`ALTER SCHEMA public OWNER TO pg_database_owner`)
		}
		works("public")
		exec(fmt.Sprintf(`ALTER DATABASE %[1]s OWNER TO %[2]s; ALTER TABLE public.ulid_flake_state OWNER TO %[2]s;
			ALTER SEQUENCE public.ulid_flake_seq OWNER TO %[2]s`, db.Name, x))
		works("public")
		exec(fmt.Sprintf(`ALTER DATABASE %s OWNER TO %s`, db.Name, y))
		refused("public", x, fmt.Sprintf("ALTER SCHEMA public OWNER TO %s", x))
		exec(fmt.Sprintf(`ALTER SCHEMA public OWNER TO %s`, x))
		works("public")

		// ids: installed by a superuser, then X's, then Y's.
		exec(`CREATE SCHEMA ids`)
		_, err = migrations.Migrate(ctx, itest.StdDB(t, db), migrations.WithSchema("ids"))
		require.NoError(t, err)
		exec(`DROP EXTENSION ulid_flake_ext; CREATE EXTENSION ulid_flake_ext SCHEMA ids`)
		exec(fmt.Sprintf(`ALTER SCHEMA ids OWNER TO %s`, x))
		works("ids")
		exec(fmt.Sprintf(`ALTER SCHEMA ids OWNER TO %s`, y))
		works("ids") // the superuser's table
		yc := connectAs(t, db, y)
		_, err = yc.Exec(ctx, `DROP TABLE ids.ulid_flake_state;
			CREATE TABLE ids.ulid_flake_state (singleton boolean PRIMARY KEY DEFAULT true, "offset" bigint NOT NULL,
				system_id bigint NOT NULL, database_oid oid NOT NULL, drawn_at timestamptz NOT NULL, epoch_ms bigint);
			INSERT INTO ids.ulid_flake_state VALUES (true, 0, 0, 0, now(), 1577836800000)`)
		require.NoError(t, err)
		refused("ids", y, "If this table is not the install's, drop it")
		exec(fmt.Sprintf(`ALTER SCHEMA ids OWNER TO %s`, x))
		refused("ids", y, "If this table is not the install's, drop it")
	})
}
