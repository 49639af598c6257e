package lease_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

const testValidity = itest.LeaseValidity

// allocValidity is the validity of tests about which SID a claim gets, not
// about expiry: long enough that no renewal (every V/4) comes V late on
// a busy machine, so that no held SID is free again mid-test, and short
// enough for the wait of V that every claim makes.
const allocValidity = 5 * time.Second

// acquireAll takes n leases of ns at once, valid for validity, and returns
// those that succeeded and the errors of the others.
func acquireAll(t *testing.T, pool *pgxpool.Pool, ns string, n int, validity time.Duration) ([]*sidlease.Lease, []error) {
	t.Helper()
	leases := make([]*sidlease.Lease, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			leases[i], errs[i] = sidlease.Acquire(context.Background(), pool, ns, sidlease.WithValidity(validity))
		})
	}
	wg.Wait()
	var got []*sidlease.Lease
	var failed []error
	for i := range n {
		if errs[i] != nil {
			failed = append(failed, errs[i])
		} else {
			got = append(got, leases[i])
		}
	}
	t.Cleanup(func() {
		for _, l := range got {
			l.Close()
		}
	})
	return got, failed
}

func sids(leases []*sidlease.Lease) []int {
	var s []int
	for _, l := range leases {
		s = append(s, l.SID())
	}
	slices.Sort(s)
	return s
}

// 33 instances compete for 32 SIDs: 32 get distinct ones, the 33rd gets
// ErrNoFreeSID; Close releases a SID at once.
func TestSIDLease33Competing(t *testing.T) {
	t.Parallel()
	itest.LeasePaths(t, func(t *testing.T, db *pgtest.DB, pool *pgxpool.Pool) {
		ctx := context.Background()
		// Another namespace is independent: its claim, made beside the 33
		// (each claim waits the validity, so not after them), takes none
		// of their SIDs, and they none of its.
		type claimed struct {
			l   *sidlease.Lease
			err error
		}
		billing := make(chan claimed, 1)
		go func() {
			l, err := sidlease.Acquire(ctx, pool, "billing", sidlease.WithValidity(allocValidity))
			billing <- claimed{l, err}
		}()
		leases, failed := acquireAll(t, pool, "orders", 33, allocValidity)
		other := <-billing
		require.NoError(t, other.err)
		defer other.l.Close()
		require.Len(t, leases, 32, "failures: %v", failed)
		require.Len(t, failed, 1)
		require.ErrorIs(t, failed[0], sidlease.ErrNoFreeSID)
		require.ErrorContains(t, failed[0], `namespace "orders"`)
		want := make([]int, 32)
		for i := range want {
			want[i] = i
		}
		require.Equal(t, want, sids(leases), "32 distinct SIDs")
		_, err := other.l.New()
		require.NoError(t, err, "the other namespace's lease")

		freed := leases[7].SID()
		require.NoError(t, leases[7].Close())
		_, err = leases[7].New()
		require.ErrorIs(t, err, sidlease.ErrClosed)
		l, err := sidlease.Acquire(ctx, pool, "orders", sidlease.WithValidity(allocValidity))
		require.NoError(t, err)
		defer l.Close()
		require.Equal(t, freed, l.SID())
		id, err := l.NewWait(ctx)
		require.NoError(t, err)
		require.Equal(t, freed, id.SID())
	})
}

// A holder whose SID was taken over (its row expired: its renewals did
// not arrive) stops making IDs at its next renewal, and makes none after
// the new holder starts; the same holds when the holder's server sessions
// are terminated, as a failover does to every session.
func TestSIDLeaseTakeoverNeverOverlaps(t *testing.T) {
	t.Parallel()
	itest.LeasePaths(t, func(t *testing.T, db *pgtest.DB, pool *pgxpool.Pool) {
		ctx := context.Background()
		old, err := sidlease.Acquire(ctx, pool, "takeover", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		defer old.Close()
		sid := old.SID()
		stop := make(chan struct{})
		defer close(stop)
		oldLog := itest.MintUntil(old, stop)

		// Every session of the server ends, and the holder's row expires
		// while its renewals cannot arrive.
		_, err = db.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`)
		require.NoError(t, err)
		_, err = db.Exec(ctx, `UPDATE ulid_flake_sid_leases SET expires_at = 'infinity', token = token + 1
			WHERE namespace = 'takeover' AND sid <> $1`, sid) // the others are held, so that the taker gets sid
		require.NoError(t, err)
		// The taker is another instance, with a pool of its own.
		other, err := pgxpool.New(ctx, pool.Config().ConnString())
		require.NoError(t, err)
		defer other.Close()
		var taker *sidlease.Lease
		for try := 0; taker == nil; try++ {
			// The old holder may renew between the two statements: expire
			// it again until the claim wins.
			_, err = db.Exec(ctx, `UPDATE ulid_flake_sid_leases SET expires_at = '-infinity' WHERE namespace = 'takeover' AND sid = $1`, sid)
			require.NoError(t, err)
			taker, err = sidlease.Acquire(ctx, other, "takeover", sidlease.WithValidity(testValidity))
			// Behind PgBouncer, the taker may be handed a server connection
			// the termination above ended (57P01): it tries again, as a
			// caller of Acquire would after a failover.
			var pgErr *pgconn.PgError
			terminated := errors.As(err, &pgErr) && pgErr.Code == "57P01"
			if (errors.Is(err, sidlease.ErrNoFreeSID) || terminated) && try < 100 {
				continue
			}
			require.NoError(t, err)
		}
		defer taker.Close()
		require.Equal(t, sid, taker.SID())
		first, err := taker.New()
		require.NoError(t, err)
		takerFirst := time.Now()

		// The old holder finds out: its renewal updates no row.
		deadline := time.Now().Add(30 * time.Second)
		for {
			oldLog.Mu.Lock()
			done := oldLog.Err != nil
			oldLog.Mu.Unlock()
			if done || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		oldLog.Mu.Lock()
		defer oldLog.Mu.Unlock()
		require.ErrorIs(t, oldLog.Err, sidlease.ErrLeaseLost, "the old holder did not stop")
		require.True(t, oldLog.Last.Before(takerFirst), "the old holder made an ID at %s, after the taker at %s", oldLog.Last, takerFirst)
		require.NotContains(t, oldLog.IDs, first)
		for _, id := range oldLog.IDs {
			require.Equal(t, sid, id.SID())
		}
	})
}

// 320,000 IDs from 32 holders at once: none repeats.
func TestSIDLeaseNoDuplicates(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		u := db.URL
		if db.Server.Major == pgtest.DefaultVersions[len(pgtest.DefaultVersions)-1] {
			u = db.Server.PgBouncer(t, db, "transaction", 2) // the newest server, through a transaction pooler
		}
		pool, err := pgxpool.New(ctx, u)
		require.NoError(t, err)
		defer pool.Close()
		leases, failed := acquireAll(t, pool, "gen", 32, testValidity)
		require.Empty(t, failed)
		const each = 10_000 // 320,000 in all
		out := make([][]ulidflake.ID, 32)
		itest.RunWorkers(t, 32, func(i int) error {
			ids := make([]ulidflake.ID, 0, each)
			for len(ids) < each {
				id, err := leases[i].NewWait(ctx)
				if errors.Is(err, sidlease.ErrLeaseLost) {
					time.Sleep(time.Millisecond) // a slow renewal on a busy machine: wait for the next
					continue
				}
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			out[i] = ids
			return nil
		})
		// A holder whose renewal came late on a busy machine claims a SID
		// again, maybe another: its IDs need not share one SID.
		var all []ulidflake.ID
		for _, ids := range out {
			all = append(all, ids...)
		}
		require.Len(t, all, 32*each)
		slices.Sort(all)
		if n := len(slices.Compact(all)); n != 32*each {
			t.Fatalf("%d duplicates across holders", 32*each-n)
		}
	})
}

// A server restart ends every session; the leases keep their SIDs or take
// others, and make IDs again.
func TestSIDLeaseSurvivesServerRestart(t *testing.T) {
	t.Parallel()
	srv := pgtest.NewContainer(t)
	db := srv.NewDB(t)
	ctx := context.Background()
	leases, failed := acquireAll(t, db.Pool, "restart", 4, testValidity)
	require.Empty(t, failed)
	for _, l := range leases {
		_, err := l.New()
		require.NoError(t, err)
	}
	require.NoError(t, srv.Restart(ctx))

	deadline := time.Now().Add(60 * time.Second)
	recovered := map[int]bool{}
	for time.Now().Before(deadline) && len(recovered) < len(leases) {
		for i, l := range leases {
			if _, err := l.New(); err == nil {
				recovered[i] = true
			} else if !errors.Is(err, sidlease.ErrLeaseLost) {
				t.Fatalf("lease %d: %v", i, err)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Len(t, recovered, len(leases), "holders that recovered after the restart")
	require.Len(t, slices.Compact(sids(leases)), len(leases), "distinct SIDs after the restart")
}

// database/sql: AcquireDB through pgx's stdlib and PgBouncer in
// transaction mode, with the simple protocol as the docs say; the lease
// table in a schema of its own with a hostile name, created by 8 instances
// at once.
func TestSIDLeaseDatabaseSQL(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		_, err := db.Exec(ctx, `CREATE SCHEMA "lease$$ 'room'"`)
		require.NoError(t, err)
		cfg, err := pgx.ParseConfig(db.Server.PgBouncer(t, db, "transaction", 2) + "&default_query_exec_mode=simple_protocol")
		require.NoError(t, err)
		sdb := stdlib.OpenDB(*cfg)
		defer sdb.Close()
		var leases []*sidlease.Lease
		var mu sync.Mutex
		itest.RunWorkers(t, 8, func(int) error {
			l, err := sidlease.AcquireDB(ctx, sdb, "sql", sidlease.WithValidity(testValidity), sidlease.WithSchema("lease$$ 'room'"))
			if err == nil {
				mu.Lock()
				leases = append(leases, l)
				mu.Unlock()
			}
			return err
		})
		defer func() {
			for _, l := range leases {
				l.Close()
			}
		}()
		require.Len(t, slices.Compact(sids(leases)), 8)
		for _, l := range leases {
			id, err := l.NewWait(ctx)
			require.NoError(t, err)
			require.Equal(t, l.SID(), id.SID())
		}
		// Held (a holder, not released), whatever the expiry: a renewal
		// through 2 pooled connections may come late on a busy machine,
		// and NewWait above already proved each lease live.
		var held []int
		require.NoError(t, db.QueryRow(ctx, `SELECT coalesce(array_agg(sid ORDER BY sid), '{}') FROM "lease$$ 'room'".ulid_flake_sid_leases
			WHERE namespace = 'sql' AND holder IS NOT NULL`).Scan(&held))
		require.Subset(t, held, sids(leases), "every lease's SID is held in the table")
	})
}
