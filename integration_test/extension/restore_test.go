package extension_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// dbURL is u with its database replaced by name.
func dbURL(t *testing.T, u, name string) string {
	t.Helper()
	p, err := url.Parse(u)
	require.NoError(t, err)
	p.Path = "/" + name
	return p.String()
}

// TestExtensionRestore: a database whose table takes its key from
// DEFAULT ulid_flake_next(nextval('ulid_flake_seq')) restores from
// pg_dump into a fresh database of the same server, in plain format
// through psql -v ON_ERROR_STOP=1 and in custom format through
// pg_restore --exit-on-error. pg_dump writes CREATE EXTENSION before the
// migrations' ulid_flake_state, so the install script may not need it.
// Every row comes back; the state names the source database, so the
// first insert with the extension's default fails (55000) until Migrate
// draws the restored database's own offset; the default then works, and
// its new IDs sort after the restored ones.
func TestExtensionRestore(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		if !db.Server.InContainer() {
			t.Skip("pg_dump and pg_restore run in the server's container; the server is not one")
		}
		ctx := context.Background()
		_, err := db.Exec(ctx, `CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT `+next+`, k int NOT NULL);
			INSERT INTO orders (k) SELECT g FROM generate_series(1, 5000) g`)
		require.NoError(t, err)
		rowsOf := func(c *pgx.Conn) (n, maxID int64, sum string) {
			t.Helper()
			require.NoError(t, c.QueryRow(ctx, `SELECT count(*), max(id), md5(string_agg(id::text || ':' || k::text, ',' ORDER BY id)) FROM orders`).
				Scan(&n, &maxID, &sum))
			return n, maxID, sum
		}
		src, err := pgx.Connect(ctx, db.URL)
		require.NoError(t, err)
		defer src.Close(ctx)
		n, maxOld, sum := rowsOf(src)
		require.EqualValues(t, 5000, n)

		for _, format := range []string{"plain", "custom"} {
			t.Run(format, func(t *testing.T) {
				name := db.Name + "_" + format
				_, err := db.Exec(ctx, `CREATE DATABASE `+name+` TEMPLATE template0`)
				require.NoError(t, err)
				t.Cleanup(func() { _, _ = db.Exec(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`) })
				file := "/tmp/" + name + ".dump"
				defer func() { _, _ = db.Server.Command(context.Background(), "rm", "-f", file) }()
				from, to := db.Server.LocalURL(db.Name), db.Server.LocalURL(name)
				steps := [][]string{
					{"pg_dump", "--file=" + file, from},
					{"psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "--file=" + file, to},
				}
				if format == "custom" {
					steps = [][]string{
						{"pg_dump", "--format=custom", "--file=" + file, from},
						{"pg_restore", "--exit-on-error", "--dbname=" + to, file},
					}
				}
				for _, step := range steps {
					out, err := db.Server.Command(ctx, step...)
					require.NoError(t, err, "%s", out)
				}

				rc, err := pgx.Connect(ctx, dbURL(t, db.URL, name))
				require.NoError(t, err)
				defer rc.Close(ctx)
				gotN, gotMax, gotSum := rowsOf(rc)
				require.Equal(t, n, gotN, "rows restored")
				require.Equal(t, maxOld, gotMax)
				require.Equal(t, sum, gotSum, "the restored rows differ")
				var version string
				require.NoError(t, rc.QueryRow(ctx, `SELECT extversion FROM pg_extension WHERE extname = 'ulid_flake_ext'`).Scan(&version))
				require.Equal(t, "1.2", version)

				// The state names the source database: the extension's
				// default refuses until Migrate draws this one's offset.
				_, err = rc.Exec(ctx, `INSERT INTO orders (k) VALUES (0)`)
				require.Equal(t, "55000", sqlState(err), "an insert before Migrate: %v", err)
				require.ErrorContains(t, err, "ulid_flake_state was recorded on another database")

				// Migrate, as an application does at start-up: the state
				// names the source database, so it draws a new offset.
				sdb := stdlib.OpenDB(*rc.Config())
				defer sdb.Close()
				_, err = migrations.Migrate(ctx, sdb)
				require.NoError(t, err)
				var ours bool
				require.NoError(t, rc.QueryRow(ctx, `SELECT s.database_oid = d.oid FROM ulid_flake_state s, pg_database d
					WHERE d.datname = current_database()`).Scan(&ours))
				require.True(t, ours, "Migrate kept the source database's state")
				off := offsetOf(t, ctx, rc)

				// The default works, with the new offset, after the old IDs.
				_, err = rc.Exec(ctx, `INSERT INTO orders (k) SELECT -g FROM generate_series(1, 1000) g`)
				require.NoError(t, err)
				var added, distinct, minNew int64
				require.NoError(t, rc.QueryRow(ctx, `SELECT count(*), count(DISTINCT id), min(id) FROM orders WHERE k < 0`).Scan(&added, &distinct, &minNew))
				require.EqualValues(t, 1000, added)
				require.Equal(t, added, distinct)
				require.Greater(t, minNew, maxOld, "a new ID sorts before a restored one")
				var id, s int64
				require.NoError(t, rc.QueryRow(ctx, `SELECT `+next+`, currval('ulid_flake_seq')`).Scan(&id, &s))
				require.Equal(t, low(s, off), id&(1<<20-1), "offset %d", off)
				t.Logf("restored %d rows (%s); offset %d", gotN, format, off)
			})
		}
	})
}
