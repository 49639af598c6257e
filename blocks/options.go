package blocks

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/migrations"
)

// Errors. Every error a [Source] returns wraps one of them, or
// migrations.ErrNotInstalled, or flake.ErrOption.
var (
	// ErrUnavailable: no block of IDs came from the database before the
	// call's context ended or [WithTimeout] passed (the database is
	// unreachable, restarting, refusing the role, or too slow, or the pool
	// had no connection for the source). The error also wraps the last
	// cause (a driver's error, the context's) and names the pool when the
	// source waited for one of its connections. Nothing was handed out;
	// call again once the database answers.
	ErrUnavailable = errors.New("blocks: no block of IDs from the database")
	// ErrBlockTooOld: a block of IDs arrived older than the validity
	// ([WithValidity]), so none of it could be handed out: the validity
	// must exceed the reservation's round trip.
	ErrBlockTooOld = errors.New("blocks: a block of IDs arrived older than WithValidity")
	// ErrClosed: the source was closed.
	ErrClosed = errors.New("blocks: source closed")
)

// Limits and defaults.
const (
	// MaxSize is the largest block ulid_flake_block makes in one call.
	MaxSize = 65536
	// DefaultSize is the block size unless [WithSize] says otherwise.
	DefaultSize = 1024
	// DefaultValidity is how long a block's IDs stay usable, counted from
	// when it was asked for, unless [WithValidity] says otherwise.
	DefaultValidity = time.Second
	// DefaultTimeout bounds each wait for a block, unless [WithTimeout]
	// says otherwise.
	DefaultTimeout = 10 * time.Second
)

// Option configures a [Source].
type Option func(*options)

type options struct {
	size     int
	validity time.Duration
	timeout  time.Duration
	schema   string
	obs      Observer
}

// WithSize sets how many IDs one round trip reserves: 1 to [MaxSize]
// (default [DefaultSize]). A larger block costs fewer round trips per ID;
// the IDs left in it when the instance stops, or when its validity
// ends, are never used. Size it to about what an instance hands out
// in half the validity at its busiest.
func WithSize(n int) Option { return func(o *options) { o.size = n } }

// WithValidity sets how long a block's IDs stay usable, counted from when
// the block was asked for: no ID is handed out older than that (default
// [DefaultValidity]; at least a millisecond). It is the bound of the time
// order (see the package documentation), and must exceed the
// reservation's round trip.
func WithValidity(d time.Duration) Option { return func(o *options) { o.validity = d } }

// WithTimeout bounds how long [Source.NewWait] waits for a
// block, and how long one reservation may take (default
// [DefaultTimeout]; positive).
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithSchema names the schema the migrations installed ulid_flake_block
// in (default [migrations.DefaultSchema], "public": where Migrate installs
// under PostgreSQL's default search_path; pass the schema Migrate was given,
// or found first on its search_path, otherwise). The function is called by
// this name, quoted, whatever the connection's search_path.
func WithSchema(name string) Option { return func(o *options) { o.schema = name } }

// newOptions applies opts to the defaults and checks the result.
func newOptions(opts []Option) (options, error) {
	o := options{size: DefaultSize, validity: DefaultValidity, timeout: DefaultTimeout, schema: migrations.DefaultSchema}
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case o.size < 1 || o.size > MaxSize:
		return o, optionError("WithSize(%d): want 1 to %d", o.size, MaxSize)
	case o.validity < time.Millisecond:
		return o, optionError("WithValidity(%v): want at least 1ms", o.validity)
	case o.timeout <= 0:
		return o, optionError("WithTimeout(%v): want a positive duration", o.timeout)
	case o.schema == "" || len(o.schema) > 63 || !utf8.ValidString(o.schema) || strings.ContainsRune(o.schema, 0):
		return o, optionError("WithSchema(%.80q): want a schema name of 1 to 63 bytes of UTF-8, no NUL", o.schema)
	}
	return o, nil
}

// optionError is a bad option's error: it names the option and its value,
// and wraps flake.ErrOption.
func optionError(format string, args ...any) error {
	return fmt.Errorf("blocks: "+format+" (%w)", append(args, flake.ErrOption)...)
}
