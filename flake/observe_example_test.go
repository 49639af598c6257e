package flake_test

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ulidflake/ulidflake/flake"
)

// counts is an Observer that counts events by kind; a real one feeds
// metrics (github.com/ulidflake/ulidflake/otelulidflake does, for
// OpenTelemetry).
type counts struct{ n [16]atomic.Int64 }

func (c *counts) Observe(e flake.Event) { c.n[e.Kind].Add(1) }

func ExampleWithObserver() {
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	obs := &counts{}
	g, _ := flake.NewGenerator(flake.WithObserver(obs), flake.WithClock(func() time.Time { return at }))
	for range 2 * flake.MinBurst * 4 { // more than a millisecond holds: New fails, and reports it
		_, _ = g.New()
	}
	at = at.Add(-time.Second) // the clock steps back
	_, _ = g.New()
	fmt.Println(obs.n[flake.EventOverflow].Load() > 0, obs.n[flake.EventClockStep].Load())
	// Output: true 1
}
