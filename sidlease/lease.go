// Package sidlease gives every running instance its own SID (0..31) for the
// scalable Ulid-Flake layout, held in the PostgreSQL the application already
// uses, so that IDs from different instances never collide.
//
//	lease, err := sidlease.Acquire(ctx, pool, "orders-service") // or AcquireDB(ctx, db, ...)
//	defer lease.Close()
//	id, err := lease.NewWait(ctx) // scalable layout, SID lease.SID()
//
// # How it holds a SID
//
// A lease is a row of a lease table (default ulid_flake_sid_leases, created
// by the first Acquire): one row per namespace and SID, with the holder's
// fencing token and an expiry in the server's clock. Every statement is a
// single autocommit statement in the simple protocol, so the lease works on a
// direct connection, through PgBouncer in session or transaction pooling
// mode, through other poolers, and across a failover. It uses the pool you
// give it: no connection of its own, no session state.
//
//   - Acquire claims a SID whose row has expired (or was released), in one
//     UPDATE ... FOR UPDATE SKIP LOCKED, which bumps the row's token and sets
//     its expiry to the server's now() + 2V (V is the validity, default 2s:
//     the wait below, and a heartbeat's worth after it). It then waits V
//     before it mints.
//   - Every V/4 a heartbeat renews the expiry with UPDATE ... WHERE token =
//     the holder's token. One row updated proves, in that round trip, that
//     nobody took the SID since: taking it bumps the token. Zero rows means
//     it was taken: minting stops at once.
//   - A holder mints only until V after it sent its last heartbeat that
//     succeeded, on its own monotonic clock. A heartbeat that fails or hangs
//     stops nothing early, but nothing renews the validity either.
//
// # Why two holders never mint with one SID
//
// Let S be the send time of the old holder's last successful renewal. The
// server ran it at some time E0 >= S and set the expiry to E0 + V, so a new
// holder can take the SID only at T >= E0 + V >= S + V, when the old holder,
// which stops at S + V, has stopped. The new holder also waits V after T
// before minting: that covers the case the expiry cannot, a failover to a
// replica that lost the last renewals (the row there shows an earlier
// expiry). The old holder's last renewal was sent before the old primary
// went away, at S < F; the new primary took the claim at T >= F; the new
// holder mints from T + V > S + V. A renewal reaching the new primary with a
// token it does not have (a claim that was lost with the old primary) updates
// no row, and that holder stops. The argument assumes that the clocks of the
// holders and the server run at the same rate (not that they agree): a
// drift of d per second costs d*V of margin, which the wait of V covers many
// times over.
//
// # Clocks
//
// Not minting at the same time is not enough: IDs carry their holder's
// clock, so a holder whose clock runs ahead makes IDs that a later holder
// of the same SID, with a correct clock, would make again. So every renewal
// also records, in the row's minted_below, a ceiling above every ID the
// holder may make until its validity runs out (flake.Generator.Ceiling:
// its clock plus V), and the holder refuses to return an ID at or above
// the ceiling its last renewal recorded. A new holder mints only IDs above
// the recorded ceiling: after its wait of V, it waits until its own clock
// passes it, for at most [MaxClockWait]; further ahead, Acquire releases
// the SID and returns [ErrClockBehind], which names both times. Holders'
// clocks therefore need not agree: the later one waits out the difference.
//
// # What it costs
//
// Two statements per heartbeat interval per instance (one UPDATE every V/4:
// 2 a second with the default), a few statements and V of waiting in
// Acquire, and a lost lease is detected at the next heartbeat (V/4) and
// stops minting within V. A crashed holder's SID is free again V after its
// last renewal. Capacity: the scalable layout has 15 random bits, at least
// 64 IDs per millisecond per instance (flake.MinBurstScalable), 32 instances
// per namespace; past 32, use another namespace per group of instances (with
// tables whose IDs cannot meet), or stand-alone IDs.
//
// # What an operator sees
//
// The lease table shows who holds what (holder: host, pid and program;
// expires_at; token; minted_below, the ceiling of the IDs made with it). Acquire returns [ErrNoFreeSID] naming the namespace
// when 32 rows are live; New and NewWait return [ErrLeaseLost] while the
// lease cannot be proven held, and the lease takes a SID again by itself. A
// role without the right to create the table gets an error that says which
// statement to run once.
package sidlease

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sqltype"
)

// Errors.
var (
	// ErrNoFreeSID: all 32 SIDs of the namespace are held.
	ErrNoFreeSID = errors.New("sidlease: no free SID")
	// ErrLeaseLost: the lease can no longer be proven held (taken over
	// after it expired, or no heartbeat succeeded within the validity);
	// the lease is trying to take a SID again.
	ErrLeaseLost = errors.New("sidlease: SID lease lost")
	// ErrClosed: the lease was closed.
	ErrClosed = errors.New("sidlease: lease closed")
	// ErrClockBehind: the SID's last holder recorded IDs further ahead of
	// this instance's clock than [MaxClockWait]: one of the two clocks is
	// wrong.
	ErrClockBehind = errors.New("sidlease: clock behind the SID's last holder")
)

// MaxClockWait is how long Acquire waits, at most, for its clock to pass
// the ceiling the SID's last holder recorded (see the package
// documentation, "Clocks").
const MaxClockWait = 30 * time.Second

// DefaultTable is the lease table, in the first schema of search_path
// unless [WithTable] names another.
const DefaultTable = "ulid_flake_sid_leases"

// Option configures [Acquire] and [AcquireDB].
type Option func(*options)

type options struct {
	validity time.Duration
	genOpts  []flake.Option
	table    pgx.Identifier
}

// WithValidity sets V (default 2s): how long a holder may mint after its
// last successful heartbeat, how long a new holder waits before minting,
// and how long a crashed holder's SID stays taken. Heartbeats run every V/4.
func WithValidity(v time.Duration) Option { return func(o *options) { o.validity = v } }

// WithGeneratorOptions passes options (epoch, entropy) to the generator;
// its layout is always scalable with the leased SID.
func WithGeneratorOptions(opts ...flake.Option) Option {
	return func(o *options) { o.genOpts = opts }
}

// WithTable names the lease table, schema-qualified or not:
// WithTable("ids", "sid_leases"). Any name works; it is quoted.
func WithTable(name ...string) Option { return func(o *options) { o.table = pgx.Identifier(name) } }

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
	table     string // quoted

	mu         sync.Mutex
	sid        int
	token      int64
	gen        *flake.Generator
	validUntil time.Time // monotonic; zero when not held
	ceiling    flake.ID  // IDs are below it: recorded by the last renewal
	closed     bool

	stop chan struct{}
	done chan struct{}
}

// Acquire takes a free SID of namespace through pool, waits out the
// validity V (see the package documentation), and returns the lease. It
// returns [ErrNoFreeSID], naming the namespace, when all 32 are held. The
// lease runs its statements on the pool, in the simple protocol, so any
// pooler in front of the server works.
func Acquire(ctx context.Context, pool *pgxpool.Pool, namespace string, opts ...Option) (*Lease, error) {
	return acquire(ctx, poolDB{pool}, namespace, opts)
}

// AcquireDB is [Acquire] for database/sql. Behind a transaction pooler,
// open db so that it prepares no named statements (pgx/v5/stdlib:
// default_query_exec_mode=simple_protocol in the DSN; lib/pq prepares
// unnamed ones and works as it is).
func AcquireDB(ctx context.Context, db *sql.DB, namespace string, opts ...Option) (*Lease, error) {
	return acquire(ctx, sqlDB{db}, namespace, opts)
}

func acquire(ctx context.Context, d db, namespace string, opts []Option) (*Lease, error) {
	o := options{validity: 2 * time.Second, table: pgx.Identifier{DefaultTable}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.validity < 4*time.Millisecond {
		return nil, fmt.Errorf("sidlease: validity %s is too short (at least 4ms)", o.validity)
	}
	if len(o.table) == 0 || len(o.table) > 2 {
		return nil, fmt.Errorf("sidlease: table name %q: want [schema,] table", []string(o.table))
	}
	host, _ := os.Hostname()
	exe, _ := os.Executable()
	l := &Lease{
		namespace: namespace,
		holder:    fmt.Sprintf("%s pid %d %s", host, os.Getpid(), filepath.Base(exe)),
		db:        d,
		opts:      o,
		table:     o.table.Sanitize(),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	if err := l.setup(ctx); err != nil {
		return nil, err
	}
	if err := l.take(ctx); err != nil {
		return nil, err
	}
	go l.run()
	return l, nil
}

// setup creates the table if it is missing and the namespace's 32 rows.
// Both statements are idempotent and safe to run from many instances at
// once.
func (l *Lease) setup(ctx context.Context) error {
	ddl := `CREATE TABLE IF NOT EXISTS ` + l.table + ` (
	namespace  text        NOT NULL,
	sid        int         NOT NULL CHECK (sid BETWEEN 0 AND 31),
	token      bigint      NOT NULL DEFAULT 0,
	holder     text,
	acquired_at timestamptz,
	expires_at timestamptz NOT NULL DEFAULT '-infinity',
	minted_below bigint    NOT NULL DEFAULT 0,
	PRIMARY KEY (namespace, sid))`
	var exists bool
	if err := l.db.queryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, l.table).Scan(&exists); err != nil {
		return l.wrap("looking for the lease table", err)
	}
	if !exists {
		// Serialised, in one implicit transaction: CREATE TABLE IF NOT
		// EXISTS alone races with itself.
		q := `SELECT pg_advisory_xact_lock(7373474917); ` + ddl
		if _, err := l.db.exec(ctx, q); err != nil {
			return l.wrap(fmt.Sprintf("creating the lease table (a role that may not create it needs it created once:\n%s)", ddl), err)
		}
	}
	// minted_below came with the clock check: add it to a table made before.
	var hasCeiling bool
	if err := l.db.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_attribute
		WHERE attrelid = to_regclass($1) AND attname = 'minted_below' AND NOT attisdropped)`, l.table).Scan(&hasCeiling); err != nil {
		return l.wrap("reading the lease table", err)
	}
	if !hasCeiling {
		alter := `ALTER TABLE ` + l.table + ` ADD COLUMN IF NOT EXISTS minted_below bigint NOT NULL DEFAULT 0`
		if _, err := l.db.exec(ctx, `SELECT pg_advisory_xact_lock(7373474917); `+alter); err != nil {
			return l.wrap(fmt.Sprintf("adding a column to the lease table (a role that may not alter it needs it run once:\n%s)", alter), err)
		}
	}
	if _, err := l.db.exec(ctx, `INSERT INTO `+l.table+` (namespace, sid) SELECT $1, g FROM generate_series(0, 31) g
		ON CONFLICT (namespace, sid) DO NOTHING`, l.namespace); err != nil {
		return l.wrap("adding the namespace's rows", err)
	}
	return nil
}

// take claims a free SID, waits V and proves it still holds it before it
// makes the lease valid.
func (l *Lease) take(ctx context.Context) error {
	var sid int
	var token, floor int64
	err := l.db.queryRow(ctx, `UPDATE `+l.table+` t
		SET token = t.token + 1, holder = $2, acquired_at = now(), expires_at = now() + 2 * $3 * interval '1 microsecond'
		FROM (SELECT sid FROM `+l.table+` WHERE namespace = $1 AND expires_at < now()
			ORDER BY random() LIMIT 1 FOR UPDATE SKIP LOCKED) free
		WHERE t.namespace = $1 AND t.sid = free.sid
		RETURNING t.sid, t.token, t.minted_below`, l.namespace, l.holder, l.opts.validity.Microseconds()).Scan(&sid, &token, &floor)
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w in namespace %q: all %d are held (see %s)", ErrNoFreeSID, l.namespace, flake.MaxSID+1, l.table)
	}
	if err != nil {
		return l.wrap("claiming a SID", err)
	}
	gen, err := flake.NewGenerator(append(append([]flake.Option{}, l.opts.genOpts...), flake.WithSID(sid))...)
	if err != nil {
		return err
	}
	// Wait V: see the package documentation.
	t := time.NewTimer(l.opts.validity)
	defer t.Stop()
	select {
	case <-ctx.Done():
		l.release(sid, token)
		return ctx.Err()
	case <-t.C:
	}
	if err := waitAbove(ctx, gen, flake.ID(floor)); err != nil {
		l.release(sid, token)
		return fmt.Errorf("sidlease: SID %d of namespace %q: %w", sid, l.namespace, err)
	}
	l.mu.Lock()
	l.sid, l.token, l.gen = sid, token, gen
	l.mu.Unlock()
	ok, err := l.renew(ctx)
	if err != nil || !ok {
		return errors.Join(fmt.Errorf("%w while acquiring SID %d of namespace %q", ErrLeaseLost, sid, l.namespace), err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		go l.release(sid, token)
		return ErrClosed
	}
	return nil
}

// waitAbove waits until gen's next IDs are at least floor, the ceiling the
// SID's last holder recorded: at most MaxClockWait, else ErrClockBehind.
func waitAbove(ctx context.Context, gen *flake.Generator, floor flake.ID) error {
	for {
		now := gen.Ceiling(0).Timestamp() - 1 // the generator's clock, in ms
		behind := time.Duration(floor.Timestamp()-now) * time.Millisecond
		if behind <= 0 {
			return nil
		}
		if behind > MaxClockWait {
			return fmt.Errorf("%w: its last holder recorded IDs up to %s, %s ahead of this clock (at most %s is waited out): "+
				"fix the clock that is wrong; if it was the last holder's, and no ID it made is kept, set minted_below = 0 in the lease table's row",
				ErrClockBehind, floor.Time().UTC().Format(flake.RFC3339Milli), behind, MaxClockWait)
		}
		t := time.NewTimer(behind)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// renew proves that the lease's token still holds its SID, extends the
// expiry, and records the ceiling of the IDs the holder may make until it
// must renew again. It reports false when the SID was taken by someone
// else.
func (l *Lease) renew(ctx context.Context) (bool, error) {
	l.mu.Lock()
	sid, token, gen := l.sid, l.token, l.gen
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 4*l.opts.validity)
	defer cancel()
	sent := time.Now()
	ceiling := gen.Ceiling(l.opts.validity)
	n, err := l.db.exec(ctx, `UPDATE `+l.table+` SET expires_at = now() + $4 * interval '1 microsecond',
		minted_below = greatest(minted_below, $5)
		WHERE namespace = $1 AND sid = $2 AND token = $3`, l.namespace, sid, token, l.opts.validity.Microseconds(), int64(ceiling))
	if err != nil {
		return false, l.wrap("heartbeat", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.token != token {
		return false, nil
	}
	if n != 1 {
		l.validUntil = time.Time{}
		return false, nil
	}
	l.validUntil, l.ceiling = sent.Add(l.opts.validity), ceiling
	return true, nil
}

// release frees a SID at once, if the token still holds it.
func (l *Lease) release(sid int, token int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := l.db.exec(ctx, `UPDATE `+l.table+` SET expires_at = '-infinity', holder = NULL
		WHERE namespace = $1 AND sid = $2 AND token = $3`, l.namespace, sid, token)
	return err
}

// run keeps the lease: a heartbeat every V/4, and a new claim when the SID
// was taken or the validity ran out.
func (l *Lease) run() {
	defer close(l.done)
	tick := time.NewTicker(l.opts.validity / 4)
	defer tick.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-l.stop
		cancel()
	}()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		ok, err := l.renew(ctx)
		if ok {
			continue
		}
		l.mu.Lock()
		expired := !time.Now().Before(l.validUntil)
		l.mu.Unlock()
		if err != nil && !expired {
			continue // not proven lost: minting goes on until the validity runs out
		}
		// Taken, or not renewed within V: stop minting and claim again.
		l.mu.Lock()
		l.validUntil = time.Time{}
		l.mu.Unlock()
		if err := l.take(ctx); err != nil && ctx.Err() != nil {
			return
		}
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

// generator returns the generator, and the ceiling its IDs must stay
// below, if the lease is valid now.
func (l *Lease) generator() (*flake.Generator, flake.ID, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, 0, ErrClosed
	}
	if !time.Now().Before(l.validUntil) {
		return nil, 0, fmt.Errorf("%w: SID %d of namespace %q", ErrLeaseLost, l.sid, l.namespace)
	}
	return l.gen, l.ceiling, nil
}

// below checks an ID against the recorded ceiling: the clock jumped ahead
// since the last renewal, which records a higher one.
func (l *Lease) below(id flake.ID, ceiling flake.ID) error {
	if id < ceiling {
		return nil
	}
	return fmt.Errorf("%w: the clock ran ahead of the ceiling the last heartbeat recorded (%s); the next heartbeat records a new one",
		ErrLeaseLost, ceiling.Time().UTC().Format(flake.RFC3339Milli))
}

// New returns the next ID, scalable with the leased SID. It returns
// [ErrLeaseLost] when the lease cannot be proven held, and
// flake.ErrMonotonicOverflow as flake.Generator.New does.
func (l *Lease) New() (sqltype.ID, error) {
	g, ceiling, err := l.generator()
	if err != nil {
		return 0, err
	}
	id, err := g.New()
	if err == nil {
		err = l.below(id, ceiling)
	}
	if err != nil {
		return 0, err
	}
	return sqltype.ID(id), nil
}

// NewWait is like New but waits out a used-up millisecond. It does not wait
// for a lost lease: it returns [ErrLeaseLost].
func (l *Lease) NewWait(ctx context.Context) (sqltype.ID, error) {
	for {
		g, ceiling, err := l.generator()
		if err != nil {
			return 0, err
		}
		id, err := g.New()
		if err == nil {
			err = l.below(id, ceiling)
		}
		if !errors.Is(err, flake.ErrMonotonicOverflow) {
			if err != nil {
				return 0, err
			}
			return sqltype.ID(id), nil
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

// Close stops minting and releases the SID at once.
func (l *Lease) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	sid, token := l.sid, l.token
	l.validUntil = time.Time{}
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	return l.release(sid, token)
}

// wrap names what failed, and the cause when it is a transaction pooler.
func (l *Lease) wrap(what string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P05" || pgErr.Code == "26000") {
		return fmt.Errorf("sidlease: %s: %w\n\tA transaction pooler (PgBouncer pool_mode=transaction, say) is between the "+
			"client and the server and the driver prepares named statements: open the *sql.DB with "+
			"default_query_exec_mode=simple_protocol (pgx stdlib) or use sidlease.Acquire with a *pgxpool.Pool", what, err)
	}
	return fmt.Errorf("sidlease: namespace %q: %s: %w", l.namespace, what, err)
}
