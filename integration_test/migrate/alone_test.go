package migrate_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// applyFiles runs the migration files from version from to version to
// (down when from > to) as golang-migrate, goose and psql do: one file
// per transaction, search_path set to schema. It returns the first
// error, and the version it stopped at.
func applyFiles(t *testing.T, db *sql.DB, schema string, from, to int) (int, error) {
	t.Helper()
	ctx := context.Background()
	all, err := migrations.All()
	require.NoError(t, err)
	run := func(v int, body string) error {
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, `SELECT set_config('search_path', quote_ident($1), true)`, schema); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, body); err != nil {
			return err
		}
		return tx.Commit()
	}
	for v := from + 1; v <= to; v++ {
		if err := run(v, all[v-1].Up); err != nil {
			return v, err
		}
	}
	for v := from; v > to; v-- {
		if err := run(v, all[v-1].Down); err != nil {
			return v, err
		}
	}
	return to, nil
}

// TestCoTenantOfTheInstallSchemaRefused: the attack of issue 38. Schema
// ids belongs to the superuser who installs, with the files as the tools
// run them; after versions 1 to 4 the application role may create in ids,
// and creates functions of the install's names (ulid_flake_at, and the
// mesh's owner functions that later versions would adopt). Version 5 is
// refused (55U05), naming the grant and each planted function, and so is
// Migrate (ErrForeignOwner); neither runs anything of the role's. Without
// the grant the planted functions are still named; once they are gone the
// install goes on to the latest version. A grant after the install
// refuses the next Down, by the files and by Migrate, and the next
// Migrate; PUBLIC's CREATE (public on clusters from before PostgreSQL
// 15) is named as such.
func TestCoTenantOfTheInstallSchemaRefused(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		app := "app_" + name
		loginRole(t, db.Server, app, name)
		_, err := sdb.ExecContext(ctx, `CREATE SCHEMA ids`)
		require.NoError(t, err)
		_, err = applyFiles(t, sdb, "ids", 0, 4)
		require.NoError(t, err)
		_, err = sdb.ExecContext(ctx, `GRANT USAGE, CREATE ON SCHEMA ids TO `+app)
		require.NoError(t, err)
		adb := openAs(t, db.Server, name, app)
		for _, plant := range []string{
			`ulid_flake_at(t timestamptz) RETURNS bigint`,
			`ulid_flake_new_node(sid integer) RETURNS void`,
			`ulid_flake_retire_node(node uuid) RETURNS void`,
		} {
			ret := "42"
			if strings.HasSuffix(plant, "void") {
				ret = ""
			}
			_, err = adb.ExecContext(ctx, `CREATE FUNCTION ids.`+plant+` LANGUAGE plpgsql AS $$`+plantEscalation(app, ret)+`$$`)
			require.NoError(t, err, plant)
		}

		at, err := applyFiles(t, sdb, "ids", 4, migrations.Latest())
		require.Equal(t, 5, at)
		require.Equal(t, "55U05", sqlCode(err), "%v", err)
		require.ErrorContains(t, err, app+" may create in it")
		require.ErrorContains(t, err, "function ids.ulid_flake_at(timestamp with time zone) is owned by "+app)
		require.ErrorContains(t, err, "function ids.ulid_flake_new_node(integer) is owned by "+app)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		require.ErrorContains(t, err, app+" may create in it")
		require.False(t, isSuper(t, sdb, app))

		_, err = sdb.ExecContext(ctx, `REVOKE CREATE ON SCHEMA ids FROM `+app)
		require.NoError(t, err)
		_, err = applyFiles(t, sdb, "ids", 4, migrations.Latest())
		require.Equal(t, "55U05", sqlCode(err), "%v", err)
		require.NotContains(t, err.Error(), "may create in it")
		require.ErrorContains(t, err, "function ids.ulid_flake_retire_node(uuid) is owned by "+app)

		_, err = sdb.ExecContext(ctx, `DROP OWNED BY `+app)
		require.NoError(t, err)
		_, err = applyFiles(t, sdb, "ids", 4, migrations.Latest())
		require.NoError(t, err)
		_, err = adb.ExecContext(ctx, `SELECT 1`) // the role may still use the install
		require.NoError(t, err)

		// A grant after the install: the next Down and the next Migrate refuse.
		_, err = sdb.ExecContext(ctx, `GRANT USAGE, CREATE ON SCHEMA ids TO `+app)
		require.NoError(t, err)
		_, err = applyFiles(t, sdb, "ids", migrations.Latest(), migrations.Latest()-1)
		require.Equal(t, "55U05", sqlCode(err), "%v", err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"), migrations.WithDirection(migrations.DirectionDown))
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		_, err = sdb.ExecContext(ctx, `REVOKE CREATE ON SCHEMA ids FROM `+app+`; GRANT CREATE ON SCHEMA ids TO PUBLIC`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		require.ErrorContains(t, err, "PUBLIC may create in it")
		_, err = sdb.ExecContext(ctx, `REVOKE CREATE ON SCHEMA ids FROM PUBLIC`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.NoError(t, err)
		require.False(t, isSuper(t, sdb, app))
	})
}

// TestMigrateRefusesACoTenantBeforeAnything: Migrate on an empty schema
// that another role may create in installs nothing, not even versions 1
// to 4 (whose released files do not check): it checks before every step.
func TestMigrateRefusesACoTenantBeforeAnything(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		app := "app0_" + name
		loginRole(t, db.Server, app, name)
		_, err := sdb.ExecContext(ctx, `CREATE SCHEMA ids; GRANT USAGE, CREATE ON SCHEMA ids TO `+app)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		require.ErrorContains(t, err, app+" may create in it")
		var n int
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*) FROM pg_class WHERE relnamespace = 'ids'::regnamespace`).Scan(&n))
		require.Zero(t, n, "nothing installed, no version table")
		var dry strings.Builder
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"), migrations.WithDryRun(&dry))
		require.NoError(t, err)
		require.Equal(t, migrations.Latest(), strings.Count(dry.String(), "DO $alone$"), "the dry run shows the check of every step")
	})
}

// plantedCalls calls each function of an install that PUBLIC may execute,
// by its signature as pg_proc gives it (name(argument types)), with
// arguments of its exact types, as a caller would. An empty want: the
// call succeeds; else its SQLSTATE.
var plantedCalls = map[string]struct{ call, want string }{
	"ulid_flake()":                                              {"ulid_flake()", ""},
	"ulid_flake_scalable(integer)":                              {"ulid_flake_scalable(3)", ""},
	"ulid_flake_at(timestamp with time zone)":                   {"ulid_flake_at(now())", ""},
	"ulid_flake_block(integer)":                                 {"ulid_flake_block(3)", ""},
	"ulid_flake_encode(bigint)":                                 {"ulid_flake_encode(42::bigint)", ""},
	"ulid_flake_encode(bigint, text)":                           {"ulid_flake_encode(42::bigint, 'cus'::text)", ""},
	"ulid_flake_decode(text)":                                   {"ulid_flake_decode('00EZJCRCB4650'::text)", ""},
	"ulid_flake_decode(text, text)":                             {"ulid_flake_decode('cus_00EZJCRCB4650'::text, 'cus'::text)", ""},
	"ulid_flake_time(bigint)":                                   {"ulid_flake_time(42::bigint << 20)", ""},
	"ulid_flake_min(timestamp with time zone)":                  {"ulid_flake_min('2025-01-01T00:00:00Z'::timestamptz)", ""},
	"ulid_flake_max(timestamp with time zone)":                  {"ulid_flake_max('2025-01-01T00:00:00Z'::timestamptz)", ""},
	"ulid_flake_epoch_ms()":                                     {"ulid_flake_epoch_ms()", ""},
	"ulid_flake_node_sid()":                                     {"ulid_flake_node_sid()", ""},
	"ulid_flake_raise(text, text, anyelement)":                  {"ulid_flake_raise('22012'::text, 'm'::text, 1)", "22012"},
	"ulid_flake_out_of_range(timestamp with time zone, bigint)": {"ulid_flake_out_of_range(now(), 0::bigint)", "22003"},
	"ulid_flake_verify(boolean)":                                {"ulid_flake_verify(false)", ""},
	// Out of range: ulid_flake_min and _max call ulid_flake_out_of_range.
	"ulid_flake_min(timestamp with time zone) out of range": {"ulid_flake_min('1999-01-01T00:00:00Z'::timestamptz)", "22003"},
}

// ownerCalls calls each of the install owner's functions (EXECUTE revoked
// from PUBLIC), as plantedCalls does; the superuser calls them.
var ownerCalls = map[string]struct{ call, want string }{
	"ulid_flake_check_node()":               {"ulid_flake_check_node()", ""},
	"ulid_flake_build(bigint)":              {"ulid_flake_build(7::bigint)", ""},
	"ulid_flake_set_epoch(bigint, boolean)": {"ulid_flake_set_epoch(1704067200000::bigint, false)", ""},
	"ulid_flake_set_sid(integer)":           {"ulid_flake_set_sid(5)", ""},
	"ulid_flake_new_node(integer)":          {"ulid_flake_new_node(6)", ""},
	"ulid_flake_retire_node(uuid)":          {"ulid_flake_retire_node('6f1c0b8e-0000-4000-8000-000000000000'::uuid)", "22023"},
}

// newIDs are the functions of plantedCalls that make new IDs: another
// result at every call.
var newIDs = []string{"ulid_flake()", "ulid_flake_scalable(integer)", "ulid_flake_at(timestamp with time zone)", "ulid_flake_block(integer)"}

// TestPlantedDefaultedOverloadsChangeNoCall: with the rule, no other role
// can create in the install schema; a superuser plants there what the
// rule cannot see. Beside every function of the install, an overload that
// every call of it also matches: the same arguments, each with a default
// where the type allows one, and one more defaulted argument
// (ulid_flake(planted integer DEFAULT 0), ulid_flake_block(a1 integer
// DEFAULT NULL, planted integer DEFAULT 0), ...). Then each function that
// PUBLIC may execute (read from the catalog), beside the overloads of all
// the others (an overload of itself makes a call of it by name ambiguous:
// that is PostgreSQL's resolution, no body's), called by the superuser and
// by an unprivileged role, and the defaults of a table, give what they
// gave before: no body's call is ambiguous (42725) and no planted body
// runs; so do the install owner's functions, called by the superuser.
// (Another function of the name called gets an overload with one
// defaulted argument more, none of its own defaulted: the call itself
// then matches only its function.) Failed before: ulid_flake_block called ulid_flake() by name, and the
// owner's functions called the install's by name (42725).
func TestPlantedDefaultedOverloadsChangeNoCall(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		app := "appo_" + name
		loginRole(t, db.Server, app, name)
		_, err := sdb.ExecContext(ctx, `CREATE SCHEMA ids; GRANT USAGE ON SCHEMA ids TO `+app)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.NoError(t, err)
		_, err = sdb.ExecContext(ctx, `CREATE TABLE ids.t (id bigint PRIMARY KEY DEFAULT ids.ulid_flake(), s bigint DEFAULT ids.ulid_flake_scalable(2), k int);
			GRANT INSERT, SELECT ON ids.t TO `+app+`;
			CREATE TABLE public.planted_ran (what text); GRANT INSERT ON public.planted_ran TO PUBLIC`)
		require.NoError(t, err)

		// args: the arguments with defaults; plain: without (for an
		// overload of another function of the name called, which must not
		// match that call itself).
		type fn struct{ sig, name, args, plain, result string }
		var all []fn
		rows, err := sdb.QueryContext(ctx, `SELECT p.proname || '(' || oidvectortypes(p.proargtypes) || ')', p.proname,
				coalesce((SELECT string_agg(format('%s %s%s', 'a' || i, format_type(t, NULL),
					CASE WHEN p.proargtypes::oid[] && ARRAY['anyelement', 'anyarray', 'anynonarray', 'anycompatible']::regtype[]::oid[]
						THEN '' ELSE ' DEFAULT NULL' END) || ', ', '' ORDER BY i)
					FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS a(t, i)), ''),
				coalesce((SELECT string_agg(format('%s %s', 'a' || i, format_type(t, NULL)) || ', ', '' ORDER BY i)
					FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS a(t, i)), ''),
				pg_get_function_result(p.oid)
			FROM pg_proc AS p WHERE p.pronamespace = 'ids'::regnamespace ORDER BY 1`)
		require.NoError(t, err)
		for rows.Next() {
			var f fn
			require.NoError(t, rows.Scan(&f.sig, &f.name, &f.args, &f.plain, &f.result))
			all = append(all, f)
		}
		require.NoError(t, rows.Err())
		var public []string
		rows, err = sdb.QueryContext(ctx, `SELECT p.proname || '(' || oidvectortypes(p.proargtypes) || ')' FROM pg_proc AS p
			WHERE p.pronamespace = 'ids'::regnamespace AND has_function_privilege($1, p.oid, 'EXECUTE') ORDER BY 1`, app)
		require.NoError(t, err)
		for rows.Next() {
			var sig string
			require.NoError(t, rows.Scan(&sig))
			_, ok := plantedCalls[sig]
			require.True(t, ok, "%s may be called by PUBLIC: add a call of it to plantedCalls", sig)
			public = append(public, sig)
		}
		require.NoError(t, rows.Err())
		require.GreaterOrEqual(t, len(public), 12)

		// Each call runs in a transaction that plants first, on a
		// connection of its own (no statement prepared before the plants).
		call := func(sig, key string, plant bool) string {
			called, _, _ := strings.Cut(sig, "(")
			conn, err := openAs(t, db.Server, name, "").Conn(ctx)
			require.NoError(t, err)
			defer conn.Close()
			tx, err := conn.BeginTx(ctx, nil)
			require.NoError(t, err)
			defer tx.Rollback()
			for _, f := range all {
				if plant && f.sig != sig && f.result != "trigger" { // a trigger function takes no arguments, and is called by object id
					args := f.args
					if f.name == called {
						args = f.plain
					}
					ret := "NULL"
					if f.result == "void" || strings.HasPrefix(f.result, "TABLE") || strings.HasPrefix(f.result, "SETOF") {
						ret = ""
					}
					_, err := tx.ExecContext(ctx, fmt.Sprintf(`CREATE FUNCTION ids.%s(%splanted integer DEFAULT 0) RETURNS %s LANGUAGE plpgsql AS
						$$ BEGIN INSERT INTO public.planted_ran VALUES (%s); RETURN %s; END $$`, f.name, args, f.result, quoteLiteral(f.sig), ret))
					require.NoError(t, err, f.sig)
				}
			}
			c, public := plantedCalls[key]
			roles := []string{"", app}
			if !public {
				c, roles = ownerCalls[key], []string{""}
			}
			var out []string
			for _, role := range roles {
				if role != "" {
					_, err := tx.ExecContext(ctx, `SET LOCAL ROLE `+role)
					require.NoError(t, err)
				}
				_, err = tx.ExecContext(ctx, `SAVEPOINT c`)
				require.NoError(t, err)
				var got sql.NullString
				err := tx.QueryRowContext(ctx, `SELECT ids.`+c.call+`::text /* `+role+` */`).Scan(&got)
				if c.want != "" {
					require.Equal(t, c.want, sqlCode(err), "%s as %q: %v", key, role, err)
				} else {
					require.NoError(t, err, "%s as %q", key, role)
				}
				_, err = tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT c`)
				require.NoError(t, err)
				_, err = tx.ExecContext(ctx, `INSERT INTO ids.t (k) VALUES (1)`)
				require.NoError(t, err, "the defaults, as %q", role)
				out = append(out, got.String)
			}
			_, err = tx.ExecContext(ctx, `RESET ROLE`)
			require.NoError(t, err)
			var ran sql.NullString
			require.NoError(t, tx.QueryRowContext(ctx, `SELECT string_agg(what, ', ') FROM public.planted_ran`).Scan(&ran))
			require.False(t, ran.Valid, "%s: planted overloads ran: %s", key, ran.String)
			return strings.Join(out, " ")
		}
		for key := range plantedCalls {
			sig, _, _ := strings.Cut(key, " out of range")
			require.Contains(t, public, sig, "plantedCalls names %s, which PUBLIC may not execute", sig)
			before, after := call(sig, key, false), call(sig, key, true)
			if !slices.Contains(newIDs, sig) {
				require.Equal(t, before, after, key)
			}
		}
		for sig := range ownerCalls {
			require.Equal(t, call(sig, sig, false), call(sig, sig, true), sig)
		}
	})
}

// quoteLiteral quotes s as an SQL string literal (no backslashes in s).
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
