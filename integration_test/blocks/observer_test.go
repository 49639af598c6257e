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
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// event is one event of a blocks.Observer, as the tests read it.
type event struct {
	Kind     eventKind
	Count    int64 // eventReserve: the IDs in the block; eventEnd: the IDs dropped
	Duration time.Duration
	Err      error
}

type eventKind int

const (
	eventReserve eventKind = iota + 1
	eventBlockWait
	eventEnd
)

// observerFunc is a blocks.Observer that passes each event to a function.
type observerFunc func(event)

func (f observerFunc) ObserveBlockReserve(ids int64, roundTrip time.Duration, err error) {
	f(event{Kind: eventReserve, Count: ids, Duration: roundTrip, Err: err})
}

func (f observerFunc) ObserveBlockWait(wait time.Duration, err error) {
	f(event{Kind: eventBlockWait, Duration: wait, Err: err})
}

func (f observerFunc) ObserveBlockEnd(dropped int64) { f(event{Kind: eventEnd, Count: dropped}) }

// recorder is a blocks.Observer that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) ObserveBlockReserve(ids int64, roundTrip time.Duration, err error) {
	observerFunc(r.record).ObserveBlockReserve(ids, roundTrip, err)
}

func (r *recorder) ObserveBlockWait(wait time.Duration, err error) {
	observerFunc(r.record).ObserveBlockWait(wait, err)
}

func (r *recorder) ObserveBlockEnd(dropped int64) { observerFunc(r.record).ObserveBlockEnd(dropped) }

func (r *recorder) record(e event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// of returns the events of kind k, in order.
func (r *recorder) of(k eventKind) []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var es []event
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
				_, err := src.NewWait(context.Background())
				require.NoError(t, err)
			}
		}
		take(4)
		require.Eventually(t, func() bool { return len(rec.of(eventReserve)) == 2 }, time.Minute, 5*time.Millisecond,
			"the block reserved ahead")
		take(5)
		reserves, waits := rec.of(eventReserve), rec.of(eventBlockWait)
		require.Len(t, reserves, 2)
		for _, e := range reserves {
			require.NoError(t, e.Err)
			require.EqualValues(t, 8, e.Count)
			require.Positive(t, e.Duration)
		}
		require.Len(t, waits, 1, "only the first call waits")
		ends := rec.of(eventEnd)
		require.Len(t, ends, 1, "the first block, used up")
		require.Zero(t, ends[0].Count, "a used-up block drops no ID")
		require.NoError(t, waits[0].Err)
		require.Positive(t, waits[0].Duration)
		require.NoError(t, src.Close())
		require.Len(t, rec.of(eventReserve), 2, "Close reports no reservation")
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
		_, err = src.NewWait(context.Background())
		require.ErrorIs(t, err, migrations.ErrNotInstalled)
		require.NoError(t, src.Close())
		reserves, waits := rec.of(eventReserve), rec.of(eventBlockWait)
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
		_, err = src.NewWait(context.Background())
		require.ErrorIs(t, err, blocks.ErrUnavailable)
		require.NoError(t, src.Close())
		reserves, waits = rec.of(eventReserve), rec.of(eventBlockWait)
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
		src, err := blocks.NewSource(itest.StdDB(t, db), blocks.WithSize(1), blocks.WithObserver(observerFunc(func(e event) {
			if e.Kind == eventEnd {
				once.Do(func() { _, err := src.NewWait(context.Background()); inner <- err })
			}
		})))
		require.NoError(t, err) // no deferred Close: after a deadlock it would hang
		outer := make(chan error, 1)
		go func() {
			_, err := src.NewWait(context.Background())
			if err == nil {
				_, err = src.NewWait(context.Background())
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
