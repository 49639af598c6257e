package sidlease

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/ulidflake/ulidflake/flake"
)

// Errors.
var (
	// ErrNoFreeSID: all 32 SIDs of the namespace are held.
	ErrNoFreeSID = errors.New("sidlease: no free SID")
	// ErrLeaseLost: the lease can no longer be proven held (taken over,
	// its claim lost in a failover, or no heartbeat succeeded within the
	// validity); the lease is trying to hold a SID again.
	ErrLeaseLost = errors.New("sidlease: SID lease lost")
	// ErrClosed: the lease was closed.
	ErrClosed = errors.New("sidlease: lease closed")
	// ErrClockBehind: the SID's floor (its last holder's ceiling, or the
	// server's clock plus V plus MaxClockAhead) is further ahead of this
	// instance's clock than [MaxClockWait]: one of the clocks is wrong.
	ErrClockBehind = errors.New("sidlease: clock behind the SID's last holder")
	// ErrClockAhead: this instance's clock is more than [MaxClockAhead]
	// ahead of the server's: it does not mint until it is back within it.
	ErrClockAhead = errors.New("sidlease: clock ahead of the server's")
	// ErrInvalidOption: an option or argument outside its limits.
	ErrInvalidOption = errors.New("sidlease: invalid option")
	// ErrMultiWriter: the database subscribes to another node's
	// publication, so another writable node may grant the same SIDs.
	ErrMultiWriter = errors.New("sidlease: the database is one of several writable nodes")
)

// Limits and defaults.
const (
	// MaxClockWait is how long Acquire waits, at most, for its clock to
	// pass the SID's floor (see the package documentation, "Clocks").
	MaxClockWait = 30 * time.Second
	// MaxClockAhead is how far a holder's clock may run ahead of the
	// server's; it is also the margin every new holder waits out.
	MaxClockAhead = time.Second
	// DefaultValidity is V unless [WithValidity] says otherwise.
	DefaultValidity = 2 * time.Second
	// MinValidity and MaxValidity bound [WithValidity].
	MinValidity = 4 * time.Millisecond
	MaxValidity = time.Hour
)

// DefaultTable is the lease table, in the first schema of search_path
// unless [WithTable] names another. A namespace is exclusive within one
// lease table: every instance of a namespace must find the same table, so
// roles whose search_paths differ should name it with its schema. A
// temporary table is refused ([ErrInvalidOption]).
const DefaultTable = "ulid_flake_sid_leases"

// maxIdentifier is PostgreSQL's NAMEDATALEN - 1: longer names are cut.
const maxIdentifier = 63

// Option configures [Acquire] and [AcquireDB].
type Option func(*options)

type options struct {
	validity time.Duration
	genOpts  []flake.Option
	table    pgx.Identifier
	log      *slog.Logger
}

// WithValidity sets V (default 2s, [MinValidity] to [MaxValidity]): how
// long a holder may mint after its last successful heartbeat, how long a
// new holder waits before minting, and how long a crashed holder's SID
// stays taken. Heartbeats run every V/4.
func WithValidity(v time.Duration) Option { return func(o *options) { o.validity = v } }

// WithGeneratorOptions passes options (epoch, entropy, clock) to the
// generator; its layout is always scalable with the leased SID. Every
// holder of a namespace must use the same epoch.
func WithGeneratorOptions(opts ...flake.Option) Option {
	return func(o *options) { o.genOpts = opts }
}

// WithTable names the lease table, schema-qualified or not:
// WithTable("ids", "sid_leases"). Any name of 1 to 63 bytes works; it is
// quoted. A table in pg_temp is refused ([ErrInvalidOption]).
func WithTable(name ...string) Option { return func(o *options) { o.table = pgx.Identifier(name) } }

// WithLogger sets where the lease reports what it does by itself: failed
// heartbeats and releases, a lost SID, claims again, a clock ahead. By
// default it reports nothing.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// newOptions applies opts and checks them and the namespace.
func newOptions(namespace string, opts []Option) (options, error) {
	o := options{validity: DefaultValidity, table: pgx.Identifier{DefaultTable}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	if o.validity < MinValidity || o.validity > MaxValidity {
		return o, fmt.Errorf("%w: WithValidity(%s): want %s to %s", ErrInvalidOption, o.validity, MinValidity, MaxValidity)
	}
	if len(o.table) == 0 || len(o.table) > 2 {
		return o, fmt.Errorf("%w: WithTable(%q): want [schema,] table", ErrInvalidOption, []string(o.table))
	}
	for _, part := range o.table {
		if err := checkText(part, 1, maxIdentifier); err != nil {
			return o, fmt.Errorf("%w: WithTable(%q): %s", ErrInvalidOption, []string(o.table), err)
		}
	}
	if err := checkText(namespace, 0, 0); err != nil {
		return o, fmt.Errorf("%w: namespace %q: %s", ErrInvalidOption, namespace, err)
	}
	return o, nil
}

// checkText checks that s can be stored as PostgreSQL text, with between
// lo and hi bytes (hi 0: no limit).
func checkText(s string, lo, hi int) error {
	switch {
	case len(s) < lo:
		return errors.New("empty")
	case hi > 0 && len(s) > hi:
		return fmt.Errorf("%d bytes, more than %d (PostgreSQL would cut it)", len(s), hi)
	case strings.ContainsRune(s, 0):
		return errors.New("holds a NUL byte")
	case !utf8.ValidString(s):
		return errors.New("is not valid UTF-8")
	}
	return nil
}
