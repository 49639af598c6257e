// Package itest holds what several integration test packages share:
// connections, empty databases, worker pools, catalog snapshots, planted
// hijackers and the CLI binary.
package itest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"
	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/pgxtype"
)

// RunWorkers runs fn for workers 0..n-1 at once and fails t with the first
// error any of them returns.
func RunWorkers(t *testing.T, n int, fn func(w int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range n {
		wg.Go(func() {
			if err := fn(w); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// StdDB opens a *sql.DB on db's pool, closed when t ends.
func StdDB(t testing.TB, db *pgtest.DB) *sql.DB {
	sdb := stdlib.OpenDBFromPool(db.Pool)
	t.Cleanup(func() { sdb.Close() })
	return sdb
}

// Pool opens a Pool on db, with pgxtype registered or not, in the given
// exec mode.
func Pool(t *testing.T, db *pgtest.DB, register bool, mode pgx.QueryExecMode) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(db.URL)
	require.NoError(t, err)
	cfg.ConnConfig.DefaultQueryExecMode = mode
	if register {
		cfg.AfterConnect = pgxtype.AfterConnect
	}
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// RandomIDs returns n distinct random valid IDs of every magnitude, with 1
// and the largest ID among them.
func RandomIDs(n int, seed uint64) []ulidflake.ID {
	r := rand.New(rand.NewPCG(seed, 99))
	seen := map[ulidflake.ID]bool{1: true, ulidflake.ID(flake.Max): true}
	ids := []ulidflake.ID{1, ulidflake.ID(flake.Max)}
	for len(ids) < n {
		id := ulidflake.ID(r.Uint64() >> (1 + r.UintN(62)))
		if id != 0 && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// EmptyDB returns a fresh database with nothing installed: template0's
// clone, not the migrated template.
func EmptyDB(t *testing.T, s *pgtest.Server) *sql.DB {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, s.URL)
	require.NoError(t, err)
	defer admin.Close(ctx)
	name := pgtest.UniqueName() + "_empty"
	_, err = admin.Exec(ctx, `CREATE DATABASE `+name+` TEMPLATE template0`)
	require.NoError(t, err)
	cfg, err := pgx.ParseConfig(s.URL)
	require.NoError(t, err)
	cfg.Database = name
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(40)
	t.Cleanup(func() {
		db.Close()
		c, err := pgx.Connect(context.Background(), s.URL)
		if err == nil {
			_, _ = c.Exec(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
			c.Close(context.Background())
		}
	})
	return db
}

// EmptyDBNamed is EmptyDB that also returns the database's name.
func EmptyDBNamed(t *testing.T, s *pgtest.Server) (*sql.DB, string) {
	t.Helper()
	db := EmptyDB(t, s)
	var name string
	require.NoError(t, db.QueryRow(`SELECT pg_catalog.current_database()`).Scan(&name))
	return db, name
}

// Plant creates, as role, in public, a function or operator for every
// name in ops and funcs: each signature of the built-in and each one- and
// two-argument signature over HijackTypes. Each records that it ran in
// public.hijack_log and makes role a superuser when its caller is one.
// It returns how many it planted.
func Plant(t *testing.T, ctx context.Context, conn *sql.Conn, role string, ops, funcs []string) int {
	t.Helper()
	return PlantTypes(t, ctx, conn, role, ops, funcs, HijackTypes)
}

// PlantTypes is Plant over the given argument types instead of HijackTypes.
func PlantTypes(t *testing.T, ctx context.Context, conn *sql.Conn, role string, ops, funcs, types []string) int {
	t.Helper()
	exec := func(q string) bool {
		_, err := conn.ExecContext(ctx, q)
		return err == nil
	}
	require.True(t, exec(`SET search_path = pg_catalog, public`))
	require.True(t, exec(`SET ROLE `+role))
	body := func(what string) string {
		return fmt.Sprintf(`LANGUAGE plpgsql SET search_path = pg_catalog AS $hj$ BEGIN
			INSERT INTO public.hijack_log VALUES (%s, current_user);
			IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN EXECUTE 'ALTER ROLE %s SUPERUSER'; END IF;
			RETURN NULL; END $hj$`, QuoteLiteral(what), role)
	}
	n := 0
	var sigs [][]string // argument type lists
	for _, a := range types {
		sigs = append(sigs, []string{a})
		for _, b := range types {
			sigs = append(sigs, []string{a, b})
		}
	}
	for _, fn := range funcs {
		// Qualified throughout: this statement is prepared once and run
		// again between plantings, and a cache reset on a busy server
		// re-plans it, when an unqualified format_type(oid, NULL) would
		// resolve to a planted one (0A000: cached plan must not change
		// result type).
		rows, err := conn.QueryContext(ctx, `SELECT pg_catalog.oidvectortypes(p.proargtypes), pg_catalog.format_type(p.prorettype, NULL::pg_catalog.int4)
			FROM pg_catalog.pg_proc p
			WHERE p.proname OPERATOR(pg_catalog.=) $1::pg_catalog.name AND p.pronamespace OPERATOR(pg_catalog.=) 'pg_catalog'::pg_catalog.regnamespace AND NOT p.proretset
			AND NOT EXISTS (SELECT FROM pg_catalog.unnest(p.proargtypes) a JOIN pg_catalog.pg_type ty ON ty.oid OPERATOR(pg_catalog.=) a
				WHERE ty.typtype OPERATOR(pg_catalog.=) 'p'::pg_catalog.char)
			AND (SELECT ty.typtype FROM pg_catalog.pg_type ty WHERE ty.oid OPERATOR(pg_catalog.=) p.prorettype) OPERATOR(pg_catalog.<>) 'p'::pg_catalog.char`, fn)
		require.NoError(t, err)
		var builtins [][2]string
		for rows.Next() {
			var args, ret string
			require.NoError(t, rows.Scan(&args, &ret))
			builtins = append(builtins, [2]string{args, ret})
		}
		require.NoError(t, rows.Err())
		for _, b := range builtins {
			if exec(fmt.Sprintf(`CREATE FUNCTION public.%s(%s) RETURNS %s %s`, QuoteIdent(fn), b[0], b[1], body(fn+"("+b[0]+")"))) {
				n++
			}
		}
		for _, sig := range sigs {
			args := strings.Join(sig, ", ")
			if exec(fmt.Sprintf(`CREATE FUNCTION public.%s(%s) RETURNS %s %s`, QuoteIdent(fn), args, sig[0], body(fn+"("+args+")"))) {
				n++
			}
		}
	}
	for i, sig := range sigs {
		if len(sig) != 2 {
			continue
		}
		fn := fmt.Sprintf("public.hijack_op_%d", i)
		exec(fmt.Sprintf(`CREATE FUNCTION %s(%s, %s) RETURNS %s %s`, fn, sig[0], sig[1], sig[0], body("operator "+sig[0]+", "+sig[1])))
		for _, op := range ops {
			if exec(fmt.Sprintf(`CREATE OPERATOR public.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = %s)`, op, sig[0], sig[1], fn)) {
				n++
			}
		}
	}
	// Types that are not keywords, as domains whose check records its use.
	exec(`CREATE FUNCTION public.hijack_type(x text) RETURNS boolean ` + body("a type"))
	for _, ty := range []string{"text", "timestamptz", "interval", "regclass", "regtype", "numeric", "name", "oid", "float8", "int4", "int8"} {
		if exec(fmt.Sprintf(`CREATE DOMAIN public.%s AS pg_catalog.%s CHECK (public.hijack_type(VALUE::pg_catalog.text))`, ty, ty)) {
			n++
		}
	}
	require.True(t, exec(`RESET ROLE`))
	require.True(t, exec(`RESET search_path`))
	return n
}

// SQLWords returns the words followed by "(" (function names) and the
// operator symbols, bare or in OPERATOR(pg_catalog.x), that src holds.
func SQLWords(src string) (words, symbols []string) {
	for _, m := range regexp.MustCompile(`\b([a-z_][a-z0-9_]*)\s*\(`).FindAllStringSubmatch(src, -1) {
		words = append(words, m[1])
	}
	for _, m := range regexp.MustCompile(`(?:^|[\s(])([-+*/<>=~!@#%^&|]+)(?:[\s(]|$)`).FindAllStringSubmatch(src, -1) {
		symbols = append(symbols, m[1])
	}
	for _, m := range regexp.MustCompile(`OPERATOR\(pg_catalog\.([^)]+)\)`).FindAllStringSubmatch(src, -1) {
		symbols = append(symbols, m[1])
	}
	return words, symbols
}

// NamesUsed returns the pg_catalog operators and functions whose names
// occur in the SQL of the Go or SQL sources given: the objects to plant
// hijackers for.
func NamesUsed(t *testing.T, ctx context.Context, db *sql.DB, sources ...string) (ops, funcs []string) {
	t.Helper()
	var src strings.Builder
	for _, f := range sources {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		src.Write(b)
	}
	words, symbols := SQLWords(src.String())
	query := func(q string, names []string) []string {
		rows, err := db.QueryContext(ctx, q, names)
		require.NoError(t, err)
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			require.NoError(t, rows.Scan(&s))
			out = append(out, s)
		}
		require.NoError(t, rows.Err())
		return out
	}
	ops = query(`SELECT DISTINCT oprname FROM pg_catalog.pg_operator
		WHERE oprname = ANY($1::text[]) AND oprnamespace = 'pg_catalog'::regnamespace ORDER BY 1`, symbols)
	funcs = query(`SELECT DISTINCT proname FROM pg_catalog.pg_proc
		WHERE proname = ANY($1::text[]) AND pronamespace = 'pg_catalog'::regnamespace ORDER BY 1`, words)
	return ops, funcs
}

// QuoteLiteral quotes s as a standard-conforming SQL string literal.
func QuoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// CatalogBesides lists every object outside the given schema, with its definition.
func CatalogBesides(t *testing.T, ctx context.Context, db *sql.DB, except string) string {
	t.Helper()
	var s string
	require.NoError(t, db.QueryRowContext(ctx, `
		SELECT string_agg(x, E'\n' ORDER BY x) FROM (
			SELECT n.nspname || '.' || c.relname || ':' || c.relkind::text || ':' || coalesce(c.relacl::text, '') AS x
				FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ($1, 'pg_toast')
			UNION ALL SELECT n.nspname || '.' || p.proname || ':' || md5(p.prosrc) || ':' || p.proparallel::text
				FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname NOT IN ($1, 'pg_toast')
			UNION ALL SELECT 'schema ' || nspname FROM pg_namespace WHERE nspname <> $1
			UNION ALL SELECT 'superuser ' || rolname FROM pg_roles WHERE rolsuper) s`, except).Scan(&s))
	return s
}

// cli is the CLI binary, built once per test process.
var cli struct {
	once sync.Once
	bin  string
	err  error
}

// BuildCLI returns cmd/ulidflake built into a temporary directory: once per
// test process (a link costs a CPU-second), removed when the tests end
// ([pgtest.AfterAll]).
func BuildCLI(t *testing.T) string {
	t.Helper()
	cli.once.Do(func() {
		dir, err := os.MkdirTemp("", "ulidflake-cli-")
		if err != nil {
			cli.err = err
			return
		}
		pgtest.AfterAll(func() { _ = os.RemoveAll(dir) })
		cli.bin = filepath.Join(dir, "ulidflake")
		out, err := exec.Command("go", "build", "-o", cli.bin, "github.com/ulidflake/ulidflake/cmd/ulidflake").CombinedOutput()
		if err != nil {
			cli.err = fmt.Errorf("building the CLI: %w\n%s", err, out)
		}
	})
	require.NoError(t, cli.err)
	return cli.bin
}

// RunBin runs the CLI and returns its exit status, stdout and stderr.
func RunBin(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	require.NoError(t, err)
	return 0, stdout.String(), stderr.String()
}

// HijackTypes are the argument types of the planted operators and
// functions besides the built-ins' own signatures: a body that left an
// operand's type to an implicit cast would find one of these an exact match.
var HijackTypes = []string{"integer", "bigint", "double precision", "numeric", "text", "timestamp with time zone"}

// HostileSchemas are schema names that end comments, literals, dollar-quoted
// bodies or statements if pasted unquoted, plus Unicode and 63 bytes.
var HostileSchemas = []string{
	`a$body$b`, `"50%off"`, `x%y`, `x%%y`, `x%1$s`, `it's`, "new\nline", `x--y`, `/*c`, `$$`, `$tag$`, `back\slash`,
	`x';END IF;DROP TABLE victim;--`, "ünï🦀", strings.Repeat("é", 31) + "x",
}

// QuoteIdent quotes s as an SQL identifier.
func QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
