package sqlfn_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// backfillRecipe returns the SQL block of docs/backfill.md that its text
// says TestSQLBackfillRecipe runs.
func backfillRecipe(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/backfill.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "```sql\n")
	require.True(t, ok, "docs/backfill.md has no sql block")
	block, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	return block
}

// An old BIGSERIAL table, 200,000 rows over 2 seconds (100 per
// millisecond, in a shuffled order; a quick run 400 milliseconds), copied by the docs' recipe, forced
// parallel plans and all: every row gets a distinct ID that reads its own
// millisecond, in Go and in SQL, and IDs sort as the rows' times.
func TestSQLBackfillRecipe(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		ms := pgtest.Scale(2000, 400)
		_, err := db.Exec(ctx, fmt.Sprintf(`CREATE TABLE orders_old (id bigserial PRIMARY KEY, created_at timestamptz NOT NULL, total int NOT NULL);
			INSERT INTO orders_old (created_at, total)
			SELECT timestamptz '2024-05-01 12:00:00+00' + (g %% %d) * interval '1 millisecond' + (g %% 7) * interval '1 microsecond', g
			FROM generate_series(1, %d) g ORDER BY random();
			ANALYZE orders_old;
			SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
			SET max_parallel_workers_per_gather = 4`, ms, 100*ms))
		require.NoError(t, err)
		_, err = db.Exec(ctx, backfillRecipe(t))
		require.NoError(t, err)

		var rows, distinct, wrongTime, misordered int64
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*), count(DISTINCT id),
			count(*) FILTER (WHERE ulid_flake_time(id) <> date_trunc('milliseconds', created_at)) FROM orders_new`).Scan(&rows, &distinct, &wrongTime))
		require.Equal(t, int64(100*ms), rows)
		require.Equal(t, rows, distinct, "repeated IDs")
		require.Zero(t, wrongTime, "IDs whose time is not the row's")
		// Rows of one millisecond may come in any order; rows of different
		// milliseconds sort by time.
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM (
			SELECT date_trunc('milliseconds', created_at) < lag(date_trunc('milliseconds', created_at)) OVER (ORDER BY id) AS back
			FROM orders_new) s WHERE back`).Scan(&misordered))
		require.Zero(t, misordered, "IDs that sort before an earlier millisecond's")

		got, err := db.Query(ctx, `SELECT id, created_at FROM orders_new TABLESAMPLE SYSTEM (5)`)
		require.NoError(t, err)
		defer got.Close()
		for got.Next() {
			var id flake.ID
			var at time.Time
			require.NoError(t, got.Scan(&id, &at))
			require.True(t, flake.DefaultEpoch().Time(id).Equal(at.Truncate(time.Millisecond)), "%s reads %s in Go, the row %s", id, flake.DefaultEpoch().Time(id), at)
		}
		require.NoError(t, got.Err())
	})
}

// Two backfills of the same times at once, into one table, beside live
// DEFAULT ulid_flake() inserts: no ID repeats.
func TestSQLBackfillConcurrent(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		_, err := db.Exec(ctx, `CREATE TABLE src (at timestamptz NOT NULL);
			INSERT INTO src SELECT timestamptz '2024-05-01 12:00:00+00' + (g % 50) * interval '1 millisecond' FROM generate_series(1, 50000) g;
			CREATE TABLE dst (id bigint PRIMARY KEY DEFAULT ulid_flake(), at timestamptz)`)
		require.NoError(t, err)
		var wg sync.WaitGroup
		errs := make(chan error, 3)
		for range 2 {
			wg.Go(func() {
				_, err := db.Exec(ctx, `INSERT INTO dst (id, at) SELECT ulid_flake_at(at), at FROM src ORDER BY at`)
				errs <- err
			})
		}
		wg.Go(func() {
			_, err := db.Exec(ctx, `INSERT INTO dst (at) SELECT now() FROM generate_series(1, 20000)`)
			errs <- err
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		var n int64
		require.NoError(t, db.QueryRow(ctx, `SELECT count(DISTINCT id) FROM dst`).Scan(&n))
		require.Equal(t, int64(120000), n)
	})
}

// NULL gives NULL, never an ID; a time outside the range fails with 22003.
func TestSQLBackfillEdges(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		var id *int64
		require.NoError(t, db.QueryRow(ctx, `SELECT ulid_flake_at(NULL)`).Scan(&id))
		require.Nil(t, id, "ulid_flake_at(NULL)")
		for _, bad := range []string{"infinity", "-infinity", "2023-12-31 23:59:59.999+00", "2400-01-01+00"} {
			_, err := db.Exec(ctx, `SELECT ulid_flake_at($1::timestamptz)`, bad)
			var pgErr *pgconn.PgError
			require.True(t, errors.As(err, &pgErr), "%s: %v", bad, err)
			require.Equal(t, "22003", pgErr.Code, "%s: %v", bad, err)
		}
		var first int64
		require.NoError(t, db.QueryRow(ctx, `SELECT ulid_flake_at('2024-01-01 00:00:00+00')`).Scan(&first))
		require.Positive(t, first, "the epoch's first millisecond")
		require.Less(t, first, int64(1)<<20)
	})
}
