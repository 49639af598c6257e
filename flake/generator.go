package flake

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
	_ "unsafe" // runtimeRand
)

// Generator makes IDs that are strictly increasing, whatever the clock
// does. It is safe for concurrent use, and New allocates nothing.
//
// The first ID of a millisecond starts at a random point in the lower half
// of the randomness range; each further ID in that millisecond adds a random
// step of 1 to 2^(8n)-1 (n is the entropy size), so consecutive IDs stay
// ordered without being predictable. When the randomness would overflow,
// [Generator.New] returns [ErrMonotonicOverflow] and [Generator.NewWait]
// waits for the next millisecond. Because the start is in the lower half,
// the upper half is always left for the steps: with the default entropy size
// of 1 byte a millisecond holds at least [MinBurst] IDs stand-alone (2,056)
// and [ScalableMinBurst] scalable (64), and about 6,100 and 190 on average.
//
// The clock is the wall clock (time.Now), read again once 100 ms of
// monotonic time have passed since the last reading; in between, the
// generator adds the monotonic clock's elapsed time, which costs half a
// wall-clock read (see [WithClock] to replace it). A step of the wall clock
// is therefore seen up to 100 ms late.
//
// If the clock steps back, the generator keeps counting in the last
// millisecond it used (a logical clock); the IDs' timestamps then run ahead
// of the clock until it catches up. The logical clock runs ahead by at most
// the lead set by [WithMaxLead] (default [DefaultMaxLead]): when the clock
// reads further behind than that (it stepped back a long way, or an earlier
// reading was far in the future), New and NewWait return [ErrClockBehind]
// rather than make IDs stamped with the wrong time or out of order; fix the
// clock, then call [Generator.Reset] (or make a new generator).
type Generator struct {
	// What New reads in its common case comes first, in 64 bytes: one
	// cache line to miss after a pause, not three.
	last    atomic.Uint64 // the last ID made, 0 before the first (never an ID)
	wall    wallClock
	epoch   Epoch  // the one [WithEpoch] gave, or the default
	rndMask uint64 // largest randomness
	stepMax uint64 // largest step within a millisecond: 2^(8n)-1
	sid     uint64
	shift   uint32 // position of the randomness: 0 stand-alone, 5 scalable (masked with 63 where it shifts: no test for shifts ≥ 64)
	common  bool   // the wall clock and the runtime's randomness: New's common case applies

	movedOn  atomic.Int64     // the monotonic millisecond in which NewWait last moved the logical clock on
	backfill atomic.Uint64    // the last ID NewAt made, 0 before the first: apart from last
	clock    func() time.Time // nil: wall, the default clock
	src      rand.Source      // nil: the runtime's
	srcMu    sync.Mutex       // serialises calls to src
	maxLead  int64            // ms the logical clock may run ahead of the clock
	obs      Observer         // nil: none, see WithObserver
	lead     atomic.Int64     // ms the last reading behind the last ID was behind it (for obs)
}

// Capacity floors with the default entropy size of 1 byte: a generator
// makes at least this many IDs in one millisecond before
// [ErrMonotonicOverflow], whatever its random start (half the randomness
// range divided by the largest step, 255).
const (
	MinBurst         = (1 << (RandomBits - 1)) / 255         // 2,056, stand-alone
	ScalableMinBurst = (1 << (ScalableRandomBits - 1)) / 255 // 64, scalable
)

// DefaultMaxLead is how far a generator's logical clock may run ahead of the
// clock, unless [WithMaxLead] says otherwise.
const DefaultMaxLead = 10 * time.Second

// Option configures a [Generator].
type Option func(*config) error

type config struct {
	scalable bool
	sid      int
	epoch    Epoch
	entropy  int
	clock    func() time.Time
	src      rand.Source
	maxLead  time.Duration
	obs      Observer
}

// WithSID selects the scalable layout with scalability id sid (0..31): 15
// bits of randomness and the SID in the low 5 bits. Generators with distinct
// SIDs never make the same ID.
func WithSID(sid int) Option {
	return func(c *config) error {
		if sid < 0 || sid > MaxSID {
			return fmt.Errorf("%w: WithSID(%d): want 0..%d", ErrOption, sid, MaxSID)
		}
		c.scalable, c.sid = true, sid
		return nil
	}
}

// WithEpoch sets the epoch the timestamps count from (default
// [DefaultEpoch]).
func WithEpoch(e Epoch) Option {
	return func(c *config) error { c.epoch = e; return nil }
}

// WithEntropy sets the entropy size n in bytes, the Ulid-Flake spec's
// entropy_size: each ID within a millisecond adds a random step of 1 to
// 2^(8n)-1 to the randomness. Larger steps are less predictable but use up
// a millisecond sooner. 1..3 stand-alone, 1..2 scalable; default 1. It is
// a width, not what the steps are drawn from: oklog/ulid's entropy reader
// is [WithRandom] here.
func WithEntropy(n int) Option {
	return func(c *config) error { c.entropy = n; return nil }
}

// WithMaxLead sets how far the logical clock may run ahead of the clock
// (default [DefaultMaxLead], at least 1 ms): the clock stepping back by up to
// d is absorbed (IDs carry the last time used until the clock catches up);
// further back, New and NewWait return [ErrClockBehind].
func WithMaxLead(d time.Duration) Option {
	return func(c *config) error {
		if d < time.Millisecond {
			return fmt.Errorf("%w: WithMaxLead(%s): want at least 1ms", ErrOption, d)
		}
		c.maxLead = d
		return nil
	}
}

// WithClock replaces the wall clock (see [Generator]), so that tests can
// move time. The generator then calls now for every ID.
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return fmt.Errorf("%w: WithClock(nil): want a clock", ErrOption)
		}
		c.clock = now
		return nil
	}
}

// WithRandom replaces what the random steps are drawn from (by default the
// runtime's ChaCha8Rand CSPRNG, math/rand/v2's top-level rand.Source,
// seeded from the operating system, with a state per thread): the
// counterpart of oklog/ulid's entropy reader ([WithEntropy] is the step's
// width). The generator serialises calls to it. Use it in tests;
// production IDs need an unpredictable src.
func WithRandom(src rand.Source) Option {
	return func(c *config) error {
		if src == nil {
			return fmt.Errorf("%w: WithRandom(nil): want a rand.Source", ErrOption)
		}
		c.src = src
		return nil
	}
}

// NewGenerator returns a generator configured by opts: stand-alone layout,
// [DefaultEpoch], entropy size 1, the wall clock and the runtime's ChaCha8Rand
// CSPRNG unless told otherwise. It returns [ErrOption] for an invalid
// option.
func NewGenerator(opts ...Option) (*Generator, error) {
	c := config{entropy: 1, maxLead: DefaultMaxLead}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: option %d is nil", ErrOption, i)
		}
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	g := &Generator{clock: c.clock, epoch: c.epoch, src: c.src, maxLead: c.maxLead.Milliseconds(), obs: c.obs}
	g.common = c.clock == nil && c.src == nil
	g.wall.synced.Store(math.MinInt64 / 2) // no offset yet
	g.wall.nowNs(readWall)
	maxEntropy := 3
	g.rndMask = 1<<RandomBits - 1
	if c.scalable {
		maxEntropy = 2
		g.shift = SIDBits
		g.rndMask = 1<<ScalableRandomBits - 1
		g.sid = uint64(c.sid)
	}
	if c.entropy < 1 || c.entropy > maxEntropy {
		layout := "stand-alone"
		if c.scalable {
			layout = "scalable"
		}
		return nil, fmt.Errorf("%w: WithEntropy(%d): want 1..%d for the %s layout", ErrOption, c.entropy, maxEntropy, layout)
	}
	g.stepMax = 1<<(8*c.entropy) - 1
	return g, nil
}

// now reads the clock as milliseconds since the epoch.
func (g *Generator) now() int64 {
	if g.clock != nil {
		return g.clock().UnixMilli() - g.epoch.UnixMilli()
	}
	ns := g.wall.nowNs(readWall)
	ms := ns / 1e6
	if ns%1e6 < 0 {
		ms-- // floor, as UnixMilli does
	}
	return ms - g.epoch.UnixMilli()
}

// nsIntoMs is how far into its millisecond the clock reads.
func (g *Generator) nsIntoMs() time.Duration {
	if g.clock != nil {
		return time.Duration(g.clock().Nanosecond() % 1e6)
	}
	return time.Duration((g.wall.nowNs(readWall)%1e6 + 1e6) % 1e6)
}

// New returns the next ID. It returns [ErrMonotonicOverflow], leaving the
// generator's state unchanged, when this millisecond's randomness is used up,
// [ErrClockBehind] when the clock reads further behind the last ID's time
// than the generator's max lead, and [ErrTimeRange] when the clock is before
// the epoch or past its range.
func (g *Generator) New() (ID, error) {
	if g.common {
		// The common case, in one function and one cache line of state, so
		// that a call after a pause, when caches are cold, touches little:
		// the random source is the runtime's, and the ID follows last with
		// no error to check. The wall clock's offset is re-read here when
		// due (inline: a call out, to code elsewhere, measured slower on a
		// first call after a pause, when about every other one re-reads).
		// The rest (first ID, clock behind, time range, a lost
		// compare-and-swap) is next's, with a new draw.
		m := mono()
		ns := g.wall.offset.Load() + m
		if g.wall.stale(m) {
			t := time.Now()
			ns = t.UnixNano()
			g.wall.sync(ns, int64(t.Sub(monoStart)), mono()-m)
		}
		r := runtimeRand()
		last := g.last.Load()
		if ns >= 0 && last != 0 {
			ms := int64(last >> RandomBits)
			now := int64(uint64(ns)/1e6) - g.epoch.UnixMilli() // ns ≥ 0: division is floor, as in now()
			var id uint64
			if now > ms && now <= MaxTimestamp {
				id = g.start(now, r)
			} else if now == ms {
				var ok bool
				if id, ok = g.step(last, r); !ok {
					return g.overflowed() // as after: one draw a call
				}
			}
			if id != 0 && g.last.CompareAndSwap(last, id) {
				return ID(id), nil
			}
		}
	}
	return g.newSlow()
}

// NewWait is like [Generator.New] but, instead of returning
// [ErrMonotonicOverflow], waits for the next millisecond. It returns the
// context's error if ctx ends first. When the clock has stepped back behind
// the generator's logical clock by more than a millisecond, it moves the
// logical clock on by one millisecond for each millisecond that passes
// instead of waiting for the clock to catch up: the logical clock's lead
// then stays what the step made it, and never grows. A lead beyond the max
// lead returns [ErrClockBehind] at once, never waited out.
func (g *Generator) NewWait(ctx context.Context) (ID, error) {
	if g.obs == nil {
		return g.newWait(ctx, nil)
	}
	var since time.Time
	id, err := g.newWait(ctx, &since)
	if !since.IsZero() {
		g.observe(EventOverflowWait, time.Since(since), err)
	}
	return id, err
}

// newWait is NewWait; it sets *since, unless since is nil, to when it
// first waits.
func (g *Generator) newWait(ctx context.Context, since *time.Time) (ID, error) {
	for waited := false; ; waited = true {
		id, err := g.next(g.now())
		if err == ErrMonotonicOverflow {
			id, err = g.aheadOfClock(waited)
		}
		if err != ErrMonotonicOverflow {
			return id, err
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if since != nil && since.IsZero() {
			*since = time.Now()
		}
		// Sleep until the clock reaches the next millisecond, then retry.
		t := time.NewTimer(time.Millisecond - g.nsIntoMs())
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-t.C:
		}
	}
}

// aheadOfClock is NewWait's step when a millisecond is used up. With a
// fresh clock reading behind the logical clock (the clock stepped back), it
// moves the logical clock on by one millisecond, once per millisecond of
// real (monotonic) time; otherwise, or when this millisecond has moved it
// on already, it returns ErrMonotonicOverflow, and NewWait waits for the
// clock. A lead of one millisecond moves the logical clock on only once the
// caller has waited: it is what concurrent callers see at a millisecond's
// edge, and moving on there would run ahead of a correct clock.
func (g *Generator) aheadOfClock(waited bool) (ID, error) {
	// The last ID first, then the clock: a reading taken before the load
	// (a thread held up between the two while others moved on to the next
	// millisecond) would look behind the logical clock and move it on,
	// ahead of a correct clock.
	last := g.last.Load()
	now := g.now()
	if lead := lastMs(last) - now; lead < 1 || lead == 1 && !waited {
		return 0, ErrMonotonicOverflow
	}
	if lastMs(last)+1-now > g.maxLead {
		return 0, g.behind(now, last)
	}
	tick := int64(time.Since(monoStart) / time.Millisecond)
	if moved := g.movedOn.Load(); tick <= moved || !g.movedOn.CompareAndSwap(moved, tick) {
		return 0, ErrMonotonicOverflow
	}
	return g.next(lastMs(last) + 1)
}

// next makes the ID for the clock reading now, and makes it the last one,
// unless it returns an error.
func (g *Generator) next(now int64) (ID, error) {
	for {
		last := g.last.Load()
		id, err := g.after(last, now)
		if err != nil || g.last.CompareAndSwap(last, uint64(id)) {
			return id, err
		}
	}
}

// lastMs returns the timestamp of the last ID, math.MinInt64 if none.
func lastMs(last uint64) int64 {
	if last == 0 {
		return math.MinInt64
	}
	return int64(last >> RandomBits)
}

// after returns the ID that follows last at the clock reading now.
func (g *Generator) after(last uint64, now int64) (ID, error) {
	if ms := lastMs(last); now <= ms {
		// Same millisecond, or the clock stepped back: count on in the last
		// millisecond, unless the clock is too far behind it.
		if g.obs != nil && now < ms {
			g.noteBehind(ms - now)
		}
		if ms-now > g.maxLead {
			return 0, g.behind(now, last)
		}
		id, ok := g.step(last, g.random())
		if !ok {
			return 0, ErrMonotonicOverflow
		}
		return ID(id), nil
	}
	if now < 0 || now > MaxTimestamp {
		return 0, fmt.Errorf("%w: clock reads %s, not between %s and %s", ErrTimeRange,
			g.format(now), g.epoch, g.format(MaxTimestamp))
	}
	return ID(g.start(now, g.random())), nil
}

// start and step are the step rule, the one home of it for New, NewWait
// and NewAt; both inline, so New's common case pays no call for them.

// start returns the first ID of the millisecond ms, drawn with the random
// bits r: its randomness is in the lower half of the range, so that the
// upper half is left for the steps. It is never the zero ID, even at the
// epoch's first millisecond.
func (g *Generator) start(ms int64, r uint64) uint64 {
	r &= g.rndMask >> 1
	if ms == 0 && r == 0 && g.sid == 0 {
		r = 1
	}
	return uint64(ms)<<RandomBits | r<<(g.shift&63) | g.sid
}

// step returns the ID that follows last in last's millisecond, drawn with
// the random bits r: last's randomness plus 1 plus a step uniform in
// [0, 2^(8n)-1), so a step of 1 to 2^(8n)-1 (n is the entropy size), and
// the SID kept. ok is false when that passes the largest randomness (the
// sum carries into the timestamp): the millisecond is used up.
func (g *Generator) step(last, r uint64) (id uint64, ok bool) {
	s, _ := bits.Mul64(r, g.stepMax)
	id = last + (1+s)<<(g.shift&63)
	return id, id>>RandomBits == last>>RandomBits
}

// random returns 64 random bits: from the runtime's ChaCha8 generator
// (see runtimeRand), or from the source given to [WithRandom].
//
// A step takes a whole draw although it needs 8n bits. Serving eight steps
// from one draw, through a pool of bits in the generator that goroutines
// take by compare-and-swap (no two may share bits), measured slower: 1.14×
// (1.11–1.17) snowflake's time per ID in bursts against this draw's 1.04×
// (1.02–1.05), the two interleaved (benchmarks, BenchmarkGenerateBurst,
// 2026-12-06), and 1.19–1.21× against 1.07–1.10× with 32 MiB written
// before each burst to evict the caches. The runtime's draw is per thread
// and takes no atomic operation; the pool's compare-and-swap costs more
// than the draws it saves, whether the caches are warm or cold.
func (g *Generator) random() uint64 {
	if g.src == nil {
		return runtimeRand()
	}
	return g.lockedRandom()
}

// runtimeRand is the runtime's ChaCha8Rand CSPRNG, seeded from the
// operating system, with a state per thread and no lock: the source
// behind math/rand/v2's top-level functions, which call it through a
// *rand.Rand and an interface. Called directly, as the runtime allows
// ("used via linkname from other packages"), it is the same stream, and
// the first call after a pause touches three fewer pages of memory
// (math/rand/v2's global, the interface table and the method): with caches
// and TLB cold that was 1.3µs, more than half of what snowflake's whole
// first call costs.
//
//go:linkname runtimeRand runtime.rand
func runtimeRand() uint64

// lockedRandom draws from the source given to [WithRandom].
func (g *Generator) lockedRandom() uint64 {
	g.srcMu.Lock()
	defer g.srcMu.Unlock()
	return g.src.Uint64()
}

func (g *Generator) behind(now int64, last uint64) error {
	if g.obs != nil {
		g.observe(EventClockBehind, time.Duration(lastMs(last)-now)*time.Millisecond, nil)
	}
	return fmt.Errorf("%w: the clock reads %s, %s behind the last ID's time %s (max lead %s): "+
		"the clock stepped back or an earlier reading was wrong; fix the clock, then call Reset or make a new generator",
		ErrClockBehind, g.format(now), time.Duration(lastMs(last)-now)*time.Millisecond, g.format(lastMs(last)),
		time.Duration(g.maxLead)*time.Millisecond)
}

// format prints the time of ms since the generator's epoch, also when it is
// out of the epoch's range (a clock reading; Epoch.Time takes an ID).
func (g *Generator) format(ms int64) string {
	return time.UnixMilli(g.epoch.UnixMilli() + ms).UTC().Format(RFC3339Milli)
}

// Ceiling returns an ID above every ID the generator has made, and every ID
// it makes until its clock has moved on by d: the first ID of the
// millisecond after its clock reading (or its logical clock, if that is
// ahead) plus d. It is what a holder of a SID must record to hand the SID
// on: the next holder makes IDs only above it, so IDs under one SID never
// repeat across holders. Package sidlease does it with PostgreSQL; call
// it to hand SIDs on through your own coordination (etcd, Consul, a
// deploy tool), recording Ceiling(d) before the generator may make IDs
// for d more.
func (g *Generator) Ceiling(d time.Duration) ID {
	ms := max(g.now(), lastMs(g.last.Load())) + d.Milliseconds() + 1
	if ms > MaxTimestamp {
		return ID(math.MaxInt64)
	}
	return ID(uint64(max(ms, 0)) << RandomBits)
}

// Epoch returns the epoch the generator's IDs count from: the one
// [WithEpoch] gave, or [DefaultEpoch]. Read an ID's time with
// g.Epoch().Time(id).
func (g *Generator) Epoch() Epoch { return g.epoch }

// Reset makes the generator forget its last ID: the next ID follows the
// clock as it reads then. Call it after [ErrClockBehind], once the clock is
// right: IDs made after Reset may sort before IDs made before it (those
// carried a time the clock no longer reads), and could repeat one of them
// only by drawing the same random bits in the same millisecond.
func (g *Generator) Reset() {
	g.last.Store(0)
	g.lead.Store(0)
}

var defaultGenerator, _ = NewGenerator()

// New returns an ID from a default stand-alone generator shared by the
// process. See [Generator.New].
func New() (ID, error) { return defaultGenerator.New() }

// NewWait returns an ID from the default generator, waiting for the next
// millisecond rather than failing with [ErrMonotonicOverflow]. See
// [Generator.NewWait].
func NewWait(ctx context.Context) (ID, error) { return defaultGenerator.NewWait(ctx) }

// NewAt returns an ID for the time t from the default generator. See
// [Generator.NewAt].
func NewAt(t time.Time) (ID, error) { return defaultGenerator.NewAt(t) }
