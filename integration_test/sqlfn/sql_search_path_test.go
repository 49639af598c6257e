package sqlfn_test

import (
	"errors"

	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// usedByInstall derives, from the catalog and the sources, the names of
// every operator and function the install may call: the operators and
// functions in the parse trees of the SQL-standard bodies and of the
// domain constraints in schema (the catalog keeps their object ids), and
// the pg_catalog functions and operators named in the migration files and
// in Migrate's Go source (which run at install time). It also checks that
// every body not kept as a tree (PL/pgSQL) runs with search_path =
// pg_catalog, pg_temp.
func usedByInstall(t *testing.T, ctx context.Context, db *sql.DB, schema string) (ops, funcs []string) {
	t.Helper()
	var trees, unpinned string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT
		coalesce((SELECT string_agg(p.prosqlbody::text, ' ') FROM pg_catalog.pg_proc p WHERE p.pronamespace = $1::regnamespace AND p.prosqlbody IS NOT NULL), '')
		|| ' ' || coalesce((SELECT string_agg(c.conbin::text, ' ') FROM pg_catalog.pg_constraint c JOIN pg_catalog.pg_type ty ON ty.oid = c.contypid
			WHERE ty.typnamespace = $1::regnamespace AND c.conbin IS NOT NULL), ''),
		coalesce((SELECT string_agg(p.proname, ', ') FROM pg_catalog.pg_proc p WHERE p.pronamespace = $1::regnamespace AND p.prosqlbody IS NULL
			AND NOT coalesce(p.proconfig @> ARRAY['search_path=pg_catalog, pg_temp'], false)), '')`, schema).Scan(&trees, &unpinned))
	require.Empty(t, unpinned, "functions whose bodies are resolved at run time without a pinned search_path")
	var opOIDs, fnOIDs []string
	for _, m := range regexp.MustCompile(`:opno (\d+)`).FindAllStringSubmatch(trees, -1) {
		opOIDs = append(opOIDs, m[1])
	}
	for _, m := range regexp.MustCompile(`:funcid (\d+)`).FindAllStringSubmatch(trees, -1) {
		fnOIDs = append(fnOIDs, m[1])
	}
	require.NotEmpty(t, opOIDs)
	require.NotEmpty(t, fnOIDs)

	// The sources: the migration files and Migrate's Go code.
	var src strings.Builder
	all, err := migrations.All()
	require.NoError(t, err)
	for _, m := range all {
		src.WriteString(m.Up + "\n" + m.Down + "\n")
	}
	for _, f := range []string{"migrate.go", "deploy.go"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "migrations", f))
		require.NoError(t, err)
		src.Write(b)
	}
	words, symbols := itest.SQLWords(src.String())
	rows, err := db.QueryContext(ctx, `SELECT DISTINCT oprname FROM pg_catalog.pg_operator
		WHERE oid = ANY($1::oid[]) OR (oprname = ANY($2::text[]) AND oprnamespace = 'pg_catalog'::regnamespace) ORDER BY 1`, opOIDs, symbols)
	require.NoError(t, err)
	ops = collect(t, rows)
	rows, err = db.QueryContext(ctx, `SELECT DISTINCT proname FROM pg_catalog.pg_proc
		WHERE oid = ANY($1::oid[]) OR (proname = ANY($2::text[]) AND pronamespace = 'pg_catalog'::regnamespace) ORDER BY 1`, fnOIDs, words)
	require.NoError(t, err)
	// The install's own functions that bodies call (ulid_flake_at calls
	// ulid_flake and ulid_flake_min) are called schema-qualified with their
	// exact argument types. Another role's function of the same name and
	// types in the install's schema makes the install fail (42723) or
	// Migrate refuse it (ErrForeignOwner, TestMigrateRefusesPlantedObjects):
	// a refusal, not a hijack, so they are not planted here (ulid_flake_raise,
	// polymorphic, is: no planted signature clashes with it).
	funcs = slices.DeleteFunc(collect(t, rows), func(f string) bool {
		return strings.HasPrefix(f, "ulid_flake") && f != "ulid_flake_raise"
	})
	return ops, funcs
}

func collect(t *testing.T, rows *sql.Rows) []string {
	t.Helper()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

func sortedCopy(s []string) []string { c := append([]string(nil), s...); sort.Strings(c); return c }

// TestSQLBodiesIgnoreSearchPath: an unprivileged role plants, in public, a
// hijacking operator and function for every operator and function the
// install uses (derived from the catalog and the sources), before the
// installs in other schemas and after every install (an install in public
// comes first: the rule refuses a schema another role may create in); a superuser then installs (with the database's
// search_path set to 'public, pg_catalog' by its owner), inserts with the
// defaults, copies, and calls every function, with the default search_path
// and with 'public, pg_catalog', for installs in public, in another schema
// and from the plain files. None of the planted objects runs.
func TestSQLBodiesIgnoreSearchPath(t *testing.T) {
	t.Parallel()
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ref := itest.StdDB(t, s.NewDB(t))
			ops, funcs := usedByInstall(t, ctx, ref, "public")
			t.Logf("operators %v; functions %v", sortedCopy(ops), sortedCopy(funcs))

			db, name := itest.EmptyDBNamed(t, s)
			role := "attacker_" + name
			_, err := migrations.Migrate(ctx, db)
			require.NoError(t, err)
			for _, q := range []string{
				`CREATE ROLE ` + role + ` NOLOGIN`,
				`GRANT CREATE ON SCHEMA public TO ` + role,
				`CREATE TABLE public.hijack_log (what text, who text)`,
				`GRANT INSERT ON public.hijack_log TO PUBLIC`,
				`CREATE SCHEMA ids`, `CREATE SCHEMA plain`,
			} {
				_, err := db.ExecContext(ctx, q)
				require.NoError(t, err, q)
			}
			t.Cleanup(func() { dropRole(s, name, role) })
			conn, err := db.Conn(ctx)
			require.NoError(t, err)
			n := itest.Plant(t, ctx, conn, role, ops, funcs)
			require.Greater(t, n, 500, "planted")
			require.NoError(t, conn.Close())
			_, err = db.ExecContext(ctx, `ALTER DATABASE `+name+` SET search_path = public, pg_catalog`)
			require.NoError(t, err)
			db.SetMaxIdleConns(0) // new connections read the database's setting

			// Installs: Migrate into ids; the plain files into plain.
			_, err = migrations.Migrate(ctx, db, migrations.WithSchema("ids"))
			require.NoError(t, err)
			conn, err = db.Conn(ctx)
			require.NoError(t, err)
			_, err = conn.ExecContext(ctx, `SET search_path = plain, public, pg_catalog`)
			require.NoError(t, err)
			all, err := migrations.All()
			require.NoError(t, err)
			for _, m := range all {
				_, err = conn.ExecContext(ctx, m.Up)
				require.NoError(t, err, "version %d", m.Version)
			}
			require.NoError(t, conn.Close())
			// Planted after the install too (new names the install uses).
			conn, err = db.Conn(ctx)
			require.NoError(t, err)
			itest.Plant(t, ctx, conn, role, ops, funcs)
			require.NoError(t, conn.Close())

			for _, path := range []string{"", "public, pg_catalog"} {
				for _, schema := range []string{"public", "ids", "plain"} {
					callEverything(t, ctx, db, path, schema)
				}
			}
			var ran string
			var super bool
			require.NoError(t, db.QueryRowContext(ctx, `SELECT coalesce(pg_catalog.string_agg(DISTINCT what, '; '), '') FROM public.hijack_log`).Scan(&ran))
			require.Empty(t, ran, "planted objects ran")
			require.NoError(t, db.QueryRowContext(ctx, `SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = $1`, role).Scan(&super))
			require.False(t, super, "the role became superuser")
		})
	}
}

// callEverything inserts with each default (INSERT and COPY), and calls each
// function, on and off its error paths, as the superuser.
func callEverything(t *testing.T, ctx context.Context, db *sql.DB, path, schema string) {
	t.Helper()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	q := itest.QuoteIdent(schema)
	exec := func(stmt string, fails bool) {
		t.Helper()
		_, err := conn.ExecContext(ctx, stmt)
		if fails {
			require.Error(t, err, stmt)
		} else {
			require.NoError(t, err, "%s (search_path %q)", stmt, path)
		}
	}
	if path != "" {
		exec(`SET search_path = `+path, false)
	}
	table := fmt.Sprintf("%s.calls_%d", q, len(path))
	exec(`CREATE TABLE `+table+` (id bigint PRIMARY KEY DEFAULT `+q+`.ulid_flake(), sid_id bigint DEFAULT `+q+`.ulid_flake_scalable(3), v int)`, false)
	exec(`INSERT INTO `+table+` (v) VALUES (1)`, false)
	exec(`INSERT INTO `+table+` (v) SELECT g FROM pg_catalog.generate_series(2, 100) g`, false)
	// The owner's functions check the rule first: in public, where the
	// planting role may create, they refuse (55U05) before anything runs.
	owner := func(stmt string) {
		t.Helper()
		_, err := conn.ExecContext(ctx, stmt)
		if schema == "public" {
			var pe *pgconn.PgError
			require.True(t, errors.As(err, &pe) && pe.Code == "55U05", "%s: %v", stmt, err)
		} else {
			require.NoError(t, err, "%s (search_path %q)", stmt, path)
		}
	}
	sid := ""
	if schema == "public" {
		sid = "4"
	}
	exec(`SELECT `+q+`.ulid_flake(), `+q+`.ulid_flake_scalable(4)`, false)
	owner(`SET ulid_flake.epoch_ms = 1704067200000; SELECT ` + q + `.ulid_flake_set_sid(4)`)
	exec(`SELECT `+q+`.ulid_flake_scalable(`+sid+`), `+q+`.ulid_flake_time(42)`, false)
	owner(`RESET ulid_flake.epoch_ms; SELECT ` + q + `.ulid_flake_set_sid(NULL)`)
	owner(`SELECT ` + q + `.ulid_flake_set_epoch(` + q + `.ulid_flake_epoch_ms())`)
	exec(`SELECT `+q+`.ulid_flake_encode(id), `+q+`.ulid_flake_decode(`+q+`.ulid_flake_encode(id)), `+q+`.ulid_flake_time(id),
		`+q+`.ulid_flake_min(pg_catalog.now()), `+q+`.ulid_flake_max(pg_catalog.now()), `+q+`.ulid_flake_at(pg_catalog.now() OPERATOR(pg_catalog.-) interval '1 day') FROM `+table, false)
	owner(`SELECT ` + q + `.ulid_flake_check_node()`)
	exec(`SELECT `+q+`.ulid_flake_decode(`+q+`.ulid_flake_encode(id, 'cus'), 'cus') FROM `+table, false)
	for _, bad := range []string{`ulid_flake_decode('ord_0000000000001', 'cus')`, `ulid_flake_decode('0000000000001', 'cus')`,
		`ulid_flake_encode(1, 'Cus')`, `ulid_flake_decode('cus_x', 'cus')`,
		`ulid_flake_encode(-1)`, `ulid_flake_decode('x')`, `ulid_flake_min('infinity')`,
		`ulid_flake_max('2400-01-01')`, `ulid_flake_scalable()`, `ulid_flake_scalable(40)`, `ulid_flake_at('infinity')`} {
		exec(`SELECT `+q+`.`+bad, true)
	}
	// COPY FROM with the defaults, through pgx.
	err = conn.Raw(func(dc any) error {
		pc := dc.(interface{ Conn() *pgx.Conn }).Conn()
		_, err := pc.CopyFrom(ctx, pgx.Identifier{schema, fmt.Sprintf("calls_%d", len(path))}, []string{"v"},
			pgx.CopyFromRows([][]any{{int32(1000)}, {int32(1001)}}))
		return err
	})
	require.NoError(t, err)
}

// dropRole drops a role the test made, after its database is gone.
func dropRole(s *pgtest.Server, db, role string) {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		return
	}
	defer c.Close(ctx)
	_, _ = c.Exec(ctx, `DROP DATABASE IF EXISTS `+db+` WITH (FORCE)`)
	_, _ = c.Exec(ctx, `DROP ROLE IF EXISTS `+role)
}
