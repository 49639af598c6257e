package extension_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// connectAs opens a session on db as role (a role made by the test, with
// password "pw").
func connectAs(t *testing.T, db *pgtest.DB, role string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(db.URL)
	require.NoError(t, err)
	cfg.User, cfg.Password = role, "pw"
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// TestExtensionInstall: the default switches to ulid_flake_next and back
// with one ALTER TABLE each; DROP EXTENSION refuses while a default uses
// it; in a schema without ulidflake's migrations, CREATE EXTENSION works
// (it calls nothing) and the call fails, naming what is missing; it works
// in another schema's install whatever the caller's search_path; a role
// with only INSERT inserts with the default; a database owner who is no
// superuser installs it (trusted); 1.0 and 1.1 update to 1.2.
func TestExtensionInstall(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		exec := func(q string) error { _, err := db.Exec(ctx, q); return err }
		require.NoError(t, exec(`CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT ulid_flake(), k int);
			INSERT INTO orders (k) VALUES (1)`))

		// The switch, and the way back (docs/extension.md).
		require.NoError(t, exec(`ALTER TABLE orders ALTER COLUMN id SET DEFAULT ulid_flake_next(nextval('ulid_flake_seq'))`))
		require.NoError(t, exec(`INSERT INTO orders (k) VALUES (2)`))
		err := exec(`DROP EXTENSION ulid_flake_ext`)
		require.Equal(t, "2BP01", sqlState(err), "%v", err)
		require.NoError(t, exec(`ALTER TABLE orders ALTER COLUMN id SET DEFAULT ulid_flake()`))
		require.NoError(t, exec(`INSERT INTO orders (k) VALUES (3)`))
		require.NoError(t, exec(`DROP EXTENSION ulid_flake_ext`))
		require.NoError(t, exec(`CREATE EXTENSION ulid_flake_ext`))
		require.NoError(t, exec(`ALTER TABLE orders ALTER COLUMN id SET DEFAULT ulid_flake_next(nextval('ulid_flake_seq'))`))
		require.NoError(t, exec(`INSERT INTO orders (k) VALUES (4)`))
		var n, d int64
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*), count(DISTINCT id) FROM orders`).Scan(&n, &d))
		require.EqualValues(t, 4, n)
		require.Equal(t, n, d)

		// A role with INSERT only: no SELECT on ulid_flake_state is needed.
		app := "app_" + db.Name
		require.NoError(t, exec(fmt.Sprintf(`CREATE ROLE %s LOGIN PASSWORD 'pw'; GRANT INSERT ON orders TO %s`, app, app)))
		t.Cleanup(func() {
			_ = exec(fmt.Sprintf(`DROP OWNED BY %s; DROP ROLE %s`, app, app))
		})
		ac := connectAs(t, db, app)
		_, err = ac.Exec(ctx, `INSERT INTO orders (k) VALUES (5)`)
		require.NoError(t, err)

		// Another schema's install, a caller whose search_path has neither.
		sdb := itest.StdDB(t, db)
		require.NoError(t, exec(`CREATE SCHEMA "Ids"`))
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("Ids"))
		require.NoError(t, err)
		require.NoError(t, exec(`ALTER TABLE orders ALTER COLUMN id SET DEFAULT ulid_flake(); DROP EXTENSION ulid_flake_ext;
			CREATE EXTENSION ulid_flake_ext SCHEMA "Ids"`))
		c, err := pgx.Connect(ctx, db.URL)
		require.NoError(t, err)
		defer c.Close(ctx)
		var id, s, off int64
		require.NoError(t, c.QueryRow(ctx, `SELECT "offset" FROM "Ids".ulid_flake_state`).Scan(&off))
		_, err = c.Exec(ctx, `SET search_path = pg_catalog`)
		require.NoError(t, err)
		require.NoError(t, c.QueryRow(ctx, `SELECT "Ids".ulid_flake_next(nextval('"Ids".ulid_flake_seq')), currval('"Ids".ulid_flake_seq')`).Scan(&id, &s))
		require.Equal(t, low(s, off), id&(1<<20-1))

		// A schema without the migrations: the install calls nothing (a
		// restore creates the extension before the migrations' table), and
		// the first call fails, naming what is missing.
		require.NoError(t, exec(`DROP EXTENSION ulid_flake_ext; CREATE SCHEMA bare`))
		require.NoError(t, exec(`CREATE EXTENSION ulid_flake_ext SCHEMA bare`))
		err = exec(`SELECT bare.ulid_flake_next(1)`)
		require.Equal(t, "55000", sqlState(err), "%v", err)
		require.Contains(t, err.Error(), `no table ulid_flake_state(offset bigint) in schema "bare"`)
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe)
		require.Contains(t, pe.Hint, "Install ulidflake's migrations")
		require.NoError(t, exec(`DROP EXTENSION ulid_flake_ext`))

		// Trusted: a database owner that is no superuser.
		owner := "owner_" + db.Name
		require.NoError(t, exec(fmt.Sprintf(`CREATE ROLE %s LOGIN PASSWORD 'pw'; GRANT CREATE ON DATABASE %s TO %s;
			GRANT CREATE ON SCHEMA public TO %s`, owner, db.Name, owner, owner)))
		t.Cleanup(func() { _ = exec(fmt.Sprintf(`DROP OWNED BY %s; DROP ROLE %s`, owner, owner)) })
		oc := connectAs(t, db, owner)
		// The owner plants an overload that the install script would call
		// as the superuser if it passed an integer.
		_, err = oc.Exec(ctx, fmt.Sprintf(`CREATE FUNCTION public.ulid_flake_next(s integer) RETURNS bigint
			LANGUAGE plpgsql AS $$ BEGIN ALTER ROLE %s SUPERUSER; RETURN 1; END $$`, owner))
		require.NoError(t, err)
		_, err = oc.Exec(ctx, `CREATE EXTENSION ulid_flake_ext SCHEMA public`)
		require.NoError(t, err)
		var super bool
		require.NoError(t, db.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = $1`, owner).Scan(&super))
		require.False(t, super, "the install ran the planted overload as a superuser")
		require.NoError(t, oc.QueryRow(ctx, `SELECT ulid_flake_next(nextval('ulid_flake_seq'))`).Scan(&id))
		require.Positive(t, id)
		var version string
		require.NoError(t, db.QueryRow(ctx, `SELECT extversion FROM pg_extension WHERE extname = 'ulid_flake_ext'`).Scan(&version))
		require.Equal(t, "1.2", version)

		// The update paths from 1.0 and 1.1 end at 1.2 and its symbol.
		for _, from := range []string{"1.0", "1.1"} {
			require.NoError(t, exec(`DROP EXTENSION ulid_flake_ext; CREATE EXTENSION ulid_flake_ext VERSION '`+from+`'`))
			require.NoError(t, exec(`ALTER EXTENSION ulid_flake_ext UPDATE`))
			var symbol string
			require.NoError(t, db.QueryRow(ctx, `SELECT e.extversion, p.prosrc FROM pg_extension e, pg_proc p
				WHERE e.extname = 'ulid_flake_ext' AND p.oid = to_regprocedure('ulid_flake_next(bigint)')`).Scan(&version, &symbol))
			require.Equal(t, "1.2", version, "from %s", from)
			require.Equal(t, "ulid_flake_next_1_2", symbol, "from %s", from)
			require.NoError(t, db.QueryRow(ctx, `SELECT `+next).Scan(&id))
			require.Positive(t, id)
		}
	})
}

// TestExtensionBuiltForServer: the image's server is the release whose
// headers the module was built with (extension/image records pg_config
// --version in ulid_flake_ext.built-for), and it loads the module. A
// module built against newer headers than the server can fail to load
// (undefined symbol) or misbehave.
func TestExtensionBuiltForServer(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		if !strings.HasPrefix(db.Server.Image, "localhost/ulidflake/postgres-ext:") {
			t.Skipf("the server runs %q, not an image of extension/image", db.Server.Image)
		}
		ctx := context.Background()
		var built, server string
		require.NoError(t, db.QueryRow(ctx, `SELECT pg_read_file(setting || '/extension/ulid_flake_ext.built-for'), current_setting('server_version')
			FROM pg_config WHERE name = 'SHAREDIR'`).Scan(&built, &server))
		require.Equal(t, strings.TrimSpace(built), "PostgreSQL "+server, "the module was built for another server than the image's")
		_, err := db.Exec(ctx, `LOAD 'ulid_flake_ext'`)
		require.NoError(t, err)
	})
}
