package migrate_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/postgres" // postgres:// URLs
	_ "github.com/golang-migrate/migrate/v4/source/file"       // file:// URLs
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// The recipes of docs/sql.md ("Installing"): ulidflake's migrations run
// from a source of their own, with a version table of their own, before
// the app's own migrations, which keep theirs. The app below numbers its
// migrations 1..3, as ulidflake does, and its first table takes DEFAULT
// ulid_flake(), so ulidflake's must run first.

// appMigrateFS is an app's own migrations in golang-migrate's layout.
var appMigrateFS = fstest.MapFS{
	"1_customers.up.sql":      {Data: []byte(`CREATE TABLE customers (id bigint PRIMARY KEY DEFAULT ulid_flake(), name text NOT NULL);`)},
	"1_customers.down.sql":    {Data: []byte(`DROP TABLE customers;`)},
	"2_orders.up.sql":         {Data: []byte(`CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT ulid_flake(), customer_id bigint REFERENCES customers);`)},
	"2_orders.down.sql":       {Data: []byte(`DROP TABLE orders;`)},
	"3_orders_index.up.sql":   {Data: []byte(`CREATE INDEX orders_customer ON orders (customer_id);`)},
	"3_orders_index.down.sql": {Data: []byte(`DROP INDEX orders_customer;`)},
}

// appGooseFS is the same app in goose's layout.
var appGooseFS = fstest.MapFS{
	"00001_customers.sql":    {Data: []byte("-- +goose Up\nCREATE TABLE customers (id bigint PRIMARY KEY DEFAULT ulid_flake(), name text NOT NULL);\n-- +goose Down\nDROP TABLE customers;\n")},
	"00002_orders.sql":       {Data: []byte("-- +goose Up\nCREATE TABLE orders (id bigint PRIMARY KEY DEFAULT ulid_flake(), customer_id bigint REFERENCES customers);\n-- +goose Down\nDROP TABLE orders;\n")},
	"00003_orders_index.sql": {Data: []byte("-- +goose Up\nCREATE INDEX orders_customer ON orders (customer_id);\n-- +goose Down\nDROP INDEX orders_customer;\n")},
}

// migrateULIDFlake is the golang-migrate recipe: databaseURL carries
// x-migrations-table=ulid_flake_schema_migrations.
func migrateULIDFlake(fsys fs.FS, databaseURL string, down bool) error {
	src, err := iofs.New(fsys, ".") // fsys: migrations.FS()
	if err != nil {
		return err
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, databaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	run := m.Up
	if down {
		run = m.Down
	}
	if err := run(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return err
	}
	return nil
}

// gooseULIDFlake is the goose recipe: a Provider with its own version
// table and a session lock, so that replicas may run it at once.
func gooseULIDFlake(db *sql.DB, fsys fs.FS) (*goose.Provider, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(goose.DialectPostgres, db, fsys, // fsys: migrations.GooseFS()
		goose.WithTableName("ulid_flake_goose_db_version"),
		goose.WithSessionLocker(locker))
}

// withParams returns u with the query parameters kv (name, value, ...) set.
func withParams(t *testing.T, u string, kv ...string) string {
	t.Helper()
	p, err := url.Parse(u)
	require.NoError(t, err)
	q := p.Query()
	for i := 0; i < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	p.RawQuery = q.Encode()
	return p.String()
}

// emptyDBURL makes an empty database and returns it and its URL.
func emptyDBURL(t *testing.T, s *pgtest.Server) (*sql.DB, string) {
	t.Helper()
	db, name := itest.EmptyDBNamed(t, s)
	p, err := url.Parse(s.URL)
	require.NoError(t, err)
	p.Path = "/" + name
	return db, p.String()
}

// releaseFS is fsys as a release that knew the versions 1..upTo shipped it.
func releaseFS(t *testing.T, fsys fs.FS, upTo int) fs.FS {
	t.Helper()
	out := fstest.MapFS{}
	names, err := fs.Glob(fsys, "*.sql")
	require.NoError(t, err)
	for _, n := range names {
		v, err := strconv.Atoi(regexp.MustCompile(`^\d+`).FindString(n))
		require.NoError(t, err, n)
		if v <= upTo {
			b, err := fs.ReadFile(fsys, n)
			require.NoError(t, err)
			out[n] = &fstest.MapFile{Data: b}
		}
	}
	return out
}

// mergeFS puts the files of both in one directory.
func mergeFS(a, b fstest.MapFS) fstest.MapFS {
	out := fstest.MapFS{}
	for n, f := range a {
		out[n] = f
	}
	for n, f := range b {
		out[n] = f
	}
	return out
}

// mapFS copies fsys into a MapFS.
func mapFS(t *testing.T, fsys fs.FS) fstest.MapFS {
	return releaseFS(t, fsys, 1<<30).(fstest.MapFS)
}

// installSnapshot lists what the install holds in the current schema
// (functions, relations, domains, the generator's offset): running a
// recipe again must leave it as it is.
func installSnapshot(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`
		SELECT 'function ' || p.oid::regprocedure::text FROM pg_proc p
			WHERE p.pronamespace = current_schema()::regnamespace AND p.proname LIKE 'ulid\_flake%'
		UNION ALL SELECT 'relation ' || c.relname FROM pg_class c
			WHERE c.relnamespace = current_schema()::regnamespace AND c.relname LIKE 'ulid\_flake%' AND c.relkind IN ('r', 'S', 'v')
				AND c.relname NOT IN ('ulid_flake_schema_migrations', 'ulid_flake_goose_db_version',
					'ulid_flake_goose_db_version_id_seq', 'ulid_flake_migrations')
		UNION ALL SELECT 'type ' || y.typname FROM pg_type y
			WHERE y.typnamespace = current_schema()::regnamespace AND y.typname LIKE 'ulid\_flake%' AND y.typtype = 'd'
		ORDER BY 1`)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	var offset sql.NullString
	if err := db.QueryRow(`SELECT "offset"::text FROM ulid_flake_state`).Scan(&offset); err == nil {
		out = append(out, "offset "+offset.String)
	}
	return out
}

// versionOf reads the newest version a version table records (0 when it
// records none, or does not exist); query reads it from table %s.
func versionOf(t *testing.T, db *sql.DB, table, query string) int {
	t.Helper()
	var exists bool
	require.NoError(t, db.QueryRow(`SELECT to_regclass($1) IS NOT NULL`, table).Scan(&exists))
	if !exists {
		return 0
	}
	var v int
	require.NoError(t, db.QueryRow(fmt.Sprintf(query, table)).Scan(&v))
	return v
}

// golangMigrateVersion is golang-migrate's version in table; a dirty
// version fails the test.
func golangMigrateVersion(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	require.Zero(t, versionOf(t, db, table, `SELECT count(*) FROM %s WHERE dirty`), "%s is dirty", table)
	return versionOf(t, db, table, `SELECT coalesce(max(version), 0) FROM %s`)
}

func gooseVersion(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	return versionOf(t, db, table, `SELECT coalesce(max(version_id), 0) FROM %s`)
}

// recipe runs ulidflake's migrations and the app's, up or down, with one
// tool, and reads both version tables.
type recipe struct {
	up, down func() error
	versions func() (ulidflake, app int)
}

// checkLifecycle runs a recipe on an empty database: up; IDs from DEFAULT
// ulid_flake(); up again changes nothing; down removes every object;
// up after down; Migrate adopts the install; the recipe after Migrate
// changes nothing.
func checkLifecycle(t *testing.T, db *sql.DB, r recipe) {
	ctx := context.Background()
	latest := migrations.Latest()
	require.NoError(t, r.up())
	u, a := r.versions()
	require.Equal(t, [2]int{latest, 3}, [2]int{u, a})
	checkDefault(t, db)

	before := installSnapshot(t, db)
	require.NotEmpty(t, before)
	require.NoError(t, r.up(), "the recipe again")
	require.Equal(t, before, installSnapshot(t, db), "the recipe again changed the install")
	u, a = r.versions()
	require.Equal(t, [2]int{latest, 3}, [2]int{u, a})

	require.NoError(t, r.down())
	require.Empty(t, installSnapshot(t, db), "down left objects")
	u, a = r.versions()
	require.Equal(t, [2]int{0, 0}, [2]int{u, a})

	require.NoError(t, r.up(), "up after down")
	checkDefault(t, db)
	steps, err := migrations.Migrate(ctx, db)
	require.NoError(t, err, "Migrate after the recipe")
	require.Empty(t, steps)
	require.Equal(t, latest, versionOf(t, db, "ulid_flake_migrations", `SELECT max(version) FROM %s`))
	after := installSnapshot(t, db)
	require.NoError(t, r.up(), "the recipe after Migrate")
	require.Equal(t, after, installSnapshot(t, db))
	checkDefault(t, db)
}

// checkDefault inserts rows whose keys DEFAULT ulid_flake() makes: each is
// a 13-character Ulid-Flake, all distinct, their milliseconds in insertion
// order (within a millisecond the low bits wrap every 2^15 values; see
// docs/sql.md).
func checkDefault(t *testing.T, db *sql.DB) {
	t.Helper()
	rows, err := db.Query(`INSERT INTO customers (name) SELECT 'c' || i FROM generate_series(1, 50) i RETURNING id, ulid_flake_encode(id)`)
	require.NoError(t, err)
	defer rows.Close()
	var prev int64
	seen := map[int64]bool{}
	for rows.Next() {
		var id int64
		var enc string
		require.NoError(t, rows.Scan(&id, &enc))
		require.GreaterOrEqual(t, id>>20, prev>>20)
		require.False(t, seen[id], "duplicate %d", id)
		require.Len(t, enc, 13)
		prev, seen[id] = id, true
	}
	require.NoError(t, rows.Err())
	require.NotZero(t, prev)
	_, err = db.Exec(`INSERT INTO orders (customer_id) SELECT id FROM customers`)
	require.NoError(t, err)
}

// cliFiles writes ulidflake's migrations for tool into a new directory
// with the CLI, and returns the directory.
func cliFiles(t *testing.T, bin, tool string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ulidflake")
	code, _, errOut := itest.RunBin(t, bin, "migrations", "write", "-tool", tool, "-dir", dir)
	require.Zero(t, code, errOut)
	return dir
}

func TestGolangMigrateBesideAppMigrations(t *testing.T) {
	t.Parallel()
	bin := itest.BuildCLI(t)
	dir := cliFiles(t, bin, "golang-migrate")
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			golangMigrateRecipe := func(db *sql.DB, dbURL string, ulidflakeFS fs.FS) recipe {
				ulidURL := withParams(t, dbURL, "sslmode", "disable", "x-migrations-table", "ulid_flake_schema_migrations")
				appURL := withParams(t, dbURL, "sslmode", "disable")
				return recipe{
					up: func() error {
						if err := migrateULIDFlake(ulidflakeFS, ulidURL, false); err != nil {
							return err
						}
						return migrateULIDFlake(appMigrateFS, appURL, false)
					},
					down: func() error {
						if err := migrateULIDFlake(appMigrateFS, appURL, true); err != nil {
							return err
						}
						return migrateULIDFlake(ulidflakeFS, ulidURL, true)
					},
					versions: func() (int, int) {
						return golangMigrateVersion(t, db, "ulid_flake_schema_migrations"), golangMigrateVersion(t, db, "schema_migrations")
					},
				}
			}
			t.Run("embedded", func(t *testing.T) {
				db, dbURL := emptyDBURL(t, s)
				checkLifecycle(t, db, golangMigrateRecipe(db, dbURL, migrations.FS()))
			})
			t.Run("files written by the CLI", func(t *testing.T) {
				db, dbURL := emptyDBURL(t, s)
				r := golangMigrateRecipe(db, dbURL, nil)
				ulidURL := withParams(t, dbURL, "sslmode", "disable", "x-migrations-table", "ulid_flake_schema_migrations")
				// What `migrate -path DIR -database URL up` runs.
				viaFiles := func(down bool) error {
					m, err := migrate.New("file://"+dir, ulidURL)
					if err != nil {
						return err
					}
					defer m.Close()
					run := m.Up
					if down {
						run = m.Down
					}
					if err := run(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
						return err
					}
					return nil
				}
				appURL := withParams(t, dbURL, "sslmode", "disable")
				r.up = func() error {
					if err := viaFiles(false); err != nil {
						return err
					}
					return migrateULIDFlake(appMigrateFS, appURL, false)
				}
				r.down = func() error {
					if err := migrateULIDFlake(appMigrateFS, appURL, true); err != nil {
						return err
					}
					return viaFiles(true)
				}
				checkLifecycle(t, db, r)
			})
			t.Run("upgrade from an older release", func(t *testing.T) {
				db, dbURL := emptyDBURL(t, s)
				fresh, freshURL := emptyDBURL(t, s)
				require.NoError(t, golangMigrateRecipe(fresh, freshURL, migrations.FS()).up())
				old := golangMigrateRecipe(db, dbURL, releaseFS(t, migrations.FS(), 3))
				require.NoError(t, old.up())
				u, _ := old.versions()
				require.Equal(t, 3, u)
				require.NoError(t, golangMigrateRecipe(db, dbURL, migrations.FS()).up())
				u, _ = old.versions()
				require.Equal(t, migrations.Latest(), u)
				require.Equal(t, stripOffset(installSnapshot(t, fresh)), stripOffset(installSnapshot(t, db)))
				checkDefault(t, db)
			})
			t.Run("replicas at once", func(t *testing.T) {
				db, dbURL := emptyDBURL(t, s)
				r := golangMigrateRecipe(db, dbURL, migrations.FS())
				itest.RunWorkers(t, 4, func(int) error { return r.up() })
				u, a := r.versions()
				require.Equal(t, [2]int{migrations.Latest(), 3}, [2]int{u, a})
				checkDefault(t, db)
			})
			t.Run("one directory clashes", func(t *testing.T) {
				// Why the recipe keeps ulidflake's migrations apart: in
				// the app's directory, the versions collide.
				_, dbURL := emptyDBURL(t, s)
				err := migrateULIDFlake(mergeFS(mapFS(t, migrations.FS()), appMigrateFS), withParams(t, dbURL, "sslmode", "disable"), false)
				require.Error(t, err)
			})
			t.Run("one version table clashes", func(t *testing.T) {
				// And with one version table, the app's source does not
				// know the version ulidflake's left in it.
				_, dbURL := emptyDBURL(t, s)
				u := withParams(t, dbURL, "sslmode", "disable")
				require.NoError(t, migrateULIDFlake(migrations.FS(), u, false))
				err := migrateULIDFlake(appMigrateFS, u, false)
				require.ErrorContains(t, err, "no migration found for version")
			})
		})
	}
}

// gooseGlobals serialises the tests that use goose's package-level state
// (SetTableName), as its command line does.
var gooseGlobals sync.Mutex

func TestGooseBesideAppMigrations(t *testing.T) {
	t.Parallel()
	bin := itest.BuildCLI(t)
	dir := cliFiles(t, bin, "goose")
	ctx := context.Background()
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			gooseRecipe := func(db *sql.DB, ulidflakeFS fs.FS) recipe {
				providers := func() (*goose.Provider, *goose.Provider, error) {
					ulid, err := gooseULIDFlake(db, ulidflakeFS)
					if err != nil {
						return nil, nil, err
					}
					// The app's own Provider needs a lock as well, for
					// replicas at once.
					locker, err := lock.NewPostgresSessionLocker()
					if err != nil {
						return nil, nil, err
					}
					app, err := goose.NewProvider(goose.DialectPostgres, db, appGooseFS, goose.WithSessionLocker(locker))
					return ulid, app, err
				}
				return recipe{
					up: func() error {
						ulid, app, err := providers()
						if err != nil {
							return err
						}
						if _, err := ulid.Up(ctx); err != nil {
							return err
						}
						_, err = app.Up(ctx)
						return err
					},
					down: func() error {
						ulid, app, err := providers()
						if err != nil {
							return err
						}
						if _, err := app.DownTo(ctx, 0); err != nil {
							return err
						}
						_, err = ulid.DownTo(ctx, 0)
						return err
					},
					versions: func() (int, int) {
						return gooseVersion(t, db, "ulid_flake_goose_db_version"), gooseVersion(t, db, "goose_db_version")
					},
				}
			}
			t.Run("embedded", func(t *testing.T) {
				db, _ := emptyDBURL(t, s)
				checkLifecycle(t, db, gooseRecipe(db, migrations.GooseFS()))
			})
			t.Run("files written by the CLI", func(t *testing.T) {
				db, _ := emptyDBURL(t, s)
				checkLifecycle(t, db, gooseRecipe(db, os.DirFS(dir)))
			})
			t.Run("files written by the CLI, package-level goose", func(t *testing.T) {
				// What `goose -dir DIR -table ulid_flake_goose_db_version
				// postgres URL up` runs: no lock, so one caller at a time.
				db, _ := emptyDBURL(t, s)
				r := gooseRecipe(db, nil)
				run := func(table, d string, up bool) error {
					gooseGlobals.Lock()
					defer gooseGlobals.Unlock()
					defer goose.SetTableName("goose_db_version")
					goose.SetTableName(table)
					goose.SetLogger(goose.NopLogger())
					if err := goose.SetDialect("postgres"); err != nil {
						return err
					}
					if up {
						return goose.UpContext(ctx, db, d)
					}
					return goose.DownToContext(ctx, db, d, 0)
				}
				appDir := t.TempDir()
				writeFS(t, appDir, appGooseFS)
				r.up = func() error {
					if err := run("ulid_flake_goose_db_version", dir, true); err != nil {
						return err
					}
					return run("goose_db_version", appDir, true)
				}
				r.down = func() error {
					if err := run("goose_db_version", appDir, false); err != nil {
						return err
					}
					return run("ulid_flake_goose_db_version", dir, false)
				}
				checkLifecycle(t, db, r)
			})
			t.Run("upgrade from an older release", func(t *testing.T) {
				db, _ := emptyDBURL(t, s)
				fresh, _ := emptyDBURL(t, s)
				require.NoError(t, gooseRecipe(fresh, migrations.GooseFS()).up())
				old := gooseRecipe(db, releaseFS(t, migrations.GooseFS(), 3))
				require.NoError(t, old.up())
				u, _ := old.versions()
				require.Equal(t, 3, u)
				require.NoError(t, gooseRecipe(db, migrations.GooseFS()).up())
				u, _ = old.versions()
				require.Equal(t, migrations.Latest(), u)
				require.Equal(t, stripOffset(installSnapshot(t, fresh)), stripOffset(installSnapshot(t, db)))
				checkDefault(t, db)
			})
			t.Run("replicas at once", func(t *testing.T) {
				db, _ := emptyDBURL(t, s)
				r := gooseRecipe(db, migrations.GooseFS())
				itest.RunWorkers(t, 4, func(int) error { return r.up() })
				u, a := r.versions()
				require.Equal(t, [2]int{migrations.Latest(), 3}, [2]int{u, a})
				checkDefault(t, db)
			})
			t.Run("one directory clashes", func(t *testing.T) {
				db, _ := emptyDBURL(t, s)
				_, err := goose.NewProvider(goose.DialectPostgres, db, mergeFS(mapFS(t, migrations.GooseFS()), appGooseFS))
				require.Error(t, err)
			})
		})
	}
}

// stripOffset drops the generator's offset, which every install draws.
func stripOffset(snap []string) []string {
	var out []string
	for _, s := range snap {
		if !regexp.MustCompile(`^offset `).MatchString(s) {
			out = append(out, s)
		}
	}
	return out
}

// writeFS writes the files of fsys into dir.
func writeFS(t *testing.T, dir string, fsys fstest.MapFS) {
	t.Helper()
	for n, f := range fsys {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), f.Data, 0o644))
	}
}
