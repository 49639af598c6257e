package convert_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/postgres" // postgres:// URLs
	_ "github.com/golang-migrate/migrate/v4/source/file"       // file:// URLs
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations/bigserial"
)

// invoicing is the schema the files are made on and replayed on: bigserial
// keys behind a view, foreign keys between converted tables, a serial key
// (widened) with a mixed-case name, an identity key in another schema, and
// a role that may insert into one table.
const invoicing = `
	CREATE SCHEMA billing;
	CREATE TABLE billing.customers (id bigserial PRIMARY KEY, name text NOT NULL);
	CREATE TABLE billing.invoices (id bigserial PRIMARY KEY, customer_id bigint NOT NULL REFERENCES billing.customers, total int);
	CREATE TABLE billing."Invoice Lines" (id serial PRIMARY KEY, invoice_id bigint NOT NULL REFERENCES billing.invoices, amount int);
	CREATE VIEW billing.invoice_totals AS
		SELECT i.id, i.customer_id, c.name, i.total FROM billing.invoices i JOIN billing.customers c ON c.id = i.customer_id;
	CREATE TABLE public.notes (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, invoice_id bigint REFERENCES billing.invoices, body text);
	INSERT INTO billing.customers (name) VALUES ('a'), ('b'), ('c');
	INSERT INTO billing.invoices (customer_id, total) VALUES (1, 10), (2, 20), (3, 30), (1, 40);
	INSERT INTO billing."Invoice Lines" (invoice_id, amount) VALUES (1, 1), (2, 2), (4, 4);
	INSERT INTO public.notes (invoice_id, body) VALUES (1, 'x'), (2, 'y');`

// keyColumns are the converted keys, as regclass text and column.
var keyColumns = [][2]string{
	{"billing.customers", "id"}, {"billing.invoices", "id"}, {`billing."Invoice Lines"`, "id"}, {"notes", "id"},
}

// secondDB returns another database of the same server, with the
// invoicing schema made differently enough that every OID and column
// number differs from the first's: other tables first, a dropped column
// before the key, and a role that may insert into billing.customers.
func secondDB(t *testing.T, db *pgtest.DB) (*pgtest.DB, *sql.DB, string) {
	t.Helper()
	other := db.Server.NewDB(t)
	sdb := itest.StdDB(t, other)
	role := "clerk_" + other.Name
	_, err := sdb.Exec(`CREATE TABLE filler1 (x int); CREATE TABLE filler2 (x int); CREATE SEQUENCE filler_seq;
		CREATE SCHEMA billing; CREATE TABLE billing.customers (gone int, id bigserial PRIMARY KEY, name text NOT NULL);
		ALTER TABLE billing.customers DROP COLUMN gone;` +
		strings.Replace(invoicing, "CREATE SCHEMA billing;\n\tCREATE TABLE billing.customers (id bigserial PRIMARY KEY, name text NOT NULL);", "", 1) +
		`CREATE ROLE ` + role + `; GRANT INSERT ON billing.customers TO ` + role)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = sdb.Exec(`DROP OWNED BY ` + role + `; DROP ROLE ` + role) })
	return other, sdb, role
}

// The conversion of every key of a schema and one more table, made on one
// database, written as files for golang-migrate and goose, and run by the
// tools themselves on other databases with the same schema: up, down and
// up again. Each step leaves the tool clean (golang-migrate never dirty),
// the rows and the view intact, and the keys as the step says: ulid_flake()
// after up, a sequence after the old keys after down (owned by the table's
// owner, usable by the role that may insert on that database).
func TestConvertFilesReplay(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		_, err := sdb.Exec(invoicing)
		require.NoError(t, err)
		keys, _, err := bigserial.KeysIn(ctx, sdb, "billing")
		require.NoError(t, err)
		require.Len(t, keys, 3)
		// In the CLI's order: -table first, then -tables-in's.
		conv, err := bigserial.ConvertKeys(ctx, sdb, append([]bigserial.Key{{Table: "notes", Column: "id"}}, keys...))
		require.NoError(t, err)
		require.NotRegexp(t, `(oid|relid|attnum|adnum) = [0-9]|[0-9]::oid`, conv.Up+conv.Down, "no OID or column number in the SQL")

		t.Run("golang-migrate", func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, conv, "golang-migrate", dir)
			other, odb, role := secondDB(t, db)
			m, err := migrate.New("file://"+dir, other.URL)
			require.NoError(t, err)
			defer m.Close()
			step := func(name string, run func() error, converted bool) {
				require.NoError(t, run(), name)
				_, dirty, err := m.Version()
				if !errors.Is(err, migrate.ErrNilVersion) {
					require.NoError(t, err, name)
				}
				require.False(t, dirty, name)
				checkKeys(t, odb, role, name, converted)
			}
			step("up", m.Up, true)
			step("down", func() error { return m.Steps(-1) }, false)
			step("up again", m.Up, true)
		})
		t.Run("goose", func(t *testing.T) {
			// The CLI writes the file, numbered after the application's.
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "00001_init.sql"), []byte("-- +goose Up\nSELECT 1;\n-- +goose Down\nSELECT 1;\n"), 0o644))
			code, stdout, stderr := itest.RunBin(t, itest.BuildCLI(t), "convert", "-database-url", db.URL,
				"-tables-in", "billing", "-table", "notes", "-tool", "goose", "-dir", dir)
			require.Equal(t, 0, code, stderr)
			require.Contains(t, stdout, "00002_ulid_flake_keys.sql")
			want, err := conv.Files("goose", "00002_ulid_flake_keys")
			require.NoError(t, err)
			got, err := os.ReadFile(filepath.Join(dir, "00002_ulid_flake_keys.sql"))
			require.NoError(t, err)
			require.Equal(t, want["00002_ulid_flake_keys.sql"], string(got))
			_, odb, role := secondDB(t, db)
			p, err := goose.NewProvider(goose.DialectPostgres, odb, os.DirFS(dir))
			require.NoError(t, err)
			up := func() error { _, err := p.Up(ctx); return err }
			down := func() error { _, err := p.Down(ctx); return err }
			for _, s := range []struct {
				name      string
				run       func() error
				converted bool
			}{{"up", up, true}, {"down", down, false}, {"up again", up, true}} { // down: the conversion only
				require.NoError(t, s.run(), s.name)
				checkKeys(t, odb, role, s.name, s.converted)
			}
		})
	})
}

// writeFiles writes conv's files for tool into dir as version 2.
func writeFiles(t *testing.T, conv bigserial.Conversion, tool, dir string) {
	t.Helper()
	files, err := conv.Files(tool, "000002_ulid_flake_keys")
	require.NoError(t, err)
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
}

// checkKeys checks, after a step, that every key is converted (or back on
// a sequence), that every row is there and one more can be inserted
// through the foreign keys, and that the view reads.
func checkKeys(t *testing.T, db *sql.DB, role, step string, converted bool) {
	t.Helper()
	var lastOld int64 // the largest key a sequence made
	require.NoError(t, db.QueryRow(`SELECT max(id) FROM billing."Invoice Lines" WHERE id < 1::bigint << 40`).Scan(&lastOld))
	for _, k := range keyColumns {
		var typ, identity string
		require.NoError(t, db.QueryRow(`SELECT format_type(atttypid, atttypmod), attidentity::text FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2`,
			k[0], k[1]).Scan(&typ, &identity))
		require.Equal(t, "bigint", typ, "%s %s", step, k[0])
		if converted {
			require.Contains(t, columnDefault(t, db, k[0], k[1]), "ulid_flake()", "%s %s", step, k[0])
			continue
		}
		if k[0] == "notes" {
			require.Equal(t, "a", identity, "%s: the identity is back, GENERATED ALWAYS", step)
		} else {
			require.Contains(t, columnDefault(t, db, k[0], k[1]), "nextval(", "%s %s", step, k[0])
		}
		var owner, seqOwner string
		require.NoError(t, db.QueryRow(`SELECT pg_get_userbyid(c.relowner), pg_get_userbyid(s.relowner) FROM pg_class c, pg_class s
			WHERE c.oid = $1::regclass AND s.oid = pg_get_serial_sequence($2, $3)::regclass`, k[0], k[0], k[1]).Scan(&owner, &seqOwner))
		require.Equal(t, owner, seqOwner, "%s %s", step, k[0])
	}
	if !converted {
		var usable bool
		require.NoError(t, db.QueryRow(`SELECT has_sequence_privilege($1, pg_get_serial_sequence('billing.customers', 'id'), 'USAGE')`,
			role).Scan(&usable))
		require.True(t, usable, "%s: the role that may insert may use the sequence", step)
	}
	var customer, invoice, line int64
	require.NoError(t, db.QueryRow(`INSERT INTO billing.customers (name) VALUES ('new') RETURNING id`).Scan(&customer))
	require.NoError(t, db.QueryRow(`INSERT INTO billing.invoices (customer_id, total) VALUES ($1, 1) RETURNING id`, customer).Scan(&invoice))
	require.NoError(t, db.QueryRow(`INSERT INTO billing."Invoice Lines" (invoice_id, amount) VALUES ($1, 1) RETURNING id`, invoice).Scan(&line))
	_, err := db.Exec(`INSERT INTO notes (invoice_id, body) VALUES ($1, 'n')`, invoice)
	require.NoError(t, err)
	if converted {
		require.Greater(t, customer, int64(1)<<40, step)
		require.Greater(t, line, int64(1)<<40, step)
	} else {
		// After the old keys, below the Ulid-Flakes.
		require.Less(t, customer, int64(1)<<40, step)
		require.Equal(t, lastOld+1, line, step)
	}
	var seen int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM billing.invoice_totals WHERE id = $1 AND customer_id = $2`, invoice, customer).Scan(&seen))
	require.Equal(t, 1, seen, "%s: the view reads the new row", step)
	var old int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM billing.invoices WHERE id <= 4`).Scan(&old))
	require.Equal(t, 4, old, "%s: the old rows keep their keys", step)
}

// The SQL has no trace of the database it was read from: no OID, column
// number or role. The goose file ends the statements goose must not split
// (the DO blocks) with StatementBegin/End; a name with a line break is
// refused for goose (it reads files line by line) and written for
// golang-migrate.
func TestConvertFilesShape(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		_, err := sdb.Exec(`CREATE TABLE k (id serial PRIMARY KEY); CREATE TABLE "new
line" (id serial PRIMARY KEY)`)
		require.NoError(t, err)
		conv, err := bigserial.ConvertSerial(ctx, sdb, "k", "id")
		require.NoError(t, err)
		var oid, owner string
		require.NoError(t, sdb.QueryRow(`SELECT 'k'::regclass::oid::text, pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'k'::regclass`).Scan(&oid, &owner))
		require.NotContains(t, conv.Up+conv.Down, oid)
		require.NotContains(t, conv.Up+conv.Down, owner)

		files, err := conv.Files("goose", "00002_keys")
		require.NoError(t, err)
		text := files["00002_keys.sql"]
		require.True(t, strings.HasPrefix(text, "-- +goose Up\n"), text)
		require.Equal(t, strings.Count(text, "DO E'"), strings.Count(text, "-- +goose StatementBegin\nDO E'"), text)
		require.NotContains(t, text, "BEGIN;", "goose runs the file in its own transaction")

		_, err = conv.Files("flyway", "00002_keys")
		require.ErrorIs(t, err, bigserial.ErrConvert)
		_, err = conv.Files("goose", "keys")
		require.ErrorIs(t, err, bigserial.ErrConvert)
		odd, err := bigserial.ConvertSerial(ctx, sdb, `"new
line"`, "id")
		require.NoError(t, err)
		_, err = odd.Files("goose", "00003_keys")
		require.ErrorIs(t, err, bigserial.ErrConvert)
		_, err = odd.Files("golang-migrate", "00003_keys")
		require.NoError(t, err)

		_, err = bigserial.ConvertKeys(ctx, sdb, []bigserial.Key{{Table: "k", Column: "id"}, {Table: "public.k", Column: "id"}})
		require.ErrorIs(t, err, bigserial.ErrConvert, "the same key twice")
		_, _, err = bigserial.KeysIn(ctx, sdb, "nowhere")
		require.ErrorIs(t, err, bigserial.ErrConvert)
	})
}

// Installing the migrations as psql does, from `ulidflake migrations up`,
// raises one NOTICE on an empty database, and only that one: version 3
// (released in 0.1.0, so its file never changes) drops, IF EXISTS, a
// constraint that the DROP NOT NULL before it has already dropped.
func TestInstallRaisesOnlyVersion3sNotice(t *testing.T) {
	t.Parallel()
	bin := itest.BuildCLI(t)
	code, script, stderr := itest.RunBin(t, bin, "migrations", "up")
	require.Equal(t, 0, code, stderr)
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			_, name := itest.EmptyDBNamed(t, s)
			cfg, err := pgx.ParseConfig(s.URL)
			require.NoError(t, err)
			cfg.Database = name
			var notices []string
			cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Severity+": "+n.Message) }
			conn, err := pgx.ConnectConfig(context.Background(), cfg)
			require.NoError(t, err)
			defer conn.Close(context.Background())
			_, err = conn.PgConn().Exec(context.Background(), script).ReadAll()
			require.NoError(t, err)
			require.Equal(t, []string{`NOTICE: constraint "ulid_flake: SID not set (argument or ulid_flake.sid)" of domain "ulid_flake_sid" does not exist, skipping`}, notices)
		})
	}
}
