package flake

import (
	"fmt"
	"time"
)

// Observer receives a generator's events, for metrics: see
// docs/observability.md, and the OpenTelemetry adapter,
// github.com/ulidflake/ulidflake/otelulidflake. Events happen only off
// New's common path (an overflow, a wait, a clock behind), and a generator
// without an observer does no work for them. The other sources declare
// their own events and observers (sidlease.Observer, blocks.Observer); the
// adapter is all of them, one value to pass everywhere.
//
// Observe is called synchronously, from the goroutine that met the event,
// possibly from many at once: it must be safe for concurrent use, return
// quickly, and not call back into the generator.
type Observer interface {
	Observe(Event)
}

// EventKind says what happened; the fields of an [Event] that each kind
// sets are listed with it.
type EventKind uint8

// The kinds of events.
const (
	// EventOverflow: [Generator.New] returned [ErrMonotonicOverflow] (the
	// millisecond's randomness is used up).
	EventOverflow EventKind = iota + 1
	// EventOverflowWait: [Generator.NewWait] waited for a used-up
	// millisecond to pass. Duration: how long it waited in all; Err: the
	// error it returned after waiting (the context's, if it gave up), nil
	// when it made an ID.
	EventOverflowWait
	// EventClockStep: the clock read further behind the generator's last
	// ID than at the last reading that was behind it (by more than the 1 ms
	// that concurrent callers see at a millisecond's edge): it stepped
	// back, or an earlier reading was ahead. Duration: how far behind the
	// last ID's time it reads. The generator carries on with its logical
	// clock (see [Generator]).
	EventClockStep
	// EventClockBehind: New or NewWait returned [ErrClockBehind].
	// Duration: how far behind the last ID's time the clock reads.
	EventClockBehind
)

var eventNames = [...]string{
	EventOverflow:     "overflow",
	EventOverflowWait: "overflow_wait",
	EventClockStep:    "clock_step",
	EventClockBehind:  "clock_behind",
}

// String returns the kind's name in snake case, as "overflow_wait".
func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event is one thing an [Observer] is told. Fields a kind does not set are
// zero.
type Event struct {
	Kind     EventKind
	SID      int           // the generator's SID ([WithSID]), -1 stand-alone
	Duration time.Duration // a wait, or how far the clock is behind
	Err      error
}

// WithObserver sends the generator's events (overflows, overflow waits,
// clock steps, [ErrClockBehind]) to o. Without it, or with a nil o, the
// generator reports nothing and pays nothing for it.
func WithObserver(o Observer) Option {
	return func(c *config) error { c.obs = o; return nil }
}

// observe sends e to the generator's observer, with its SID (-1
// stand-alone).
func (g *Generator) observe(kind EventKind, d time.Duration, err error) {
	sid := -1
	if g.shift != 0 {
		sid = int(g.sid)
	}
	g.obs.Observe(Event{Kind: kind, SID: sid, Duration: d, Err: err})
}

// overflowed is New's return when the millisecond is used up: out of
// New's own code, so that its common case stays as it is.
func (g *Generator) overflowed() (ID, error) {
	if g.obs != nil {
		g.observe(EventOverflow, 0, nil)
	}
	return 0, ErrMonotonicOverflow
}

// newSlow is New past its common case.
func (g *Generator) newSlow() (ID, error) {
	id, err := g.next(g.now())
	if err == ErrMonotonicOverflow {
		return g.overflowed()
	}
	return id, err
}

// noteBehind tells the observer of a clock reading lead ms behind the last
// ID's time, when it is further behind than the last reading behind was:
// once per step back, however many IDs are made before the clock catches
// up, and never for a lead of 1 ms, which concurrent callers see at a
// millisecond's edge.
func (g *Generator) noteBehind(lead int64) {
	prev := g.lead.Swap(lead)
	if lead > prev+1 {
		g.observe(EventClockStep, time.Duration(lead)*time.Millisecond, nil)
	}
}
