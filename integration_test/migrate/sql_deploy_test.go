package migrate_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// Replicas that each migrate at start-up: 8 callers at once, on a fresh
// database, on a migrated one, down and to a version: every call succeeds,
// the work is done once.
func TestMigrateConcurrentCallers(t *testing.T) {
	t.Parallel()
	const callers = 8
	latest := migrations.Latest()
	all := func(t *testing.T, db *sql.DB, opts ...migrations.Option) int {
		t.Helper()
		var wg sync.WaitGroup
		steps := make([]int, callers)
		errs := make([]error, callers)
		for i := range callers {
			wg.Go(func() {
				s, err := migrations.Migrate(context.Background(), db, opts...)
				steps[i], errs[i] = len(s), err
			})
		}
		wg.Wait()
		total := 0
		for i := range callers {
			require.NoError(t, errs[i], "caller %d", i)
			total += steps[i]
		}
		return total
	}
	version := func(t *testing.T, db *sql.DB) int {
		var v int
		require.NoError(t, db.QueryRow(`SELECT coalesce(max(version), 0) FROM ulid_flake_migrations`).Scan(&v))
		return v
	}
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			db := itest.EmptyDB(t, s)
			require.Equal(t, latest, all(t, db), "fresh: the versions applied once between them")
			require.Equal(t, latest, version(t, db))
			require.Zero(t, all(t, db), "migrated: nothing to do")
			require.Equal(t, 1, all(t, db, migrations.WithDirection(migrations.DirectionDown)), "Down: one version reverted between them")
			require.Equal(t, latest-1, version(t, db))
			require.Equal(t, latest-2, all(t, db, migrations.WithTarget(1)), "To(1)")
			require.Equal(t, 1, version(t, db))
			require.Equal(t, latest-1, all(t, db))
			var id int64
			require.NoError(t, db.QueryRow(`SELECT ulid_flake()`).Scan(&id))
			require.Positive(t, id)
		})
	}
}

// ulid_flake() under parallel plans: forced, and chosen by the planner for
// a CREATE TABLE AS over a table big enough for it (1M rows; IDs for a
// quarter of them, which the scan's filter picks).
func TestSQLGeneratorsUnderParallelPlans(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		conn, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		force := "debug_parallel_query"
		if db.Server.Major < 16 {
			force = "force_parallel_mode"
		}
		exec := func(q string) {
			t.Helper()
			_, err := conn.Exec(ctx, q)
			require.NoError(t, err, q)
		}
		// A quick run proves it on fewer rows, still enough for a parallel
		// plan with default settings (min_parallel_table_scan_size: 8 MB).
		size := pgtest.Scale(1_000_000, 400_000)
		distinct := func(table string) {
			t.Helper()
			var n, d, ds int64
			require.NoError(t, conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT id), count(DISTINCT sid_id) FROM `+table).Scan(&n, &d, &ds))
			require.EqualValues(t, size/4, n, table)
			require.Equal(t, n, d, table)
			require.Equal(t, n, ds, table)
		}
		exec(fmt.Sprintf(`CREATE TABLE big AS SELECT g FROM generate_series(1, %d) g`, size))
		exec(`ANALYZE big`)
		// Big enough for a parallel plan on its own, with default settings.
		rows, err := conn.Query(ctx, `EXPLAIN SELECT g FROM big WHERE g % 7 = 0`)
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Contains(t, strings.Join(lines, "\n"), "Gather", "the planner does not choose a parallel plan for big")
		exec(`CREATE TABLE ids AS SELECT ulid_flake() AS id, ulid_flake_scalable(3) AS sid_id, g FROM big WHERE g % 4 = 0`)
		distinct("ids")
		// And with parallel plans forced.
		for _, q := range []string{`SET parallel_setup_cost = 0`, `SET parallel_tuple_cost = 0`, `SET min_parallel_table_scan_size = 0`, `SET ` + force + ` = on`} {
			exec(q)
		}
		exec(`CREATE TABLE ids2 AS SELECT ulid_flake() AS id, ulid_flake_scalable(3) AS sid_id, g FROM big WHERE g % 4 = 1`)
		distinct("ids2")
		var n int64
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT ulid_flake() FROM big WHERE g % 4 = 2) x`).Scan(&n))
		require.EqualValues(t, size/4, n)
	})
}
