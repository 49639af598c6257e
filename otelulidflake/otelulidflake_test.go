package otelulidflake_test

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/otelulidflake"
)

// meter returns an Observer and the reader of its metrics.
func meter(t *testing.T) (*otelulidflake.Observer, *sdkmetric.ManualReader) {
	t.Helper()
	r := sdkmetric.NewManualReader()
	obs, err := otelulidflake.NewObserver(sdkmetric.NewMeterProvider(sdkmetric.WithReader(r)))
	if err != nil {
		t.Fatal(err)
	}
	return obs, r
}

// point is a metric's value for one set of attributes: a sum's or a
// gauge's value, a histogram's count.
type point struct {
	value float64
	sum   float64 // a histogram's sum
}

// collect reads every metric of the reader: by name, by attribute set.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]map[attribute.Distinct]point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[attribute.Distinct]point{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelulidflake.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, otelulidflake.ScopeName)
		}
		for _, m := range sm.Metrics {
			ps := map[attribute.Distinct]point{}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					ps[p.Attributes.Equivalent()] = point{value: float64(p.Value)}
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					ps[p.Attributes.Equivalent()] = point{value: float64(p.Value)}
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					ps[p.Attributes.Equivalent()] = point{value: p.Value}
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					ps[p.Attributes.Equivalent()] = point{value: float64(p.Count), sum: p.Sum}
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
			got[m.Name] = ps
		}
	}
	return got
}

// none is the attribute set of a generator's own measurements.
var none = attribute.EmptySet().Equivalent()

// maxSource draws the largest steps: every millisecond is used up after
// the same number of IDs, and NewWait's next draw overflows too.
type maxSource struct{}

func (maxSource) Uint64() uint64 { return math.MaxUint64 }

// A millisecond filled on a frozen clock: each ErrMonotonicOverflow New
// returns is counted; NewWait's wait for the next millisecond is recorded
// once, with the time it waited.
func TestOverflow(t *testing.T) {
	obs, r := meter(t)
	var ms atomic.Int64
	ms.Store(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).UnixMilli())
	g, err := flake.NewGenerator(flake.WithObserver(obs), flake.WithSID(1), flake.WithRandom(maxSource{}),
		flake.WithClock(func() time.Time { return time.UnixMilli(ms.Load()) }))
	if err != nil {
		t.Fatal(err)
	}
	made, overflows := 0, 0
	for overflows < 5 {
		if _, err := g.New(); errors.Is(err, flake.ErrMonotonicOverflow) {
			overflows++
		} else if err != nil {
			t.Fatal(err)
		} else {
			made++
		}
	}
	if made < flake.ScalableMinBurst {
		t.Fatalf("%d IDs before the first overflow, want at least ScalableMinBurst (%d)", made, flake.ScalableMinBurst)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		ms.Add(1) // the frozen clock moves on while NewWait waits
	}()
	if _, err := g.NewWait(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := collect(t, r)
	if p := got["ulidflake.generator.overflows"][none]; p.value != float64(overflows) {
		t.Errorf("overflows %v, want %d", p.value, overflows)
	}
	if p := got["ulidflake.generator.overflow_wait.duration"][none]; p.value != 1 || p.sum <= 0 {
		t.Errorf("overflow waits: %v with sum %vs, want 1 with a positive sum", p.value, p.sum)
	}
}

// A clock stepped back by an injected clock: one step counted, with its
// size, however many IDs follow; a step past the max lead counts an
// ErrClockBehind.
func TestClockStep(t *testing.T) {
	obs, r := meter(t)
	var ms atomic.Int64
	ms.Store(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).UnixMilli())
	g, err := flake.NewGenerator(flake.WithObserver(obs), flake.WithMaxLead(time.Minute),
		flake.WithClock(func() time.Time { return time.UnixMilli(ms.Load()) }))
	if err != nil {
		t.Fatal(err)
	}
	mint := func(n int) {
		t.Helper()
		for range n {
			if _, err := g.New(); err != nil && !errors.Is(err, flake.ErrMonotonicOverflow) {
				t.Fatal(err)
			}
		}
	}
	mint(100)
	ms.Add(-1500) // back 1.5s
	mint(1000)
	got := collect(t, r)
	if p := got["ulidflake.generator.clock_steps"][none]; p.value != 1 {
		t.Errorf("clock steps %v, want 1", p.value)
	}
	if p := got["ulidflake.generator.clock_step.size"][none]; p.value != 1 || p.sum != 1.5 {
		t.Errorf("clock step sizes: %v with sum %vs, want one of 1.5s", p.value, p.sum)
	}
	ms.Add(-2 * time.Minute.Milliseconds())
	if _, err := g.New(); !errors.Is(err, flake.ErrClockBehind) {
		t.Fatalf("New: %v, want ErrClockBehind", err)
	}
	if p := collect(t, r)["ulidflake.generator.clock_behind"][none]; p.value != 1 {
		t.Errorf("clock behind %v, want 1", p.value)
	}
}

// Lease events carry their namespace (block sources have none), and
// claims, renewals, reservations (their count and round trip) and block
// waits their outcome; a renewal sets the skew and the SIDs in use; a
// block ended, how it ended, and the IDs an expired one dropped; a
// lease's generator's events, the namespace.
func TestAttributes(t *testing.T) {
	obs, r := meter(t)
	ns := otelulidflake.NamespaceKey.String("orders")
	obs.ObserveLeaseClaim("orders", 4, 3*time.Second, nil)
	obs.ObserveLeaseClaim("orders", -1, 0, errors.New("no free SID"))
	obs.ObserveLeaseRenew("orders", 4, -250*time.Millisecond, 7, nil)
	obs.ObserveLeaseRenew("orders", 4, 0, 0, errors.New("timeout"))
	obs.ObserveLeaseLoss("orders", 4)
	obs.ObserveGenerator("orders", flake.Event{Kind: flake.EventOverflow, SID: 4})
	obs.ObserveGenerator("orders", flake.Event{Kind: 200}) // unknown: ignored
	obs.ObserveBlockReserve(1000, time.Millisecond, nil)
	obs.ObserveBlockReserve(0, time.Second, errors.New("refused"))
	obs.ObserveBlockWait(time.Millisecond, nil)
	obs.ObserveBlockWait(time.Second, context.DeadlineExceeded)
	obs.ObserveBlockEnd(0)
	obs.ObserveBlockEnd(900)
	obs.ObserveBlockEnd(100)
	obs.Observe(flake.Event{Kind: 200}) // unknown: ignored
	got := collect(t, r)
	at := func(kv ...attribute.KeyValue) attribute.Distinct {
		set := attribute.NewSet(kv...)
		return set.Equivalent()
	}
	ok, failed := otelulidflake.OutcomeKey.String("ok"), otelulidflake.OutcomeKey.String("error")
	for _, c := range []struct {
		name  string
		set   attribute.Distinct
		value float64
	}{
		{"ulidflake.lease.claims", at(ns, ok), 1},
		{"ulidflake.lease.claims", at(ns, failed), 1},
		{"ulidflake.lease.claim_wait.duration", at(ns), 1},
		{"ulidflake.lease.renewals", at(ns, ok), 1},
		{"ulidflake.lease.renewals", at(ns, failed), 1},
		{"ulidflake.lease.clock_skew", at(ns), -0.25},
		{"ulidflake.lease.sids_in_use", at(ns), 7},
		{"ulidflake.lease.losses", at(ns), 1},
		{"ulidflake.generator.overflows", at(ns), 1},
		{"ulidflake.block.reservations", at(ok), 1},
		{"ulidflake.block.reservations", at(failed), 1},
		{"ulidflake.block.reserved_ids", at(), 1000},
		{"ulidflake.block.reserve.duration", at(ok), 1},
		{"ulidflake.block.reserve.duration", at(failed), 1},
		{"ulidflake.block.ends", at(otelulidflake.BlockEndKey.String("used_up")), 1},
		{"ulidflake.block.ends", at(otelulidflake.BlockEndKey.String("expired")), 2},
		{"ulidflake.block.dropped_ids", at(), 1000},
		{"ulidflake.block.wait.duration", at(ok), 1},
		{"ulidflake.block.wait.duration", at(failed), 1},
	} {
		if p, found := got[c.name][c.set]; !found || p.value != c.value {
			t.Errorf("%s %v: %v (found %t), want %v", c.name, c.set, p.value, found, c.value)
		}
	}
	if n := len(got); n != 13 {
		t.Errorf("%d metrics, want the 13 above", n)
	}
}
