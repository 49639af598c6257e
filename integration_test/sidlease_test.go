package integration_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

// A short validity keeps the tests quick; the safety argument does not
// depend on its length.
const testValidity = time.Second

// leasePaths runs fn on each way an instance reaches the server: directly,
// and through PgBouncer in session and in transaction pooling mode (2
// server connections: instances share them), with pgx in its default exec
// mode.
func leasePaths(t *testing.T, fn func(t *testing.T, db *pgtest.DB, pool *pgxpool.Pool)) {
	t.Helper()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		for _, path := range []string{"direct", "pgbouncer-session", "pgbouncer-transaction"} {
			t.Run(path, func(t *testing.T) {
				t.Parallel()
				db := db.Server.NewDB(t) // a database of its own per path
				u := db.URL
				switch path {
				case "pgbouncer-session":
					u = db.Server.PgBouncer(t, db, "session", 40)
				case "pgbouncer-transaction":
					u = db.Server.PgBouncer(t, db, "transaction", 2)
				}
				cfg, err := pgxpool.ParseConfig(u)
				require.NoError(t, err)
				cfg.MaxConns = 40
				pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
				require.NoError(t, err)
				t.Cleanup(pool.Close)
				fn(t, db, pool)
			})
		}
	})
}

// acquireAll takes n leases of ns at once; it fails t unless want of them
// succeed, and returns those.
func acquireAll(t *testing.T, pool *pgxpool.Pool, ns string, n int) ([]*sidlease.Lease, []error) {
	t.Helper()
	leases := make([]*sidlease.Lease, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			leases[i], errs[i] = sidlease.Acquire(context.Background(), pool, ns, sidlease.WithValidity(testValidity))
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
// ErrNoFreeSID; Close frees a SID at once.
func TestSIDLease33Competing(t *testing.T) {
	t.Parallel()
	leasePaths(t, func(t *testing.T, db *pgtest.DB, pool *pgxpool.Pool) {
		ctx := context.Background()
		leases, failed := acquireAll(t, pool, "orders", 33)
		require.Len(t, leases, 32, "failures: %v", failed)
		require.Len(t, failed, 1)
		require.ErrorIs(t, failed[0], sidlease.ErrNoFreeSID)
		require.ErrorContains(t, failed[0], `namespace "orders"`)
		want := make([]int, 32)
		for i := range want {
			want[i] = i
		}
		require.Equal(t, want, sids(leases), "32 distinct SIDs")

		// Another namespace is independent.
		other, err := sidlease.Acquire(ctx, pool, "billing", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		defer other.Close()

		freed := leases[7].SID()
		require.NoError(t, leases[7].Close())
		_, err = leases[7].New()
		require.ErrorIs(t, err, sidlease.ErrClosed)
		l, err := sidlease.Acquire(ctx, pool, "orders", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		defer l.Close()
		require.Equal(t, freed, l.SID())
		id, err := l.NewWait(ctx)
		require.NoError(t, err)
		require.Equal(t, freed, id.SID())
	})
}

// mintLog records, for one lease, the time before each call to New that
// succeeded: the lease was valid at some moment after it.
type mintLog struct {
	mu   sync.Mutex
	last time.Time
	ids  []ulidflake.ID
	err  error
}

// mintUntil mints from l until it fails with ErrLeaseLost or stop closes.
func mintUntil(l *sidlease.Lease, stop <-chan struct{}) *mintLog {
	m := &mintLog{}
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			before := time.Now()
			id, err := l.New()
			m.mu.Lock()
			if err == nil {
				m.last, m.ids = before, append(m.ids, id)
			} else if !errors.Is(err, flake.ErrMonotonicOverflow) {
				m.err = err
				m.mu.Unlock()
				return
			}
			m.mu.Unlock()
		}
	}()
	return m
}

// A holder whose SID was taken over (its row expired: its heartbeats did
// not arrive) stops minting at its next heartbeat, and never mints after
// the new holder starts; the same holds when the holder's server sessions
// are terminated, as a failover does to every session.
func TestSIDLeaseTakeoverNeverOverlaps(t *testing.T) {
	t.Parallel()
	leasePaths(t, func(t *testing.T, db *pgtest.DB, pool *pgxpool.Pool) {
		ctx := context.Background()
		old, err := sidlease.Acquire(ctx, pool, "takeover", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		defer old.Close()
		sid := old.SID()
		stop := make(chan struct{})
		defer close(stop)
		oldLog := mintUntil(old, stop)

		// Every session of the server ends, and the holder's row expires
		// while its heartbeats cannot arrive.
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
			if errors.Is(err, sidlease.ErrNoFreeSID) && try < 100 {
				continue
			}
			require.NoError(t, err)
		}
		defer taker.Close()
		require.Equal(t, sid, taker.SID())
		first, err := taker.New()
		require.NoError(t, err)
		takerMinted := time.Now()

		// The old holder finds out: its heartbeat updates no row.
		deadline := time.Now().Add(30 * time.Second)
		for {
			oldLog.mu.Lock()
			done := oldLog.err != nil
			oldLog.mu.Unlock()
			if done || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		oldLog.mu.Lock()
		defer oldLog.mu.Unlock()
		require.ErrorIs(t, oldLog.err, sidlease.ErrLeaseLost, "the old holder did not stop")
		require.True(t, oldLog.last.Before(takerMinted), "the old holder minted at %s, after the taker at %s", oldLog.last, takerMinted)
		require.NotContains(t, oldLog.ids, first)
		for _, id := range oldLog.ids {
			require.Equal(t, sid, id.SID())
		}
	})
}

// 1M IDs from 32 holders at once: none repeats.
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
		leases, failed := acquireAll(t, pool, "gen", 32)
		require.Empty(t, failed)
		const each = 31_250 // 1e6 in all
		out := make([][]ulidflake.ID, 32)
		runWorkers(t, 32, func(i int) error {
			ids := make([]ulidflake.ID, 0, each)
			for len(ids) < each {
				id, err := leases[i].NewWait(ctx)
				if errors.Is(err, sidlease.ErrLeaseLost) {
					time.Sleep(time.Millisecond) // a slow heartbeat on a busy machine: wait for the next
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
		var all []ulidflake.ID
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

// A server restart ends every session; the leases keep their SIDs or take
// others, and mint again.
func TestSIDLeaseSurvivesServerRestart(t *testing.T) {
	t.Parallel()
	srv := pgtest.NewContainer(t)
	db := srv.NewDB(t)
	ctx := context.Background()
	leases, failed := acquireAll(t, db.Pool, "restart", 4)
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
// table in a schema of its own with a hostile name.
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
		runWorkers(t, 8, func(int) error {
			l, err := sidlease.AcquireDB(ctx, sdb, "sql", sidlease.WithValidity(testValidity), sidlease.WithTable("lease$$ 'room'", "leases"))
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
		var held int
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM "lease$$ 'room'".leases WHERE expires_at > now()`).Scan(&held))
		require.Equal(t, 8, held)
	})
}

// Holders whose clocks disagree (directly and through PgBouncer in both
// modes): a holder whose clock runs 3s ahead mints,
// then hands its SID on; the next holder, with a correct clock, mints only
// above every ID the first made (it waits out the difference). A holder
// whose clock ran an hour ahead leaves a ceiling that the next refuses to
// wait for: ErrClockBehind, and the SID is free again.
func TestSIDLeaseSkewedClocks(t *testing.T) {
	t.Parallel()
	leasePaths(t, func(t *testing.T, _ *pgtest.DB, pool *pgxpool.Pool) {
		ctx := context.Background()
		acquireAll(t, pool, "skew", flake.MaxSID) // 31 SIDs held: every new lease gets the last one
		ahead := func(d time.Duration) sidlease.Option {
			return sidlease.WithGeneratorOptions(flake.WithClock(func() time.Time { return time.Now().Add(d) }))
		}

		first, err := sidlease.Acquire(ctx, pool, "skew", sidlease.WithValidity(testValidity), ahead(3*time.Second))
		require.NoError(t, err)
		var high ulidflake.ID
		for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); {
			id, err := first.NewWait(ctx)
			require.NoError(t, err)
			high = max(high, id)
		}
		sid := first.SID()
		require.NoError(t, first.Close())

		start := time.Now()
		next, err := sidlease.Acquire(ctx, pool, "skew", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		t.Cleanup(func() { next.Close() })
		require.Equal(t, sid, next.SID())
		require.GreaterOrEqual(t, time.Since(start), 2*time.Second, "the next holder did not wait out the clocks' difference")
		for range 100_000 {
			id, err := next.NewWait(ctx)
			require.NoError(t, err)
			require.Greater(t, id, high, "an ID at or below one the previous holder made")
		}
		require.NoError(t, next.Close())

		far, err := sidlease.Acquire(ctx, pool, "skew", sidlease.WithValidity(testValidity), ahead(time.Hour))
		require.NoError(t, err)
		_, err = far.NewWait(ctx)
		require.NoError(t, err)
		require.NoError(t, far.Close())
		_, err = sidlease.Acquire(ctx, pool, "skew", sidlease.WithValidity(testValidity))
		require.ErrorIs(t, err, sidlease.ErrClockBehind)
		require.ErrorContains(t, err, "minted_below")
		// The SID is free again: a holder with the far clock takes it.
		again, err := sidlease.Acquire(ctx, pool, "skew", sidlease.WithValidity(testValidity), ahead(time.Hour))
		require.NoError(t, err)
		require.Equal(t, sid, again.SID())
		require.NoError(t, again.Close())
	})
}

// A lease table made before the clock check gets its minted_below column
// from the first Acquire, and keeps its rows.
func TestSIDLeaseUpgradesOldTable(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		_, err := db.Exec(ctx, `CREATE TABLE ulid_flake_sid_leases (namespace text NOT NULL, sid int NOT NULL CHECK (sid BETWEEN 0 AND 31),
			token bigint NOT NULL DEFAULT 0, holder text, acquired_at timestamptz, expires_at timestamptz NOT NULL DEFAULT '-infinity',
			PRIMARY KEY (namespace, sid));
			INSERT INTO ulid_flake_sid_leases (namespace, sid, token) SELECT 'old', g, 7 FROM generate_series(0, 31) g`)
		require.NoError(t, err)
		l, err := sidlease.Acquire(ctx, db.Pool, "old", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		defer l.Close()
		var ceiling, token int64
		require.NoError(t, db.QueryRow(ctx, `SELECT minted_below, token FROM ulid_flake_sid_leases WHERE namespace = 'old' AND sid = $1`, l.SID()).Scan(&ceiling, &token))
		require.Positive(t, ceiling, "no ceiling recorded")
		require.EqualValues(t, 8, token)
		id, err := l.New()
		require.NoError(t, err)
		require.Less(t, int64(id), ceiling)
	})
}
