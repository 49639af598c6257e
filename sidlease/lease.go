// Package sidlease gives every running instance its own SID (0..31) for the
// scalable Ulid-Flake layout, held in the PostgreSQL the application already
// uses, so that IDs from different instances never collide.
//
//	lease, err := sidlease.Acquire(ctx, pool, "orders-service")
//	defer lease.Close()
//	id, err := lease.NewWait(ctx) // scalable layout, SID lease.SID()
//
// # How it holds a SID
//
// Acquire opens one dedicated connection (from the pool's configuration, not
// from the pool) and takes a session-level advisory lock,
// pg_try_advisory_lock(namespace key, SID), on the first free SID. The server
// releases the lock the moment that session ends: a crash, a
// pg_terminate_backend, a lost network or a server restart frees the SID
// without waiting for anything to expire.
//
// We chose advisory locks over a lease table with heartbeats for that: a
// table needs its rows to expire before another instance can take a SID,
// and its expiry must be tuned against the longest pause of a live holder;
// a lock is as long-lived as its session, and needs no clean-up.
//
// A lock alone does not stop the old holder from minting after its session
// died and before it notices. Two rules close that gap, with V the lease's
// validity (default 2s):
//
//   - A holder mints only until V after the send time of its last
//     heartbeat that succeeded. A heartbeat is a round trip on the
//     dedicated connection every V/4; a slow one stops minting when V runs
//     out, one that fails ends the lease at once.
//     The lock was held when a successful heartbeat reached the server, so a
//     holder never mints later than V after its lock was released.
//   - A new holder waits V after taking a lock before it mints (Acquire
//     returns only then). So it starts after any earlier holder of that SID
//     has stopped.
//
// Past its validity, New and NewWait return [ErrLeaseLost] and the lease
// tries, in the background, to take a SID again (perhaps another one),
// waiting V once more before it mints. Close releases the lock at once.
//
// # What it costs
//
// One extra connection per instance (not counted against the pool), one
// round trip per heartbeat (4 per V; 2 a second with the default), up to 32
// round trips to acquire, and V of waiting in Acquire. A lost lease is
// detected within V (in practice at the next heartbeat, V/4). Capacity: the
// scalable layout has 15 random bits, about 128 IDs per millisecond per
// instance with entropy 1 (see BENCHMARKS.md), 32 instances per namespace.
package sidlease

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake/flake"
)

// Errors.
var (
	// ErrNoFreeSID: all 32 SIDs of the namespace are held.
	ErrNoFreeSID = errors.New("sidlease: no free SID")
	// ErrLeaseLost: the lease can no longer be proven held (connection
	// lost, server restart, missed heartbeat) or was closed; the lease is
	// trying to take a SID again.
	ErrLeaseLost = errors.New("sidlease: SID lease lost")
	// ErrClosed: the lease was closed.
	ErrClosed = errors.New("sidlease: lease closed")
)

// Option configures [Acquire].
type Option func(*options)

type options struct {
	validity time.Duration
	genOpts  []flake.Option
}

// WithValidity sets V (default 2s): how long a holder may mint after its
// last successful heartbeat, how long a new holder waits before minting, and
// so the bound on detecting a lost lease. Heartbeats run every V/4.
func WithValidity(v time.Duration) Option { return func(o *options) { o.validity = v } }

// WithGeneratorOptions passes options (epoch, entropy) to the generator;
// its layout is always scalable with the leased SID.
func WithGeneratorOptions(opts ...flake.Option) Option {
	return func(o *options) { o.genOpts = opts }
}

// Lease is a SID held in PostgreSQL and the generator that uses it. It is
// safe for concurrent use.
type Lease struct {
	namespace string
	key       int32 // advisory lock key of the namespace
	cfg       *pgx.ConnConfig
	opts      options

	mu         sync.Mutex
	conn       *pgx.Conn
	sid        int
	gen        *flake.Generator
	validUntil time.Time // monotonic; zero when not held
	closed     bool

	stop chan struct{}
	done chan struct{}
}

// Acquire takes a free SID of namespace, waits out the validity V (see the
// package documentation), and returns the lease. It returns [ErrNoFreeSID],
// naming the namespace, when all 32 are held. The pool gives the connection
// settings; the lease's connection is its own.
func Acquire(ctx context.Context, pool *pgxpool.Pool, namespace string, opts ...Option) (*Lease, error) {
	o := options{validity: 2 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	if o.validity < 4*time.Millisecond {
		return nil, fmt.Errorf("sidlease: validity %s is too short", o.validity)
	}
	h := fnv.New32a()
	h.Write([]byte("ulidflake:" + namespace))
	l := &Lease{
		namespace: namespace,
		key:       int32(h.Sum32()),
		cfg:       pool.Config().ConnConfig.Copy(),
		opts:      o,
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	if err := l.take(ctx, -1); err != nil {
		return nil, err
	}
	go l.run()
	return l, nil
}

// take connects, locks a free SID (prefer first, if it is in range) and
// waits V before making the lease valid.
func (l *Lease) take(ctx context.Context, prefer int) error {
	cfg := l.cfg.Copy()
	cfg.RuntimeParams["application_name"] = "ulidflake-sidlease " + l.namespace
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("sidlease: connecting: %w", err)
	}
	start := prefer
	if start < 0 {
		start = rand.IntN(flake.MaxSID + 1)
	}
	sid := -1
	for i := range flake.MaxSID + 1 {
		try := (start + i) % (flake.MaxSID + 1)
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1::int4, $2::int4)`, l.key, try).Scan(&ok); err != nil {
			conn.Close(context.Background())
			return fmt.Errorf("sidlease: locking a SID: %w", err)
		}
		if ok {
			sid = try
			break
		}
	}
	if sid < 0 {
		conn.Close(context.Background())
		return fmt.Errorf("%w in namespace %q: all %d are held", ErrNoFreeSID, l.namespace, flake.MaxSID+1)
	}
	gen, err := flake.NewGenerator(append(append([]flake.Option{}, l.opts.genOpts...), flake.WithSID(sid))...)
	if err != nil {
		conn.Close(context.Background())
		return err
	}
	// Wait V: an earlier holder of this SID whose session just died may mint
	// until V after its last heartbeat, which was before we got the lock.
	t := time.NewTimer(l.opts.validity)
	defer t.Stop()
	select {
	case <-ctx.Done():
		conn.Close(context.Background())
		return ctx.Err()
	case <-t.C:
	}
	// Prove the lock is still ours before minting.
	sent := time.Now()
	if err := heartbeat(ctx, conn, 4*l.opts.validity); err != nil {
		conn.Close(context.Background())
		return fmt.Errorf("sidlease: connection lost while acquiring: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		conn.Close(context.Background())
		return ErrClosed
	}
	l.conn, l.sid, l.gen, l.validUntil = conn, sid, gen, sent.Add(l.opts.validity)
	return nil
}

// heartbeat is one round trip on the lease's own connection. Its timeout
// only bounds how long a hung connection goes unnoticed: minting stops V
// after the last successful heartbeat was sent, however long this one takes.
func heartbeat(ctx context.Context, conn *pgx.Conn, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := conn.Exec(ctx, `SELECT 1`)
	return err
}

// run keeps the lease: heartbeats every V/4, and takes a SID again when it
// is lost.
func (l *Lease) run() {
	defer close(l.done)
	tick := time.NewTicker(l.opts.validity / 4)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		l.mu.Lock()
		conn := l.conn
		l.mu.Unlock()
		if conn != nil {
			sent := time.Now()
			if err := heartbeat(context.Background(), conn, 4*l.opts.validity); err == nil {
				l.mu.Lock()
				if l.conn == conn {
					l.validUntil = sent.Add(l.opts.validity)
				}
				l.mu.Unlock()
				continue
			}
			// Lost: stop minting now, drop the connection.
			l.mu.Lock()
			l.conn, l.validUntil = nil, time.Time{}
			l.mu.Unlock()
			conn.Close(context.Background())
			// Give other instances a chance at the freed SID before trying again.
			if !l.sleep(l.opts.validity) {
				return
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-l.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		_ = l.take(ctx, -1) // on failure, try again at the next tick
		cancel()
	}
}

// sleep waits d, or returns false when the lease is closed.
func (l *Lease) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-l.stop:
		return false
	case <-t.C:
		return true
	}
}

// SID returns the SID the lease holds (or held last).
func (l *Lease) SID() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sid
}

// Namespace returns the namespace of the lease.
func (l *Lease) Namespace() string { return l.namespace }

// generator returns the generator if the lease is valid now.
func (l *Lease) generator() (*flake.Generator, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	if l.conn == nil || !time.Now().Before(l.validUntil) {
		return nil, fmt.Errorf("%w: SID %d of namespace %q", ErrLeaseLost, l.sid, l.namespace)
	}
	return l.gen, nil
}

// New returns the next ID, scalable with the leased SID. It returns
// [ErrLeaseLost] when the lease cannot be proven held, and
// flake.ErrMonotonicOverflow as flake.Generator.New does.
func (l *Lease) New() (flake.ID, error) {
	g, err := l.generator()
	if err != nil {
		return 0, err
	}
	return g.New()
}

// NewWait is like New but waits out a used-up millisecond. It does not wait
// for a lost lease: it returns [ErrLeaseLost].
func (l *Lease) NewWait(ctx context.Context) (flake.ID, error) {
	for {
		g, err := l.generator()
		if err != nil {
			return 0, err
		}
		id, err := g.New()
		if !errors.Is(err, flake.ErrMonotonicOverflow) {
			return id, err
		}
		t := time.NewTimer(time.Millisecond - time.Duration(time.Now().Nanosecond()%1e6))
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-t.C:
		}
	}
}

// Close stops minting, releases the SID at once and closes the connection.
func (l *Lease) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	conn, sid := l.conn, l.sid
	l.conn, l.validUntil = nil, time.Time{}
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	if conn == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1::int4, $2::int4)`, l.key, sid)
	return errors.Join(err, conn.Close(ctx))
}
