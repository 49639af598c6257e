package flake

import (
	"fmt"
	"time"
)

// Observer receives the events of generators, leases (package sidlease)
// and other sources of IDs built on them, for metrics: see
// docs/observability.md, and the OpenTelemetry adapter,
// github.com/ulidflake/ulidflake/otel. Events happen only off New's common
// path (an overflow, a wait, a clock behind, a claim, a heartbeat), and a
// generator without an observer does no work for them.
//
// Observe is called synchronously, from the goroutine that met the event,
// possibly from many at once: it must be safe for concurrent use, return
// quickly, and not call back into the generator or lease.
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
	// EventOverflowWait: [Generator.NewWait] (or a lease's NewWait) waited
	// for a used-up millisecond to pass. Duration: how long it waited in
	// all; Err: the error it returned after waiting (the context's, if it
	// gave up), nil when it made an ID.
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
	// EventLeaseClaim: a lease claimed a SID and waited until it may mint
	// (Err nil), or a claim failed (Err says why). Namespace, SID (-1 when
	// none was claimed); Duration: from the claim to minting.
	EventLeaseClaim
	// EventLeaseRenew: a lease's heartbeat ran. Namespace, SID; Err when it
	// failed (the lease may still hold the SID). On success, Skew: this
	// instance's clock minus the server's; Count: the namespace's SIDs in
	// use (unexpired rows, this one included).
	EventLeaseRenew
	// EventLeaseLoss: a lease found that it no longer holds its SID
	// (taken over, or its claim lost in a failover); it stopped minting
	// and claims a SID again. Namespace, SID.
	EventLeaseLoss
	// EventBlockReserve: a source of IDs reserved a block from the
	// database. Namespace ("" from package blocks); Count: the block's
	// size; Duration: the round trip; Err when it failed.
	EventBlockReserve
	// EventRefillWait: a caller waited for a block to be refilled.
	// Namespace ("" from package blocks); Duration: how long; Err: the
	// error it returned if it gave up, nil when it got an ID.
	EventRefillWait
	// EventBlockEnd: a source of IDs stopped handing out a block. Count:
	// the IDs left in it, dropped because it aged out; 0 when it was used
	// up.
	EventBlockEnd
)

var eventNames = [...]string{
	EventOverflow:     "overflow",
	EventOverflowWait: "overflow_wait",
	EventClockStep:    "clock_step",
	EventClockBehind:  "clock_behind",
	EventLeaseClaim:   "lease_claim",
	EventLeaseRenew:   "lease_renew",
	EventLeaseLoss:    "lease_loss",
	EventBlockReserve: "block_reserve",
	EventRefillWait:   "refill_wait",
	EventBlockEnd:     "block_end",
}

// String returns the kind's name in snake case, as "lease_loss".
func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event is one thing an [Observer] is told. Fields a kind does not set are
// zero (SID: -1).
type Event struct {
	Kind      EventKind
	Namespace string        // a lease's namespace; "" for a generator and for package blocks
	SID       int           // the lease's SID, -1 for none (a generator's own events)
	Duration  time.Duration // a wait, or how far the clock is behind
	Skew      time.Duration // EventLeaseRenew: this clock minus the server's
	Count     int64         // EventLeaseRenew: SIDs in use; EventBlockReserve: IDs in the block; EventBlockEnd: IDs dropped
	Err       error
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
