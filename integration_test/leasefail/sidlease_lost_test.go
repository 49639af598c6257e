package leasefail_test

import (
	"context"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

// leaseRow is a lease table row as a replica that lags behind the primary
// may hold it.
type leaseRow struct {
	token, mintedBelow int64
	expires            pgtype.Timestamptz
}

// oneFreeSID creates the lease table of ns, holds every SID but one
// forever (as other instances would), and returns the free SID and its row
// as it is before anyone claims it: what a replica that missed the next
// claim holds.
func oneFreeSID(t *testing.T, db *pgtest.DB, ns string) (int, leaseRow) {
	t.Helper()
	ctx := context.Background()
	first, err := sidlease.Acquire(ctx, db.Pool, ns, sidlease.WithValidity(testValidity))
	require.NoError(t, err)
	sid := first.SID()
	require.NoError(t, first.Close())
	_, err = db.Exec(ctx, `UPDATE ulid_flake_sid_leases SET expires_at = 'infinity' WHERE namespace = $1 AND sid <> $2`, ns, sid)
	require.NoError(t, err)
	var r leaseRow
	require.NoError(t, db.QueryRow(ctx, `SELECT token, minted_below, expires_at FROM ulid_flake_sid_leases
		WHERE namespace = $1 AND sid = $2`, ns, sid).Scan(&r.token, &r.mintedBelow, &r.expires))
	return sid, r
}

// loseWrites puts the row back as it was: the writes made since were lost
// in a failover to a replica that had not received them.
func loseWrites(t *testing.T, db *pgtest.DB, ns string, sid int, r leaseRow) {
	t.Helper()
	_, err := db.Exec(context.Background(), `UPDATE ulid_flake_sid_leases SET token = $3, minted_below = $4, expires_at = $5, holder = NULL
		WHERE namespace = $1 AND sid = $2`, ns, sid, r.token, r.mintedBelow, r.expires)
	require.NoError(t, err)
}

// A failover that loses a claim, emulated on one server: the row goes back
// to what the replica held before the claim (its old token, expired), and a
// second instance claims the SID there. The first holder's renewal must
// not pass for the second's: the first stops, and no ID is made twice.
//
// The first holder's statements wait meanwhile (its pool's one connection
// is held): the row is free from the lost claim until the second claims
// it, and the first, once a renewal found its claim gone, would claim it
// again at its next tick and leave none for the second (ErrNoFreeSID), as
// it did whenever the second's Acquire took more than V/2 to claim.
func TestSIDLeaseLostClaim(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sid, before := oneFreeSID(t, db, "lost-claim")
		oldPool := onePool(t, db.URL)
		old, err := sidlease.Acquire(ctx, oldPool, "lost-claim", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		defer old.Close()
		require.Equal(t, sid, old.SID())
		stop := make(chan struct{})
		oldLog := itest.MintUntil(old, stop)

		held, err := oldPool.Acquire(ctx)
		require.NoError(t, err)
		loseWrites(t, db, "lost-claim", sid, before)
		next, err := sidlease.Acquire(ctx, itest.NewPool(t, db.URL), "lost-claim", sidlease.WithValidity(testValidity))
		held.Release()
		require.NoError(t, err)
		defer next.Close()
		require.Equal(t, sid, next.SID())
		nextLog := itest.MintUntil(next, stop)
		time.Sleep(3 * testValidity) // both alive: the old holder's renewals run against the new claim
		close(stop)

		oldLog.Mu.Lock()
		defer oldLog.Mu.Unlock()
		nextLog.Mu.Lock()
		defer nextLog.Mu.Unlock()
		require.ErrorIs(t, oldLog.Err, sidlease.ErrLeaseLost, "the old holder did not stop")
		require.NoError(t, nextLog.Err)
		require.NotEmpty(t, nextLog.IDs)
		requireNoDuplicates(t, oldLog.IDs, nextLog.IDs)
		_, err = old.New()
		require.ErrorIs(t, err, sidlease.ErrLeaseLost, "the old holder makes IDs again")
		require.ErrorIs(t, err, sidlease.ErrNoFreeSID, "the cause: its claims since")
		require.Equal(t, 1, strings.Count(err.Error(), "sidlease:"), "the package's prefix once: %s", err)
	})
}

// The ceiling is lost the same way: a holder whose clock runs ahead (within
// sidlease.MaxClockAhead) makes IDs and stops; the row goes back to what a
// replica held before its claim (no ceiling); the next holder, with a
// correct clock, must still make IDs only above every ID the first made. The
// validity is short so that the clock's lead is longer than it.
func TestSIDLeaseLostCeiling(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		const v = 200 * time.Millisecond
		lead := sidlease.MaxClockAhead * 9 / 10
		sid, before := oneFreeSID(t, db, "lost-ceiling")
		ahead := sidlease.WithGeneratorOptions(flake.WithClock(func() time.Time { return time.Now().Add(lead) }))
		first, err := sidlease.Acquire(ctx, itest.NewPool(t, db.URL), "lost-ceiling", sidlease.WithValidity(v), ahead)
		require.NoError(t, err)
		require.Equal(t, sid, first.SID())
		var high ulidflake.ID
		for deadline := time.Now().Add(3 * v); time.Now().Before(deadline); {
			id, err := first.NewWait(ctx)
			require.NoError(t, err)
			high = max(high, id)
		}
		require.NoError(t, first.Close())

		loseWrites(t, db, "lost-ceiling", sid, before)
		next, err := sidlease.Acquire(ctx, itest.NewPool(t, db.URL), "lost-ceiling", sidlease.WithValidity(v))
		require.NoError(t, err)
		defer next.Close()
		require.Equal(t, sid, next.SID())
		for range 50_000 { // plain checks: testify's cost 1 s per 100,000 under -race
			id, err := next.NewWait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if id <= high {
				t.Fatalf("ID %s at or below %s, one the previous holder made (%s)", id, high, ulidflake.DefaultEpoch().Time(high))
			}
		}
	})
}

// onePool opens a pool of one connection, closed when the test ends.
func onePool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	cfg.MaxConns = 1
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// requireNoDuplicates fails t when an ID is in more than one of the lists
// or twice in one.
func requireNoDuplicates(t *testing.T, lists ...[]ulidflake.ID) {
	t.Helper()
	var all []ulidflake.ID
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.Sort(all)
	n := len(all)
	if dups := n - len(slices.Compact(all)); dups != 0 {
		t.Fatalf("%d duplicate IDs among %d", dups, n)
	}
}

// logRecords is a slog handler that keeps the messages it gets.
type logRecords struct {
	mu   sync.Mutex
	msgs []string
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Message)
	return nil
}
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logRecords) WithGroup(string) slog.Handler      { return h }

// has reports whether a message contains sub, and returns every message:
// the lease may log from its own goroutine meanwhile.
func (h *logRecords) has(sub string) (bool, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.ContainsFunc(h.msgs, func(m string) bool { return strings.Contains(m, sub) }), slices.Clone(h.msgs)
}

// NewWait waits while the lease takes a SID again, and honours its
// context; New returns ErrLeaseLost meanwhile. The lease says what happened
// through its logger.
func TestSIDLeaseNewWaitWaitsForReclaim(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		logs := &logRecords{}
		l, err := sidlease.Acquire(ctx, db.Pool, "rewait", sidlease.WithValidity(testValidity), sidlease.WithLogger(slog.New(logs)))
		require.NoError(t, err)
		defer l.Close()
		sid := l.SID()
		// Another instance takes the SID over.
		_, err = db.Exec(ctx, `UPDATE ulid_flake_sid_leases SET token = token # 1, expires_at = 'infinity' WHERE namespace = 'rewait' AND sid = $1`, sid)
		require.NoError(t, err)
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err = l.New()
			if err != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		require.ErrorIs(t, err, sidlease.ErrLeaseLost, "New while the SID is taken")

		short, cancel := context.WithTimeout(ctx, testValidity/10)
		defer cancel()
		_, err = l.NewWait(short)
		require.ErrorIs(t, err, context.DeadlineExceeded)

		long, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		id, err := l.NewWait(long)
		require.NoError(t, err, "NewWait did not wait for the lease to take a SID again")
		require.NotEqual(t, sid, l.SID(), "the taken SID")
		require.Equal(t, l.SID(), id.SID())
		lost, msgs := logs.has("lost")
		require.True(t, lost, "no log record of the lost lease: %q", msgs)
	})
}

// A validity of minutes works (2V used to overflow an int4 at 18 min):
// Acquire claims a SID with an expiry 2V ahead and waits; its context ends
// the wait and releases the SID.
func TestSIDLeaseLongValidity(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := sidlease.Acquire(ctx, db.Pool, "long", sidlease.WithValidity(18*time.Minute))
			done <- err
		}()
		var ahead time.Duration
		for deadline := time.Now().Add(30 * time.Second); ahead == 0 && time.Now().Before(deadline); {
			select {
			case err := <-done:
				t.Fatalf("Acquire returned before its wait: %v", err)
			case <-time.After(20 * time.Millisecond):
			}
			var us int64
			err := db.QueryRow(context.Background(), `SELECT (extract(epoch FROM max(expires_at) - now()) * 1e6)::bigint
				FROM ulid_flake_sid_leases WHERE namespace = 'long' AND holder IS NOT NULL`).Scan(&us)
			if err == nil {
				ahead = time.Duration(us) * time.Microsecond
			}
		}
		require.Greater(t, ahead, 30*time.Minute, "the claim's expiry")
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		var held int
		require.NoError(t, db.QueryRow(context.Background(), `SELECT count(*) FROM ulid_flake_sid_leases
			WHERE namespace = 'long' AND expires_at > now()`).Scan(&held))
		require.Zero(t, held, "the SID is not freed")
	})
}

// A database that subscribes to another node's publication is a writable
// node beside another: its lease table, replicated or not, cannot keep the
// nodes' SIDs apart, so Acquire refuses (ErrMesh), also for a role
// with no privilege beyond the lease table (the database's owner created
// it).
func TestSIDLeaseRefusesSubscriber(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		role := "lease_user_" + db.Name
		first, err := sidlease.Acquire(ctx, db.Pool, "mw", sidlease.WithValidity(testValidity))
		require.NoError(t, err, "the database's owner creates the lease table")
		require.NoError(t, first.Close())
		_, err = db.Exec(ctx, `CREATE ROLE `+role+` LOGIN PASSWORD 'x';
			GRANT SELECT, INSERT, UPDATE ON public.ulid_flake_sid_leases TO `+role)
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = db.Exec(context.Background(), `DROP OWNED BY `+role+` CASCADE; DROP ROLE `+role) })
		u, err := url.Parse(db.URL)
		require.NoError(t, err)
		u.User = url.UserPassword(role, "x")
		userURL := u.String()

		l, err := sidlease.Acquire(ctx, itest.NewPool(t, userURL), "mw", sidlease.WithValidity(testValidity))
		require.NoError(t, err, "before the subscription")
		require.NoError(t, l.Close())

		_, err = db.Exec(ctx, `CREATE SUBSCRIPTION mw_sub CONNECTION 'host=127.0.0.1 dbname=nowhere' PUBLICATION p
			WITH (connect = false, enabled = false, slot_name = NONE)`)
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = db.Exec(context.Background(), `DROP SUBSCRIPTION IF EXISTS mw_sub`) })
		_, err = sidlease.Acquire(ctx, itest.NewPool(t, userURL), "mw", sidlease.WithValidity(testValidity))
		require.ErrorIs(t, err, sidlease.ErrMesh)
		require.ErrorContains(t, err, "mw_sub")
		_, err = sidlease.Acquire(ctx, db.Pool, "mw", sidlease.WithValidity(testValidity))
		require.ErrorIs(t, err, sidlease.ErrMesh, "as the superuser")
	})
}
