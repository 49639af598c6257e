package extension_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestExtensionBehavesAsVolatile runs every statement form with the
// VOLATILE ulid_flake() and with the STABLE ulid_flake_next(nextval(...))
// and finds the same thing: a distinct ID per row, in COPY, INSERT …
// SELECT, multi-row VALUES, UPDATE, CREATE TABLE AS, prepared statements
// under generic plans, and partitioned tables; and one ID for all rows
// where the planner makes an initplan of it, for both.
func TestExtensionBehavesAsVolatile(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		conn, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		exec := func(q string, args ...any) {
			t.Helper()
			_, err := conn.Exec(ctx, q, args...)
			require.NoError(t, err, q)
		}
		distinct := func(q string) (n, d int64) {
			t.Helper()
			require.NoError(t, conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT id) FROM (`+q+`) q`).Scan(&n, &d), q)
			return n, d
		}
		src := make([][]any, 3000)
		for i := range src {
			src[i] = []any{int32(i)}
		}
		for i, gen := range []string{"ulid_flake()", next} {
			name := []string{"volatile", "ext"}[i]
			t.Run(name, func(t *testing.T) {
				tb := "v_" + name
				exec(fmt.Sprintf(`CREATE TABLE %s (id bigint DEFAULT %s, k int)`, tb, gen))
				_, err := conn.CopyFrom(ctx, pgx.Identifier{tb}, []string{"k"}, pgx.CopyFromRows(src))
				require.NoError(t, err)
				exec(fmt.Sprintf(`INSERT INTO %s (k) SELECT g FROM generate_series(1, 3000) g`, tb))
				var values []string
				for k := range 200 {
					values = append(values, fmt.Sprintf("(%d)", k))
				}
				exec(fmt.Sprintf(`INSERT INTO %s (k) VALUES %s`, tb, strings.Join(values, ",")))
				exec(fmt.Sprintf(`INSERT INTO %s (id, k) VALUES (%s, 1), (%s, 2), (DEFAULT, 3)`, tb, gen, gen))
				n, d := distinct(`SELECT id FROM ` + tb)
				require.EqualValues(t, 3000+3000+200+3, n)
				require.Equal(t, n, d, "COPY, INSERT … SELECT, VALUES")

				exec(fmt.Sprintf(`UPDATE %s SET id = %s`, tb, gen))
				n, d = distinct(`SELECT id FROM ` + tb)
				require.Equal(t, n, d, "UPDATE")

				exec(fmt.Sprintf(`CREATE TABLE %s_ctas AS SELECT %s AS id, g FROM generate_series(1, 3000) g`, tb, gen))
				n, d = distinct(`SELECT id FROM ` + tb + `_ctas`)
				require.EqualValues(t, 3000, n)
				require.Equal(t, n, d, "CREATE TABLE AS")

				// Generic plans, forced: the default and the call, per row and per execution.
				exec(`SET plan_cache_mode = force_generic_plan`)
				exec(fmt.Sprintf(`CREATE TABLE %s_prep (id bigint DEFAULT %s, k int)`, tb, gen))
				exec(fmt.Sprintf(`PREPARE ins_%s(int) AS INSERT INTO %s_prep (k) SELECT g FROM generate_series(1, $1) g`, name, tb))
				exec(fmt.Sprintf(`PREPARE one_%s(int) AS INSERT INTO %s_prep (k) VALUES ($1)`, name, tb))
				exec(fmt.Sprintf(`PREPARE sel_%s(int) AS INSERT INTO %s_prep (id, k) SELECT %s, g FROM generate_series(1, $1) g`, name, tb, gen))
				for r := range 6 {
					exec(fmt.Sprintf(`EXECUTE ins_%s(500)`, name))
					exec(fmt.Sprintf(`EXECUTE one_%s(%d)`, name, r))
					exec(fmt.Sprintf(`EXECUTE sel_%s(500)`, name))
				}
				exec(`RESET plan_cache_mode`)
				n, d = distinct(`SELECT id FROM ` + tb + `_prep`)
				require.EqualValues(t, 6*(500+1+500), n)
				require.Equal(t, n, d, "generic plans")

				// Partitioned: the default of the parent, and one of a partition.
				exec(fmt.Sprintf(`CREATE TABLE %s_part (id bigint DEFAULT %s, k int) PARTITION BY RANGE (k);
					CREATE TABLE %s_p0 PARTITION OF %s_part FOR VALUES FROM (MINVALUE) TO (1500);
					CREATE TABLE %s_p1 PARTITION OF %s_part FOR VALUES FROM (1500) TO (MAXVALUE);
					ALTER TABLE %s_p1 ALTER COLUMN id SET DEFAULT %s`, tb, gen, tb, tb, tb, tb, tb, gen))
				_, err = conn.CopyFrom(ctx, pgx.Identifier{tb + "_part"}, []string{"k"}, pgx.CopyFromRows(src))
				require.NoError(t, err)
				exec(fmt.Sprintf(`INSERT INTO %s_part (k) SELECT g FROM generate_series(1, 3000) g`, tb))
				exec(fmt.Sprintf(`INSERT INTO %s_p1 (k) SELECT g FROM generate_series(1500, 2999) g`, tb))
				n, d = distinct(`SELECT id FROM ` + tb + `_part`)
				require.EqualValues(t, 3000+3000+1500, n)
				require.Equal(t, n, d, "partitioned")

				// An uncorrelated scalar subquery is an initplan: one value, for both.
				n, d = distinct(fmt.Sprintf(`SELECT (SELECT %s) AS id FROM generate_series(1, 100)`, gen))
				require.EqualValues(t, 100, n)
				require.EqualValues(t, 1, d, "initplan")
			})
		}
	})
}

// TestExtensionInWhere documents the semantics of the call in a WHERE
// clause: with nextval() as its argument it is evaluated for every row
// scanned, drawing a sequence value each time, and is never an index
// condition, exactly as ulid_flake() is; with a constant argument it is
// STABLE, may serve as an index condition, and draws nothing.
func TestExtensionInWhere(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		conn, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		_, err = conn.Exec(ctx, `CREATE TABLE w (id bigint PRIMARY KEY DEFAULT `+next+`, k int);
			INSERT INTO w (k) SELECT g FROM generate_series(1, 1000) g; ANALYZE w; SET enable_seqscan = off`)
		require.NoError(t, err)
		plan := func(q string) string {
			t.Helper()
			rows, err := conn.Query(ctx, `EXPLAIN (COSTS OFF) `+q)
			require.NoError(t, err)
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			return strings.Join(lines, "\n")
		}
		seq := func() int64 {
			var s int64
			require.NoError(t, conn.QueryRow(ctx, `SELECT last_value FROM ulid_flake_seq`).Scan(&s))
			return s
		}
		for _, gen := range []string{"ulid_flake()", next} {
			q := `SELECT count(*) FROM w WHERE id < ` + gen
			pl := plan(q)
			require.NotContains(t, pl, "Index Cond", "%s:\n%s", gen, pl)
			require.Contains(t, pl, "Filter", "%s:\n%s", gen, pl)
			before := seq()
			var n int64
			require.NoError(t, conn.QueryRow(ctx, q).Scan(&n))
			require.EqualValues(t, 1000, n)
			require.EqualValues(t, before+1000, seq(), "%s: one sequence value per row scanned", gen)
		}
		q := `SELECT count(*) FROM w WHERE id < ulid_flake_next(5)`
		require.Contains(t, plan(q), "Index Cond", "a constant argument")
		before := seq()
		var n int64
		require.NoError(t, conn.QueryRow(ctx, q).Scan(&n))
		require.EqualValues(t, 1000, n)
		require.Equal(t, before, seq())
	})
}
