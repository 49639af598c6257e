package convert_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/golang-migrate/migrate/v4"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations/bigserial"
)

// -tables-in public, in a database whose migrations goose and golang-migrate
// ran (each under its default table name and a custom one, and the
// library's own goose table), with tables of their shapes and Atlas's
// under other names, converts the application's keys only: the history
// tables keep their identity, type and default, and are named as skipped
// in KeysIn's answer, at the top of the file and on stderr. Before, the
// file locked them, dropped goose's identity and set DEFAULT ulid_flake()
// on its bookkeeping.
func TestConvertSkipsMigrationHistory(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		app := fstest.MapFS{"00001_customers.sql": {Data: []byte(
			"-- +goose Up\nCREATE TABLE customers (id bigserial PRIMARY KEY, name text);\n-- +goose Down\nDROP TABLE customers;\n")}}
		for _, table := range []string{"", "app_versions", "ulid_flake_goose_db_version"} {
			var opts []goose.ProviderOption
			fsys := fstest.MapFS{"00001_nothing.sql": {Data: []byte("-- +goose Up\nSELECT 1;\n-- +goose Down\nSELECT 1;\n")}}
			if table != "" {
				opts = append(opts, goose.WithTableName(table))
			} else {
				fsys = app
			}
			p, err := goose.NewProvider(goose.DialectPostgres, sdb, fsys, opts...)
			require.NoError(t, err)
			_, err = p.Up(ctx)
			require.NoError(t, err, table)
		}
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "1_nothing.up.sql"), []byte("SELECT 1;"), 0o644))
		for _, param := range []string{"", "&x-migrations-table=app_migrations"} {
			url := db.URL
			if !strings.Contains(url, "?") {
				param = strings.Replace(param, "&", "?", 1)
			}
			m, err := migrate.New("file://"+dir, url+param)
			require.NoError(t, err)
			require.NoError(t, m.Up())
			_, _ = m.Close()
		}
		// Other tools' shapes under names of their own, with a key.
		_, err := sdb.Exec(`CREATE TABLE legacy_versions (id serial PRIMARY KEY, version bigint, dirty boolean);
			CREATE TABLE atlas_schema_revisions (id int GENERATED ALWAYS AS IDENTITY, version text);
			CREATE TABLE deploys (n bigserial, version text, partial_hashes json, operator_version text)`)
		require.NoError(t, err)
		history := []string{"goose_db_version", "app_versions", "ulid_flake_goose_db_version", "schema_migrations", "app_migrations",
			"legacy_versions", "atlas_schema_revisions", "deploys"}
		before := catalogOf(t, sdb, history)

		keys, skipped, err := bigserial.KeysIn(ctx, sdb, "public")
		require.NoError(t, err)
		require.Equal(t, []bigserial.Key{{Table: `"public"."customers"`, Column: "id"}}, keys)
		require.Equal(t, []bigserial.Skipped{
			{Table: `"public"."app_versions"`, Why: "goose's version table"},
			{Table: `"public"."atlas_schema_revisions"`, Why: "Atlas's revisions table"},
			{Table: `"public"."deploys"`, Why: "Atlas's revisions table"},
			{Table: `"public"."goose_db_version"`, Why: "goose's version table"},
			{Table: `"public"."legacy_versions"`, Why: "golang-migrate's version table"},
			{Table: `"public"."ulid_flake_goose_db_version"`, Why: "the library's own"},
		}, skipped, "golang-migrate's own tables have no key column: nothing to skip")

		gdir := t.TempDir() // the application's goose directory
		require.NoError(t, os.WriteFile(filepath.Join(gdir, "00001_customers.sql"), app["00001_customers.sql"].Data, 0o644))
		code, stdout, stderr := itest.RunBin(t, itest.BuildCLI(t), "convert", "-database-url", db.URL,
			"-tables-in", "public", "-tool", "goose", "-dir", gdir)
		require.Equal(t, 0, code, stderr)
		require.Contains(t, stdout, "00002_ulid_flake_keys.sql")
		for _, s := range skipped {
			require.Contains(t, stderr, "ulidflake: convert: skipped "+s.Table+": "+s.Why, "stderr names it")
		}
		text, err := os.ReadFile(filepath.Join(gdir, "00002_ulid_flake_keys.sql"))
		require.NoError(t, err)
		head, body, ok := strings.Cut(string(text), "-- +goose Up\n")
		require.True(t, ok, string(text))
		require.Equal(t, strings.Count(head, "\n"), len(skipped), head)
		for _, s := range skipped {
			require.Contains(t, head, "-- skipped "+s.Table+": "+s.Why, "the file names it")
		}
		for _, h := range history {
			require.NotContains(t, body, h, "the file leaves the history tables alone")
		}

		// goose runs it after the application's first migration: the
		// application's key converts, the history tables do not change.
		p, err := goose.NewProvider(goose.DialectPostgres, sdb, os.DirFS(gdir))
		require.NoError(t, err)
		_, err = p.Up(ctx)
		require.NoError(t, err)
		require.Contains(t, columnDefault(t, sdb, "customers", "id"), "ulid_flake()")
		require.Equal(t, before, catalogOf(t, sdb, history), "the history tables are as they were")
	})
}

// catalogOf describes the columns of tables: type, identity and default.
func catalogOf(t *testing.T, db *sql.DB, tables []string) string {
	t.Helper()
	var out string
	require.NoError(t, db.QueryRow(`SELECT string_agg(format('%s.%s %s %s %s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
			a.attidentity, coalesce(pg_get_expr(d.adbin, d.adrelid), '')), E'\n' ORDER BY c.relname, a.attnum)
		FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
		WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY ($1)`, tables).Scan(&out))
	out = "\n" + out
	for _, table := range tables {
		require.Contains(t, out, "\n"+table+".", "%s is there", table)
	}
	return out
}
