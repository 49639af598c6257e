package blocks

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/migrations"
)

// Source hands out IDs from blocks that the database made: it is a
// flake.Source. It is safe for concurrent use. Create it with
// [NewSource]; [Source.Close] it when done.
type Source struct {
	db    *sql.DB
	query string // the reservation, with the schema quoted in
	o     options

	ctx    context.Context // ends at Close: a reservation in flight stops
	cancel context.CancelFunc
	wg     sync.WaitGroup // the reservation in flight

	mu      sync.Mutex
	cur     block         // the IDs being handed out
	spare   block         // the next block, reserved ahead
	filling chan struct{} // non-nil while a reservation runs; closed when it ends
	err     error         // the last reservation's error, nil after a success
	backoff time.Duration // the pause after a failed reservation
	retryAt time.Time     // no reservation is sent before it (the pause)
	overdue time.Time     // when the current reservation passes WithTimeout
	running int           // reservations running: the current one, and one given up on
	ends    []int64       // blocks ended, not yet reported: the IDs each dropped
	closed  bool
	conn    *sql.Conn // the source's own connection, between reservations
	pooling int       // reservations waiting for a connection of the pool
	starved bool      // a reservation found the pool full, and has not yet ended
}

// block is a run of IDs, ascending, and when its IDs grow too old.
type block struct {
	ids     []flake.ID
	next    int
	ahead   time.Time // when it was asked for, plus half the validity (monotonic)
	expires time.Time // when it was asked for, plus the validity (monotonic)
}

// usable reports whether b has an ID left that is not too old at now.
func (b *block) usable(now time.Time) bool {
	return b.next < len(b.ids) && now.Before(b.expires)
}

var _ flake.Source = (*Source)(nil)

// NewSource returns a Source that reserves blocks through db, where the
// migrations (version 5 or later) installed ulid_flake_block. It does not
// touch the database: the first [Source.NewWait] reserves the first block.
// A nil db, or an option outside its limits, gives an error wrapping
// flake.ErrOption.
func NewSource(db *sql.DB, opts ...Option) (*Source, error) {
	if db == nil {
		return nil, optionError("NewSource(nil): want a *sql.DB")
	}
	o, err := newOptions(opts)
	if err != nil {
		return nil, err
	}
	s := &Source{db: db, o: o,
		query: "SELECT pg_catalog.array_to_string(" + quoteIdent(o.schema) + ".ulid_flake_block($1::pg_catalog.int4), ',')"}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// quoteIdent quotes a name for SQL, so that no setting or search_path
// changes which schema it names.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// NewWait returns a new ID: the next of the current block, unless it is
// used up or past its validity; then the block reserved ahead, or one
// reserved now. It waits for a block until ctx ends or [WithTimeout]
// passes, whichever comes first, retrying failed reservations; then it
// returns an error that wraps [ErrUnavailable], the context's error and
// the last reservation's. An install it cannot call gives an error
// wrapping migrations.ErrNotInstalled at once; a closed source, [ErrClosed]. An ID is
// never handed out twice.
func (s *Source) NewWait(ctx context.Context) (flake.ID, error) {
	s.mu.Lock()
	id, ok := s.take(time.Now())
	ends := s.pendingEnds()
	s.mu.Unlock()
	s.reportEnds(ends)
	if ok {
		return id, nil
	}
	var start time.Time
	if s.o.obs != nil {
		start = time.Now()
	}
	wctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	id, err := s.wait(wctx, ctx)
	s.flushEnds()
	s.waited(start, err)
	return id, err
}

// wait waits for reservations until one gives an ID or ctx ends; ctx is
// the caller's context, caller, bounded by WithTimeout.
func (s *Source) wait(ctx, caller context.Context) (flake.ID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.closed {
			return 0, ErrClosed
		}
		if id, ok := s.take(time.Now()); ok {
			return id, nil
		}
		s.giveUpOverdue(time.Now())
		done := s.reserve()
		until, stop := s.untilOverdue(ctx)
		s.mu.Unlock()
		select {
		case <-done:
		case <-until.Done():
		}
		stop()
		s.mu.Lock()
		if errors.Is(s.err, migrations.ErrNotInstalled) {
			return 0, s.err
		}
		if ctx.Err() != nil {
			return 0, s.unavailable(ctx.Err(), caller.Err() != nil)
		}
	}
}

// unavailable is the error of a wait that ended with cause: the caller's
// context's end, or else WithTimeout's. It names which, and a reservation
// waiting for a connection of a pool that has none free (with the fix),
// or else the last reservation's error, or the reservation still running.
// The caller holds s.mu.
func (s *Source) unavailable(cause error, callers bool) error {
	when := fmt.Sprintf("within WithTimeout(%v)", s.o.timeout)
	if callers {
		when = "before the caller's context ended"
	}
	advice := s.poolAdvice()
	switch {
	case s.filling != nil && (s.pooling > 0 || s.starved) && advice != "":
		return fmt.Errorf("%w %s: %w (a reservation waits for a connection: %s)", ErrUnavailable, when, cause, advice)
	case s.err != nil:
		return fmt.Errorf("%w %s: %w (last reservation: %w)", ErrUnavailable, when, cause, s.err)
	case s.filling != nil:
		return fmt.Errorf("%w %s: %w (a reservation is running, with no answer yet)", ErrUnavailable, when, cause)
	}
	return fmt.Errorf("%w %s: %w", ErrUnavailable, when, cause)
}

// take hands out the next ID, from the current block or else the spare
// one, dropping blocks used up or past their validity; it reserves the
// next block once the current one is half used or half its validity old,
// so that a
// caller at a low rate, whose blocks age out, rarely waits either. The
// caller holds s.mu.
func (s *Source) take(now time.Time) (flake.ID, bool) {
	if s.closed {
		return 0, false
	}
	if !s.cur.usable(now) {
		s.ended(s.cur)
		s.cur, s.spare = s.spare, block{}
		if !s.cur.usable(now) {
			s.ended(s.cur)
			s.cur = block{}
			return 0, false
		}
	}
	id := s.cur.ids[s.cur.next]
	s.cur.next++
	if s.spare.ids == nil && s.err == nil && (2*s.cur.next >= len(s.cur.ids) || !now.Before(s.cur.ahead)) {
		s.reserve()
	}
	return id, true
}

// reserve starts a reservation unless one runs, and returns the channel
// that its end closes. The caller holds s.mu.
func (s *Source) reserve() chan struct{} {
	if s.filling == nil {
		s.filling = make(chan struct{})
		s.running++
		start := time.Now()
		if start.Before(s.retryAt) {
			start = s.retryAt
		}
		s.overdue = start.Add(s.o.timeout)
		s.wg.Add(1)
		go s.fill(s.filling, start)
	}
	return s.filling
}

// giveUpOverdue gives up on the current reservation once it has run past
// WithTimeout (lib/pq stops no query once it is sent), so that a new one
// starts, unless one given up on still runs: at most two run. The caller
// holds s.mu.
func (s *Source) giveUpOverdue(now time.Time) {
	if s.filling != nil && s.running < 2 && !now.Before(s.overdue) {
		s.filling = nil
	}
}

// untilOverdue returns ctx, ending too when the current reservation runs
// past WithTimeout if another may then start. The caller holds s.mu.
func (s *Source) untilOverdue(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.running >= 2 {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, s.overdue)
}

// fill runs one reservation, sent at start, and keeps its block or its
// error, unless it was given up on: then its result is dropped. The
// observer hears of it after a waiting caller may go on, so that it may
// call NewWait.
func (s *Source) fill(done chan struct{}, start time.Time) {
	defer s.wg.Done()
	t := time.NewTimer(time.Until(start))
	select {
	case <-t.C:
	case <-s.ctx.Done():
		t.Stop()
	}
	sent := time.Now()
	b, err := s.fetch(done)
	s.mu.Lock()
	s.running--
	s.starved = false
	current := s.filling == done && !s.closed
	if current {
		s.keep(b, err)
	}
	if s.filling == done {
		s.filling = nil
	}
	close(done)
	ends := s.pendingEnds()
	s.mu.Unlock()
	if current {
		s.reserved(sent, len(b.ids), err)
	}
	s.reportEnds(ends)
}

// keep keeps a reservation's block, or its error; after an error the next
// reservation pauses (50 ms, doubling up to 1 s). The caller holds s.mu.
func (s *Source) keep(b block, err error) {
	s.err = err
	if err == nil {
		s.backoff = 0
		if s.cur.usable(time.Now()) {
			s.spare = b
		} else {
			s.ended(s.cur)
			s.cur = b
		}
	} else if !errors.Is(err, migrations.ErrNotInstalled) {
		s.backoff = min(max(2*s.backoff, 50*time.Millisecond), time.Second)
		s.retryAt = time.Now().Add(s.backoff)
	}
}

// fetch reserves one block in one round trip, for the reservation that
// done ends, on the source's own connection. Its IDs expire the validity
// after the call was sent: the database made them after that. A block
// that arrives expired is [ErrBlockTooOld].
func (s *Source) fetch(done chan struct{}) (block, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.o.timeout)
	defer cancel()
	conn, kept, err := s.acquire(ctx)
	if err != nil {
		return block{}, err
	}
	sent := time.Now()
	var list string
	err = conn.QueryRowContext(ctx, s.query, s.o.size).Scan(&list)
	if kept && errors.Is(err, driver.ErrBadConn) {
		// It broke while kept (a restart): another, as database/sql
		// retries a query on a broken connection of its pool.
		s.release(conn, false, done)
		if conn, _, err = s.acquire(ctx); err != nil {
			return block{}, err
		}
		sent = time.Now()
		err = conn.QueryRowContext(ctx, s.query, s.o.size).Scan(&list)
	}
	s.release(conn, err == nil, done)
	if err != nil {
		return block{}, classify(err)
	}
	ids, err := parseBlock(list, s.o.size)
	if err != nil {
		return block{}, err
	}
	if rtt := time.Since(sent); rtt >= s.o.validity {
		return block{}, fmt.Errorf("%w(%v): the round trip took %v; raise WithValidity above the round trip", ErrBlockTooOld, s.o.validity, rtt)
	}
	return block{ids: ids, ahead: sent.Add(s.o.validity / 2), expires: sent.Add(s.o.validity)}, nil
}

// classify wraps the errors that retrying cannot mend in
// migrations.ErrNotInstalled:
// SQLSTATE 42883 (no such function), 3F000 (no such schema), 42501 (no
// privilege), read from the driver's error (pgx's and lib/pq's have
// SQLState()).
func classify(err error) error {
	var pg interface{ SQLState() string }
	if errors.As(err, &pg) {
		switch pg.SQLState() {
		case "42883", "3F000", "42501":
			return fmt.Errorf("blocks: ulid_flake_block(integer) is not callable (%w): "+
				"migrate the database to version 5 or later (migrations.Migrate), and name its schema with WithSchema: %w",
				migrations.ErrNotInstalled, err)
		}
	}
	return err
}

// parseBlock reads the comma-separated IDs of a block of size n, which
// must be ascending.
func parseBlock(list string, n int) ([]flake.ID, error) {
	ids := make([]flake.ID, 0, n)
	for f := range strings.SplitSeq(list, ",") {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v <= 0 || (len(ids) > 0 && flake.ID(v) <= ids[len(ids)-1]) {
			return nil, fmt.Errorf("blocks: ulid_flake_block returned %.40q at position %d, not a positive ID above the one before it", f, len(ids))
		}
		ids = append(ids, flake.ID(v))
	}
	if len(ids) != n {
		return nil, fmt.Errorf("blocks: ulid_flake_block returned %d IDs for a block of %d", len(ids), n)
	}
	return ids, nil
}

// acquire returns the source's own connection, kept since an earlier
// reservation (kept is true), or, when it has none (the first
// reservation, one after an error, one while a reservation given up on
// still holds it), one taken from the pool: an error that ends a wait for
// the pool names the pool and the fix.
func (s *Source) acquire(ctx context.Context) (conn *sql.Conn, kept bool, err error) {
	s.mu.Lock()
	conn = s.conn
	s.conn = nil
	if conn == nil {
		s.pooling++
	}
	s.mu.Unlock()
	if conn != nil {
		return conn, true, nil
	}
	conn, err = s.db.Conn(ctx)
	s.mu.Lock()
	s.pooling--
	advice := s.poolAdvice()
	if err != nil && advice != "" {
		s.starved = true // until fill has kept the error
	}
	s.mu.Unlock()
	if err != nil && advice != "" {
		return nil, false, fmt.Errorf("%w (%s)", err, advice)
	}
	return conn, false, err
}

// release keeps conn as the source's own once its reservation (the one
// that done ends) succeeded, unless that reservation was given up on, the
// source was closed, or the pool holds only one connection, which the
// source would then take from its callers; else it gives conn back to the
// pool, which drops it if it is broken.
func (s *Source) release(conn *sql.Conn, ok bool, done chan struct{}) {
	s.mu.Lock()
	keep := ok && s.filling == done && !s.closed && s.conn == nil && s.db.Stats().MaxOpenConnections != 1
	if keep {
		s.conn = conn
	}
	s.mu.Unlock()
	if !keep {
		conn.Close()
	}
}

// poolAdvice says, when every connection of a bounded pool is in use, that
// the source needs one beside its callers', and the fix; else "". The
// caller holds s.mu.
func (s *Source) poolAdvice() string {
	st := s.db.Stats()
	if st.MaxOpenConnections == 0 || st.InUse < st.MaxOpenConnections {
		return ""
	}
	return fmt.Sprintf("all %d connections of the pool (SetMaxOpenConns(%d)) are in use: the source needs one beside "+
		"those its callers hold, as a transaction that makes IDs does; raise SetMaxOpenConns, or give NewSource a *sql.DB of its own",
		st.InUse, st.MaxOpenConnections)
}

// Close stops the source: the reservations in flight are cancelled, the
// IDs left are dropped (never handed out), its connection goes back to
// the pool, and NewWait returns [ErrClosed].
// It waits at most 100 ms for a reservation to end (lib/pq does not stop a
// query the server does not answer; its result is dropped when it comes).
// It returns nil, and may be called more than once.
func (s *Source) Close() error {
	s.mu.Lock()
	s.closed = true
	s.cur, s.spare = block{}, block{}
	conn := s.conn
	s.conn = nil
	s.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
	s.cancel()
	ended := make(chan struct{})
	go func() { s.wg.Wait(); close(ended) }()
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-ended:
	case <-t.C: // a reservation stuck in a driver that ignores ctx ends later; its result is dropped
	}
	return nil
}

// closeGrace is how long Close waits for a reservation in flight to end.
const closeGrace = 100 * time.Millisecond
