package leasefail_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

// Holders whose clocks disagree (directly and through PgBouncer in both
// modes): a holder whose clock runs ahead of the server's (within
// MaxClockAhead) makes IDs, then hands its SID on; the next holder, with a
// correct clock, makes IDs only above every ID the first made. A holder whose
// clock is further ahead is refused (ErrClockAhead) and releases the SID; one
// whose clock steps ahead while it holds its SID stops making IDs until the
// clock is back. A row whose ceiling is an hour ahead (left by a holder of
// an earlier version) is refused by the next (ErrClockBehindFloor).
func TestSIDLeaseSkewedClocks(t *testing.T) {
	t.Parallel()
	itest.LeasePaths(t, func(t *testing.T, db *pgtest.DB, pool *pgxpool.Pool) {
		ctx := context.Background()
		free, _ := oneFreeSID(t, db, "skew") // 31 SIDs held for ever: every new lease gets the last one
		ahead := func(d time.Duration) sidlease.Option {
			return sidlease.WithGeneratorOptions(flake.WithClock(func() time.Time { return time.Now().Add(d) }))
		}

		first, err := sidlease.Acquire(ctx, pool, "skew", sidlease.WithValidity(testValidity), ahead(sidlease.MaxClockAhead*8/10))
		require.NoError(t, err)
		var high ulidflake.ID
		for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); {
			id, err := first.NewWait(ctx)
			require.NoError(t, err)
			high = max(high, id)
		}
		sid := first.SID()
		require.Equal(t, free, sid)
		require.NoError(t, first.Close())

		next, err := sidlease.Acquire(ctx, pool, "skew", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		require.Equal(t, sid, next.SID())
		for range 100_000 { // plain checks: testify's cost 1 s per 100,000 under -race
			id, err := next.NewWait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if id <= high {
				t.Fatalf("ID %s at or below %s, one the previous holder made", id, high)
			}
		}
		require.NoError(t, next.Close())

		_, err = sidlease.Acquire(ctx, pool, "skew", sidlease.WithValidity(testValidity), ahead(3*sidlease.MaxClockAhead))
		require.ErrorIs(t, err, sidlease.ErrClockAhead)

		// The clock steps ahead while the lease is held, then back.
		var step atomic.Int64
		stepped, err := sidlease.Acquire(ctx, pool, "skew", sidlease.WithValidity(testValidity),
			sidlease.WithGeneratorOptions(flake.WithClock(func() time.Time { return time.Now().Add(time.Duration(step.Load())) })))
		require.NoError(t, err, "the SID was not freed")
		defer stepped.Close()
		require.Equal(t, sid, stepped.SID())
		step.Store(int64(3 * sidlease.MaxClockAhead))
		require.Eventually(t, func() bool {
			_, err := stepped.New()
			return errors.Is(err, sidlease.ErrClockAhead)
		}, 30*time.Second, 5*time.Millisecond, "a clock 3s ahead still makes IDs")
		_, err = stepped.NewWait(ctx)
		require.ErrorIs(t, err, sidlease.ErrClockAhead, "NewWait does not wait for a clock")
		step.Store(0)
		require.Eventually(t, func() bool {
			_, err := stepped.New()
			return err == nil
		}, 30*time.Second, 5*time.Millisecond, "the clock is back, the lease makes no ID")
		require.NoError(t, stepped.Close())

		far := ulidflake.DefaultEpoch().MinID(time.Now().Add(time.Hour))
		_, err = db.Exec(ctx, `UPDATE ulid_flake_sid_leases SET minted_below = $2 WHERE namespace = 'skew' AND sid = $1`, sid, far)
		require.NoError(t, err)
		_, err = sidlease.Acquire(ctx, pool, "skew", sidlease.WithValidity(testValidity))
		require.ErrorIs(t, err, sidlease.ErrClockBehindFloor)
		require.NotErrorIs(t, err, flake.ErrClockBehind)
		require.Equal(t, 1, strings.Count(err.Error(), "sidlease:"), "the package's prefix once: %s", err)
		require.ErrorContains(t, err, "minted_below")
		_, err = db.Exec(ctx, `UPDATE ulid_flake_sid_leases SET minted_below = 0 WHERE namespace = 'skew' AND sid = $1`, sid)
		require.NoError(t, err)
		again, err := sidlease.Acquire(ctx, pool, "skew", sidlease.WithValidity(testValidity))
		require.NoError(t, err, "the SID was not freed")
		require.Equal(t, sid, again.SID())
		require.NoError(t, again.Close())
	})
}

// A new holder whose clock steps back after its claim, before it made any
// ID, still makes IDs only above every ID of the previous holder: the claim's
// floor stays with the lease, not with a generator that has no last ID.
// The previous holder ran ahead of the server (within MaxClockAhead), the
// new one steps back further than V plus MaxClockAhead.
func TestSIDLeaseClockStepsBackBeforeFirstID(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		oneFreeSID(t, db, "stepback")
		ahead := sidlease.WithGeneratorOptions(flake.WithClock(func() time.Time { return time.Now().Add(sidlease.MaxClockAhead * 8 / 10) }))
		first, err := sidlease.Acquire(ctx, db.Pool, "stepback", sidlease.WithValidity(testValidity), ahead)
		require.NoError(t, err)
		var high ulidflake.ID
		for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); {
			id, err := first.NewWait(ctx)
			require.NoError(t, err)
			high = max(high, id)
		}
		require.NoError(t, first.Close())

		var step atomic.Int64
		next, err := sidlease.Acquire(ctx, db.Pool, "stepback", sidlease.WithValidity(testValidity),
			sidlease.WithGeneratorOptions(flake.WithClock(func() time.Time { return time.Now().Add(time.Duration(step.Load())) })))
		require.NoError(t, err)
		defer next.Close()
		step.Store(int64(-(testValidity + 2*sidlease.MaxClockAhead)))
		refused := 0
		for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); {
			id, err := next.New()
			if errors.Is(err, flake.ErrMonotonicOverflow) {
				continue
			}
			if err != nil {
				require.ErrorIs(t, err, sidlease.ErrLeaseLost)
				refused++
				continue
			}
			require.Greater(t, id, high, "an ID at or below one the previous holder made")
		}
		require.NotZero(t, refused, "a clock behind the floor was not refused")
		step.Store(0)
		id, err := next.NewWait(ctx)
		require.NoError(t, err)
		require.Greater(t, id, high)
	})
}
