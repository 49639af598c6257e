package flake

import (
	"fmt"
	"time"
)

// NewAt returns a new ID for the time t, not the clock: for backfills,
// where old rows get IDs that sort by their own time. Its millisecond is
// t's (floored), so the generator's epoch reads t truncated to the
// millisecond back from it (g.Epoch().Time(id)).
//
// NewAt keeps its own state, apart from [Generator.New]'s: it never moves
// the live IDs' logical clock, backwards or ahead. Consecutive calls for
// one millisecond give increasing IDs, stepping as New does (at least
// [MinBurst] of them, [ScalableMinBurst] scalable, before
// [ErrMonotonicOverflow]); so sort a backfill by time. A call for another
// millisecond starts again from a random point, so an ID made after calls
// for other milliseconds, and IDs made live or by another generator in the
// same millisecond, differ only by their random bits, as IDs of two
// generators do (see [Generator]); a scalable generator keeps its SID in
// every ID, so IDs of generators with distinct SIDs never repeat.
//
// A time before the epoch or past its range returns [ErrTimeRange]: never
// a clamped ID, which would repeat.
func (g *Generator) NewAt(t time.Time) (ID, error) {
	ms, err := g.epoch.Timestamp(t)
	if err != nil {
		return 0, err
	}
	for {
		last := g.backfill.Load()
		id, err := g.at(last, ms)
		if err != nil || g.backfill.CompareAndSwap(last, uint64(id)) {
			return id, err
		}
	}
}

// at returns the ID after last in the millisecond ms: a step above it when
// last is of that millisecond, else a random start in its lower half.
func (g *Generator) at(last uint64, ms int64) (ID, error) {
	if lastMs(last) != ms { // lastMs(0) is below every ms
		return ID(g.start(ms, g.random())), nil
	}
	id, ok := g.step(last, g.random())
	if !ok {
		return 0, fmt.Errorf("%w: NewAt used up %s", ErrMonotonicOverflow, g.format(ms))
	}
	return ID(id), nil
}
