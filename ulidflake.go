// Package ulidflake makes Ulid-Flake IDs a primary key for PostgreSQL: 64-bit,
// time-sortable, fitting an int64 and a bigint, written as 13 characters of
// Crockford Base32.
//
// This is the one import most programs need:
//
//	type Order struct {
//		ID ulidflake.ID // bigint primary key, "00EZJCRCB4650" in JSON
//	}
//
//	id, err := ulidflake.New()
//
// [ID] is the one ID type: its text, binary and JSON forms, its fields and
// time, and its database/sql methods (a driver.Valuer and sql.Scanner for
// bigint columns) are documented on flake.ID, which it is. [NullID],
// [TextID] and [Bound] wrap it for nullable columns, text columns and query
// bounds; [Prefixed] gives it a per-entity prefix in text (cus_...) while
// it stays a bigint. The generator's options, epochs and sentinel errors live in
// package flake; pgx support in pgxtype; GORM support in gormplugin.
package ulidflake

import (
	"context"
	"time"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sqltype"
)

// ID is a Ulid-Flake, for bigint columns; see flake.ID for its methods.
type ID = flake.ID

// NullID is an ID for a nullable bigint column; see sqltype.NullID.
type NullID = sqltype.NullID

// TextID is an ID stored as 13-character text; see sqltype.TextID.
type TextID = sqltype.TextID

// Bound is an ID used as a query bound, where the zero ID means "below
// every ID", as the first cursor of keyset pagination; see sqltype.Bound.
type Bound = sqltype.Bound

// TrustedID is an ID for decoding JSON from a source that writes exact
// integers, such as PostgreSQL's row_to_json and json_agg; see
// flake.TrustedID.
type TrustedID = flake.TrustedID

// Prefix names the prefix of a [Prefixed] ID type; see flake.Prefix.
type Prefix = flake.Prefix

// Prefixed is an ID whose text form carries its type's prefix,
// cus_00EZJCRCB4650, stored as the same bigint as [ID]; see flake.Prefixed.
// Declare one per entity:
//
//	type customer struct{}
//
//	func (customer) Prefix() string { return "cus" }
//
//	type CustomerID = ulidflake.Prefixed[customer]
type Prefixed[P Prefix] = flake.Prefixed[P]

// ParsePrefixed decodes the text form of a Prefixed[P]; see
// flake.ParsePrefixed.
func ParsePrefixed[P Prefix](s string) (Prefixed[P], error) { return flake.ParsePrefixed[P](s) }

// ErrPrefix is the error of a prefixed ID's text without its type's
// prefix, or with another: flake.ErrPrefix.
var ErrPrefix = flake.ErrPrefix

// ErrZeroID is the error of writing the zero (unset) ID, in every driver
// and by GORM: flake.ErrZeroID.
var ErrZeroID = flake.ErrZeroID

// Generator makes IDs; see flake.Generator.
type Generator = flake.Generator

// NewGenerator returns a generator configured by flake options
// (flake.WithSID, flake.WithEpoch, flake.WithEntropy, ...).
func NewGenerator(opts ...flake.Option) (*Generator, error) { return flake.NewGenerator(opts...) }

// New returns an ID from the process's default stand-alone generator. It
// returns flake.ErrMonotonicOverflow when this millisecond's capacity (at
// least flake.MinBurst, 2,056 IDs, about 6,000 on average) is used up;
// [NewWait] waits instead.
func New() (ID, error) { return flake.New() }

// NewWait returns an ID from the default generator, waiting for the next
// millisecond when this one is used up, until ctx ends.
func NewWait(ctx context.Context) (ID, error) { return flake.NewWait(ctx) }

// NewAt returns a new ID for the time t rather than the clock, for
// backfills (docs/backfill.md). See [flake.Generator.NewAt].
func NewAt(t time.Time) (ID, error) { return flake.NewAt(t) }

// Parse decodes the 13-character text form; see flake.Parse.
func Parse(s string) (ID, error) { return flake.Parse(s) }

// MustParse is like [Parse] but panics on error.
func MustParse(s string) ID { return flake.MustParse(s) }

// MinID returns the smallest ID of t's millisecond under the default
// epoch, the lower bound of a time-range query (id >= MinID(from) AND id <
// MinID(to)). A time before the epoch gives the smallest ID, one past the
// format's range the largest; see flake.MinID.
func MinID(t time.Time) ID { return flake.MinID(t) }

// MaxID returns the largest ID of t's millisecond under the default epoch,
// clamped as [MinID] is; see flake.MaxID.
func MaxID(t time.Time) ID { return flake.MaxID(t) }
