package integration_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

const testValidity = 2 * time.Second // the default

// acquireAll takes n leases of ns at once.
func acquireAll(t *testing.T, pool *pgxpool.Pool, ns string, n int) []*sidlease.Lease {
	t.Helper()
	leases := make([]*sidlease.Lease, n)
	runWorkers(t, n, func(i int) error {
		l, err := sidlease.Acquire(context.Background(), pool, ns, sidlease.WithValidity(testValidity))
		leases[i] = l
		return err
	})
	t.Cleanup(func() {
		for _, l := range leases {
			if l != nil {
				l.Close()
			}
		}
	})
	return leases
}

func sids(leases []*sidlease.Lease) []int {
	var s []int
	for _, l := range leases {
		s = append(s, l.SID())
	}
	slices.Sort(s)
	return s
}

func TestSIDLease32HoldersAndClose(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		leases := acquireAll(t, db.Pool, "orders", 32)
		want := make([]int, 32)
		for i := range want {
			want[i] = i
		}
		require.Equal(t, want, sids(leases), "32 distinct SIDs")

		_, err := sidlease.Acquire(ctx, db.Pool, "orders", sidlease.WithValidity(testValidity))
		require.ErrorIs(t, err, sidlease.ErrNoFreeSID)
		require.ErrorContains(t, err, `namespace "orders"`)

		// Another namespace is independent.
		other, err := sidlease.Acquire(ctx, db.Pool, "billing", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		defer other.Close()

		// Close frees the SID at once: the 33rd holder gets exactly it.
		freed := leases[7].SID()
		require.NoError(t, leases[7].Close())
		_, err = leases[7].New()
		require.ErrorIs(t, err, sidlease.ErrClosed)
		l, err := sidlease.Acquire(ctx, db.Pool, "orders", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		defer l.Close()
		require.Equal(t, freed, l.SID())
		id, err := l.NewWait(ctx)
		require.NoError(t, err)
		require.Equal(t, freed, id.SID())
	})
}

func TestSIDLeaseLostOnTerminate(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		leases := acquireAll(t, db.Pool, "ns", 32)
		victim := leases[0]
		sid := victim.SID()
		_, err := victim.New()
		require.NoError(t, err)

		// End the victim's session, as a failover or an operator would.
		var n int
		require.NoError(t, db.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
			WHERE locktype = 'advisory' AND objsubid = 2 AND objid = $1
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, sid).Scan(&n))
		require.Equal(t, 1, n)
		killed := time.Now()

		// Another process can take the freed SID at once (it then waits V).
		taker, err := sidlease.Acquire(ctx, db.Pool, "ns", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		defer taker.Close()
		require.Equal(t, sid, taker.SID())
		takerStart := time.Now()

		// The victim stops minting within V of the kill, and before the taker starts.
		var lastMint time.Time
		for {
			_, err := victim.New()
			if err != nil {
				require.ErrorIs(t, err, sidlease.ErrLeaseLost)
				break
			}
			lastMint = time.Now()
			require.Less(t, time.Since(killed), testValidity+50*time.Millisecond, "still minting long after the kill")
		}
		require.True(t, lastMint.Before(takerStart), "the victim minted at %s, after the taker started at %s", lastMint, takerStart)
		if !lastMint.IsZero() {
			t.Logf("the victim minted until %s after the kill", lastMint.Sub(killed))
		}

		// The victim keeps trying: all SIDs are held, so it stays lost, and
		// says so; it mints nothing.
		time.Sleep(2 * testValidity)
		_, err = victim.New()
		require.ErrorIs(t, err, sidlease.ErrLeaseLost)
	})
}

func TestSIDLeaseNoDuplicates(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		leases := acquireAll(t, db.Pool, "gen", 32)
		const each = 31_250 // 1e6 in all
		out := make([][]flake.ID, 32)
		runWorkers(t, 32, func(i int) error {
			ids := make([]flake.ID, 0, each)
			for range each {
				id, err := leases[i].NewWait(ctx)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			out[i] = ids
			return nil
		})
		var all []flake.ID
		for i, ids := range out {
			for _, id := range ids {
				require.Equal(t, leases[i].SID(), id.SID())
			}
			all = append(all, ids...)
		}
		require.Len(t, all, 1_000_000)
		slices.Sort(all)
		require.Len(t, slices.Compact(all), 1_000_000, "duplicates across holders")
	})
}

func TestSIDLeaseSurvivesServerRestart(t *testing.T) {
	t.Parallel()
	srv := pgtest.NewContainer(t)
	db := srv.NewDB(t)
	ctx := context.Background()
	leases := acquireAll(t, db.Pool, "restart", 4)
	for _, l := range leases {
		_, err := l.New()
		require.NoError(t, err)
	}
	require.NoError(t, srv.Restart(ctx))

	// Every holder notices, then takes a SID again and mints.
	deadline := time.Now().Add(30 * time.Second)
	var mu sync.Mutex
	recovered := map[int]bool{}
	for time.Now().Before(deadline) && len(recovered) < len(leases) {
		for i, l := range leases {
			if _, err := l.New(); err == nil {
				mu.Lock()
				recovered[i] = true
				mu.Unlock()
			} else if !errors.Is(err, sidlease.ErrLeaseLost) {
				t.Fatalf("lease %d: %v", i, err)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Len(t, recovered, len(leases), "holders that recovered after the restart")
	require.Len(t, slices.Compact(sids(leases)), len(leases), "distinct SIDs after the restart")
}
