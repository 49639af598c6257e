// Package otel records the events of ulidflake's generators, leases and
// blocks (flake.Observer) as OpenTelemetry metrics. It is a module of its
// own, so that an application that does not import it has none of
// OpenTelemetry in its module graph.
//
//	import ulidotel "github.com/ulidflake/ulidflake/otel" // beside go.opentelemetry.io/otel
//
//	obs, err := ulidotel.New(otel.GetMeterProvider())
//	gen, err := flake.NewGenerator(flake.WithObserver(obs))
//	lease, err := sidlease.Acquire(ctx, pool, "orders", sidlease.WithObserver(obs))
//
// The instruments, their units and what each tells an operator to do are
// in docs/observability.md. Names and units are stable: a change to them
// is a breaking change. Every measurement of a lease carries the
// attribute ulidflake.namespace (a block source of package blocks has no
// namespace, so its measurements carry none); claims, renewals,
// reservations (their count and round trip) and refill waits carry
// ulidflake.outcome, "ok" or "error" (a wait that ended with an error:
// the caller got no ID); blocks ended carry ulidflake.block.end,
// "used_up" or "aged_out".
package otel

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ulidflake/ulidflake/flake"
)

// ScopeName is the instrumentation scope (the meter's name) of the
// metrics.
const ScopeName = "github.com/ulidflake/ulidflake/otel"

// Attribute keys.
const (
	NamespaceKey = attribute.Key("ulidflake.namespace")
	OutcomeKey   = attribute.Key("ulidflake.outcome")
	BlockEndKey  = attribute.Key("ulidflake.block.end") // "used_up" or "aged_out"
)

// Bucket boundaries, in seconds: waits for a millisecond, claims that
// wait V + MaxClockAhead (3s by default), and clock steps from a
// millisecond to a minute.
var (
	msBuckets    = []float64{0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.1, 0.5, 1}
	claimBuckets = []float64{0.1, 0.5, 1, 2, 3, 4, 5, 10, 30, 60}
	stepBuckets  = []float64{0.002, 0.01, 0.1, 1, 10, 60, 600}
)

// Observer is a flake.Observer that records each event in the instruments
// of one meter. It is safe for concurrent use; give the same one to every
// generator and lease of a process.
type Observer struct {
	overflows, clockSteps, clockBehind metric.Int64Counter
	claims, renewals, losses, reserved metric.Int64Counter
	reservedIDs, ends, droppedIDs      metric.Int64Counter
	overflowWait, clockStep, claimWait metric.Float64Histogram
	reserveTime, refillWait            metric.Float64Histogram
	skew                               metric.Float64Gauge
	inUse                              metric.Int64Gauge
	sets                               sync.Map // attribute sets by namespace, outcome and block end
}

// New returns an Observer whose instruments are those of the meter
// [ScopeName] of mp. It returns the errors of the instruments mp could not
// make, joined.
func New(mp metric.MeterProvider) (*Observer, error) {
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
	o.renewals = counter("ulidflake.lease.renewals", "{renewal}", "Lease heartbeats, by outcome.")
	o.losses = counter("ulidflake.lease.losses", "{loss}", "Leases found lost: the SID taken over, or the claim lost in a failover.")
	o.reserved = counter("ulidflake.block.reservations", "{block}", "Blocks reserved from the database, by outcome.")
	o.reservedIDs = counter("ulidflake.block.reserved_ids", "{id}", "IDs in the blocks reserved.")
	o.reserveTime = histogram("ulidflake.block.reserve.duration", "Round trip of a block's reservation, by outcome.", msBuckets)
	o.ends = counter("ulidflake.block.ends", "{block}", "Blocks a source stopped handing out, used up or aged out past MaxAge.")
	o.droppedIDs = counter("ulidflake.block.dropped_ids", "{id}", "IDs left in blocks that aged out, never handed out.")
	o.refillWait = histogram("ulidflake.block.refill_wait.duration", "Time a caller waited for a block to be refilled, by outcome.", msBuckets)
	var err error
	o.skew, err = m.Float64Gauge("ulidflake.lease.clock_skew", metric.WithUnit("s"),
		metric.WithDescription("This instance's clock minus the server's, at the last heartbeat."))
	errs = append(errs, err)
	o.inUse, err = m.Int64Gauge("ulidflake.lease.sids_in_use", metric.WithUnit("{sid}"),
		metric.WithDescription("SIDs of the namespace held (of 32), at the last heartbeat."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return o, nil
}

// Observe records e (flake.Observer). Kinds it does not know are ignored.
func (o *Observer) Observe(e flake.Event) {
	ctx := context.Background()
	at := o.attrs(e.Namespace, "", "")
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
	case flake.EventLeaseClaim:
		o.claims.Add(ctx, 1, o.attrs(e.Namespace, outcome(e.Err), ""))
		if e.Err == nil {
			o.claimWait.Record(ctx, e.Duration.Seconds(), at)
		}
	case flake.EventLeaseRenew:
		o.renewals.Add(ctx, 1, o.attrs(e.Namespace, outcome(e.Err), ""))
		if e.Err == nil {
			o.skew.Record(ctx, e.Skew.Seconds(), at)
			o.inUse.Record(ctx, e.Count, at)
		}
	case flake.EventLeaseLoss:
		o.losses.Add(ctx, 1, at)
	case flake.EventBlockReserve:
		byOutcome := o.attrs(e.Namespace, outcome(e.Err), "")
		o.reserved.Add(ctx, 1, byOutcome)
		o.reserveTime.Record(ctx, e.Duration.Seconds(), byOutcome)
		if e.Err == nil {
			o.reservedIDs.Add(ctx, e.Count, at)
		}
	case flake.EventRefillWait:
		o.refillWait.Record(ctx, e.Duration.Seconds(), o.attrs(e.Namespace, outcome(e.Err), ""))
	case flake.EventBlockEnd:
		o.blockEnd(ctx, e, at)
	}
}

// blockEnd records a block ended: used up, or aged out with e.Count IDs
// dropped.
func (o *Observer) blockEnd(ctx context.Context, e flake.Event, at metric.MeasurementOption) {
	if e.Count == 0 {
		o.ends.Add(ctx, 1, o.attrs(e.Namespace, "", "used_up"))
		return
	}
	o.ends.Add(ctx, 1, o.attrs(e.Namespace, "", "aged_out"))
	o.droppedIDs.Add(ctx, e.Count, at)
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
