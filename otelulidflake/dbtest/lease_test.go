// Package dbtest tests the OpenTelemetry adapter with leases on real
// PostgreSQL (internal/pgtest): a module of its own, so that the adapter's
// module does not require the test harness.
package dbtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/otelulidflake"
	"github.com/ulidflake/ulidflake/sidlease"
)

func TestMain(m *testing.M) { pgtest.Main(m, nil) }

// counts reads the metrics' values: sums and gauges by name and attribute
// set, histograms' counts.
func counts(t *testing.T, r *sdkmetric.ManualReader) map[string]map[attribute.Distinct]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[attribute.Distinct]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			vs := map[attribute.Distinct]float64{}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					vs[p.Attributes.Equivalent()] = float64(p.Value)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					vs[p.Attributes.Equivalent()] = float64(p.Value)
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					vs[p.Attributes.Equivalent()] = p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					vs[p.Attributes.Equivalent()] = float64(p.Count)
				}
			}
			got[m.Name] = vs
		}
	}
	return got
}

// A lease whose server sessions are ended by pg_terminate_backend, and
// whose SID another instance takes meanwhile, finds it lost at its next
// renewal: the adapter counts one loss, the claim before it, and the
// renewals that proved the lease held, with the SIDs in use and the
// clock skew they read.
func TestLeaseLoss(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		reader := sdkmetric.NewManualReader()
		obs, err := otelulidflake.NewObserver(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := pgxpool.ParseConfig(db.URL)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ConnConfig.RuntimeParams["application_name"] = "observed-lease"
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		lease, err := sidlease.Acquire(ctx, pool, "observed", sidlease.WithValidity(time.Second), sidlease.WithObserver(obs))
		if err != nil {
			t.Fatal(err)
		}
		defer lease.Close()

		if _, err := db.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = 'observed-lease'`); err != nil {
			t.Fatal(err)
		}
		// Another instance takes the SID: its row carries another token.
		if _, err := db.Exec(ctx, `UPDATE ulid_flake_sid_leases SET token = token + 1
			WHERE namespace = 'observed' AND sid = $1`, lease.SID()); err != nil {
			t.Fatal(err)
		}
		ns := attribute.NewSet(otelulidflake.NamespaceKey.String("observed"))
		var got map[string]map[attribute.Distinct]float64
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if got = counts(t, reader); got["ulidflake.lease.losses"][ns.Equivalent()] > 0 {
				break
			}
		}
		ok := attribute.NewSet(otelulidflake.NamespaceKey.String("observed"), otelulidflake.OutcomeKey.String("ok"))
		if n := got["ulidflake.lease.losses"][ns.Equivalent()]; n != 1 {
			t.Fatalf("losses %v, want 1", n)
		}
		if n := got["ulidflake.lease.claims"][ok.Equivalent()]; n < 1 {
			t.Errorf("claims %v, want the one before the loss at least", n)
		}
		if n := got["ulidflake.lease.claim_wait.duration"][ns.Equivalent()]; n < 1 {
			t.Errorf("claim waits %v, want one at least", n)
		}
		if n := got["ulidflake.lease.renewals"][ok.Equivalent()]; n < 1 {
			t.Errorf("renewals %v, want one at least", n)
		}
		if n := got["ulidflake.lease.sids_in_use"][ns.Equivalent()]; n < 1 || n > 2 {
			t.Errorf("SIDs in use %v, want this lease's (and the taker's, once it claimed again)", n)
		}
		if _, found := got["ulidflake.lease.clock_skew"][ns.Equivalent()]; !found {
			t.Error("no clock skew recorded")
		}
	})
}

// A lease's generator reports through the lease's observer, with the
// lease's namespace: New called until the millisecond is used up counts
// its overflows under ulidflake.namespace, and none without it.
func TestLeaseGeneratorEvents(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		reader := sdkmetric.NewManualReader()
		obs, err := otelulidflake.NewObserver(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
		if err != nil {
			t.Fatal(err)
		}
		pool, err := pgxpool.New(ctx, db.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		lease, err := sidlease.Acquire(ctx, pool, "bursty", sidlease.WithValidity(time.Second), sidlease.WithObserver(obs))
		if err != nil {
			t.Fatal(err)
		}
		defer lease.Close()
		overflows := 0
		for tries := 0; overflows == 0 && tries < 10_000_000; tries++ {
			if _, err := lease.New(); errors.Is(err, flake.ErrMonotonicOverflow) {
				overflows++
			} else if err != nil {
				t.Fatal(err)
			}
		}
		if overflows == 0 {
			t.Fatal("no overflow in 10,000,000 calls of New")
		}
		got := counts(t, reader)["ulidflake.generator.overflows"]
		ns := attribute.NewSet(otelulidflake.NamespaceKey.String("bursty"))
		if n := got[ns.Equivalent()]; n != float64(overflows) {
			t.Errorf("overflows under the namespace %v, want %d (all: %v)", n, overflows, got)
		}
		if n, found := got[attribute.EmptySet().Equivalent()]; found {
			t.Errorf("%v overflows without the namespace", n)
		}
	})
}
