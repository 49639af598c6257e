package integration_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// hostileNames are identifiers an attacker who may create tables would
// try: every one must be converted as a name, never run as SQL.
var hostileNames = []string{
	"id\nALTER ROLE mallory SUPERUSER;--",
	"x';END IF;DROP TABLE victim;IF 1=1 THEN RAISE NOTICE '",
	`50%off`, `%s%I%L`, `a$body$b`, `$$`, `$tag$`, `$check$`, `/*`, `*/`, `--`, `a"b`, `"`, `'`, `\`, `back\slash'`,
	"Mixed.Case", "new\nline", "tab\there", ";", "ÜNÏCÖDÉ ☃ 日本",
	strings.Repeat("a", 63), strings.Repeat("é", 31) + "x",
}

// snapshot lists the catalog of every schema, the roles and their
// superuser bits, leaving out the converted table's own column, defaults,
// sequences and constraints, which the conversion changes.
func snapshot(t *testing.T, db *sql.DB, schema string) string {
	t.Helper()
	var out string
	require.NoError(t, db.QueryRow(`SELECT string_agg(x, E'\n' ORDER BY x) FROM (
		SELECT 'rel ' || n.nspname || '.' || c.relname || ' ' || c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname NOT IN ($1, 'pg_toast') AND c.relkind <> 'S'
		UNION ALL SELECT 'col ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ($1, 'pg_catalog', 'information_schema', 'pg_toast') AND a.attnum > 0
		UNION ALL SELECT 'proc ' || n.nspname || '.' || p.proname || ' ' || md5(p.prosrc) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname <> $1
		UNION ALL SELECT 'role ' || rolname || ' ' || rolsuper::text || rolcreaterole::text FROM pg_roles
		UNION ALL SELECT 'nsp ' || nspname FROM pg_namespace
	) s(x)`, schema).Scan(&out))
	return out
}

// Tables, columns and schemas with hostile names, owned by a role that
// may not do much, converted by a superuser: each conversion converts its
// table, the way back works, and nothing else in the catalog changes (no
// role became superuser, no table was dropped).
func TestConvertHostileNames(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := stdDB(t, db)
		mallory := "mallory_" + db.Name
		_, err := sdb.Exec(`CREATE ROLE ` + mallory + ` LOGIN; CREATE TABLE victim (x int); GRANT CREATE ON SCHEMA public TO ` + mallory)
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = sdb.Exec(`DROP OWNED BY ` + mallory + ` CASCADE; DROP ROLE ` + mallory) })
		for i, name := range hostileNames {
			name := strings.ReplaceAll(name, "mallory", mallory)
			schema := fmt.Sprintf("s%d %s", i, name)
			if len(schema) > 63 {
				schema = schema[:40]
			}
			for len(schema) > 0 && !utf8Valid(schema) {
				schema = schema[:len(schema)-1]
			}
			table := pgx.Identifier{schema, name}.Sanitize()
			col := pgx.Identifier{name}.Sanitize()
			for _, kind := range []string{"serial", "bigint GENERATED ALWAYS AS IDENTITY"} {
				_, err := sdb.Exec(`DROP SCHEMA IF EXISTS ` + pgx.Identifier{schema}.Sanitize() + ` CASCADE`)
				require.NoError(t, err)
				_, err = sdb.Exec(`CREATE SCHEMA ` + pgx.Identifier{schema}.Sanitize() + ` AUTHORIZATION ` + mallory)
				require.NoError(t, err, "%q", schema)
				_, err = sdb.Exec(fmt.Sprintf(`SET ROLE %s; CREATE TABLE %s (%s %s PRIMARY KEY, v int);
					CREATE TABLE %s (r int REFERENCES %s); INSERT INTO %s (v) VALUES (1), (2); RESET ROLE`,
					mallory, table, col, kind, pgx.Identifier{schema, "ref"}.Sanitize(), table, table))
				require.NoError(t, err, "%q", name)
				before := snapshot(t, sdb, schema)

				// The name as a user types it: quoted, schema-qualified.
				conv, err := migrations.ConvertSerial(ctx, sdb, table, name)
				require.NoError(t, err, "%q", name)
				require.NoError(t, conv.Apply(ctx, sdb, true), "%q up:\n%s", name, conv.Up)
				var def string
				require.NoError(t, sdb.QueryRow(`SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
					JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum WHERE d.adrelid = $1::regclass AND a.attname = $2`, table, name).Scan(&def))
				require.Contains(t, def, "ulid_flake()", "%q", name)
				var refType string
				require.NoError(t, sdb.QueryRow(`SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'r'`,
					pgx.Identifier{schema, "ref"}.Sanitize()).Scan(&refType))
				require.Equal(t, "bigint", refType)
				_, err = sdb.Exec(`INSERT INTO ` + table + ` (v) VALUES (3)`)
				require.NoError(t, err)

				// The way back, from the converted state.
				back, err := migrations.ConvertSerial(ctx, sdb, table, name)
				require.NoError(t, err, "%q", name)
				require.Empty(t, back.Up)
				require.NoError(t, back.Apply(ctx, sdb, false), "%q down:\n%s", name, back.Down)
				var next int64
				require.NoError(t, sdb.QueryRow(`INSERT INTO `+table+` (v) VALUES (4) RETURNING `+col).Scan(&next))
				require.EqualValues(t, 3, next, "%q: the sequence starts after the old keys", name)

				require.Equal(t, before, snapshot(t, sdb, schema), "%q: the catalog outside the table changed", name)
				var super bool
				require.NoError(t, sdb.QueryRow(`SELECT rolsuper FROM pg_roles WHERE rolname = $1`, mallory).Scan(&super))
				require.False(t, super)
				require.NoError(t, sdb.QueryRow(`SELECT count(*) FROM victim`).Scan(new(int)))
			}
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\x00") == s }

// serial, bigserial, smallserial and identity keys, mixed case, quoted and
// in another schema: the way forward then the way back, with the same
// guarantees (the old keys kept, the new ones after them).
func TestConvertRoundTripKinds(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := stdDB(t, db)
		_, err := sdb.Exec(`CREATE SCHEMA "Other Schema"`)
		require.NoError(t, err)
		for i, kind := range []string{"serial", "bigserial", "smallserial", "int GENERATED ALWAYS AS IDENTITY", "bigint GENERATED BY DEFAULT AS IDENTITY"} {
			for _, table := range []string{fmt.Sprintf(`t%d`, i), fmt.Sprintf(`"Mixed.Case%d"`, i), fmt.Sprintf(`"Other Schema"."Q""t%d"`, i)} {
				_, err := sdb.Exec(fmt.Sprintf(`CREATE TABLE %s ("Key" %s PRIMARY KEY, v int); INSERT INTO %s (v) SELECT g FROM generate_series(1, 5) g`, table, kind, table))
				require.NoError(t, err, table)
				conv, err := migrations.ConvertSerial(ctx, sdb, table, "Key")
				require.NoError(t, err, table)
				require.NoError(t, conv.Apply(ctx, sdb, true), "%s:\n%s", table, conv.Up)
				var id int64
				require.NoError(t, sdb.QueryRow(`INSERT INTO `+table+` (v) VALUES (0) RETURNING "Key"`).Scan(&id))
				require.Greater(t, id, int64(1)<<40, table)
				require.NoError(t, conv.Apply(ctx, sdb, false), "%s:\n%s", table, conv.Down)
				require.NoError(t, sdb.QueryRow(`INSERT INTO `+table+` (v) VALUES (0) RETURNING "Key"`).Scan(&id))
				require.EqualValues(t, 6, id, table)
				// And forward again, from the state the way back left.
				again, err := migrations.ConvertSerial(ctx, sdb, table, "Key")
				require.NoError(t, err, table)
				require.NoError(t, again.Apply(ctx, sdb, true), "%s:\n%s", table, again.Up)
			}
		}
	})
}

// Domains on foreign-key columns are kept; a partitioned referencing table
// is altered through its parent; functions outside the search_path are
// called by their schema; the printed SQL converts the same table under
// another search_path; a lock timeout below 1ms is refused.
func TestConvertDeployments(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := stdDB(t, db)
		_, err := sdb.Exec(`
			CREATE DOMAIN big_ref AS bigint CONSTRAINT big_ref_positive CHECK (VALUE > 0);
			CREATE DOMAIN small_ref AS int CHECK (VALUE > 0);
			CREATE TABLE parent (id serial PRIMARY KEY);
			INSERT INTO parent DEFAULT VALUES;
			CREATE TABLE kept (p big_ref REFERENCES parent);
			CREATE TABLE events (p int REFERENCES parent, at date NOT NULL) PARTITION BY RANGE (at);
			CREATE TABLE events_2026 PARTITION OF events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
			INSERT INTO events VALUES (1, '2026-06-01');
			CREATE TABLE lonely (id serial PRIMARY KEY);
			CREATE TABLE blocked (p small_ref REFERENCES lonely)`)
		require.NoError(t, err)

		conv, err := migrations.ConvertSerial(ctx, sdb, "parent", "id")
		require.NoError(t, err)
		require.NotContains(t, conv.Up, "kept", "a domain over bigint needs no widening")
		require.NotContains(t, conv.Up, "events_2026", "only the partitioned parent is altered")
		require.NoError(t, conv.Apply(ctx, sdb, true), conv.Up)
		var typ string
		require.NoError(t, sdb.QueryRow(`SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'kept'::regclass AND attname = 'p'`).Scan(&typ))
		require.Equal(t, "big_ref", typ, "the domain was dropped")
		require.NoError(t, sdb.QueryRow(`SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'events_2026'::regclass AND attname = 'p'`).Scan(&typ))
		require.Equal(t, "bigint", typ)

		_, err = migrations.ConvertSerial(ctx, sdb, "lonely", "id")
		require.ErrorIs(t, err, migrations.ErrConvert)
		require.ErrorContains(t, err, "domain small_ref")

		_, err = migrations.ConvertSerial(ctx, sdb, "lonely", "id", migrations.LockTimeout(500*time.Microsecond))
		require.ErrorIs(t, err, migrations.ErrConvert)
		require.ErrorContains(t, err, "below 1ms")

		// Functions in a schema outside the search_path, and SQL printed
		// under one search_path run under another.
		_, err = sdb.Exec(`CREATE SCHEMA ids; CREATE SCHEMA app; CREATE TABLE app.items (id serial PRIMARY KEY);
			CREATE TABLE public.items (id serial PRIMARY KEY)`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.Schema("ids"))
		require.NoError(t, err)
		conn, err := sdb.Conn(ctx)
		require.NoError(t, err)
		defer conn.Close()
		_, err = conn.ExecContext(ctx, `SET search_path = app`)
		require.NoError(t, err)
		printed, err := migrations.ConvertSerial(ctx, sdb, "app.items", "id")
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, `SET search_path = public`)
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, printed.Up)
		require.NoError(t, err, printed.Up)
		var appDef, publicDef string
		require.NoError(t, sdb.QueryRow(`SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'app.items'::regclass`).Scan(&appDef))
		require.NoError(t, sdb.QueryRow(`SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'public.items'::regclass`).Scan(&publicDef))
		require.Contains(t, appDef, "ulid_flake()")
		require.Contains(t, publicDef, "nextval", "another table was converted")
	})
}

// A serial whose table, column or sequence name contains "ulid_flake" is a
// serial like any other: it converts, and the way back, run before the
// conversion, refuses (55000) and changes nothing.
func TestConvertNamesThatLookConverted(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := stdDB(t, db)
		_, err := sdb.Exec(`CREATE TABLE ulid_flake_orders (id serial PRIMARY KEY, t text);
			CREATE TABLE plain (ulid_flake bigserial PRIMARY KEY);
			CREATE SEQUENCE "ulid_flake()"; CREATE TABLE named (id bigint PRIMARY KEY DEFAULT nextval('"ulid_flake()"'));
			ALTER SEQUENCE "ulid_flake()" OWNED BY named.id`)
		require.NoError(t, err)
		for _, tc := range []struct{ table, column string }{{"ulid_flake_orders", "id"}, {"plain", "ulid_flake"}, {"named", "id"}} {
			conv, err := migrations.ConvertSerial(ctx, sdb, tc.table, tc.column)
			require.NoError(t, err, tc.table)
			require.NotEmpty(t, conv.Up, "%s read as converted", tc.table)
			before := columnDefault(t, sdb, tc.table, tc.column)
			err = conv.Apply(ctx, sdb, false)
			require.ErrorContains(t, err, "is not converted", tc.table)
			require.ErrorContains(t, err, "55000", tc.table)
			require.Equal(t, before, columnDefault(t, sdb, tc.table, tc.column), "the way back changed an unconverted column")

			require.NoError(t, conv.Apply(ctx, sdb, true), tc.table)
			again, err := migrations.ConvertSerial(ctx, sdb, tc.table, tc.column)
			require.NoError(t, err)
			require.Empty(t, again.Up, "%s not seen as converted", tc.table)
			require.NoError(t, again.Apply(ctx, sdb, false), tc.table)
			require.Contains(t, columnDefault(t, sdb, tc.table, tc.column), "nextval(")
		}
	})
}

func columnDefault(t *testing.T, db *sql.DB, table, column string) string {
	t.Helper()
	var def string
	require.NoError(t, db.QueryRow(`SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
		JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum WHERE d.adrelid = $1::regclass AND a.attname = $2`,
		table, column).Scan(&def))
	return def
}
