package otelulidflake_test

import (
	"context"
	"fmt"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/otelulidflake"
)

func ExampleNewObserver() {
	// An application passes its MeterProvider (otel.GetMeterProvider() of
	// go.opentelemetry.io/otel); this one is read by hand.
	reader := sdkmetric.NewManualReader()
	obs, err := otelulidflake.NewObserver(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		panic(err)
	}
	// The same observer for every generator, lease (sidlease.WithObserver)
	// and block source (blocks.WithObserver).
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	g, _ := flake.NewGenerator(flake.WithObserver(obs), flake.WithClock(func() time.Time { return at }))
	_, _ = g.New()
	at = at.Add(-time.Second) // the clock steps back
	_, _ = g.New()

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
			fmt.Println(m.Name, m.Unit, sum.DataPoints[0].Value)
		}
	}
	// Output: ulidflake.generator.clock_steps {step} 1
}
