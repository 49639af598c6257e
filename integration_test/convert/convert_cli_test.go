package convert_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/migrations/bigserial"
)

// convert before the functions are installed tells a CLI user how to
// install them with the CLI (exit 2), and a Go caller to run Migrate; with
// an object in the way it names it, prints the SQL to run around it, and
// exits 2; a connection's failure is the driver's error, reachable with
// errors.As.
func TestConvertCLIMessages(t *testing.T) {
	t.Parallel()
	bin := itest.BuildCLI(t)
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		_, err := migrations.Migrate(ctx, sdb, migrations.WithTarget(0))
		require.NoError(t, err)
		_, err = sdb.Exec(`CREATE TABLE k (id serial PRIMARY KEY); CREATE VIEW v AS SELECT id FROM k`)
		require.NoError(t, err)

		_, err = bigserial.ConvertSerial(ctx, sdb, "k", "id")
		require.ErrorIs(t, err, migrations.ErrNotInstalled)
		require.ErrorIs(t, err, bigserial.ErrConvert)
		require.ErrorContains(t, err, "migrations.Migrate")
		code, _, stderr := itest.RunBin(t, bin, "convert", "-database-url", db.URL, "-table", "k")
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, "ulidflake migrations up | psql")
		require.NotContains(t, stderr, "migrations.Migrate")

		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		code, stdout, stderr := itest.RunBin(t, bin, "convert", "-database-url", db.URL, "-table", "k")
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, "view public.v")
		require.Contains(t, stdout, "ALTER TABLE \"public\".\"k\" ALTER COLUMN \"id\" TYPE bigint;")
		code, _, stderr = itest.RunBin(t, bin, "convert", "-database-url", db.URL, "-table", "k", "-apply")
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, "view public.v")
		require.Contains(t, columnDefault(t, sdb, "k", "id"), "nextval(")

		// Errors of the server and of the context are reachable.
		var pgErr *pgconn.PgError
		_, err = bigserial.ConvertSerial(ctx, sdb, "a.b.c.d", "id")
		require.ErrorAs(t, err, &pgErr)
		require.ErrorIs(t, err, bigserial.ErrConvert, "a name PostgreSQL cannot read is bad input")
		_, err = sdb.Exec(`DROP VIEW v`)
		require.NoError(t, err)
		conv, err := bigserial.ConvertSerial(ctx, sdb, "k", "id")
		require.NoError(t, err)
		err = conv.Apply(ctx, sdb, migrations.DirectionDown)
		require.ErrorAs(t, err, &pgErr)
		require.Equal(t, "55000", pgErr.Code)
		require.ErrorIs(t, conv.Apply(ctx, sdb, "sideways"), bigserial.ErrConvert)
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		_, err = bigserial.ConvertSerial(canceled, sdb, "k", "id")
		require.ErrorIs(t, err, context.Canceled)
		require.NotErrorIs(t, err, bigserial.ErrConvert, "a canceled context is no bad input")
	})
}

// convert -scalable makes the keys' default the install's
// ulid_flake_scalable(), for a node with a SID, whose IDs then carry it;
// the way back restores the sequence. Each default is refused where the
// node would refuse it at every insert: ulid_flake() on a node with a SID
// (55U04), ulid_flake_scalable() on a node with none (23514). Both
// refusals are bad input (exit 2) that names the fix, and change nothing.
func TestConvertCLIScalable(t *testing.T) {
	t.Parallel()
	bin := itest.BuildCLI(t)
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		sdb := itest.StdDB(t, db)
		_, err := sdb.Exec(`CREATE TABLE k (id serial PRIMARY KEY, v int)`)
		require.NoError(t, err)
		code, _, stderr := itest.RunBin(t, bin, "convert", "-database-url", db.URL, "-table", "k", "-scalable", "-apply")
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, `this node has no SID, so "public".ulid_flake_scalable() would refuse every insert (23514)`)
		require.Contains(t, stderr, `SELECT "public".ulid_flake_set_sid(n)`)
		require.Contains(t, columnDefault(t, sdb, "k", "id"), "nextval(")

		_, err = sdb.Exec(`SELECT ulid_flake_set_sid(3)`)
		require.NoError(t, err)
		code, _, stderr = itest.RunBin(t, bin, "convert", "-database-url", db.URL, "-table", "k", "-apply")
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, `where "public".ulid_flake() makes no ID`)
		require.Contains(t, stderr, "SQLSTATE 55U04")
		require.Contains(t, stderr, "ulidflake convert -scalable")
		require.Contains(t, columnDefault(t, sdb, "k", "id"), "nextval(")

		code, stdout, stderr := itest.RunBin(t, bin, "convert", "-database-url", db.URL, "-table", "k", "-scalable", "-apply")
		require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		require.Contains(t, columnDefault(t, sdb, "k", "id"), "ulid_flake_scalable()")
		var id int64
		require.NoError(t, sdb.QueryRow(`INSERT INTO k (v) VALUES (1) RETURNING id`).Scan(&id))
		require.Equal(t, 3, flake.ID(id).SID())
		code, stdout, stderr = itest.RunBin(t, bin, "convert", "-database-url", db.URL, "-table", "k", "-down", "-apply")
		require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		require.Contains(t, columnDefault(t, sdb, "k", "id"), "nextval(")

		// An application role that owns its table, not the install,
		// converts it: the trial ID runs with its rights.
		role := "app_" + db.Name
		_, err = sdb.Exec(`CREATE ROLE ` + role + ` LOGIN PASSWORD 'app'; GRANT CREATE ON SCHEMA public TO ` + role +
			`; SET ROLE ` + role + `; CREATE TABLE a (id serial PRIMARY KEY, v int); RESET ROLE`)
		require.NoError(t, err)
		t.Cleanup(func() {
			_, err := sdb.Exec(`DROP OWNED BY ` + role + `; DROP ROLE ` + role)
			require.NoError(t, err)
		})
		u, err := url.Parse(db.URL)
		require.NoError(t, err)
		u.User = url.UserPassword(role, "app")
		code, stdout, stderr = itest.RunBin(t, bin, "convert", "-database-url", u.String(), "-table", "a", "-scalable", "-apply")
		require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		require.NoError(t, sdb.QueryRow(`INSERT INTO a (v) VALUES (1) RETURNING id`).Scan(&id))
		require.Equal(t, 3, flake.ID(id).SID())

		// Before a server start's first ID the check writes: a read-only
		// session is told so (exit 2), and nothing changes.
		_, err = sdb.Exec(`SET ROLE ` + role + `; CREATE TABLE r (id serial PRIMARY KEY); RESET ROLE; ` +
			`REVOKE CREATE ON SCHEMA public FROM ` + role + `; UPDATE ulid_flake_state SET started_at = NULL`)
		require.NoError(t, err)
		q := u.Query()
		q.Set("default_transaction_read_only", "on")
		u.RawQuery = q.Encode()
		code, stdout, stderr = itest.RunBin(t, bin, "convert", "-database-url", u.String(), "-table", "r", "-scalable")
		require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		require.Contains(t, stderr, "this session is read-only")
		require.Contains(t, columnDefault(t, sdb, "r", "id"), "nextval(")
	})
}
