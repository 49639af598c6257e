package sidlease

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake/flake"
)

// db runs single statements, in the simple protocol where it can choose.
type db interface {
	queryRow(ctx context.Context, q string, args ...any) interface{ Scan(...any) error }
	exec(ctx context.Context, q string, args ...any) (int64, error)
}

type poolDB struct{ p *pgxpool.Pool }

func (d poolDB) queryRow(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
	return d.p.QueryRow(ctx, q, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
}

func (d poolDB) exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := d.p.Exec(ctx, q, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	return tag.RowsAffected(), err
}

type sqlDB struct{ d *sql.DB }

func (d sqlDB) queryRow(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
	return d.d.QueryRowContext(ctx, q, args...)
}

func (d sqlDB) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := d.d.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Lease is a SID held in PostgreSQL and the generator that uses it. It is
// safe for concurrent use.
type Lease struct {
	namespace string
	holder    string
	db        db
	opts      options
	table     string // quoted, schema-qualified
	role      string // the role that runs the statements, once setup knows it

	mu         sync.Mutex
	sid        int
	token      int64
	gen        *flake.Generator
	validUntil time.Time     // monotonic; zero when not held
	ceiling    flake.ID      // IDs are below it: set by the last renewal
	floor      atomic.Int64  // IDs are above it: set by a claim, and when an ID reached the ceiling
	ahead      time.Duration // the clock's lead on the server's at the last renewal
	cause      error         // why the lease is not held, when known
	ready      chan struct{} // closed while the lease is held
	readyOpen  bool
	closed     bool

	stop chan struct{}
	done chan struct{}
}

// Acquire takes a free SID of namespace through pool, waits as the package
// documentation says (V + MaxClockAhead when the clocks agree), and returns
// the lease. It returns [ErrNoFreeSID], naming the namespace, when all 32
// are held; flake.ErrOption for an option out of its limits;
// [ErrLeaseTable] for a lease table it cannot trust, or cannot create, or
// that the name alone would find elsewhere for this role (see the package
// documentation, "The lease table");
// [ErrMesh] on a database that subscribes to another node;
// [ErrClockAhead] for a clock too far ahead of the server's, and
// [ErrClockBehindFloor] for one too far behind the SID's floor. A claim
// that expires before Acquire proves it (a pause longer than 2V +
// MaxClockAhead, on a busy machine) is made again, up to 5 times, then
// [ErrLeaseLost]. A connection error (a
// restart or failover ending the session, SQLSTATE 57P01 or class 08) is
// returned as it is, wrapped: call Acquire again. The lease runs its
// statements on the pool, in the simple protocol, so any pooler in front
// of the server works.
func Acquire(ctx context.Context, pool *pgxpool.Pool, namespace string, opts ...Option) (*Lease, error) {
	if pool == nil {
		return nil, optionError(nil, "nil pool")
	}
	return acquire(ctx, poolDB{pool}, namespace, opts)
}

// AcquireDB is [Acquire] for database/sql. Behind a transaction pooler,
// open db so that it prepares no named statements (pgx/v5/stdlib:
// default_query_exec_mode=simple_protocol in the DSN; lib/pq prepares
// unnamed ones and works as it is).
func AcquireDB(ctx context.Context, db *sql.DB, namespace string, opts ...Option) (*Lease, error) {
	if db == nil {
		return nil, optionError(nil, "nil *sql.DB")
	}
	return acquire(ctx, sqlDB{db}, namespace, opts)
}

func acquire(ctx context.Context, d db, namespace string, opts []Option) (*Lease, error) {
	o, err := newOptions(namespace, opts)
	if err != nil {
		return nil, err
	}
	if err := checkGenerator(o.genOpts); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	exe, _ := os.Executable()
	l := &Lease{
		namespace: namespace,
		holder:    fmt.Sprintf("%s pid %d %s", host, os.Getpid(), filepath.Base(exe)),
		db:        d,
		opts:      o,
		ready:     make(chan struct{}),
		readyOpen: true,
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	l.table = pgx.Identifier{o.schema, tableName}.Sanitize()
	if err := l.setup(ctx); err != nil {
		return nil, err
	}
	if err := l.takeRetrying(ctx); err != nil {
		return nil, err
	}
	go l.run()
	return l, nil
}

// newGenerator makes the generator of a SID with the options of
// WithGeneratorOptions, in the scalable layout.
func newGenerator(opts []flake.Option, sid int) (*flake.Generator, error) {
	g, err := flake.NewGenerator(append(slices.Clone(opts), flake.WithSID(sid))...)
	if err != nil {
		return nil, optionError(err, "WithGeneratorOptions")
	}
	return g, nil
}

// checkGenerator refuses, before any statement runs, generator options
// that flake refuses, or with which the generator cannot make an ID now
// (its clock is before the epoch or past its range). flake.Option is
// opaque: the generator is the only judge of its options.
func checkGenerator(opts []flake.Option) error {
	g, err := newGenerator(opts, 0)
	if err != nil {
		return err
	}
	if _, err := g.New(); err != nil {
		return optionError(err, "WithGeneratorOptions")
	}
	return nil
}

// latest returns the time of the latest ID gen can make now: the
// millisecond before its Ceiling(0), which is its clock's, or its last
// ID's if that is ahead.
func latest(gen *flake.Generator) time.Time {
	return gen.Epoch().Time(gen.Ceiling(0)).Add(-time.Millisecond)
}

// SID returns the SID the lease holds (or held last).
func (l *Lease) SID() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sid
}

// Namespace returns the namespace of the lease.
func (l *Lease) Namespace() string { return l.namespace }

// generator returns the generator and the ceiling its IDs must stay below,
// if the lease is held now. When it is not, it returns ErrLeaseLost and a
// channel closed once the lease holds a SID again.
func (l *Lease) generator() (*flake.Generator, flake.ID, <-chan struct{}, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, 0, nil, ErrClosed
	}
	if !time.Now().Before(l.validUntil) {
		if !l.readyOpen {
			l.ready, l.readyOpen = make(chan struct{}), true
		}
		err := fmt.Errorf("%w: SID %d of namespace %q", ErrLeaseLost, l.sid, l.namespace)
		if l.cause != nil {
			err = fmt.Errorf("%w: %w", err, unprefixed{l.cause})
		}
		return nil, 0, l.ready, err
	}
	if l.ahead > MaxClockAhead {
		return nil, 0, nil, l.aheadError(l.ahead)
	}
	return l.gen, l.ceiling, nil, nil
}

func (l *Lease) aheadError(ahead time.Duration) error {
	return fmt.Errorf("%w: this clock is %s ahead of the server's (at most %s): fix the clock; SID %d of namespace %q",
		ErrClockAhead, ahead, MaxClockAhead, l.sid, l.namespace)
}

// below checks an ID against the ceiling and the floor. An ID at or above
// the ceiling means the clock ran ahead since the last renewal (which sets
// a higher one), or read wild once: the ID is dropped, and so is the
// generator's state, which would otherwise keep its IDs that far ahead
// after the clock is right again; the floor then keeps every later ID
// above every ID returned before (all of them below the ceiling).
func (l *Lease) below(g *flake.Generator, id, ceiling flake.ID) error {
	if id >= ceiling {
		l.raiseFloor(ceiling - 1)
		g.Reset()
		return fmt.Errorf("%w: the clock ran ahead of the ceiling the last renewal set (%s); the next renewal sets a new one",
			ErrLeaseLost, timeOf(g, ceiling))
	}
	if floor := l.floor.Load(); int64(id) <= floor {
		return fmt.Errorf("%w: the clock reads below the IDs this lease made before its clock ran ahead (%s); waiting for it",
			ErrLeaseLost, timeOf(g, flake.ID(floor)))
	}
	return nil
}

// raiseFloor makes every later ID of the lease above f, if f is higher
// than its floor.
func (l *Lease) raiseFloor(f flake.ID) {
	for floor := l.floor.Load(); floor < int64(f); floor = l.floor.Load() {
		if l.floor.CompareAndSwap(floor, int64(f)) {
			return
		}
	}
}

// New returns the next ID, scalable with the leased SID. It returns
// [ErrLeaseLost] when the lease cannot be proven held, [ErrClockAhead]
// while the clock is too far ahead of the server's, and
// flake.ErrMonotonicOverflow and flake.ErrClockBehind (the clock stepped
// back past the generator's max lead) as flake.Generator.New does.
func (l *Lease) New() (flake.ID, error) {
	g, ceiling, _, err := l.generator()
	if err != nil {
		return 0, err
	}
	id, err := g.New()
	if err == nil {
		err = l.below(g, id, ceiling)
	}
	if err != nil {
		return 0, err
	}
	return id, nil
}

// NewWait is like New but waits, until ctx ends, while the lease is not
// held (it holds its SID again, or another, by itself) and for a used-up
// millisecond. When ctx ends first, the error wraps both ctx.Err() and
// the reason it waited. It returns [ErrClosed] and [ErrClockAhead] at once.
func (l *Lease) NewWait(ctx context.Context) (flake.ID, error) {
	var since time.Time
	id, err := l.newWait(ctx, &since)
	if !since.IsZero() {
		l.observeGenerator(flake.Event{Kind: flake.EventOverflowWait, SID: l.SID(), Duration: time.Since(since), Err: err})
	}
	return id, err
}

// newWait is NewWait; it sets *since to when it first waits for a used-up
// millisecond, if it does and the lease has an observer.
func (l *Lease) newWait(ctx context.Context, since *time.Time) (flake.ID, error) {
	for {
		g, ceiling, held, err := l.generator()
		var pause time.Duration
		switch {
		case held != nil:
			pause = -1 // until the lease is held again
		case err != nil:
			return 0, err
		default:
			var id flake.ID
			if id, err = g.New(); err == nil {
				if err = l.below(g, id, ceiling); err == nil {
					return id, nil
				}
				pause = l.opts.validity / 4 // the next renewal sets a higher ceiling
			} else if errors.Is(err, flake.ErrMonotonicOverflow) {
				pause = time.Millisecond - time.Duration(time.Now().Nanosecond()%1e6)
				if l.opts.obs != nil && since.IsZero() {
					*since = time.Now()
				}
			} else {
				return 0, err
			}
		}
		if werr := wait(ctx, pause, held); werr != nil {
			return 0, fmt.Errorf("%w: %w", werr, err)
		}
	}
}

// Close stops making IDs and releases the SID at once.
func (l *Lease) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	sid, token := l.sid, l.token
	l.validUntil = time.Time{}
	if l.readyOpen { // NewWait calls waiting for the lease return ErrClosed
		close(l.ready)
		l.readyOpen = false
	}
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	return l.release(sid, token)
}

// timeOf returns the time of an ID of gen, for a message.
func timeOf(gen *flake.Generator, id flake.ID) string {
	return gen.Epoch().Time(id).Format(flake.RFC3339Milli)
}

// wrap names what failed, and the cause when the server's error says it:
// a transaction pooler, or a role without the privileges on the table.
func (l *Lease) wrap(what string, err error) error {
	switch sqlState(err) {
	case "42P05", "26000":
		return fmt.Errorf("sidlease: %s: %w\n\tA transaction pooler (PgBouncer pool_mode=transaction, say) is between the "+
			"client and the server and the driver prepares named statements: open the *sql.DB with "+
			"default_query_exec_mode=simple_protocol (pgx stdlib) or use sidlease.Acquire with a *pgxpool.Pool", what, err)
	case "42501":
		if l.role != "" {
			return fmt.Errorf("sidlease: namespace %q: %s: %w\n\tRun once, as the lease table's owner:\n%s;",
				l.namespace, what, err, l.grant())
		}
	}
	return fmt.Errorf("sidlease: namespace %q: %s: %w", l.namespace, what, err)
}

// sqlState returns the SQLSTATE of the server's error in err, through any
// driver whose errors have a SQLState method (pgx's, lib/pq's), or "".
func sqlState(err error) string {
	var e interface{ SQLState() string }
	if errors.As(err, &e) {
		return e.SQLState()
	}
	return ""
}

// unprefixed is an error of this package given as the cause of another:
// the same error, without the package's prefix a second time.
type unprefixed struct{ err error }

func (u unprefixed) Error() string { return strings.TrimPrefix(u.err.Error(), "sidlease: ") }
func (u unprefixed) Unwrap() error { return u.err }

// wait returns nil when d has passed (d < 0: never) or ch is closed (nil:
// never), and ctx.Err() when ctx ends first. It is the package's one
// timer-and-context wait.
func wait(ctx context.Context, d time.Duration, ch <-chan struct{}) error {
	var timeout <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timeout:
		return nil
	case <-ch:
		return nil
	}
}
