package sidlease

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/migrations"
)

// Errors.
var (
	// ErrNoFreeSID: all 32 SIDs of the namespace are held.
	ErrNoFreeSID = errors.New("sidlease: no free SID")
	// ErrLeaseLost: the lease can no longer be proven held (taken over,
	// its claim lost in a failover, or no renewal succeeded within the
	// validity); the lease is trying to hold a SID again.
	ErrLeaseLost = errors.New("sidlease: SID lease lost")
	// ErrClosed: the lease was closed.
	ErrClosed = errors.New("sidlease: lease closed")
	// ErrClockBehindFloor: this instance's clock is further behind the
	// floor of the SID Acquire claimed (its last holder's ceiling, or the
	// server's clock plus V plus MaxClockAhead) than [MaxClockWait]: this
	// clock, the server's or the last holder's is wrong. Acquire releases
	// the SID. (flake.ErrClockBehind is another error: a generator's clock
	// behind its own last ID; [Lease.New] returns it as the generator does.)
	ErrClockBehindFloor = errors.New("sidlease: this clock is more than MaxClockWait behind the SID's floor: " +
		"fix the clock that is wrong (this one, the server's or the last holder's)")
	// ErrClockAhead: this instance's clock is more than [MaxClockAhead]
	// ahead of the server's: it makes no ID until it is back within it.
	ErrClockAhead = errors.New("sidlease: clock ahead of the server's")
	// ErrMesh: the database is a node of a mesh (several writable
	// nodes): it subscribes to another node's publication, so another
	// node may grant the same SIDs. migrations.ErrMesh names the same
	// topology where the install refuses a node.
	ErrMesh = errors.New("sidlease: the database is one of several writable nodes (a mesh)")
	// ErrLeaseTable: the lease table cannot be trusted, or is missing
	// and this role may not create it: its schema is missing, or a role
	// other than its owner may create objects in it; the table's owner is
	// not the schema's; the name alone finds another table for this role
	// (where an earlier release kept its leases). The error says which,
	// and the statements that fix it (see the package documentation, "The
	// lease table").
	ErrLeaseTable = errors.New("sidlease: unusable lease table")
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

// tableName is the lease table's name, in its schema.
const tableName = "ulid_flake_sid_leases"

// MaxNamespaceLen is the longest namespace, in bytes: it is a key of the
// lease table, whose index entries PostgreSQL limits to about 2.7 kB.
const MaxNamespaceLen = 255

// maxIdentifier is PostgreSQL's NAMEDATALEN - 1: longer names are cut.
const maxIdentifier = 63

// maxQuoted bounds how much of a bad input an error message repeats.
const maxQuoted = 64

// Option configures [Acquire] and [AcquireDB].
type Option func(*options)

type options struct {
	validity time.Duration
	genOpts  []flake.Option
	schema   string // the lease table's
	named    bool   // WithSchema named it: no check for an earlier release's table
	log      *slog.Logger
	obs      Observer // nil: none
}

// WithValidity sets V (default 2s, [MinValidity] to [MaxValidity]): how
// long a holder may make IDs after its last successful renewal, how long
// a new holder waits before making IDs, and how long a crashed holder's
// SID stays taken. Renewals run every V/4.
func WithValidity(v time.Duration) Option { return func(o *options) { o.validity = v } }

// WithGeneratorOptions passes options (epoch, entropy, clock) to the
// generator; its layout is always scalable with the leased SID. Every
// holder of a namespace must use the same epoch.
func WithGeneratorOptions(opts ...flake.Option) Option {
	return func(o *options) { o.genOpts = opts }
}

// WithSchema names the schema of the lease table, ulid_flake_sid_leases
// (default public, never looked up on the search_path). Any name of 1 to
// 63 bytes works; it is quoted. A temporary schema (pg_temp, pg_temp_N)
// is refused (flake.ErrOption). The schema must be one that only its
// owner may create objects in (see the package documentation, "The lease
// table").
func WithSchema(name string) Option {
	return func(o *options) { o.schema, o.named = name, true }
}

// WithLogger sets where the lease reports what it does by itself: failed
// renewals and releases, a lost SID, claims again, a clock ahead. By
// default it reports nothing.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithObserver sends the lease's events to obs: claims (with the wait
// before making IDs), renewals (with the skew between this clock and the
// server's, and the namespace's SIDs in use), losses, and its generator's
// events, each with the namespace ([Observer]). By default it reports
// nothing, and a renewal does not count the SIDs in use.
func WithObserver(obs Observer) Option { return func(o *options) { o.obs = obs } }

// newOptions applies opts and checks them and the namespace, in Go: no
// statement runs before they pass. Errors quote at most maxQuoted bytes of
// a bad value.
func newOptions(namespace string, opts []Option) (options, error) {
	o := options{validity: DefaultValidity, schema: migrations.DefaultSchema}
	for i, opt := range opts {
		if opt == nil {
			return o, optionError(nil, "option %d is nil", i)
		}
		opt(&o)
	}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	if o.obs != nil {
		o.genOpts = append(slices.Clone(o.genOpts), flake.WithObserver(inNamespace{o.obs, namespace}))
	}
	if o.validity < MinValidity || o.validity > MaxValidity {
		return o, optionError(nil, "WithValidity(%s): want %s to %s", o.validity, MinValidity, MaxValidity)
	}
	for i, g := range o.genOpts {
		if g == nil {
			return o, optionError(nil, "WithGeneratorOptions: option %d is nil", i)
		}
	}
	if err := checkSchema(o.schema); err != nil {
		return o, err
	}
	if err := checkText(namespace, 0, MaxNamespaceLen); err != nil {
		return o, optionError(nil, "namespace %s %s", quote(namespace), err)
	}
	return o, nil
}

// checkSchema checks the lease table's schema name.
func checkSchema(s string) error {
	if err := checkText(s, 1, maxIdentifier); err != nil {
		return optionError(nil, "WithSchema(%s): %s", quote(s), err)
	}
	if s == "pg_temp" || strings.HasPrefix(s, "pg_temp_") {
		return optionError(nil, "WithSchema(%s): a temporary table is one table per connection: "+
			"every connection would grant the same SIDs; name a permanent schema", quote(s))
	}
	return nil
}

// optionError is a bad option or argument: it wraps flake.ErrOption, the
// module's one sentinel for them, and cause (nil: none).
func optionError(cause error, format string, args ...any) error {
	return &badOption{fmt.Sprintf(format, args...), cause}
}

type badOption struct {
	msg   string
	cause error
}

func (e *badOption) Error() string {
	if e.cause != nil {
		return "sidlease: invalid option: " + e.msg + ": " + e.cause.Error()
	}
	return "sidlease: invalid option: " + e.msg
}

func (e *badOption) Unwrap() []error {
	if e.cause == nil {
		return []error{flake.ErrOption}
	}
	return []error{flake.ErrOption, e.cause}
}

// checkText checks that s can be stored as PostgreSQL text, with between
// lo and hi bytes.
func checkText(s string, lo, hi int) error {
	switch {
	case len(s) < lo:
		return errors.New("is empty")
	case len(s) > hi:
		return fmt.Errorf("is %d bytes, more than %d", len(s), hi)
	case strings.ContainsRune(s, 0):
		return errors.New("holds a NUL byte")
	case !utf8.ValidString(s):
		return errors.New("is not valid UTF-8")
	}
	return nil
}

// quote returns s quoted for an error message, cut at maxQuoted bytes.
func quote(s string) string {
	if len(s) > maxQuoted {
		return fmt.Sprintf("%q... (%d bytes)", s[:maxQuoted], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// clip cuts s, text the server returned, at maxQuoted bytes.
func clip(s string) string {
	if len(s) > maxQuoted {
		return fmt.Sprintf("%s... (%d bytes)", s[:maxQuoted], len(s))
	}
	return s
}
