// Package otelulidflake records the events of ulidflake's generators, leases and
// block sources as OpenTelemetry metrics: its [Observer] is a
// flake.Observer, a sidlease.Observer and a blocks.Observer, one value to
// give every source of a process. It is a module of its own, so that an
// application that does not import it has none of OpenTelemetry in its
// module graph.
//
//	import "github.com/ulidflake/ulidflake/otelulidflake" // beside go.opentelemetry.io/otel
//
//	obs, err := otelulidflake.NewObserver(otel.GetMeterProvider())
//	gen, err := flake.NewGenerator(flake.WithObserver(obs))
//	lease, err := sidlease.Acquire(ctx, pool, "orders", sidlease.WithObserver(obs))
//	src, err := blocks.NewSource(db, blocks.WithObserver(obs))
//
// The instruments, their units and what each tells an operator to do are
// in docs/observability.md. Names and units are stable: a change to them
// is a breaking change. Every measurement of a lease carries the
// attribute ulidflake.namespace (a block source of package blocks has no
// namespace, so its measurements carry none); claims, renewals,
// reservations (their count and round trip) and block waits carry
// ulidflake.outcome, "ok" or "error" (a wait that ended with an error:
// the caller got no ID); blocks ended carry ulidflake.block.end,
// "used_up" or "expired".
package otelulidflake

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ulidflake/ulidflake/flake"
)

// ScopeName is the instrumentation scope (the meter's name) of the
// metrics.
const ScopeName = "github.com/ulidflake/ulidflake/otelulidflake"

// Attribute keys.
const (
	NamespaceKey = attribute.Key("ulidflake.namespace")
	OutcomeKey   = attribute.Key("ulidflake.outcome")
	BlockEndKey  = attribute.Key("ulidflake.block.end") // "used_up" or "expired"
)

// Bucket boundaries, in seconds: waits for a millisecond, claims that
// wait V + MaxClockAhead (3s by default), and clock steps from a
// millisecond to a minute.
var (
	msBuckets    = []float64{0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.1, 0.5, 1}
	claimBuckets = []float64{0.1, 0.5, 1, 2, 3, 4, 5, 10, 30, 60}
	stepBuckets  = []float64{0.002, 0.01, 0.1, 1, 10, 60, 600}
)

// Observer records each event in the instruments of one meter. It is a
// flake.Observer, a sidlease.Observer and a blocks.Observer, safe for
// concurrent use: give the same one to every generator, lease and block
// source of a process. It imports neither sidlease nor blocks (their
// observers' methods take only standard types), so it links no database
// driver.
type Observer struct {
	overflows, clockSteps, clockBehind metric.Int64Counter
	claims, renewals, losses, reserved metric.Int64Counter
	reservedIDs, ends, droppedIDs      metric.Int64Counter
	overflowWait, clockStep, claimWait metric.Float64Histogram
	reserveTime, blockWait             metric.Float64Histogram
	skew                               metric.Float64Gauge
	inUse                              metric.Int64Gauge
	sets                               sync.Map // attribute sets by namespace, outcome and block end
}

// NewObserver returns an Observer whose instruments are those of the
// meter [ScopeName] of mp. It returns the errors of the instruments mp
// could not make, joined.
func NewObserver(mp metric.MeterProvider) (*Observer, error) {
	m := mp.Meter(ScopeName)
	o := &Observer{}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	histogram := func(name, desc string, buckets []float64) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(buckets...))
		errs = append(errs, err)
		return h
	}
	o.overflows = counter("ulidflake.generator.overflows", "{overflow}",
		"Calls of New that returned ErrMonotonicOverflow: a millisecond's IDs used up.")
	o.overflowWait = histogram("ulidflake.generator.overflow_wait.duration",
		"Time NewWait waited for a used-up millisecond to pass, per call that waited.", msBuckets)
	o.clockSteps = counter("ulidflake.generator.clock_steps", "{step}",
		"Clock readings further behind the generator's last ID than the last reading behind it: the clock stepped back.")
	o.clockStep = histogram("ulidflake.generator.clock_step.size",
		"How far behind the generator's last ID the clock read at a step.", stepBuckets)
	o.clockBehind = counter("ulidflake.generator.clock_behind", "{error}",
		"ErrClockBehind returned: the clock behind the last ID by more than the max lead.")
	o.claims = counter("ulidflake.lease.claims", "{claim}", "SID claims, by outcome.")
	o.claimWait = histogram("ulidflake.lease.claim_wait.duration",
		"Time from a successful claim to the first ID it may make.", claimBuckets)
	o.renewals = counter("ulidflake.lease.renewals", "{renewal}", "Lease renewals, by outcome.")
	o.losses = counter("ulidflake.lease.losses", "{loss}", "Leases found lost: the SID taken over, or the claim lost in a failover.")
	o.reserved = counter("ulidflake.block.reservations", "{block}", "Blocks reserved from the database, by outcome.")
	o.reservedIDs = counter("ulidflake.block.reserved_ids", "{id}", "IDs in the blocks reserved.")
	o.reserveTime = histogram("ulidflake.block.reserve.duration", "Round trip of a block's reservation, by outcome.", msBuckets)
	o.ends = counter("ulidflake.block.ends", "{block}", "Blocks a source stopped handing out, used up or expired (past their validity).")
	o.droppedIDs = counter("ulidflake.block.dropped_ids", "{id}", "IDs left in blocks that expired, never handed out.")
	o.blockWait = histogram("ulidflake.block.wait.duration", "Time a caller waited for a block, by outcome.", msBuckets)
	var err error
	o.skew, err = m.Float64Gauge("ulidflake.lease.clock_skew", metric.WithUnit("s"),
		metric.WithDescription("This instance's clock minus the server's, at the last renewal."))
	errs = append(errs, err)
	o.inUse, err = m.Int64Gauge("ulidflake.lease.sids_in_use", metric.WithUnit("{sid}"),
		metric.WithDescription("SIDs of the namespace held (of 32), at the last renewal."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return o, nil
}

// Observe records a generator's event (flake.Observer). Kinds it does not
// know are ignored.
func (o *Observer) Observe(e flake.Event) {
	o.generator(o.attrs("", "", ""), e)
}

// ObserveGenerator records an event of a lease's generator, with the
// lease's namespace (sidlease.Observer).
func (o *Observer) ObserveGenerator(namespace string, e flake.Event) {
	o.generator(o.attrs(namespace, "", ""), e)
}

// generator records e with the attributes at.
func (o *Observer) generator(at metric.MeasurementOption, e flake.Event) {
	ctx := context.Background()
	switch e.Kind {
	case flake.EventOverflow:
		o.overflows.Add(ctx, 1, at)
	case flake.EventOverflowWait:
		o.overflowWait.Record(ctx, e.Duration.Seconds(), at)
	case flake.EventClockStep:
		o.clockSteps.Add(ctx, 1, at)
		o.clockStep.Record(ctx, e.Duration.Seconds(), at)
	case flake.EventClockBehind:
		o.clockBehind.Add(ctx, 1, at)
	}
}

// ObserveLeaseClaim records a lease's claim (sidlease.Observer).
func (o *Observer) ObserveLeaseClaim(namespace string, _ int, wait time.Duration, err error) {
	ctx := context.Background()
	o.claims.Add(ctx, 1, o.attrs(namespace, outcome(err), ""))
	if err == nil {
		o.claimWait.Record(ctx, wait.Seconds(), o.attrs(namespace, "", ""))
	}
}

// ObserveLeaseRenew records a lease's renewal (sidlease.Observer).
func (o *Observer) ObserveLeaseRenew(namespace string, _ int, skew time.Duration, inUse int64, err error) {
	ctx := context.Background()
	o.renewals.Add(ctx, 1, o.attrs(namespace, outcome(err), ""))
	if err == nil {
		at := o.attrs(namespace, "", "")
		o.skew.Record(ctx, skew.Seconds(), at)
		o.inUse.Record(ctx, inUse, at)
	}
}

// ObserveLeaseLoss records a lease lost (sidlease.Observer).
func (o *Observer) ObserveLeaseLoss(namespace string, _ int) {
	o.losses.Add(context.Background(), 1, o.attrs(namespace, "", ""))
}

// ObserveBlockReserve records a block's reservation (blocks.Observer).
func (o *Observer) ObserveBlockReserve(ids int64, roundTrip time.Duration, err error) {
	ctx := context.Background()
	byOutcome := o.attrs("", outcome(err), "")
	o.reserved.Add(ctx, 1, byOutcome)
	o.reserveTime.Record(ctx, roundTrip.Seconds(), byOutcome)
	if err == nil {
		o.reservedIDs.Add(ctx, ids, o.attrs("", "", ""))
	}
}

// ObserveBlockWait records a wait for a block (blocks.Observer).
func (o *Observer) ObserveBlockWait(wait time.Duration, err error) {
	o.blockWait.Record(context.Background(), wait.Seconds(), o.attrs("", outcome(err), ""))
}

// ObserveBlockEnd records a block ended: used up, or expired with
// dropped IDs left in it (blocks.Observer).
func (o *Observer) ObserveBlockEnd(dropped int64) {
	ctx := context.Background()
	if dropped == 0 {
		o.ends.Add(ctx, 1, o.attrs("", "", "used_up"))
		return
	}
	o.ends.Add(ctx, 1, o.attrs("", "", "expired"))
	o.droppedIDs.Add(ctx, dropped, o.attrs("", "", ""))
}

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// attrs returns the attributes of a measurement: the namespace, the
// outcome and the block's end, each unless it is "". They are made once
// per triple.
func (o *Observer) attrs(namespace, outcome, end string) metric.MeasurementOption {
	key := [3]string{namespace, outcome, end}
	if at, ok := o.sets.Load(key); ok {
		return at.(metric.MeasurementOption)
	}
	var kv []attribute.KeyValue
	if namespace != "" {
		kv = append(kv, NamespaceKey.String(namespace))
	}
	if outcome != "" {
		kv = append(kv, OutcomeKey.String(outcome))
	}
	if end != "" {
		kv = append(kv, BlockEndKey.String(end))
	}
	at, _ := o.sets.LoadOrStore(key, metric.WithAttributeSet(attribute.NewSet(kv...)))
	return at.(metric.MeasurementOption)
}
