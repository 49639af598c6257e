package main

import (
	"fmt"
	"slices"
)

// stat summarises the repetitions of one figure: its median and its range.
type stat struct {
	med, lo, hi float64
	n           int
}

// summarise returns the stat of v, and false when v is empty.
func summarise(v []float64) (stat, bool) {
	if len(v) == 0 {
		return stat{}, false
	}
	v = slices.Sorted(slices.Values(v))
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return stat{med: m, lo: v[0], hi: v[len(v)-1], n: len(v)}, true
}

// stat returns the stat of name's unit over its repetitions.
func (r results) stat(name, unit string) (stat, bool) { return summarise(r[name][unit]) }

// ratio returns the stat of a/b taken repetition by repetition: the k-th
// value of a over the k-th of b, which ran in the same round of the
// rotation. It needs as many repetitions of both.
func (r results) ratio(a, b, unit string) (stat, bool) {
	x, y := r[a][unit], r[b][unit]
	if len(x) == 0 || len(x) != len(y) {
		return stat{}, false
	}
	q := make([]float64, len(x))
	for i := range x {
		q[i] = x[i] / y[i]
	}
	return summarise(q)
}

// ratioUnits is ratio for two units of one benchmark: BenchmarkGenerateBurst
// reports every peer of one round as a unit of its own.
func (r results) ratioUnits(name, a, b string) (stat, bool) {
	x, y := r[name][a], r[name][b]
	if len(x) == 0 || len(x) != len(y) {
		return stat{}, false
	}
	q := make([]float64, len(x))
	for i := range x {
		q[i] = x[i] / y[i]
	}
	return summarise(q)
}

// times formats a ratio: "1.23× (1.10–1.31)".
func (s stat) times() string {
	return fmt.Sprintf("%.2f× (%.2f–%.2f)", s.med, s.lo, s.hi)
}

// compare says how a stands against b when lower is better (times) or
// higher is (rates): a claim only when their ranges do not overlap.
func compare(a, b stat, higherIsBetter bool, better, worse string) string {
	switch {
	case a.hi < b.lo && !higherIsBetter, a.lo > b.hi && higherIsBetter:
		return better
	case a.lo > b.hi && !higherIsBetter, a.hi < b.lo && higherIsBetter:
		return worse
	}
	return "within noise"
}

// against says whether a ratio meets a goal: "met" when its whole range is
// on the goal's side of limit, "missed" when its whole range is on the
// other, "within noise" when the range straddles it.
func against(q stat, limit float64, atMost bool) verdict {
	switch {
	case atMost && q.hi <= limit, !atMost && q.lo >= limit:
		return met
	case atMost && q.lo > limit, !atMost && q.hi < limit:
		return missed
	}
	return noise
}

type verdict int

const (
	met verdict = iota
	missed
	noise
)

func (v verdict) String() string {
	return [...]string{"met", "**missed**", "within noise"}[v]
}
