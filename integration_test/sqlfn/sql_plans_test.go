package sqlfn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// Plan caching: which plans can repeat or skip a generator's result. Each
// test states, by its assertions, what PostgreSQL does; docs/sql-plans.md
// says what users must avoid, by these tests' names.

// generators are the SQL generators every plan test runs with.
var generators = []string{"ulid_flake()", "ulid_flake_scalable(1)"}

// planConn returns a connection of its own (session settings stay on it)
// with table o: 20,000 rows, g unique (indexed), k in {0, 1}, analysed.
func planConn(t *testing.T, db *pgtest.DB) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Acquire(ctx)
	require.NoError(t, err)
	t.Cleanup(conn.Release)
	c := conn.Conn()
	_, err = c.Exec(ctx, `CREATE TABLE o AS SELECT g, g % 2 AS k FROM generate_series(1, 20000) g;
		CREATE UNIQUE INDEX ON o (g); ANALYZE o`)
	require.NoError(t, err)
	return c
}

// plan returns the text of q's plan.
func plan(t *testing.T, c *pgx.Conn, q string) string {
	t.Helper()
	rows, err := c.Query(context.Background(), `EXPLAIN (COSTS OFF) `+q, pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err, q)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err, q)
	return strings.Join(lines, "\n")
}

// counted is q (one bigint column) counted: its rows, and how many of them
// are distinct. Plans are asserted on it, not on q: it is what runs.
func counted(q string) string { return `SELECT count(*), count(DISTINCT id) FROM (` + q + `) x(id)` }

// distinct runs counted(q), planned afresh (the simple protocol: no
// prepared statement, whose plan would be cached).
func distinct(t *testing.T, c *pgx.Conn, q string) (rows, distinct int64) {
	t.Helper()
	require.NoError(t, c.QueryRow(context.Background(), counted(q), pgx.QueryExecModeSimpleProtocol).Scan(&rows, &distinct), q)
	return rows, distinct
}

// seqCalls runs q and returns how many times it called nextval() on the
// generators' sequence.
func seqCalls(t *testing.T, c *pgx.Conn, q string) int64 {
	t.Helper()
	ctx := context.Background()
	var before, after int64
	require.NoError(t, c.QueryRow(ctx, `SELECT nextval('ulid_flake_seq')`).Scan(&before))
	_, err := c.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err, q)
	require.NoError(t, c.QueryRow(ctx, `SELECT nextval('ulid_flake_seq')`).Scan(&after))
	return after - before - 1
}

// TestPlanGeneratorsAreVolatile: the generators are VOLATILE, which is what
// keeps every plan below but Memoize from folding, flattening, inlining or
// caching them. A STABLE or IMMUTABLE marking would break
// TestPlanWrapperVolatility's guarantees for the generators themselves.
func TestPlanGeneratorsAreVolatile(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		for _, f := range []string{"ulid_flake()", "ulid_flake_scalable(integer)"} {
			var v string
			require.NoError(t, db.QueryRow(context.Background(), `SELECT provolatile::text FROM pg_proc WHERE oid = $1::regprocedure`, f).Scan(&v))
			require.Equal(t, "v", v, f)
		}
	})
}

// TestPlanMemoizeRepeatsLateral: a LATERAL subquery that calls a generator
// and refers to a column of the outer row can be cached by a Memoize node,
// keyed by that column: every outer row with the same key then gets the
// same ID. PostgreSQL's planner refuses Memoize when the inner relation's
// own target list or filters are volatile, but does not look inside a
// subquery or a lateral placeholder, so the generators' VOLATILE marking
// does not stop it. Here 20,000 rows with 2 keys get 2 IDs, with hash and
// merge joins disabled as in the report that found it (a LATERAL join is a
// nested loop either way). SET enable_memoize = off, or calling the
// generator in the outer query, gives every row its own ID; but a statement
// prepared before the SET keeps its Memoize plan (PostgreSQL does not plan
// a cached statement again when a planner setting changes).
func TestPlanMemoizeRepeatsLateral(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		c := planConn(t, db)
		ctx := context.Background()
		for _, f := range generators {
			for _, q := range []string{
				`SELECT s.id FROM o, LATERAL (SELECT o.k AS k2, ` + f + ` AS id OFFSET 0) s`,
				`SELECT s.id FROM o, LATERAL (SELECT ` + f + ` AS id FROM (VALUES (0), (1)) v(x) WHERE v.x = o.k) s`,
			} {
				_, err := c.Exec(ctx, `SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_memoize = on`)
				require.NoError(t, err)
				require.Contains(t, plan(t, c, counted(q)), "Memoize", q)
				n, d := distinct(t, c, q)
				require.Equal(t, int64(20000), n, q)
				require.Equal(t, int64(2), d, "%s: Memoize hands out one ID per key", q)
				prepared := func() (n, d int64) { // pgx's default: a prepared statement, cached
					require.NoError(t, c.QueryRow(ctx, counted(q), pgx.QueryExecModeCacheStatement).Scan(&n, &d), q)
					return n, d
				}
				_, d = prepared()
				require.Equal(t, int64(2), d, q)

				_, err = c.Exec(ctx, `SET enable_memoize = off`)
				require.NoError(t, err)
				require.NotContains(t, plan(t, c, counted(q)), "Memoize", q)
				n, d = distinct(t, c, q)
				require.Equal(t, n, d, "%s without Memoize", q)
				_, d = prepared()
				require.Equal(t, int64(2), d, "%s: prepared before the SET, it keeps Memoize", q)
				require.NoError(t, c.DeallocateAll(ctx))
				_, d = prepared()
				require.Equal(t, n, d, "%s: prepared again after the SET", q)
			}
			// The generator in the outer query: one call per row, whatever
			// the lateral subquery's plan.
			_, err := c.Exec(ctx, `SET enable_memoize = on`)
			require.NoError(t, err)
			q := `SELECT ` + f + ` FROM o, LATERAL (SELECT o.k AS k2 OFFSET 0) s`
			n, d := distinct(t, c, q)
			require.Equal(t, int64(20000), n, q)
			require.Equal(t, n, d, q)
		}
	})
}

// TestPlanMemoizeDefaultSettings: with the planner's default settings, the
// same LATERAL query is also planned with Memoize, and repeats IDs: no
// setting a user would change by hand is needed.
func TestPlanMemoizeDefaultSettings(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		c := planConn(t, db)
		q := `SELECT s.id FROM o, LATERAL (SELECT o.k AS k2, ulid_flake() AS id OFFSET 0) s`
		p := plan(t, c, counted(q))
		n, d := distinct(t, c, q)
		require.Equal(t, int64(20000), n)
		if strings.Contains(p, "Memoize") {
			require.Equal(t, int64(2), d, "Memoize hands out one ID per key")
		} else {
			require.Equal(t, n, d, "without Memoize every row has its own ID:\n%s", p)
		}
		require.Contains(t, p, "Memoize", "the default plan")
	})
}

// TestPlanMemoizeOffForDatabase: ALTER DATABASE … SET enable_memoize = off
// reaches new sessions, whose plan of the LATERAL query has no Memoize and
// gives every row its own ID.
func TestPlanMemoizeOffForDatabase(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		planConn(t, db)
		var stmt string
		require.NoError(t, db.QueryRow(ctx, `SELECT format('ALTER DATABASE %I SET enable_memoize = off', current_database())`).Scan(&stmt))
		_, err := db.Exec(ctx, stmt)
		require.NoError(t, err)
		c, err := pgx.Connect(ctx, db.URL)
		require.NoError(t, err)
		defer c.Close(ctx)
		q := `SELECT s.id FROM o, LATERAL (SELECT o.k AS k2, ulid_flake() AS id OFFSET 0) s`
		require.NotContains(t, plan(t, c, counted(q)), "Memoize")
		n, d := distinct(t, c, q)
		require.Equal(t, int64(20000), n)
		require.Equal(t, n, d)
	})
}

// TestPlanInitPlanEvaluatesOnce: an uncorrelated scalar subquery is an
// initplan, evaluated once per statement, as SQL says: every row gets the
// same ID, and an INSERT of two rows fails on the primary key (23505).
func TestPlanInitPlanEvaluatesOnce(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		c := planConn(t, db)
		ctx := context.Background()
		_, err := c.Exec(ctx, `CREATE TABLE t (id bigint PRIMARY KEY)`)
		require.NoError(t, err)
		for _, f := range generators {
			q := `SELECT (SELECT ` + f + `) FROM o`
			require.Contains(t, plan(t, c, counted(q)), "InitPlan", q)
			n, d := distinct(t, c, q)
			require.Equal(t, int64(20000), n)
			require.Equal(t, int64(1), d, q)
			_, err = c.Exec(ctx, `INSERT INTO t (id) SELECT (SELECT `+f+`) FROM generate_series(1, 2)`)
			var pgErr *pgconn.PgError
			require.ErrorAs(t, err, &pgErr)
			require.Equal(t, "23505", pgErr.Code)
			// Correlated, it is a subplan, evaluated per row.
			q = `SELECT (SELECT ` + f + ` + 0 * o.k) FROM o`
			n, d = distinct(t, c, q)
			require.Equal(t, n, d, q)
		}
	})
}

// TestPlanUncorrelatedFromEvaluatesOnce: a generator in FROM that does not
// refer to the other relations (a function in FROM, a subquery, a CTE,
// materialized or not) makes one row, joined to every row of the others:
// one ID for all.
func TestPlanUncorrelatedFromEvaluatesOnce(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		c := planConn(t, db)
		for _, f := range generators {
			for _, q := range []string{
				`SELECT s.id FROM o, ` + f + ` AS s(id)`,
				`SELECT s.id FROM o CROSS JOIN (SELECT ` + f + ` AS id) s`,
				`WITH s AS (SELECT ` + f + ` AS id) SELECT s.id FROM o, s`,
				`WITH s AS NOT MATERIALIZED (SELECT ` + f + ` AS id) SELECT s.id FROM o, s`,
			} {
				n, d := distinct(t, c, q)
				require.Equal(t, int64(20000), n, q)
				require.Equal(t, int64(1), d, q)
			}
		}
	})
}

// TestPlanNotFlattenedOrInlined: a subquery, a view or a CTE that makes IDs
// is evaluated once per row however often the outer query refers to its
// column, because PostgreSQL neither flattens a subquery nor inlines a CTE
// whose target list is volatile (NOT MATERIALIZED included); a generator in
// WHERE is called once per row; a generic prepared plan calls it at every
// execution.
func TestPlanNotFlattenedOrInlined(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		c := planConn(t, db)
		ctx := context.Background()
		for i, f := range generators {
			view := "v" + string(rune('0'+i))
			_, err := c.Exec(ctx, `CREATE VIEW `+view+` AS SELECT g, `+f+` AS id FROM o`)
			require.NoError(t, err)
			for _, q := range []string{
				`SELECT count(*) FILTER (WHERE a <> b) FROM (SELECT id AS a, id AS b FROM (SELECT ` + f + ` AS id FROM o) s) x`,
				`SELECT count(*) FILTER (WHERE id <> id2) FROM (SELECT id, id AS id2 FROM ` + view + `) x`,
				`WITH s AS (SELECT g, ` + f + ` AS id FROM o) SELECT count(*) FILTER (WHERE a.id <> b.id) FROM s a JOIN s b USING (g)`,
				`WITH s AS NOT MATERIALIZED (SELECT g, ` + f + ` AS id FROM o) SELECT count(*) FILTER (WHERE a.id <> b.id) FROM s a JOIN s b USING (g)`,
			} {
				var differ int64
				require.NoError(t, c.QueryRow(ctx, q, pgx.QueryExecModeSimpleProtocol).Scan(&differ), q)
				require.Zero(t, differ, "%s: a row's ID read twice differs", q)
			}
			// Two references to a view are two evaluations: two IDs a row.
			var differ int64
			require.NoError(t, c.QueryRow(ctx, `SELECT count(*) FILTER (WHERE a.id <> b.id) FROM `+view+` a JOIN `+view+` b USING (g)`,
				pgx.QueryExecModeSimpleProtocol).Scan(&differ))
			require.Equal(t, int64(20000), differ, "a view referred to twice")
			// In WHERE: once per row, even with an index on the column.
			require.Equal(t, int64(20000), seqCalls(t, c, `SELECT count(*) FROM o WHERE g < `+f), f)
			// A generic plan, prepared once, executed 10 times.
			_, err = c.Exec(ctx, `SET plan_cache_mode = force_generic_plan`)
			require.NoError(t, err)
			_, err = c.Exec(ctx, `PREPARE p`+view+`(int) AS SELECT `+f+` FROM generate_series(1, $1)`)
			require.NoError(t, err)
			seen := map[int64]bool{}
			for range 10 {
				rows, err := c.Query(ctx, `EXECUTE p`+view+`(100)`)
				require.NoError(t, err)
				ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
				require.NoError(t, err)
				for _, id := range ids {
					require.False(t, seen[id], "generic plan repeated %d", id)
					seen[id] = true
				}
			}
			require.Len(t, seen, 1000)
			_, err = c.Exec(ctx, `RESET plan_cache_mode`)
			require.NoError(t, err)
		}
	})
}

// TestPlanWrapperVolatility: a user's wrapper around a generator decides
// how often it runs. Declared IMMUTABLE, it is folded into a constant when
// the statement is planned: one ID for every row, and a generic prepared
// plan returns the same ID at every execution. Declared STABLE, it is run
// once as an index condition (and once more by the planner, to estimate). Declared VOLATILE (or left undeclared), it
// behaves as the generator.
func TestPlanWrapperVolatility(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		c := planConn(t, db)
		ctx := context.Background()
		_, err := c.Exec(ctx, `
			CREATE FUNCTION w_immutable() RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT ulid_flake()';
			CREATE FUNCTION w_stable() RETURNS bigint LANGUAGE sql STABLE AS 'SELECT ulid_flake()';
			CREATE FUNCTION w_volatile() RETURNS bigint LANGUAGE sql AS 'SELECT ulid_flake()';
			CREATE TABLE t (id bigint PRIMARY KEY DEFAULT w_immutable(), v int)`)
		require.NoError(t, err)

		n, d := distinct(t, c, `SELECT w_immutable() FROM o`)
		require.Equal(t, int64(20000), n)
		require.Equal(t, int64(1), d, "IMMUTABLE: folded into one constant")
		_, err = c.Exec(ctx, `INSERT INTO t (v) SELECT g FROM generate_series(1, 2) g`)
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr, "IMMUTABLE default: one ID for two rows")
		require.Equal(t, "23505", pgErr.Code)
		_, err = c.Exec(ctx, `SET plan_cache_mode = force_generic_plan; PREPARE pi AS SELECT w_immutable()`)
		require.NoError(t, err)
		var a, b int64
		require.NoError(t, c.QueryRow(ctx, `EXECUTE pi`).Scan(&a))
		require.NoError(t, c.QueryRow(ctx, `EXECUTE pi`).Scan(&b))
		require.Equal(t, a, b, "IMMUTABLE: a generic plan repeats its ID at every execution")

		_, err = c.Exec(ctx, `RESET plan_cache_mode; SET enable_seqscan = off; SET enable_bitmapscan = off`)
		require.NoError(t, err)
		q := `SELECT count(*) FROM o WHERE g < w_stable()`
		require.Contains(t, plan(t, c, q), "Index", q)
		// Once to run the index scan, and the planner may call it once more
		// to estimate the condition's selectivity.
		require.LessOrEqual(t, seqCalls(t, c, q), int64(2), "STABLE: called once as an index condition, not per row")

		n, d = distinct(t, c, `SELECT w_volatile() FROM o`)
		require.Equal(t, n, d, "VOLATILE wrapper")
		require.Equal(t, int64(20000), seqCalls(t, c, `SELECT count(*) FROM o WHERE g < w_volatile()`), "VOLATILE wrapper in WHERE")
	})
}
