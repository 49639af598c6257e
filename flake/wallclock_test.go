package flake

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// countingWall is a wall clock that counts its readings and can be stepped.
type countingWall struct {
	reads atomic.Int64
	step  atomic.Int64 // ns added to time.Now
}

func (c *countingWall) read() (wall, mono int64) {
	c.reads.Add(1)
	wall, mono = readWall()
	return wall + c.step.Load(), mono
}

// newTestWall returns a wallClock that reads w, synced once. A sync is
// refused when its bracketing readings are over maxSkew apart, as they can
// be on a busy machine or under the race detector: it tries again.
func newTestWall(w *countingWall) *wallClock {
	c := &wallClock{}
	c.synced.Store(-1 << 62)
	for i := 0; i < 1000 && c.stale(mono()); i++ {
		c.nowNs(w.read)
	}
	return c
}

// TestWallClockNotReadAfterShortPause: a call after a pause of 10 ms reads
// only the monotonic clock, not the wall clock (which is what made the
// first ID after a pause cost twice snowflake's). The wall clock is read at
// most once per wallSync of monotonic time.
func TestWallClockNotReadAfterShortPause(t *testing.T) {
	w := &countingWall{}
	c := newTestWall(w)
	synced := w.reads.Load()
	time.Sleep(10 * time.Millisecond)
	c.nowNs(w.read)
	if elapsed := time.Duration(int64(time.Since(monoStart)) - c.synced.Load()); elapsed >= wallSync/2 {
		t.Skipf("the test was held up %s: too busy a machine to tell", elapsed)
	}
	if got := w.reads.Load() - synced; got != 0 {
		t.Errorf("the wall clock was read %d times after a 10ms pause, want 0", got)
	}
}

// TestWallClockSeesStepAfterSync: a step of the wall clock is seen once
// wallSync of monotonic time has passed since the last reading, and not
// before (the clock in between is the monotonic clock's elapsed time).
func TestWallClockSeesStepAfterSync(t *testing.T) {
	w := &countingWall{}
	c := newTestWall(w)
	const step = int64(time.Hour)
	w.step.Store(step)
	if got := c.nowNs(w.read) - time.Now().UnixNano(); got > int64(time.Second) && time.Duration(int64(time.Since(monoStart))-c.synced.Load()) < wallSync {
		t.Fatalf("the step was seen before wallSync had passed (%s ahead)", time.Duration(got))
	}
	time.Sleep(wallSync + time.Millisecond)
	if got := c.nowNs(w.read) - time.Now().UnixNano(); got < step-int64(time.Second) || got > step+int64(time.Second) {
		t.Fatalf("after wallSync, the clock reads %s ahead of time.Now, want the step %s", time.Duration(got), time.Duration(step))
	}
}

// TestGeneratorCommonPathSteps attacks New's common case (the default clock
// and randomness, which no test with WithClock or WithRandom reaches), from
// one goroutine so that no compare-and-swap is lost to another (a lost one
// takes the general path): over 60,000 IDs, in both layouts and with entropy
// 1 and 2, IDs are strictly increasing, each millisecond starts in the
// lower half of the randomness, each step within a millisecond is in
// [1, 2^(8n)-1] and the steps cover that range, and the SID is kept.
// TestGeneratorConcurrentUniqueAndIncreasing covers it from 8 goroutines.
func TestGeneratorCommonPathSteps(t *testing.T) {
	for _, tc := range []struct {
		opts  []Option
		sid   uint64
		shift uint
		step  uint64
	}{
		{nil, 0, 0, 255},
		{[]Option{WithEntropy(2)}, 0, 0, 65535},
		{[]Option{WithSID(7)}, 7, SIDBits, 255},
	} {
		g := mustGen(t, tc.opts...)
		if !g.common {
			t.Fatal("the default clock and randomness do not take the common path")
		}
		mask := uint64(1<<RandomBits-1) >> tc.shift
		var prev uint64
		var news int
		var maxStart uint64
		lo, hi := uint64(1<<63), uint64(0)
		for n := 0; n < 60_000; {
			id, err := g.New()
			if errors.Is(err, ErrMonotonicOverflow) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
			u := uint64(id)
			if u <= prev {
				t.Fatalf("%v: %s after %s", tc.opts, id, ID(prev))
			}
			if u&(1<<tc.shift-1) != tc.sid {
				t.Fatalf("%v: %s lost its SID", tc.opts, id)
			}
			r := u & (1<<RandomBits - 1) >> tc.shift
			if u>>RandomBits != prev>>RandomBits {
				if r > mask>>1 {
					t.Fatalf("%v: %s starts its millisecond in the upper half", tc.opts, id)
				}
				news++
				maxStart = max(maxStart, r)
			} else {
				d := r - prev&(1<<RandomBits-1)>>tc.shift
				if d < 1 || d > tc.step {
					t.Fatalf("%v: %s follows %s by a step of %d, not in [1, %d]", tc.opts, id, ID(prev), d, tc.step)
				}
				lo, hi = min(lo, d), max(hi, d)
			}
			prev = u
		}
		if news < 5 || maxStart < mask>>3 || lo > tc.step/16 || hi < tc.step-tc.step/16 {
			t.Fatalf("%v: %d milliseconds, largest start %d of %d, steps in [%d, %d]: not spread over [1, %d]",
				tc.opts, news, maxStart, mask>>1, lo, hi, tc.step)
		}
	}
}

// TestNewRereadsStaleOffset: once wallSync has passed, New's common case
// reads the wall clock again before it stamps an ID. The kept offset is
// set an hour ahead (as if the wall clock had stepped back an hour since
// the last reading): an ID stamped from it would be an hour ahead.
func TestNewRereadsStaleOffset(t *testing.T) {
	g := mustGen(t)
	mustNew(t, g)
	g.wall.offset.Add(int64(time.Hour))
	stale := mono() - int64(wallSync)
	g.wall.synced.Store(stale)
	before := time.Now().Add(-maxSkew).UnixMilli()
	id := mustNew(t, g)
	after := time.Now().Add(maxSkew).UnixMilli()
	if ms := DefaultEpoch().Time(id).UnixMilli(); ms < before || ms > after {
		t.Fatalf("ID stamped %s, made between %s and %s", DefaultEpoch().Time(id), time.UnixMilli(before), time.UnixMilli(after))
	}
	if d := time.Duration(g.wall.offset.Load() + mono() - time.Now().UnixNano()).Abs(); g.wall.synced.Load() != stale && d > time.Second {
		t.Fatalf("the offset was re-read but is %s off", d)
	}
}

// TestWallClockSyncRejectsSkew: sync keeps the last offset when the
// readings that bracket the wall-clock reading are maxSkew or more apart,
// and takes the new one otherwise.
func TestWallClockSyncRejectsSkew(t *testing.T) {
	c := &wallClock{}
	c.sync(5_000, 1_000, int64(maxSkew)-1)
	c.sync(9_000, 2_000, int64(maxSkew))
	if got, at := c.offset.Load(), c.synced.Load(); got != 4_000 || at != 1_000 {
		t.Fatalf("offset %d at %d, want 4000 at 1000", got, at)
	}
}
