package blocks

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Errors. Every error a [Source] returns wraps one of them.
var (
	// ErrUnavailable: no block of IDs came from the database before the
	// call's context ended or [WithTimeout] passed (the database is
	// unreachable, restarting, refusing the role, or too slow). The error
	// also wraps the last cause (a driver's error, the context's). Nothing
	// was handed out; call again once the database answers.
	ErrUnavailable = errors.New("blocks: no block of IDs from the database")
	// ErrNotInstalled: the database has no ulid_flake_block(integer) in the
	// schema [WithSchema] names, or the role may not call it: migrate it
	// to version 9 or later (migrations.Migrate) and name the install's
	// schema.
	ErrNotInstalled = errors.New("blocks: ulid_flake_block(integer) is not callable: " +
		"migrate the database to version 9 or later (migrations.Migrate), and name its schema with WithSchema")
	// ErrBlockTooOld: a block of IDs arrived older than MaxAge, so none of
	// it could be handed out: WithMaxAge must exceed the reservation's round
	// trip.
	ErrBlockTooOld = errors.New("blocks: a block of IDs arrived older than WithMaxAge")
	// ErrClosed: the source was closed.
	ErrClosed = errors.New("blocks: source closed")
	// ErrInvalidOption: an option outside its limits.
	ErrInvalidOption = errors.New("blocks: invalid option")
)

// Limits and defaults.
const (
	// MaxSize is the largest block ulid_flake_block makes in one call.
	MaxSize = 65536
	// DefaultSize is the block size unless [WithSize] says otherwise.
	DefaultSize = 1024
	// DefaultMaxAge is the age after which a block's remaining IDs are
	// discarded, unless [WithMaxAge] says otherwise.
	DefaultMaxAge = time.Second
	// DefaultTimeout bounds each wait for a block, unless [WithTimeout]
	// says otherwise.
	DefaultTimeout = 10 * time.Second
	// DefaultSchema is the schema of ulid_flake_block unless
	// [WithSchema] says otherwise.
	DefaultSchema = "public"
)

// Option configures a [Source].
type Option func(*options)

type options struct {
	size    int
	maxAge  time.Duration
	timeout time.Duration
	schema  string
	obs     Observer
}

// WithSize sets how many IDs one round trip reserves: 1 to [MaxSize]
// (default [DefaultSize]). A larger block costs fewer round trips per ID;
// the IDs left in it when the instance stops, or when it grows older than
// the MaxAge, are never used. Size it to about what an instance hands out
// in half the MaxAge at its busiest.
func WithSize(n int) Option { return func(o *options) { o.size = n } }

// WithMaxAge sets how old, at most, an ID is when [Source.New] hands it
// out, counted from when its block was asked for (default
// [DefaultMaxAge]; at least a millisecond). It is the bound of the time
// order: see the package documentation.
func WithMaxAge(d time.Duration) Option { return func(o *options) { o.maxAge = d } }

// WithTimeout bounds how long [Source.New] and [Source.NewWait] wait for a
// block, and how long one reservation may take (default
// [DefaultTimeout]; positive).
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithSchema names the schema the migrations installed ulid_flake_block
// in (default [DefaultSchema]). The function is called by this name,
// quoted, whatever the connection's search_path.
func WithSchema(name string) Option { return func(o *options) { o.schema = name } }

// newOptions applies opts to the defaults and checks the result.
func newOptions(opts []Option) (options, error) {
	o := options{size: DefaultSize, maxAge: DefaultMaxAge, timeout: DefaultTimeout, schema: DefaultSchema}
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case o.size < 1 || o.size > MaxSize:
		return o, fmt.Errorf("%w: WithSize(%d): want 1 to %d", ErrInvalidOption, o.size, MaxSize)
	case o.maxAge < time.Millisecond:
		return o, fmt.Errorf("%w: WithMaxAge(%v): want at least 1ms", ErrInvalidOption, o.maxAge)
	case o.timeout <= 0:
		return o, fmt.Errorf("%w: WithTimeout(%v): want a positive duration", ErrInvalidOption, o.timeout)
	case o.schema == "" || len(o.schema) > 63 || !utf8.ValidString(o.schema) || strings.ContainsRune(o.schema, 0):
		return o, fmt.Errorf("%w: WithSchema(%.80q): want a schema name of 1 to 63 bytes of UTF-8, no NUL", ErrInvalidOption, o.schema)
	}
	return o, nil
}
