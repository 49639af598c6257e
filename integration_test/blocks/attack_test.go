package blocks_test

import (
	"context"
	"database/sql"
	"net"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/lib/pq"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestStuckReservationLibPQ: lib/pq stops no query once it is sent, so a
// server that stops answering (a proxy that holds every byte, as a paused
// server does) leaves a reservation stuck. New still returns ErrUnavailable
// when WithTimeout passes, Close returns (it hung until the server
// answered), and once the server answers the same Source hands out IDs
// again, none twice.
func TestStuckReservationLibPQ(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		p := newProxy(t, db.URL)
		defer p.hold.Store(false)
		src, err := blocks.NewSource(libPQVia(t, db.URL, p), blocks.WithSize(2), blocks.WithTimeout(2*time.Second))
		require.NoError(t, err)
		seen := map[flake.ID]bool{}
		take := func() error {
			id, err := src.NewWait(context.Background())
			if err == nil {
				require.False(t, seen[id], "ID %v handed out twice", id)
				seen[id] = true
			}
			return err
		}
		require.NoError(t, take())
		holdUntilUnavailable(t, p, take)
		p.hold.Store(false)
		for deadline := time.Now().Add(time.Minute); ; {
			if err = take(); err == nil || time.Now().After(deadline) {
				break
			}
			require.ErrorIs(t, err, blocks.ErrUnavailable)
		}
		require.NoError(t, err, "after the server answers again")
		for range 20 {
			require.NoError(t, take())
		}

		holdUntilUnavailable(t, p, take)
		closed := make(chan struct{})
		go func() { _ = src.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(10 * time.Second): // far past WithTimeout and Close's grace
			t.Fatal("Close blocked on a reservation the server does not answer")
		}
		_, err = src.NewWait(context.Background())
		require.ErrorIs(t, err, blocks.ErrClosed)
	})
}

// holdUntilUnavailable holds the proxy's bytes and calls take until it
// fails, as it must once the IDs in hand are used up.
func holdUntilUnavailable(t *testing.T, p *proxy, take func() error) {
	t.Helper()
	p.hold.Store(true)
	for range 8 {
		if err := take(); err != nil {
			require.ErrorIs(t, err, blocks.ErrUnavailable)
			return
		}
	}
	t.Fatal("IDs handed out while the server answers nothing")
}

// libPQVia opens a lib/pq *sql.DB on the server at url, through p.
func libPQVia(t *testing.T, dsn string, p *proxy) *sql.DB {
	t.Helper()
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(int(p.port())))
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	db, err := sql.Open("postgres", u.String())
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestValidityBelowRoundTrip: a validity no longer than a reservation's round
// trip makes every block arrive too old. New says so, with ErrBlockTooOld
// and the round trip, and the Source pauses between reservations instead
// of reserving in a tight loop (it made dozens of 65,536-ID blocks a
// second, and said nothing of why).
func TestValidityBelowRoundTrip(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		var reserved atomic.Int64
		// WithTimeout leaves a loaded server (CI, two tests per CPU) time
		// to answer a few reservations; each answer is older than 1 ms.
		src, err := blocks.NewSource(itest.StdDB(t, db), blocks.WithSize(blocks.MaxSize), blocks.WithValidity(time.Millisecond),
			blocks.WithTimeout(3*time.Second), blocks.WithObserver(observerFunc(func(e event) {
				if e.Kind == eventReserve {
					reserved.Add(1)
				}
			})))
		require.NoError(t, err)
		_, err = src.NewWait(context.Background())
		require.ErrorIs(t, err, blocks.ErrUnavailable)
		require.ErrorIs(t, err, blocks.ErrBlockTooOld)
		require.ErrorContains(t, err, "raise WithValidity above the round trip")
		require.NoError(t, src.Close())
		// Paused 50 ms, doubling to 1 s: at most 7 in 3 s, where a tight
		// loop made dozens a second.
		require.Less(t, reserved.Load(), int64(10), "reservations within one WithTimeout")
	})
}

// TestObserverCallsNew: an Observer may call New from a reservation's
// event (it waited for the reservation it was hearing of until the
// timeout).
func TestObserverCallsNew(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		var src *blocks.Source
		var once atomic.Bool
		inner := make(chan error, 1)
		src, err := blocks.NewSource(itest.StdDB(t, db), blocks.WithSize(1), blocks.WithTimeout(2*time.Second),
			blocks.WithObserver(observerFunc(func(e event) {
				if e.Kind == eventReserve && once.CompareAndSwap(false, true) {
					_, err := src.NewWait(context.Background())
					inner <- err
				}
			})))
		require.NoError(t, err)
		_, err = src.NewWait(context.Background())
		require.NoError(t, err)
		require.NoError(t, <-inner, "New called by the Observer")
		require.NoError(t, src.Close())
	})
}
