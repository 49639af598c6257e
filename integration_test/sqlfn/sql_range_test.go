package sqlfn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestSQLTimeRangeNamesTheFix: a time outside the epoch's range is 22003
// from ulid_flake_at, _min and _max, with Go's message (the time and the
// epoch) and a HINT that names the fix, under the default epoch and a
// custom one.
func TestSQLTimeRangeNamesTheFix(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		const hint = ` epoch for every generator of these IDs before the first is made: ` +
			`ulid_flake_set_epoch(ms) here (refused once IDs exist, unless forced), migrations.WithEpoch at install, ` +
			`and WithEpoch in Go; see docs/sql.md, "The epoch".`
		e2020, err := flake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
		require.NoError(t, err)
		for _, tc := range []struct {
			epoch     flake.Epoch
			at        time.Time
			msg, hint string
		}{
			{flake.DefaultEpoch(), time.Date(2023, 5, 1, 12, 0, 0, 123_456_000, time.UTC),
				"ulid_flake: time out of range: 2023-05-01T12:00:00.123Z is before the epoch, 2024-01-01T00:00:00.000Z",
				"For such times choose an earlier" + hint},
			{flake.DefaultEpoch(), time.Date(2302, 9, 27, 15, 10, 22, 208e6, time.UTC),
				"ulid_flake: time out of range: 2302-09-27T15:10:22.208Z is after 2302-09-27T15:10:22.207Z, " +
					"the last millisecond IDs hold under the epoch 2024-01-01T00:00:00.000Z",
				"For such times choose a later" + hint},
			{e2020, time.Date(2019, 12, 31, 23, 59, 59, 999e6, time.UTC),
				"ulid_flake: time out of range: 2019-12-31T23:59:59.999Z is before the epoch, 2020-01-01T00:00:00.000Z",
				"For such times choose an earlier" + hint},
		} {
			_, err := db.Exec(ctx, `SELECT ulid_flake_set_epoch($1::bigint, force => true)`, tc.epoch.UnixMilli())
			require.NoError(t, err)
			_, goErr := tc.epoch.Timestamp(tc.at)
			require.ErrorIs(t, goErr, flake.ErrTimeRange)
			for _, fn := range []string{"ulid_flake_at", "ulid_flake_min", "ulid_flake_max"} {
				_, err := db.Exec(ctx, `SELECT `+fn+`($1::timestamptz)`, tc.at)
				var pgErr *pgconn.PgError
				require.True(t, errors.As(err, &pgErr), "%s(%s): %v", fn, tc.at, err)
				require.Equal(t, "22003", pgErr.Code, fn)
				require.Equal(t, tc.msg, pgErr.Message, fn)
				require.Equal(t, tc.hint, pgErr.Hint, fn)
				// Go says the same: the message, then the fix.
				sqlMsg := strings.TrimPrefix(pgErr.Message, "ulid_flake: ")
				require.True(t, strings.HasPrefix(strings.TrimPrefix(goErr.Error(), "flake: "), sqlMsg+"; for such times choose"),
					"Go %q, SQL %q", goErr, pgErr.Message)
			}
		}
		_, err = db.Exec(ctx, `SELECT ulid_flake_min('infinity'::timestamptz)`)
		var pgErr *pgconn.PgError
		require.True(t, errors.As(err, &pgErr), "%v", err)
		require.Equal(t, "22003", pgErr.Code)
		require.Equal(t, "ulid_flake: time out of range: infinity is not a finite time", pgErr.Message)
	})
}

// TestSQLCustomEpochRoundTrip: under an epoch before 2024, a 2019 time
// goes into an ID and back the same in SQL and Go: ulid_flake_at's ID
// reads the time in both, its bounds are Go's, and Go's NewAt under the
// same epoch lies within them.
func TestSQLCustomEpochRoundTrip(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		epoch, err := flake.NewEpoch(time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC))
		require.NoError(t, err)
		_, err = db.Exec(ctx, `SELECT ulid_flake_set_epoch($1::bigint, force => true)`, epoch.UnixMilli())
		require.NoError(t, err)
		g, err := flake.NewGenerator(flake.WithEpoch(epoch))
		require.NoError(t, err)
		for _, at := range []time.Time{
			time.Date(2019, 3, 14, 9, 26, 53, 589_999_000, time.UTC),
			time.Date(2015, 1, 1, 0, 0, 0, 1e6, time.UTC),
			time.Date(2023, 12, 31, 23, 59, 59, 999e6, time.UTC),
		} {
			var id, lo, hi int64
			var sqlTime time.Time
			require.NoError(t, db.QueryRow(ctx, `SELECT a, ulid_flake_time(a), ulid_flake_min($1), ulid_flake_max($1)
				FROM (SELECT ulid_flake_at($1::timestamptz) AS a) s`, at).Scan(&id, &sqlTime, &lo, &hi))
			ms := at.Truncate(time.Millisecond)
			require.True(t, sqlTime.Equal(ms), "%s: ulid_flake_time %s", at, sqlTime)
			require.True(t, epoch.Time(flake.ID(id)).Equal(ms), "%s: Go reads %s", at, epoch.Time(flake.ID(id)))
			require.Equal(t, int64(epoch.MinID(at)), lo, "%s: ulid_flake_min", at)
			require.Equal(t, int64(epoch.MaxID(at)), hi, "%s: ulid_flake_max", at)
			goID, err := g.NewAt(at)
			require.NoError(t, err)
			require.True(t, int64(goID) >= lo && int64(goID) <= hi, "%s: Go's %d outside [%d, %d]", at, goID, lo, hi)
			require.True(t, g.Epoch().Time(goID).Equal(ms))
		}
	})
}
