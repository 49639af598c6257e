package convert_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // pgx5:// URLs
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations/bigserial"
)

// A goose file holds names read from the catalog, not only the keys
// given: a serial's sequence, the tables and columns of foreign keys
// widened with the key. goose acts on any line that starts with "--" and
// holds "+goose", even inside a quoted name, so each of these names with a
// line break before an annotation is refused for goose (naming it), and
// written for golang-migrate, which sends the file whole. Before, only the
// keys' own names were checked: `convert -tool goose` wrote the renamed
// sequence's "-- +goose NO TRANSACTION", and goose ran the file without a
// transaction.
func TestConvertFilesGooseHostileNames(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		for _, tc := range []struct {
			name, schema, table, ident string
		}{
			{"sequence", `CREATE SCHEMA s2; CREATE TABLE s2.t (id serial PRIMARY KEY);
				ALTER SEQUENCE s2.t_id_seq RENAME TO "q
-- +goose NO TRANSACTION
"`, "s2.t", "q\n-- +goose NO TRANSACTION\n"},
			{"child table", `CREATE SCHEMA s3; CREATE TABLE s3.t (id serial PRIMARY KEY);
				CREATE TABLE s3."c
-- +goose StatementEnd" (tid int REFERENCES s3.t)`, "s3.t", "c\n-- +goose StatementEnd"},
			{"child column", `CREATE SCHEMA s4; CREATE TABLE s4.t (id serial PRIMARY KEY);
				CREATE TABLE s4.c ("x
-- +goose ENVSUB ON" int REFERENCES s4.t)`, "s4.t", "x\n-- +goose ENVSUB ON"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := sdb.Exec(tc.schema)
				require.NoError(t, err)
				conv, err := bigserial.ConvertSerial(ctx, sdb, tc.table, "id")
				require.NoError(t, err)
				_, err = conv.Files("goose", "00002_keys")
				require.ErrorIs(t, err, bigserial.ErrConvert)
				require.Contains(t, err.Error(), `"`+tc.ident+`"`, "the message names the object")
				_, err = conv.Files("golang-migrate", "000002_keys")
				require.NoError(t, err)

				dir := t.TempDir()
				code, _, stderr := itest.RunBin(t, itest.BuildCLI(t), "convert", "-database-url", db.URL,
					"-table", tc.table, "-tool", "goose", "-dir", dir)
				require.Equal(t, 2, code, stderr)
				written, err := os.ReadDir(dir)
				require.NoError(t, err)
				require.Empty(t, written)
			})
		}
	})
}

// golang-migrate's files hold no BEGIN or COMMIT: its postgres (lib/pq)
// and pgx/v5 drivers send a file as one simple query, which PostgreSQL runs
// as one transaction (SET LOCAL and LOCK TABLE work in it), so a failed
// file rolls back whole and leaves the connection usable. Run up where the
// guard refuses (a key in the Ulid-Flake range) and where a statement
// fails after others ran (a view on the widened column, made after the
// files were written): golang-migrate returns PostgreSQL's error, the
// database is as it was, no advisory lock is left, the next Up from the
// same process says the version is dirty (golang-migrate's rule), and
// after Force the same failure again. Before, with BEGIN in the file, the
// failure left the connection in an aborted transaction: unlocking failed
// with 25P02, the lock stayed held, and the next Up said "can't acquire
// lock".
func TestConvertFilesGolangMigrateFailure(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		const schema = `CREATE TABLE k (id bigserial PRIMARY KEY); CREATE TABLE c (kid int REFERENCES k);
			INSERT INTO k DEFAULT VALUES; INSERT INTO c VALUES (1);`
		sdb := itest.StdDB(t, db)
		_, err := sdb.Exec(schema)
		require.NoError(t, err)
		conv, err := bigserial.ConvertSerial(context.Background(), sdb, "k", "id")
		require.NoError(t, err)
		dir := t.TempDir()
		writeFiles(t, conv, "golang-migrate", dir)
		for _, name := range []string{"000001_init.up.sql", "000001_init.down.sql"} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("SELECT 1;\n"), 0o644))
		}
		for _, tc := range []struct{ name, breaks, want string }{
			{"refused", `INSERT INTO k VALUES (9000000000000000000)`, "already holds keys in the Ulid-Flake range"},
			{"fails midway", `CREATE VIEW cv AS SELECT kid FROM c`, "used by a view or rule"},
		} {
			for _, scheme := range []string{"postgres", "pgx5"} {
				t.Run(tc.name+"/"+scheme, func(t *testing.T) {
					other := db.Server.NewDB(t)
					odb := itest.StdDB(t, other)
					_, err := odb.Exec(schema + tc.breaks)
					require.NoError(t, err)
					m, err := migrate.New("file://"+dir, scheme+strings.TrimPrefix(other.URL, "postgres"))
					require.NoError(t, err)
					defer m.Close()
					err = m.Up()
					require.ErrorContains(t, err, tc.want)
					require.NotContains(t, err.Error(), "25P02")
					checkUnchanged(t, odb)
					var dirty migrate.ErrDirty
					require.ErrorAs(t, m.Up(), &dirty, "golang-migrate's rule for a failed version, not a lock still held")
					require.Equal(t, 2, dirty.Version)
					require.NoError(t, m.Force(1))
					require.ErrorContains(t, m.Up(), tc.want, "the same failure again")
					checkUnchanged(t, odb)
				})
			}
		}
		files, err := conv.Files("golang-migrate", "000002_keys")
		require.NoError(t, err)
		for name, text := range files {
			require.NotContains(t, text, "BEGIN;", name)
			require.NotContains(t, text, "COMMIT;", name)
		}
	})
}

// checkUnchanged checks that the conversion left nothing behind: k on its
// sequence, c.kid an integer, and no advisory lock held in the database.
func checkUnchanged(t *testing.T, db *sql.DB) {
	t.Helper()
	require.Contains(t, columnDefault(t, db, "k", "id"), "nextval(")
	var typ string
	require.NoError(t, db.QueryRow(`SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'c'::regclass AND attname = 'kid'`).Scan(&typ))
	require.Equal(t, "integer", typ)
	var locks int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&locks))
	require.Zero(t, locks, "golang-migrate's advisory lock is released")
}
