package convert_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/migrations/bigserial"
)

// hostileNames are identifiers an attacker who may create tables would
// try: every one must be converted as a name, never run as SQL, whatever
// standard_conforming_strings says (issue 20: the column \\',o.e());--).
var hostileNames = []string{
	"id\nALTER ROLE mallory SUPERUSER;--",
	"x';END IF;DROP TABLE victim;IF 1=1 THEN RAISE NOTICE '",
	`\\',o.e());--`, `\',o.e());--`, `\\\',o.e());--`, `x\'';SELECT o.e();--`, `E'\\'`, `\x27`, `\047`, `\u0027`, `'\`, `\\`,
	`50%off`, `%s%I%L`, `%I`, `a$body$b`, `$$`, `$tag$`, `$check$`, `/*`, `*/`, `--`, `a"b`, `"`, `'`, `\`, `back\slash'`,
	"Mixed.Case", "MiXeD", "new\nline", "tab\there", ";", "ÜNÏCÖDÉ ☃ 日本",
	"ulid_flake_orders", "ulid_flake()", "ulid_flake_min", "public", "$user",
	strings.Repeat("a", 63), strings.Repeat("é", 31) + "x", strings.Repeat("b", 70), strings.Repeat(`\'`, 40),
}

// snapshot lists the catalog of every schema, the roles that are
// superusers or may create roles, leaving out the converted table's own
// column, defaults, sequences and constraints, which the conversion
// changes.
func snapshot(t *testing.T, db *sql.DB, schema string) string {
	t.Helper()
	var out string
	require.NoError(t, db.QueryRow(`SELECT string_agg(x, E'\n' ORDER BY x) FROM (
		SELECT 'rel ' || n.nspname || '.' || c.relname || ' ' || c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname NOT IN ($1, 'pg_toast') AND c.relkind <> 'S'
		UNION ALL SELECT 'col ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ($1, 'pg_catalog', 'information_schema', 'pg_toast') AND a.attnum > 0
		UNION ALL SELECT 'proc ' || n.nspname || '.' || p.proname || ' ' || md5(p.prosrc) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname <> $1
		UNION ALL SELECT 'role ' || rolname || ' ' || rolsuper::text || rolcreaterole::text FROM pg_roles WHERE rolsuper OR rolcreaterole OR rolname LIKE 'mallory%'
		UNION ALL SELECT 'nsp ' || nspname FROM pg_namespace
		UNION ALL SELECT 'db ' || d.datname || ' ' || coalesce(s.setconfig::text, '') FROM pg_database d
			LEFT JOIN pg_db_role_setting s ON s.setdatabase = d.oid AND s.setrole = 0 WHERE d.datname = current_database()
	) s(x)`, schema).Scan(&out))
	return out
}

// hostileSettings are what a database owner who is no superuser can set
// for every session with ALTER DATABASE: each changes how SQL text is read.
// search_path puts public, where mallory plants her hijackers, before
// pg_catalog.
var hostileSettings = []string{
	"standard_conforming_strings = off", "backslash_quote = on", "escape_string_warning = off",
	"search_path = public, pg_catalog", `"DateStyle" = 'SQL, DMY'`, `"IntervalStyle" = sql_standard`,
	`"TimeZone" = 'Pacific/Chatham'`, "extra_float_digits = -15",
}

// refusedSettings are the hostileSettings that a server which has only
// standard strings (itest.StandardStringsOnly: PostgreSQL 19) refuses,
// with the SQLSTATE it refuses them with.
var refusedSettings = map[string]string{
	"standard_conforming_strings = off": "0A000", // feature_not_supported
	"escape_string_warning = off":       "42704", // the parameter is gone
}

// plantHijackers makes, as role, a function in public for every built-in
// function and aggregate of pg_catalog whose argument and result types are
// plain (the catalog's list, not a hand-made one), and an operator for
// every built-in binary operator on them. Each makes role superuser when a
// superuser calls it, by way of a search_path that puts public first.
func plantHijackers(t *testing.T, db *sql.DB, role string) {
	t.Helper()
	_, err := db.Exec(`SET ROLE ` + role + `; DO $plant$
	DECLARE
		r record;
		n int := 0;
		body text := format('BEGIN EXECUTE %L; RETURN NULL; END', 'ALTER ROLE ` + role + ` SUPERUSER');
		plain oid[] := ARRAY['int2','int4','int8','oid','name','text','bool','char','regclass','timestamptz',
			'aclitem[]','name[]','text[]','json','jsonb','regtype','regnamespace','regproc']::regtype[]::oid[];
	BEGIN
		FOR r IN SELECT p.proname, p.prokind, ARRAY(SELECT unnest(p.proargtypes::oid[])) AS args, p.prorettype FROM pg_catalog.pg_proc p
			WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.prokind IN ('f', 'a') AND NOT p.proretset
				AND p.proargtypes::oid[] <@ plain AND p.prorettype = ANY (plain)
		LOOP
			n := n + 1;
			IF r.prokind = 'f' THEN
				EXECUTE format('CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L', r.proname,
					(SELECT coalesce(string_agg(format_type(a, NULL), ', '), '') FROM unnest(r.args) a), format_type(r.prorettype, NULL), body);
			ELSIF cardinality(r.args) = 1 THEN
				EXECUTE format('CREATE FUNCTION public.hijack_sfunc_%s(%s, %s) RETURNS %s LANGUAGE plpgsql AS %L', n,
					format_type(r.prorettype, NULL), format_type(r.args[1], NULL), format_type(r.prorettype, NULL), body);
				EXECUTE format('CREATE AGGREGATE public.%I(%s) (SFUNC = public.hijack_sfunc_%s, STYPE = %s)', r.proname,
					format_type(r.args[1], NULL), n, format_type(r.prorettype, NULL));
			END IF;
		END LOOP;
		FOR r IN SELECT o.oprname, o.oprleft, o.oprright, o.oprresult FROM pg_catalog.pg_operator o
			WHERE o.oprnamespace = 'pg_catalog'::regnamespace AND o.oprleft = ANY (plain) AND o.oprright = ANY (plain)
		LOOP
			n := n + 1;
			EXECUTE format('CREATE FUNCTION public.hijack_op_%s(%s, %s) RETURNS %s LANGUAGE plpgsql AS %L', n,
				format_type(r.oprleft, NULL), format_type(r.oprright, NULL), format_type(r.oprresult, NULL), body);
			EXECUTE format('CREATE OPERATOR public.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = public.hijack_op_%s)', r.oprname,
				format_type(r.oprleft, NULL), format_type(r.oprright, NULL), n);
		END LOOP;
	END $plant$; RESET ROLE`)
	require.NoError(t, err)
}

// Tables, columns and schemas with hostile names, owned by a role that
// may not do much, converted by a superuser, first with the default
// settings, then with the settings of hostileSettings that the role, as
// the database's owner, set with ALTER DATABASE, and with hijackers for
// every built-in function and operator planted in public: each conversion
// converts its table, the way back works, and nothing else in the catalog
// changes (no role became superuser, no table was dropped, no function
// changed). A server with only standard strings (PostgreSQL 19) must
// refuse the settings of refusedSettings, and converts with the others.
func TestConvertHostileNames(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		mallory := "mallory_" + db.Name
		// The test's own queries run with settings of their own, which a
		// connection's parameters set over the database's.
		cfg, err := pgx.ParseConfig(db.URL)
		require.NoError(t, err)
		cfg.RuntimeParams["search_path"] = "public" // pg_catalog implicitly first
		cfg.RuntimeParams["standard_conforming_strings"] = "on"
		sdb := stdlib.OpenDB(*cfg)
		t.Cleanup(func() { sdb.Close() })
		_, err = sdb.Exec(`CREATE ROLE ` + mallory + ` LOGIN; CREATE TABLE victim (x int); GRANT CREATE ON SCHEMA public TO ` + mallory + `;
			CREATE SCHEMA o AUTHORIZATION ` + mallory + `; SET ROLE ` + mallory + `;
			CREATE FUNCTION o.e() RETURNS int LANGUAGE plpgsql AS $e$BEGIN ALTER ROLE ` + mallory + ` SUPERUSER; RETURN 1; END$e$;
			GRANT USAGE ON SCHEMA o TO PUBLIC; RESET ROLE`)
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = sdb.Exec(`DROP OWNED BY ` + mallory + ` CASCADE; DROP ROLE ` + mallory) })

		for _, hostile := range []bool{false, true} {
			victim := itest.StdDB(t, db)
			if hostile {
				plantHijackers(t, sdb, mallory)
				_, err := sdb.Exec(`ALTER DATABASE ` + db.Name + ` OWNER TO ` + mallory)
				require.NoError(t, err)
				wantSCS := "off"
				for _, set := range hostileSettings {
					_, err := sdb.Exec(`SET ROLE ` + mallory + `; ALTER DATABASE ` + db.Name + ` SET ` + set + `; RESET ROLE`)
					if code := refusedSettings[set]; code != "" && itest.StandardStringsOnly(db.Server) {
						itest.RequireSQLState(t, err, code, set)
						wantSCS = "on"
						continue
					}
					require.NoError(t, err, set)
				}
				// A new pool: its sessions start with the database's settings.
				p, err := pgxpool.New(ctx, db.URL)
				require.NoError(t, err)
				t.Cleanup(p.Close)
				victim = stdlib.OpenDBFromPool(p)
				t.Cleanup(func() { victim.Close() })
				var scs, path string
				require.NoError(t, victim.QueryRow(`SHOW standard_conforming_strings`).Scan(&scs))
				require.NoError(t, victim.QueryRow(`SHOW search_path`).Scan(&path))
				require.Equal(t, wantSCS, scs)
				require.Equal(t, "public, pg_catalog", path)
			}
			convertHostileNames(t, sdb, victim, mallory, hostile)
		}
	})
}

// convertHostileNames converts (with victim) and checks (with sdb) a
// table for every name of hostileNames, serial and identity.
func convertHostileNames(t *testing.T, sdb, victim *sql.DB, mallory string, hostile bool) {
	ctx := context.Background()
	for i, name := range hostileNames {
		name := strings.ReplaceAll(name, "mallory", mallory)
		if len(name) > 63 {
			name = truncateName(name, 63)
		}
		schema := truncateName(fmt.Sprintf("s%d %s", i, name), 40)
		table := pgx.Identifier{schema, name}.Sanitize()
		col := pgx.Identifier{name}.Sanitize()
		// A quick run converts each name as one kind of column.
		for _, kind := range pgtest.Spread([]string{"serial", "bigint GENERATED ALWAYS AS IDENTITY"}, i, 2) {
			label := fmt.Sprintf("%q %s hostile=%v", name, kind, hostile)
			_, err := sdb.Exec(`DROP SCHEMA IF EXISTS ` + pgx.Identifier{schema}.Sanitize() + ` CASCADE`)
			require.NoError(t, err)
			_, err = sdb.Exec(`CREATE SCHEMA ` + pgx.Identifier{schema}.Sanitize() + ` AUTHORIZATION ` + mallory)
			require.NoError(t, err, "%q", schema)
			_, err = sdb.Exec(fmt.Sprintf(`SET ROLE %s; CREATE TABLE %s (%s %s PRIMARY KEY, v int);
				CREATE TABLE %s (r int REFERENCES %s); INSERT INTO %s (v) VALUES (1), (2); RESET ROLE`,
				mallory, table, col, kind, pgx.Identifier{schema, "ref"}.Sanitize(), table, table))
			require.NoError(t, err, label)
			before := snapshot(t, sdb, schema)

			// The name as a user types it: quoted, schema-qualified.
			conv, err := bigserial.ConvertSerial(ctx, victim, table, name)
			require.NoError(t, err, label)
			require.NoError(t, conv.Apply(ctx, victim, migrations.DirectionUp), "%s up:\n%s", label, conv.Up)
			require.Contains(t, columnDefault(t, sdb, table, name), "ulid_flake()", label)
			var refType string
			require.NoError(t, sdb.QueryRow(`SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'r'`,
				pgx.Identifier{schema, "ref"}.Sanitize()).Scan(&refType))
			require.Equal(t, "bigint", refType)
			_, err = sdb.Exec(`INSERT INTO ` + table + ` (v) VALUES (3)`)
			require.NoError(t, err)

			// The way back, from the converted state.
			back, err := bigserial.ConvertSerial(ctx, victim, table, name)
			require.NoError(t, err, label)
			require.Empty(t, back.Up)
			require.NoError(t, back.Apply(ctx, victim, migrations.DirectionDown), "%s down:\n%s", label, back.Down)
			var next int64
			require.NoError(t, sdb.QueryRow(`INSERT INTO `+table+` (v) VALUES (4) RETURNING `+col).Scan(&next))
			require.EqualValues(t, 3, next, "%s: the sequence starts after the old keys", label)

			require.Equal(t, before, snapshot(t, sdb, schema), "%s: the catalog outside the table changed", label)
			var super bool
			require.NoError(t, sdb.QueryRow(`SELECT rolsuper FROM pg_roles WHERE rolname = $1`, mallory).Scan(&super))
			require.False(t, super, label)
			require.NoError(t, sdb.QueryRow(`SELECT count(*) FROM victim`).Scan(new(int)))
		}
	}
}

// truncateName cuts s to at most n bytes on a character boundary, as
// PostgreSQL cuts an identifier.
func truncateName(s string, n int) string {
	for len(s) > n || !utf8Valid(s) {
		s = s[:len(s)-1]
	}
	return s
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
		sdb := itest.StdDB(t, db)
		_, err := sdb.Exec(`CREATE SCHEMA "Other Schema"`)
		require.NoError(t, err)
		for i, kind := range []string{"serial", "bigserial", "smallserial", "int GENERATED ALWAYS AS IDENTITY", "bigint GENERATED BY DEFAULT AS IDENTITY"} {
			for _, table := range []string{fmt.Sprintf(`t%d`, i), fmt.Sprintf(`"Mixed.Case%d"`, i), fmt.Sprintf(`"Other Schema"."Q""t%d"`, i)} {
				_, err := sdb.Exec(fmt.Sprintf(`CREATE TABLE %s ("Key" %s PRIMARY KEY, v int); INSERT INTO %s (v) SELECT g FROM generate_series(1, 5) g`, table, kind, table))
				require.NoError(t, err, table)
				conv, err := bigserial.ConvertSerial(ctx, sdb, table, "Key")
				require.NoError(t, err, table)
				require.NoError(t, conv.Apply(ctx, sdb, migrations.DirectionUp), "%s:\n%s", table, conv.Up)
				var id int64
				require.NoError(t, sdb.QueryRow(`INSERT INTO `+table+` (v) VALUES (0) RETURNING "Key"`).Scan(&id))
				require.Greater(t, id, int64(1)<<40, table)
				require.NoError(t, conv.Apply(ctx, sdb, migrations.DirectionDown), "%s:\n%s", table, conv.Down)
				require.NoError(t, sdb.QueryRow(`INSERT INTO `+table+` (v) VALUES (0) RETURNING "Key"`).Scan(&id))
				require.EqualValues(t, 6, id, table)
				// And forward again, from the state the way back left.
				again, err := bigserial.ConvertSerial(ctx, sdb, table, "Key")
				require.NoError(t, err, table)
				require.NoError(t, again.Apply(ctx, sdb, migrations.DirectionUp), "%s:\n%s", table, again.Up)
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
		sdb := itest.StdDB(t, db)
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

		conv, err := bigserial.ConvertSerial(ctx, sdb, "parent", "id")
		require.NoError(t, err)
		require.NotContains(t, conv.Up, "kept", "a domain over bigint needs no widening")
		require.NotContains(t, conv.Up, "events_2026", "only the partitioned parent is altered")
		require.NoError(t, conv.Apply(ctx, sdb, migrations.DirectionUp), conv.Up)
		var typ string
		require.NoError(t, sdb.QueryRow(`SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'kept'::regclass AND attname = 'p'`).Scan(&typ))
		require.Equal(t, "big_ref", typ, "the domain was dropped")
		require.NoError(t, sdb.QueryRow(`SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'events_2026'::regclass AND attname = 'p'`).Scan(&typ))
		require.Equal(t, "bigint", typ)

		_, err = bigserial.ConvertSerial(ctx, sdb, "lonely", "id")
		require.ErrorIs(t, err, bigserial.ErrConvert)
		require.ErrorContains(t, err, "small_ref over integer")

		_, err = bigserial.ConvertSerial(ctx, sdb, "lonely", "id", bigserial.WithLockTimeout(500*time.Microsecond))
		require.ErrorIs(t, err, bigserial.ErrConvert)
		require.ErrorContains(t, err, "below 1ms")

		// Functions in a schema outside the search_path, and SQL printed
		// under one search_path run under another.
		_, err = sdb.Exec(`CREATE SCHEMA ids; CREATE SCHEMA app; CREATE TABLE app.items (id serial PRIMARY KEY);
			CREATE TABLE public.items (id serial PRIMARY KEY)`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.NoError(t, err)
		conn, err := sdb.Conn(ctx)
		require.NoError(t, err)
		defer conn.Close()
		_, err = conn.ExecContext(ctx, `SET search_path = app`)
		require.NoError(t, err)
		printed, err := bigserial.ConvertSerial(ctx, sdb, "app.items", "id")
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
		sdb := itest.StdDB(t, db)
		_, err := sdb.Exec(`CREATE TABLE ulid_flake_orders (id serial PRIMARY KEY, t text);
			CREATE TABLE plain (ulid_flake bigserial PRIMARY KEY);
			CREATE SEQUENCE "ulid_flake()"; CREATE TABLE named (id bigint PRIMARY KEY DEFAULT nextval('"ulid_flake()"'));
			ALTER SEQUENCE "ulid_flake()" OWNED BY named.id`)
		require.NoError(t, err)
		for _, tc := range []struct{ table, column string }{{"ulid_flake_orders", "id"}, {"plain", "ulid_flake"}, {"named", "id"}} {
			conv, err := bigserial.ConvertSerial(ctx, sdb, tc.table, tc.column)
			require.NoError(t, err, tc.table)
			require.NotEmpty(t, conv.Up, "%s read as converted", tc.table)
			before := columnDefault(t, sdb, tc.table, tc.column)
			err = conv.Apply(ctx, sdb, migrations.DirectionDown)
			require.ErrorContains(t, err, "is not converted", tc.table)
			require.ErrorContains(t, err, "55000", tc.table)
			require.Equal(t, before, columnDefault(t, sdb, tc.table, tc.column), "the way back changed an unconverted column")

			require.NoError(t, conv.Apply(ctx, sdb, migrations.DirectionUp), tc.table)
			again, err := bigserial.ConvertSerial(ctx, sdb, tc.table, tc.column)
			require.NoError(t, err)
			require.Empty(t, again.Up, "%s not seen as converted", tc.table)
			require.NoError(t, again.Apply(ctx, sdb, migrations.DirectionDown), tc.table)
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
