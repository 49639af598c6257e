package flake

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"
)

// recorder is an Observer that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) Observe(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// of returns the events of kind k.
func (r *recorder) of(k EventKind) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var es []Event
	for _, e := range r.events {
		if e.Kind == k {
			es = append(es, e)
		}
	}
	return es
}

// Filling a millisecond reports each ErrMonotonicOverflow New returns, on
// the wall clock's path (New's common case) and on an injected clock's.
func TestObserverOverflow(t *testing.T) {
	for _, name := range []string{"wall", "injected"} {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			opts := []Option{WithObserver(rec), WithSID(3)}
			if name == "injected" {
				clock := newFakeClock(t2025)
				opts = append(opts, WithClock(clock.Now))
			}
			g := mustGen(t, opts...)
			overflows := 0
			for made := 0; overflows < 3; {
				_, err := g.New()
				switch {
				case errors.Is(err, ErrMonotonicOverflow):
					overflows++
				case err != nil:
					t.Fatal(err)
				default:
					made++
				}
			}
			got := rec.of(EventOverflow)
			if len(got) != overflows {
				t.Fatalf("%d overflow events for %d overflows", len(got), overflows)
			}
			if got[0].SID != 3 {
				t.Errorf("SID %d, want 3", got[0].SID)
			}
			if n := len(rec.events); n != overflows {
				t.Errorf("%d events, want only the %d overflows: %v", n, overflows, rec.events)
			}
		})
	}
}

// maxSource draws the largest steps: a millisecond is used up after the
// same number of IDs every time.
type maxSource struct{}

func (maxSource) Uint64() uint64 { return math.MaxUint64 }

// NewWait reports one wait per call that waited, with the time waited,
// and none for a call that did not.
func TestObserverOverflowWait(t *testing.T) {
	clock := newFakeClock(t2025)
	rec := &recorder{}
	g := mustGen(t, WithClock(clock.Now), WithRandom(maxSource{}), WithObserver(rec))
	ctx := context.Background()
	fill := func() {
		t.Helper()
		for {
			if _, err := g.New(); errors.Is(err, ErrMonotonicOverflow) {
				return
			} else if err != nil {
				t.Fatal(err)
			}
		}
	}
	fill()
	go func() {
		time.Sleep(20 * time.Millisecond)
		clock.Add(time.Millisecond) // the frozen clock moves on while NewWait waits
	}()
	if _, err := g.NewWait(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := g.NewWait(ctx); err != nil { // a new millisecond: no wait
		t.Fatal(err)
	}
	waits := rec.of(EventOverflowWait)
	if len(waits) != 1 || waits[0].Duration <= 0 || waits[0].Err != nil || waits[0].SID != -1 {
		t.Fatalf("overflow waits %+v, want one, with a duration and no error", waits)
	}

	// A wait cut short by its context is reported with the context's error.
	fill()
	short, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	if _, err := g.NewWait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("NewWait on a frozen clock: %v, want DeadlineExceeded", err)
	}
	if waits = rec.of(EventOverflowWait); len(waits) != 2 || !errors.Is(waits[1].Err, context.DeadlineExceeded) {
		t.Fatalf("overflow waits %+v, want a second with DeadlineExceeded", waits)
	}
}

// A step back of the clock is reported once, with how far behind the
// last ID it reads, however many IDs follow before the clock catches up;
// a second step is reported again; a step past the max lead is reported
// as ErrClockBehind.
func TestObserverClockStep(t *testing.T) {
	clock := newFakeClock(t2025)
	rec := &recorder{}
	g := mustGen(t, WithClock(clock.Now), WithObserver(rec), WithMaxLead(time.Minute))
	mint := func(n int) {
		t.Helper()
		for range n {
			if _, err := g.NewWait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	mint(10)
	clock.Add(-5 * time.Second)
	mint(100)
	clock.Add(time.Second) // catching up: still behind, no new step
	mint(100)
	steps := rec.of(EventClockStep)
	if len(steps) != 1 || steps[0].Duration != 5*time.Second {
		t.Fatalf("clock steps %+v, want one of 5s", steps)
	}
	clock.Add(-3 * time.Second) // 7s behind now
	mint(10)
	if steps = rec.of(EventClockStep); len(steps) != 2 || steps[1].Duration != 7*time.Second {
		t.Fatalf("clock steps %+v, want a second of 7s", steps)
	}
	clock.Add(-2 * time.Minute)
	if _, err := g.New(); !errors.Is(err, ErrClockBehind) {
		t.Fatalf("New %v, want ErrClockBehind", err)
	}
	behind := rec.of(EventClockBehind)
	if len(behind) != 1 || behind[0].Duration != 2*time.Minute+7*time.Second {
		t.Fatalf("clock behind %+v, want one of 2m7s", behind)
	}
}

// Without an observer nothing is reported, and the events' paths still
// work (a nil observer, as WithObserver(nil) gives, too).
func TestObserverNil(t *testing.T) {
	clock := newFakeClock(t2025)
	g := mustGen(t, WithClock(clock.Now), WithObserver(nil))
	if _, err := g.New(); err != nil {
		t.Fatal(err)
	}
	clock.Add(-time.Second)
	if _, err := g.NewWait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestEventKindString(t *testing.T) {
	if s := EventOverflowWait.String(); s != "overflow_wait" {
		t.Errorf("EventOverflowWait is %q", s)
	}
	if s := EventKind(200).String(); s != "EventKind(200)" {
		t.Errorf("EventKind(200) is %q", s)
	}
}
