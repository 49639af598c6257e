package sqlfn_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestSetEpochReachesCachedPlans: the epoch is a constant in the plans of
// the generators and of ulid_flake_time/_min/_max (version 5), yet a
// session that cached those plans (a prepared statement past its fifth
// run, so with a generic plan; a column default; a PL/pgSQL function)
// uses the epoch ulid_flake_set_epoch sets in another session from its
// next statement on, and a session SET of ulid_flake.epoch_ms changes
// nothing.
func TestSetEpochReachesCachedPlans(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		_, err := db.Exec(ctx, `CREATE TABLE t (id bigint PRIMARY KEY DEFAULT ulid_flake(), n int);
			CREATE FUNCTION made() RETURNS bigint LANGUAGE plpgsql AS 'BEGIN RETURN ulid_flake_scalable(7); END'`)
		require.NoError(t, err)
		conn, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		const q = `WITH c AS MATERIALIZED (SELECT clock_timestamp() AS t0),
				i AS (INSERT INTO t (n) SELECT $1::int FROM c RETURNING id)
			SELECT c.t0, i.id, ulid_flake(), made(), ulid_flake_time(i.id), ulid_flake_min(clock_timestamp()), clock_timestamp() FROM c, i`
		check := func(e flake.Epoch, n int) {
			t.Helper()
			var t0, t1, sqlTime time.Time
			var ids [3]int64
			var lo int64
			require.NoError(t, conn.QueryRow(ctx, q, n).Scan(&t0, &ids[0], &ids[1], &ids[2], &sqlTime, &lo, &t1))
			for i, id := range ids {
				got := e.Time(flake.ID(id))
				require.False(t, got.Before(t0.Truncate(time.Millisecond)) || got.After(t1), "run %d, ID %d: %v outside [%v, %v]", n, i, got, t0, t1)
			}
			require.True(t, e.Time(flake.ID(ids[0])).Equal(sqlTime), "run %d: ulid_flake_time", n)
			got := e.Time(flake.ID(lo))
			require.False(t, got.Before(t0.Truncate(time.Millisecond)) || got.After(t1), "run %d, ulid_flake_min: %v outside [%v, %v]", n, got, t0, t1)
		}
		for n := range 7 { // past the fifth run: a generic plan
			check(flake.DefaultEpoch(), n)
		}
		e2020, err := flake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
		require.NoError(t, err)
		_, err = db.Exec(ctx, `SELECT ulid_flake_set_epoch($1::bigint, force => true)`, e2020.UnixMilli())
		require.NoError(t, err)
		for n := 7; n < 10; n++ {
			check(e2020, n)
		}
		_, err = conn.Exec(ctx, `SET ulid_flake.epoch_ms = 'not read'`)
		require.NoError(t, err)
		check(e2020, 10)
		_, err = conn.Exec(ctx, `SET ulid_flake.epoch_ms = '1704067200000'`)
		require.NoError(t, err)
		check(e2020, 11)

		// A new session, and the simple protocol (no cached plan).
		fresh, err := pgx.Connect(ctx, db.URL)
		require.NoError(t, err)
		defer fresh.Close(ctx)
		var id int64
		var t0, t1 time.Time
		require.NoError(t, fresh.QueryRow(ctx, `SELECT clock_timestamp(), ulid_flake(), clock_timestamp()`, pgx.QueryExecModeSimpleProtocol).Scan(&t0, &id, &t1))
		got := e2020.Time(flake.ID(id))
		require.False(t, got.Before(t0.Truncate(time.Millisecond)) || got.After(t1), "new session: %v outside [%v, %v]", got, t0, t1)
	})
}
