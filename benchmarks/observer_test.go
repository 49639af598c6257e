package benchmarks

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ulidflake/ulidflake/flake"
)

// eventCount is a flake.Observer that counts events, as a metrics
// adapter's counter would.
type eventCount struct{ n atomic.Int64 }

func (c *eventCount) Observe(flake.Event) { c.n.Add(1) }

// BenchmarkObserver is the cost per New of an observer: two stand-alone
// generators, one without an observer and one with one, called in turn
// (interleaved rounds, each starting with the other, so that both get the
// same machine). It reports, for each, the median, the fastest and the
// slowest round in ns per New ("ns/New-median:none",
// "ns/New-min:observer"...), and the events per 1,000 calls with the
// observer.
//
//   - burst: a pause of 1 ms, then 1,000 calls, fewer than a millisecond
//     holds (flake.MinBurst): every call returns an ID, on New's common
//     path, and no event happens. This is what an observer costs New.
//   - saturated: 20,000 calls in a row, far more than a millisecond holds:
//     most return ErrMonotonicOverflow, each of which is an event. This is
//     what the events cost, where they are most frequent.
func BenchmarkObserver(b *testing.B) {
	b.Run("burst", func(b *testing.B) { observerRounds(b, 1000, time.Millisecond) })
	b.Run("saturated", func(b *testing.B) { observerRounds(b, 20_000, 0) })
}

func observerRounds(b *testing.B, perRound int, pause time.Duration) {
	var events eventCount
	plain, err := flake.NewGenerator()
	if err != nil {
		b.Fatal(err)
	}
	observed, err := flake.NewGenerator(flake.WithObserver(&events))
	if err != nil {
		b.Fatal(err)
	}
	gens := []*flake.Generator{plain, observed}
	names := []string{"none", "observer"}
	perNew := make([][]float64, len(gens))
	rounds := 0
	for b.Loop() {
		for k := range gens {
			i := (k + rounds) % len(gens)
			g := gens[i]
			time.Sleep(pause)
			t0 := time.Now()
			for range perRound {
				id, err := g.New()
				sinkFlake = id
				if err != nil {
					sinkErr = err
				}
			}
			perNew[i] = append(perNew[i], float64(time.Since(t0).Nanoseconds())/float64(perRound))
		}
		rounds++
	}
	for i, name := range names {
		s := perNew[i]
		slices.Sort(s)
		b.ReportMetric(s[len(s)/2], "ns/New-median:"+name)
		b.ReportMetric(s[0], "ns/New-min:"+name)
		b.ReportMetric(s[len(s)-1], "ns/New-max:"+name)
	}
	b.ReportMetric(float64(events.n.Load())*1000/float64(rounds*perRound), "events/1000New")
}
