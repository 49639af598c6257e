package blocks

import (
	"errors"
	"time"

	"github.com/ulidflake/ulidflake/flake"
)

// WithObserver sends the source's events to o (docs/observability.md):
// each reservation, as flake.EventBlockReserve (Count: the IDs in the
// block; Duration: the round trip; Err when it failed, a reservation that
// Close cut short excepted), and each call of New or NewWait that found no
// ID in hand and waited for a block, as flake.EventRefillWait (Duration:
// how long it waited; Err: the error it returned, nil when it got an ID),
// and each block it stopped handing out, as flake.EventBlockEnd (Count:
// the IDs left in it, dropped because it aged out past MaxAge; 0 when it
// was used up), not those Close drops. Events carry SID -1 and no
// namespace. Without it, or with a nil o, the source reports nothing and
// pays nothing for it.
func WithObserver(o flake.Observer) Option { return func(c *options) { c.obs = o } }

// reserved reports a reservation that started at sent and gave n IDs or
// err. fill calls it for no reservation that Close cut short or that was
// given up on.
func (s *Source) reserved(sent time.Time, n int, err error) {
	if s.o.obs != nil {
		s.o.obs.Observe(flake.Event{Kind: flake.EventBlockReserve, SID: -1, Count: int64(n), Duration: time.Since(sent), Err: err})
	}
}

// waited reports a wait for a block that started at start and ended with
// err; not one that found the source closed.
func (s *Source) waited(start time.Time, err error) {
	if s.o.obs != nil && !errors.Is(err, ErrClosed) {
		s.o.obs.Observe(flake.Event{Kind: flake.EventRefillWait, SID: -1, Duration: time.Since(start), Err: err})
	}
}

// ended notes that the source stopped handing out b, used up or aged
// out, to report once s.mu is let go (so that Observe may call New); not
// an empty b. The caller holds s.mu.
func (s *Source) ended(b block) {
	if s.o.obs != nil && b.ids != nil {
		s.ends = append(s.ends, int64(len(b.ids)-b.next))
	}
}

// pendingEnds takes the ends noted and not yet reported. The caller holds
// s.mu.
func (s *Source) pendingEnds() []int64 {
	ends := s.ends
	s.ends = nil
	return ends
}

// reportEnds reports ends, each the IDs a block dropped. The caller does
// not hold s.mu.
func (s *Source) reportEnds(ends []int64) {
	for _, n := range ends {
		s.o.obs.Observe(flake.Event{Kind: flake.EventBlockEnd, SID: -1, Count: n})
	}
}

// flushEnds reports the ends noted and not yet reported.
func (s *Source) flushEnds() {
	if s.o.obs != nil {
		s.mu.Lock()
		ends := s.pendingEnds()
		s.mu.Unlock()
		s.reportEnds(ends)
	}
}
