package blocks

import (
	"errors"
	"time"
)

// Observer receives a [Source]'s events ([WithObserver]), for metrics
// (docs/observability.md). The OpenTelemetry adapter,
// github.com/ulidflake/ulidflake/otelulidflake, is one, and also a
// flake.Observer and a sidlease.Observer: one value for every source. The methods take
// only the standard library's types, so that an adapter implements them
// without importing this package.
//
// They are called synchronously, possibly from many goroutines at once,
// and never with the source's lock held, so they may call NewWait: they must
// be safe for concurrent use and return quickly.
type Observer interface {
	// ObserveBlockReserve: a reservation ended: ids IDs in the block,
	// after roundTrip; err when it failed (ids 0). A reservation that
	// Close cut short, or that was given up on, is not reported.
	ObserveBlockReserve(ids int64, roundTrip time.Duration, err error)
	// ObserveBlockWait: a call of NewWait found no ID in hand and
	// waited for a block. wait: how long; err: the error it returned, nil
	// when it got an ID. A wait that found the source closed is not
	// reported.
	ObserveBlockWait(wait time.Duration, err error)
	// ObserveBlockEnd: the source stopped handing out a block. dropped:
	// the IDs left in it, dropped because it expired (its WithValidity
	// passed); 0 when it was used up. Blocks that Close drops are not
	// reported.
	ObserveBlockEnd(dropped int64)
}

// WithObserver sends the source's events to o: each reservation, each
// wait for a block, and each block it stopped handing out ([Observer]).
// Without it, or with a nil o, the source reports nothing and pays
// nothing for it.
func WithObserver(o Observer) Option { return func(c *options) { c.obs = o } }

// reserved reports a reservation that started at sent and gave n IDs or
// err. fill calls it for no reservation that Close cut short or that was
// given up on.
func (s *Source) reserved(sent time.Time, n int, err error) {
	if s.o.obs != nil {
		s.o.obs.ObserveBlockReserve(int64(n), time.Since(sent), err)
	}
}

// waited reports a wait for a block that started at start and ended with
// err; not one that found the source closed.
func (s *Source) waited(start time.Time, err error) {
	if s.o.obs != nil && !errors.Is(err, ErrClosed) {
		s.o.obs.ObserveBlockWait(time.Since(start), err)
	}
}

// ended notes that the source stopped handing out b, used up or
// expired, to report once s.mu is let go (so that Observe may call NewWait);
// not an empty b. The caller holds s.mu.
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
		s.o.obs.ObserveBlockEnd(n)
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
