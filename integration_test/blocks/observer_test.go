package blocks_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver for database/sql
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// recorder is a flake.Observer that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []flake.Event
}

func (r *recorder) Observe(e flake.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// of returns the events of kind k, in order.
func (r *recorder) of(k flake.EventKind) []flake.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var es []flake.Event
	for _, e := range r.events {
		if e.Kind == k {
			es = append(es, e)
		}
	}
	return es
}

// TestObserver: a Source with an observer reports each reservation (its
// size and round trip) and each call that waited for a block. Blocks of 8:
// the first call waits for the first block; the fourth ID reserves the
// next in the background; the ninth comes from it without a wait. So 9
// IDs make 2 reservations of 8, 1 wait, and 1 block used up.
func TestObserver(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		var rec recorder
		src, err := blocks.NewSource(itest.StdDB(t, db), blocks.WithSize(8), blocks.WithValidity(time.Minute), blocks.WithObserver(&rec))
		require.NoError(t, err)
		defer src.Close()
		take := func(n int) {
			for range n {
				_, err := src.New()
				require.NoError(t, err)
			}
		}
		take(4)
		require.Eventually(t, func() bool { return len(rec.of(flake.EventBlockReserve)) == 2 }, time.Minute, 5*time.Millisecond,
			"the block reserved ahead")
		take(5)
		reserves, waits := rec.of(flake.EventBlockReserve), rec.of(flake.EventRefillWait)
		require.Len(t, reserves, 2)
		for _, e := range reserves {
			require.NoError(t, e.Err)
			require.EqualValues(t, 8, e.Count)
			require.Positive(t, e.Duration)
			require.Equal(t, -1, e.SID)
		}
		require.Len(t, waits, 1, "only the first call waits")
		ends := rec.of(flake.EventBlockEnd)
		require.Len(t, ends, 1, "the first block, used up")
		require.Zero(t, ends[0].Count, "a used-up block drops no ID")
		require.NoError(t, waits[0].Err)
		require.Positive(t, waits[0].Duration)
		require.NoError(t, src.Close())
		require.Len(t, rec.of(flake.EventBlockReserve), 2, "Close reports no reservation")
	})
}

// TestObserverFailures: a reservation that fails is reported with its
// error and no IDs, and so is the wait of the call that got no ID: at once
// for an install that is missing, after retries for a database that
// refuses connections.
func TestObserverFailures(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		var rec recorder
		src, err := blocks.NewSource(itest.StdDB(t, db), blocks.WithSchema("no_such_schema"), blocks.WithObserver(&rec))
		require.NoError(t, err)
		_, err = src.New()
		require.ErrorIs(t, err, migrations.ErrNotInstalled)
		require.NoError(t, src.Close())
		reserves, waits := rec.of(flake.EventBlockReserve), rec.of(flake.EventRefillWait)
		require.Len(t, reserves, 1)
		require.ErrorIs(t, reserves[0].Err, migrations.ErrNotInstalled)
		require.Zero(t, reserves[0].Count)
		require.Len(t, waits, 1)
		require.ErrorIs(t, waits[0].Err, migrations.ErrNotInstalled)

		rec = recorder{}
		refused, err := sql.Open("pgx", "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
		require.NoError(t, err)
		defer refused.Close()
		src, err = blocks.NewSource(refused, blocks.WithTimeout(300*time.Millisecond), blocks.WithObserver(&rec))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = src.NewWait(ctx) // gives up at once: still a wait, with its error
		require.ErrorIs(t, err, context.Canceled)
		_, err = src.New()
		require.ErrorIs(t, err, blocks.ErrUnavailable)
		require.NoError(t, src.Close())
		reserves, waits = rec.of(flake.EventBlockReserve), rec.of(flake.EventRefillWait)
		require.NotEmpty(t, reserves)
		for _, e := range reserves {
			require.Error(t, e.Err)
			require.False(t, errors.Is(e.Err, context.Canceled), "a reservation that Close cut short is not reported: %v", e.Err)
			require.Zero(t, e.Count)
		}
		require.Len(t, waits, 2)
		require.ErrorIs(t, waits[0].Err, context.Canceled)
		require.ErrorIs(t, waits[1].Err, blocks.ErrUnavailable)
		require.ErrorIs(t, waits[1].Err, context.DeadlineExceeded)
	})
}

// TestObserverCallsNewOnBlockEnd: an Observer may call New when it hears
// that a block ended: blocks of 1, so the second ID ends the first block.
func TestObserverCallsNewOnBlockEnd(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		var src *blocks.Source
		var once sync.Once
		inner := make(chan error, 1)
		src, err := blocks.NewSource(itest.StdDB(t, db), blocks.WithSize(1), blocks.WithObserver(observerFunc(func(e flake.Event) {
			if e.Kind == flake.EventBlockEnd {
				once.Do(func() { _, err := src.New(); inner <- err })
			}
		})))
		require.NoError(t, err) // no deferred Close: after a deadlock it would hang
		outer := make(chan error, 1)
		go func() {
			_, err := src.New()
			if err == nil {
				_, err = src.New()
			}
			outer <- err
		}()
		select {
		case err := <-outer:
			require.NoError(t, err)
		case <-time.After(time.Minute):
			t.Fatal("New deadlocked: the Observer was called under the Source's lock")
		}
		require.NoError(t, <-inner, "New called by the Observer")
		require.NoError(t, src.Close())
	})
}
