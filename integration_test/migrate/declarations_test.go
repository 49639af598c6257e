package migrate_test

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// declarationsFile is what sqlc and other schema-reading tools read in
// place of the migrations (docs/integrations.md, "sqlc").
const declarationsFile = "../../migrations/declarations.sql"

// internalCallable are the functions that PUBLIC may execute only because
// the documented ones call them with the caller's rights: not for users,
// so not declared.
var internalCallable = []string{"ulid_flake_raise(text, text, anyelement)", "ulid_flake_out_of_range(timestamp with time zone, bigint)",
	"ulid_flake_verify(boolean)"}

// signature is how a user calls a function: its name, its arguments as
// CREATE FUNCTION writes them (names, types, defaults) and its result.
type signature struct{ Proc, Args, Result string }

// callable lists the functions of a schema: those PUBLIC may execute, or
// all of them.
func callable(ctx context.Context, t *testing.T, db *pgtest.DB, schema string, publicOnly bool) []signature {
	t.Helper()
	rows, err := db.Query(ctx, `
		SELECT p.proname || '(' || oidvectortypes(p.proargtypes) || ')', pg_get_function_arguments(p.oid), pg_get_function_result(p.oid)
		FROM pg_proc AS p
		WHERE p.pronamespace = $1::regnamespace
			AND (NOT $2 OR p.proacl IS NULL OR EXISTS (SELECT FROM aclexplode(p.proacl) AS a
				WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE'))
		ORDER BY 1`, pgx.Identifier{schema}.Sanitize(), publicOnly)
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (s signature, err error) {
		return s, r.Scan(&s.Proc, &s.Args, &s.Result)
	})
	if err != nil {
		t.Fatal(err)
	}
	return sigs
}

// TestDeclarations: migrations/declarations.sql declares exactly the
// functions of an install at the latest version that PUBLIC may execute
// (the owner-only setters and node functions are left out), with the same
// names, arguments (names, types, defaults) and results, and the domain
// ulid_flake_id with the same base type and check; it creates nothing
// else, its stubs raise, and it cannot replace a real install.
func TestDeclarations(t *testing.T) {
	decl, err := os.ReadFile(declarationsFile)
	if err != nil {
		t.Fatal(err)
	}
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		install := installSchema(ctx, t, db)
		if _, err := db.Exec(ctx, `CREATE SCHEMA declared`); err != nil {
			t.Fatal(err)
		}
		runIn(ctx, t, db, "declared", string(decl))

		want := slices.DeleteFunc(callable(ctx, t, db, install, true), func(s signature) bool {
			return slices.Contains(internalCallable, s.Proc)
		})
		got := callable(ctx, t, db, "declared", false)
		if len(want) < 12 || !slices.Equal(got, want) {
			t.Errorf("declarations.sql declares\n%s\nthe install's callable functions are\n%s\nmake the file match the migrations", show(got), show(want))
		}
		for _, p := range internalCallable {
			if !slices.ContainsFunc(callable(ctx, t, db, install, true), func(s signature) bool { return s.Proc == p }) {
				t.Errorf("internalCallable names %s, which the install does not have or PUBLIC may not execute: remove it", p)
			}
		}
		checkDeclaredDomain(ctx, t, db, install)
		checkDeclaredObjects(ctx, t, db)

		// The stubs raise; the file fails on a real install.
		if _, err := db.Exec(ctx, `SELECT declared.ulid_flake()`); err == nil {
			t.Error("the stub declared.ulid_flake() returned, want an error")
		}
		tx, err := db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, string(decl)); sqlCode(err) != "42710" {
			t.Errorf("declarations.sql on the install: %v, want duplicate_object (42710)", err)
		}
	})
}

// installSchema is the schema the migrations installed in.
func installSchema(ctx context.Context, t *testing.T, db *pgtest.DB) string {
	t.Helper()
	var s string
	if err := db.QueryRow(ctx, `SELECT n.nspname FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace
		WHERE p.proname = 'ulid_flake_epoch_ms'`).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// runIn runs sql with search_path set to schema alone.
func runIn(ctx context.Context, t *testing.T, db *pgtest.DB, schema, sql string) {
	t.Helper()
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT set_config('search_path', $1, true)`, pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, sql); err != nil {
		t.Fatalf("declarations.sql: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// checkDeclaredDomain: the declared ulid_flake_id is the installed one.
func checkDeclaredDomain(ctx context.Context, t *testing.T, db *pgtest.DB, install string) {
	t.Helper()
	const q = `SELECT format_type(t.typbasetype, t.typtypmod), t.typnotnull,
			coalesce((SELECT string_agg(c.conname || ': ' || pg_get_constraintdef(c.oid), '; ' ORDER BY c.conname)
				FROM pg_constraint AS c WHERE c.contypid = t.oid), '')
		FROM pg_type AS t WHERE t.typname = 'ulid_flake_id' AND t.typnamespace = $1::regnamespace`
	var dom [2][3]string
	for i, s := range []string{install, "declared"} {
		var notNull bool
		if err := db.QueryRow(ctx, q, pgx.Identifier{s}.Sanitize()).Scan(&dom[i][0], &notNull, &dom[i][2]); err != nil {
			t.Fatalf("domain ulid_flake_id in %s: %v", s, err)
		}
		dom[i][1] = map[bool]string{true: "NOT NULL", false: "NULL"}[notNull]
	}
	if dom[0] != dom[1] || dom[0][0] != "bigint" {
		t.Errorf("declared ulid_flake_id %q, installed %q: want the same", dom[1], dom[0])
	}
}

// checkDeclaredObjects: the file makes no table, sequence or other type
// (the library's state tables must not become models in users' code).
func checkDeclaredObjects(ctx context.Context, t *testing.T, db *pgtest.DB) {
	t.Helper()
	var objs []string
	err := db.QueryRow(ctx, `SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM (
		SELECT c.relname::text || ' (relation)' AS x FROM pg_class AS c WHERE c.relnamespace = 'declared'::regnamespace
		UNION ALL SELECT t.typname::text FROM pg_type AS t WHERE t.typnamespace = 'declared'::regnamespace AND t.typelem = 0
	) AS o`).Scan(&objs)
	if err != nil || !slices.Equal(objs, []string{"ulid_flake_id"}) {
		t.Errorf("declarations.sql creates %q (%v), want only the domain ulid_flake_id", objs, err)
	}
}

func show(sigs []signature) string {
	var b []byte
	for _, s := range sigs {
		b = append(b, "\t"+s.Proc+" ("+s.Args+") RETURNS "+s.Result+"\n"...)
	}
	return string(b)
}
