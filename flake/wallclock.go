package flake

import (
	"sync/atomic"
	"time"
)

// monoStart is the origin of the monotonic readings of wallClock.
var monoStart = time.Now()

// wallSync is how often, in monotonic time, a wallClock reads the wall
// clock again.
const wallSync = 100 * time.Millisecond

// maxSkew is how far apart in monotonic time the readings that bracket a
// wall-clock reading may be for its offset to be kept (see sync).
const maxSkew = 20 * time.Microsecond

// wallClock is the default clock of a generator: the wall clock (time.Now),
// read again whenever wallSync of monotonic time has passed since the last
// reading, and the monotonic clock's elapsed time added in between. Reading
// the monotonic clock alone costs about half of time.Now, which reads both.
// Both clocks run at the same rate (NTP slews them alike); a step of the
// wall clock (set by hand, or stepped by NTP) is seen at the next wall
// reading, within wallSync of the step, and then handled as any clock step
// is: see [Generator].
//
// wallSync was a millisecond: then the first ID after any pause of a
// millisecond or more read the wall clock again, with cold caches; at
// 100 ms, a burst after a short pause reads the monotonic clock once per
// ID, as snowflake does. A re-read costs one time.Now and one monotonic
// reading (see sync), in New's own code.
type wallClock struct {
	offset atomic.Int64 // wall − monotonic, in ns, at the last wall reading
	synced atomic.Int64 // the monotonic reading (since monoStart) then
}

// readWall reads the wall clock and the monotonic clock (since monoStart),
// in ns, as time.Now does.
func readWall() (wall, mono int64) {
	t := time.Now()
	return t.UnixNano(), int64(t.Sub(monoStart))
}

// mono reads the monotonic clock, in ns since monoStart.
func mono() int64 { return int64(time.Since(monoStart)) }

// stale reports whether the offset is due for a re-read at the monotonic
// reading m. A reading older than the last re-read (another goroutine
// re-read in between) is fresh.
func (c *wallClock) stale(m int64) bool {
	return m-c.synced.Load() >= int64(wallSync)
}

// nowNs returns the wall time in Unix nanoseconds.
func (c *wallClock) nowNs(read func() (wall, mono int64)) int64 {
	m := mono()
	if c.stale(m) {
		wall, at := read()
		c.sync(wall, at, mono()-m)
		return wall
	}
	return c.offset.Load() + m
}

// sync keeps the offset of wall, a wall-clock reading taken with the
// monotonic reading at, unless it may be off by more than maxSkew. time.Now
// reads the wall and the monotonic clock one after the other; if the thread
// is held up between the two, their offset is off by the delay. The caller
// brackets the reading with two monotonic readings, span apart, which bounds
// that error; when it is too large, sync keeps the last offset, and the
// next call tries again.
func (c *wallClock) sync(wall, at, span int64) {
	if span < int64(maxSkew) {
		c.offset.Store(wall - at)
		c.synced.Store(at)
	}
}
