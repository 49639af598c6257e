package flake

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a clock that tests move by hand.
type fakeClock struct{ ms atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ms.Store(t.UnixMilli())
	return c
}

func (c *fakeClock) Now() time.Time      { return time.UnixMilli(c.ms.Load()) }
func (c *fakeClock) Add(d time.Duration) { c.ms.Add(d.Milliseconds()) }
func (c *fakeClock) Set(t time.Time)     { c.ms.Store(t.UnixMilli()) }
func mustGen(t testing.TB, opts ...Option) *Generator {
	t.Helper()
	g, err := NewGenerator(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

var t2025 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestGeneratorConcurrentUniqueAndIncreasing(t *testing.T) {
	const workers, perWorker = 8, 125_000 // 1e6 IDs
	g := mustGen(t)
	results := make([][]ID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ids := make([]ID, perWorker)
			for i := range ids {
				id, err := g.NewWait(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = id
			}
			results[w] = ids
		})
	}
	wg.Wait()
	var all []ID
	for w, ids := range results {
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				t.Fatalf("worker %d: ID %d (%s) not above the previous %s", w, i, ids[i], ids[i-1])
			}
		}
		all = append(all, ids...)
	}
	if len(all) != workers*perWorker {
		t.Fatalf("got %d IDs", len(all))
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Fatalf("duplicate ID %s", all[i])
		}
	}
	if all[0] <= 0 {
		t.Fatalf("non-positive ID %d", all[0])
	}
}

func TestGeneratorClockSteppedBack(t *testing.T) {
	for _, opts := range [][]Option{{WithMaxLead(2 * time.Hour)}, {WithMaxLead(2 * time.Hour), WithSID(7)}} {
		clock := newFakeClock(t2025)
		g := mustGen(t, append(opts, WithClock(clock.Now))...)
		var last ID
		step := func() {
			id, err := g.NewWait(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if id <= last {
				t.Fatalf("ID %s not above %s after the clock moved to %s", id, last, clock.Now().UTC())
			}
			last = id
		}
		for range 100 {
			step()
			clock.Add(time.Millisecond)
		}
		clock.Add(-time.Hour) // NTP steps the clock back, within the max lead
		for range 10_000 {    // more than one millisecond's capacity
			step()
		}
		if DefaultEpoch().Time(last).Before(t2025) {
			t.Fatalf("timestamp went back to %s", DefaultEpoch().Time(last))
		}
		clock.Add(2 * time.Hour) // and forward again
		step()
		if got := DefaultEpoch().Time(last); !got.Equal(t2025.Add(time.Hour + 100*time.Millisecond)) {
			t.Fatalf("after the clock caught up, time = %s", got)
		}
	}
}

// Steps back and forward of milliseconds, seconds and years: within the max
// lead, IDs stay strictly increasing and near the clock; beyond it, New and
// NewWait return ErrClockBehind at once (never a far-future ID, never a
// wait), and Reset takes the clock as it is.
func TestGeneratorClockSteps(t *testing.T) {
	const year = 365 * 24 * time.Hour
	for _, tc := range []struct {
		name   string
		jump   time.Duration // the clock reads this far off for one ID
		back   time.Duration // then this far back from there
		opts   []Option
		behind bool // the step back is beyond the max lead
	}{
		{name: "back 5ms", back: 5 * time.Millisecond},
		{name: "back 3s", back: 3 * time.Second},
		{name: "back 1 year", back: year, behind: true},
		{name: "forward 1ms and back", jump: time.Millisecond, back: time.Millisecond},
		{name: "forward 5s and back", jump: 5 * time.Second, back: 5 * time.Second},
		{name: "forward 11s and back", jump: 11 * time.Second, back: 11 * time.Second, behind: true},
		{name: "forward 10 years and back", jump: 10 * year, back: 10 * year, behind: true},
		{name: "forward 10 years and back, scalable", jump: 10 * year, back: 10 * year, opts: []Option{WithSID(3)}, behind: true},
		{name: "back 20s, max lead 1m", back: 20 * time.Second, opts: []Option{WithMaxLead(time.Minute)}},
		{name: "back 2ms, max lead 1ms", back: 2 * time.Millisecond, opts: []Option{WithMaxLead(time.Millisecond)}, behind: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock(t2025)
			g := mustGen(t, append(tc.opts, WithClock(clock.Now))...)
			first := mustNew(t, g)
			clock.Add(tc.jump)
			high := mustNew(t, g) // the last ID before the step back
			clock.Add(-tc.back)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if tc.behind {
				for _, call := range []func() (ID, error){g.New, func() (ID, error) { return g.NewWait(ctx) }} {
					id, err := call()
					if !errors.Is(err, ErrClockBehind) || id != 0 {
						t.Fatalf("got %s, %v; want ErrClockBehind", id, err)
					}
				}
				if ctx.Err() != nil {
					t.Fatal("NewWait waited for the clock")
				}
				g.Reset()
				id := mustNew(t, g)
				if !DefaultEpoch().Time(id).Equal(clock.Now()) {
					t.Fatalf("after Reset, ID time %s, clock %s", DefaultEpoch().Time(id), clock.Now())
				}
				if id == first || id == high {
					t.Fatal("duplicate after Reset")
				}
				return
			}
			// Absorbed: 20,000 IDs (several milliseconds' capacity) keep
			// increasing, stamped no later than the last ID's time plus
			// what NewWait needed to move on.
			last := high
			for i := range 20_000 {
				id, err := g.NewWait(ctx)
				if err != nil {
					t.Fatalf("ID %d: %v", i, err)
				}
				if id <= last {
					t.Fatalf("ID %d: %s not above %s", i, id, last)
				}
				last = id
			}
			if lead := DefaultEpoch().Time(last).Sub(clock.Now()); lead > tc.back+time.Second {
				t.Fatalf("IDs ran %s ahead of the clock", lead)
			}
		})
	}
}

// The random start of each millisecond leaves room for at least MinBurst
// (ScalableMinBurst) IDs in that millisecond, whatever the draw.
func TestGeneratorCapacityFloor(t *testing.T) {
	for _, tc := range []struct {
		opts  []Option
		floor int
	}{{nil, MinBurst}, {[]Option{WithSID(9)}, ScalableMinBurst}} {
		worst := 1 << 30
		for seed := range uint64(2000) {
			clock := newFakeClock(t2025)
			g := mustGen(t, append(tc.opts, WithClock(clock.Now), WithRandom(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))...)
			n := 0
			for {
				if _, err := g.New(); err != nil {
					if !errors.Is(err, ErrMonotonicOverflow) {
						t.Fatal(err)
					}
					break
				}
				n++
			}
			worst = min(worst, n)
		}
		if worst < tc.floor {
			t.Fatalf("%v: a millisecond held only %d IDs, floor %d", tc.opts, worst, tc.floor)
		}
		t.Logf("%v: fewest IDs in a millisecond over 2000 seeds: %d (floor %d)", tc.opts, worst, tc.floor)
	}
	if MinBurst < 2000 || ScalableMinBurst < 64 {
		t.Fatalf("floors %d, %d", MinBurst, ScalableMinBurst)
	}
}

func mustNew(t *testing.T, g *Generator) ID {
	t.Helper()
	id, err := g.New()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestGeneratorOverflow(t *testing.T) {
	for _, tc := range []struct {
		sid     int // -1: stand-alone
		entropy int
	}{
		{-1, 1}, {-1, 2}, {-1, 3}, {0, 1}, {31, 1}, {5, 2},
	} {
		opts := []Option{WithEntropy(tc.entropy)}
		if tc.sid >= 0 {
			opts = append(opts, WithSID(tc.sid))
		}
		clock := newFakeClock(t2025)
		g := mustGen(t, append(opts, WithClock(clock.Now))...)
		ms := clock.Now().UnixMilli() - defaultEpochUnixMilli

		// New fails with ErrMonotonicOverflow once the millisecond is used
		// up. The state stays as it was: a retry may still fit a smaller
		// random step, and whatever it returns is above the last ID.
		var ids []ID
		failures := 0
		for failures < 50 {
			id, err := g.New()
			if err != nil {
				if !errors.Is(err, ErrMonotonicOverflow) {
					t.Fatalf("%+v: error %v, want ErrMonotonicOverflow", tc, err)
				}
				failures++
				continue
			}
			if id.Timestamp() != ms {
				t.Fatalf("%+v: timestamp %d, want %d", tc, id.Timestamp(), ms)
			}
			if tc.sid >= 0 && id.SID() != tc.sid {
				t.Fatalf("%+v: SID %d in %s", tc, id.SID(), id)
			}
			if len(ids) > 0 && id <= ids[len(ids)-1] {
				t.Fatalf("%+v: %s not above %s", tc, id, ids[len(ids)-1])
			}
			ids = append(ids, id)
		}
		// NewWait returns what still fits this millisecond, then waits and
		// crosses to the next one once the clock gets there.
		go func() { time.Sleep(5 * time.Millisecond); clock.Add(time.Millisecond) }()
		for last := ids[len(ids)-1]; last.Timestamp() == ms; {
			id, err := g.NewWait(context.Background())
			if err != nil || id <= last || id.Timestamp() > ms+1 {
				t.Fatalf("%+v: NewWait = %s (ts %d), %v after %s", tc, id, id.Timestamp(), err, last)
			}
			if tc.sid >= 0 && id.SID() != tc.sid {
				t.Fatalf("%+v: SID %d after the wait", tc, id.SID())
			}
			last = id
		}
		t.Logf("%+v: %d IDs in the millisecond", tc, len(ids))
	}
}

func TestGeneratorNewWaitHonoursContext(t *testing.T) {
	clock := newFakeClock(t2025) // never moves
	g := mustGen(t, WithClock(clock.Now))
	for {
		if _, err := g.New(); err != nil {
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	for {
		_, err := g.NewWait(ctx)
		if err != nil {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("NewWait error = %v, want deadline exceeded", err)
			}
			return
		}
	}
}

// constSource always returns the same value, to force a given randomness.
type constSource uint64

func (c constSource) Uint64() uint64 { return uint64(c) }

func TestGeneratorNeverReturnsZero(t *testing.T) {
	g := mustGen(t, WithClock(func() time.Time { return time.UnixMilli(defaultEpochUnixMilli) }), WithRandom(constSource(0)))
	id, err := g.New()
	if err != nil || id == 0 {
		t.Fatalf("New at the epoch with zero randomness = %d, %v", id, err)
	}
}

func TestGeneratorTimeLimits(t *testing.T) {
	epoch, err := NewEpoch(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		now time.Time
		err error
	}{
		{epoch.Time(0).Add(-time.Millisecond), ErrTimeRange},
		{epoch.Time(0), nil},
		{epoch.Time(Max), nil},
		{epoch.Time(Max).Add(time.Millisecond), ErrTimeRange},
	} {
		g := mustGen(t, WithEpoch(epoch), WithClock(func() time.Time { return tc.now }))
		id, err := g.New()
		if !errors.Is(err, tc.err) || (err != nil) != (tc.err != nil) {
			t.Errorf("New at %s: error %v, want %v", tc.now, err, tc.err)
			continue
		}
		if err == nil && !epoch.Time(id).Equal(tc.now) {
			t.Errorf("New at %s: ID carries %s", tc.now, epoch.Time(id))
		}
	}
}

// A bad option is ErrOption, and its message names the option and its
// value; a nil option too, where it panicked.
func TestGeneratorOptions(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		name string
	}{
		{[]Option{WithSID(-1)}, "WithSID(-1)"},
		{[]Option{WithSID(32)}, "WithSID(32)"},
		{[]Option{WithEntropy(0)}, "WithEntropy(0)"},
		{[]Option{WithEntropy(4)}, "WithEntropy(4)"},
		{[]Option{WithSID(1), WithEntropy(3)}, "WithEntropy(3)"},
		{[]Option{WithClock(nil)}, "WithClock(nil)"},
		{[]Option{WithRandom(nil)}, "WithRandom(nil)"},
		{[]Option{WithMaxLead(0)}, "WithMaxLead(0s)"},
		{[]Option{WithSID(1), nil}, "option 1 is nil"},
	} {
		if _, err := NewGenerator(tc.opts...); !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("NewGenerator error = %v, want ErrOption naming %s", err, tc.name)
		}
	}
	// The SID is in every scalable ID.
	for sid := range MaxSID + 1 {
		g := mustGen(t, WithSID(sid))
		for range 300 {
			id, err := g.NewWait(context.Background())
			if err != nil || id.SID() != sid {
				t.Fatalf("SID %d: got %s (SID %d), %v", sid, id, id.SID(), err)
			}
		}
	}
}

func TestGeneratorRandomnessIsUnpredictable(t *testing.T) {
	// Two generators at the same instant start at different randomness, and
	// steps within a millisecond vary.
	clock := newFakeClock(t2025)
	a, b := mustGen(t, WithClock(clock.Now)), mustGen(t, WithClock(clock.Now))
	x, _ := a.New()
	y, _ := b.New()
	if x == y {
		t.Fatalf("two generators started at the same ID %s", x)
	}
	steps := map[ID]bool{}
	prev := x
	for range 20 {
		id, err := a.New()
		if err != nil {
			break
		}
		steps[id-prev] = true
		prev = id
	}
	if len(steps) < 5 {
		t.Fatalf("only %d distinct steps in 20 IDs", len(steps))
	}
}

func TestNewAllocatesNothing(t *testing.T) {
	g := mustGen(t)
	if n := testing.AllocsPerRun(1000, func() { _, _ = g.New() }); n != 0 {
		t.Errorf("New allocates %v times", n)
	}
	id := MustParse("00EZJCRCB4650")
	buf := make([]byte, 0, 32)
	if n := testing.AllocsPerRun(1000, func() { _, _ = Parse("00EZJCRCB4650"); buf, _ = id.AppendText(buf[:0]) }); n != 0 {
		t.Errorf("Parse and AppendText allocate %v times", n)
	}
}

// TestGeneratorDefaultClockFollowsWallClock: the default clock (the wall
// clock, with the monotonic clock's elapsed time added between readings)
// stamps every ID with a time between wall-clock readings taken before and
// after it, from 16 goroutines that use up every millisecond, in both
// layouts: NewWait waits for the clock, never runs ahead of a correct one,
// and never reports ErrClockBehind.
func TestGeneratorDefaultClockFollowsWallClock(t *testing.T) {
	for _, opts := range [][]Option{nil, {WithSID(3)}} {
		g, err := NewGenerator(opts...)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 16 {
			wg.Go(func() {
				deadline := time.Now().Add(time.Second)
				for time.Now().Before(deadline) {
					// The generator reads the wall clock every wallSync and adds
					// monotonic time, with an offset kept when two readings
					// agree within 20µs: its time may differ by that much.
					before := time.Now().Add(-20 * time.Microsecond).UnixMilli()
					id, err := g.NewWait(context.Background())
					after := time.Now().Add(20 * time.Microsecond).UnixMilli()
					if err != nil {
						errs <- err
						return
					}
					if ms := DefaultEpoch().Time(id).UnixMilli(); ms < before || ms > after {
						errs <- fmt.Errorf("ID stamped %d, made between %d and %d", ms, before, after)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
}

// Ceiling is above every ID made, and above every ID made until the clock
// has moved on by d, and no further: the first ID of the millisecond after.
func TestGeneratorCeiling(t *testing.T) {
	clock := newFakeClock(t2025)
	g := mustGen(t, WithClock(clock.Now), WithSID(2))
	var high ID
	for range 50 {
		high = max(high, mustNew(t, g))
	}
	c := g.Ceiling(2 * time.Second)
	if c <= high {
		t.Fatalf("ceiling %s not above %s", c, high)
	}
	clock.Add(2*time.Second + 999*time.Microsecond)
	if id := mustNew(t, g); id >= c {
		t.Fatalf("ID %s made within d is not below the ceiling %s", id, c)
	}
	clock.Add(time.Millisecond)
	if id := mustNew(t, g); id < c {
		t.Fatalf("ceiling %s above an ID %s made after d", c, id)
	}
}

// stepCase is one layout and entropy size, for TestStepRuleEveryPath.
type stepCase struct {
	opts    []Option
	sid     uint64
	shift   uint   // position of the randomness
	top     uint64 // largest randomness
	stepMax uint64 // 2^(8n)-1
}

func stepCases() []stepCase {
	var cs []stepCase
	for n := 1; n <= 3; n++ {
		max := uint64(1)<<(8*n) - 1
		cs = append(cs, stepCase{[]Option{WithEntropy(n)}, 0, 0, 1<<RandomBits - 1, max})
		if n <= 2 {
			cs = append(cs, stepCase{[]Option{WithEntropy(n), WithSID(9)}, 9, SIDBits, 1<<ScalableRandomBits - 1, max})
		}
	}
	return cs
}

// id is the ID of millisecond ms with randomness rnd in c's layout.
func (c stepCase) id(ms int64, rnd uint64) uint64 {
	return uint64(ms)<<RandomBits | rnd<<c.shift | c.sid
}

// want is the step rule as docs/spec.md states it, for the draws 0 and
// 2^64-1 only: the step is 1 + ⌊r·(2^(8n)-1)/2^64⌋, so 1 and 2^(8n)-1;
// ok is false when the randomness would pass the top.
func (c stepCase) want(ms int64, rnd, r uint64) (id uint64, ok bool) {
	next := rnd + 1
	if r == math.MaxUint64 {
		next = rnd + c.stepMax
	}
	return c.id(ms, next), next <= c.top
}

// TestStepRuleEveryPath: every path that makes the next ID of a
// millisecond steps by the one rule (Generator.step), in both layouts and
// entropy sizes 1..3, at the bottom, middle and top of the randomness:
// New's general path, NewWait (which, past the top, waits for the next
// millisecond), NewAt, with the draws forced to 0 and 2^64-1; and New's
// common case, whose draw (the runtime's CSPRNG) cannot be forced, where a
// step from the top always overflows, a step with room for the largest
// always fits, and any other ID is one the rule allows.
func TestStepRuleEveryPath(t *testing.T) {
	const ms = 1_000_000
	at := DefaultEpoch().Time(ID(ms << RandomBits))
	for _, c := range stepCases() {
		name := fmt.Sprintf("%s/%v", map[bool]string{true: "scalable", false: "stand-alone"}[c.shift > 0], c.stepMax)
		for _, rnd := range []uint64{0, c.top / 2, c.top - 1, c.top} {
			for _, r := range []uint64{0, math.MaxUint64} {
				wantID, wantOK := c.want(ms, rnd, r)
				last := c.id(ms, rnd)
				for path, next := range map[string]func(g *Generator) (ID, error){
					"New":   func(g *Generator) (ID, error) { g.last.Store(last); return g.New() },
					"NewAt": func(g *Generator) (ID, error) { g.backfill.Store(last); return g.NewAt(at) },
					"NewWait": func(g *Generator) (ID, error) {
						g.last.Store(last)
						id, err := g.NewWait(context.Background())
						if id.Timestamp() == ms+1 && err == nil {
							return 0, ErrMonotonicOverflow // it waited: the millisecond was used up
						}
						return id, err
					},
				} {
					// The clock reads ms, then ms+1 from its second reading
					// on (NewWait reads it again once the millisecond is used up).
					var reads atomic.Int64
					clock := func() time.Time { return at.Add(time.Duration(min(reads.Add(1)-1, 1)) * time.Millisecond) }
					g := mustGen(t, append(c.opts, WithClock(clock), WithRandom(constSource(r)))...)
					id, err := next(g)
					if ok := err == nil; ok != wantOK || ok && uint64(id) != wantID || !ok && !errors.Is(err, ErrMonotonicOverflow) {
						t.Errorf("%s: %s from randomness %d, draw %#x: %s, %v; want %s, ok %v", name, path, rnd, r, id, err, ID(wantID), wantOK)
					}
				}
			}
			commonStep(t, name, c, rnd)
		}
	}
}

// commonStep checks New's common case from randomness rnd, at the clock's
// millisecond (retried when the clock moves on in between).
func commonStep(t *testing.T, name string, c stepCase, rnd uint64) {
	t.Helper()
	g := mustGen(t, c.opts...)
	if !g.common {
		t.Fatal("the default clock and randomness do not take the common path")
	}
	for range 100 {
		ms := g.now()
		last := c.id(ms, rnd)
		g.last.Store(last)
		id, err := g.New()
		if g.now() != ms {
			continue // the clock moved on: New may have seen a new millisecond
		}
		ok, d := err == nil, (uint64(id)&(1<<RandomBits-1))>>c.shift-rnd
		switch {
		case !ok && !errors.Is(err, ErrMonotonicOverflow):
			t.Errorf("%s: New from randomness %d: %v", name, rnd, err)
		case ok && (uint64(id)&^(1<<RandomBits-1)>>c.shift<<c.shift != last&^(1<<RandomBits-1)>>c.shift<<c.shift || d < 1 || d > c.stepMax || rnd+d > c.top):
			t.Errorf("%s: New from randomness %d made %s after %s, not a step the rule allows", name, rnd, id, ID(last))
		case ok && rnd == c.top, !ok && rnd+c.stepMax <= c.top:
			t.Errorf("%s: New from randomness %d: %s, %v: the rule says ok %v", name, rnd, id, err, !ok)
		}
		return
	}
	t.Skip("the clock moved on between every store and New: machine too busy")
}
