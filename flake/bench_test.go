package flake

import (
	"context"
	"testing"
	"time"
)

// Sinks keep the compiler from removing the benchmarked work.
var (
	sinkID    ID
	sinkInt   int64
	sinkBytes []byte
	sinkStr   string
	sinkErr   error
)

// BenchmarkClock is the floor for New: one read of the clock, as a
// generator does it.
func BenchmarkClock(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkInt = time.Now().UnixMilli()
	}
}

// BenchmarkNew measures the cost of one call. A serial loop asks for IDs
// faster than one generator's capacity (about 4,000 a millisecond), so a
// share of the calls return ErrMonotonicOverflow; "overflow/op" reports it.
func BenchmarkNew(b *testing.B) {
	g, _ := NewGenerator()
	b.ReportAllocs()
	overflows := 0
	for b.Loop() {
		sinkID, sinkErr = g.New()
		if sinkErr != nil {
			overflows++
		}
	}
	b.ReportMetric(float64(overflows)/float64(b.N), "overflow/op")
}

func BenchmarkNewParallel(b *testing.B) {
	g, _ := NewGenerator()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var id ID
		for pb.Next() {
			id, _ = g.New()
		}
		sinkID = id
	})
}

// BenchmarkNewWait measures sustained throughput: it waits out overflows,
// so it runs at the generator's capacity, not its speed.
func BenchmarkNewWait(b *testing.B) { benchSustained(b) }

// BenchmarkNewWaitScalable is the sustained rate of one scalable generator
// (15 random bits, entropy 1): the capacity of one instance holding a SID.
func BenchmarkNewWaitScalable(b *testing.B) { benchSustained(b, WithSID(1)) }

// benchSustained runs NewWait in a loop and reports IDs per millisecond.
func benchSustained(b *testing.B, opts ...Option) {
	g, _ := NewGenerator(opts...)
	ctx := context.Background()
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		sinkID, sinkErr = g.NewWait(ctx)
	}
	b.ReportMetric(float64(b.N)/float64(time.Since(start).Milliseconds()+1), "ids/ms")
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkID, sinkErr = Parse("00EZJCRCB4650")
	}
}

func BenchmarkString(b *testing.B) {
	id := MustParse("00EZJCRCB4650")
	b.ReportAllocs()
	for b.Loop() {
		sinkStr = id.String()
	}
}

func BenchmarkAppendText(b *testing.B) {
	id := MustParse("00EZJCRCB4650")
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		sinkBytes, sinkErr = id.AppendText(buf[:0])
	}
}

func BenchmarkMarshalJSON(b *testing.B) {
	id := MustParse("00EZJCRCB4650")
	b.ReportAllocs()
	for b.Loop() {
		sinkBytes, sinkErr = id.MarshalJSON()
	}
}

func BenchmarkUnmarshalJSON(b *testing.B) {
	in := []byte(`"00EZJCRCB4650"`)
	var id ID
	b.ReportAllocs()
	for b.Loop() {
		sinkErr = id.UnmarshalJSON(in)
	}
	sinkID = id
}
