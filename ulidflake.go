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
// [ID] is the one ID type, defined in package flake (the format and the
// generator, standard library only) so that every package of this module
// sees the same type; its doc here lists every method. [NullID], [TextID]
// and [Bound] (package sqltype) wrap it for nullable columns, text columns
// and query bounds; [Prefixed] gives it a per-entity prefix in text
// (cus_...) while it stays a bigint. A generator under another epoch or
// with a SID takes [WithEpoch] and [WithSID], one that reports its events
// [WithObserver]. The generator's other options (entropy, clock,
// randomness, max lead) and the errors of parsing live in package flake; pgx support in pgxtype; GORM support in gormplugin.
package ulidflake

import (
	"context"
	"time"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sqltype"
)

// ID is a Ulid-Flake, for bigint columns. It is an alias of [flake.ID],
// where its methods are documented (go doc flake.ID.String); they are:
//
//   - [flake.ID.String]: the 13-character Base32 form, 00EZJCRCB4650.
//   - [flake.ID.Int64]: the int64 stored in the bigint column.
//   - [flake.ID.Timestamp]: the raw timestamp field, ms since its epoch;
//     its time is read through that epoch, epoch.Time(id) ([Epoch]).
//   - [flake.ID.Randomness]: the 20-bit randomness of the stand-alone layout.
//   - [flake.ID.ScalableRandomness]: the 15-bit randomness, scalable layout.
//   - [flake.ID.SID]: the 5-bit SID of the scalable layout.
//   - [flake.ID.IsZero]: whether it is the unset ID.
//   - [flake.ID.Compare]: -1, 0 or +1, in numeric, text and time order.
//   - [flake.ID.Format]: %s, %v, %q print the text form; %d, %x the integer.
//   - [flake.ID.AppendText]: appends the text form to a buffer.
//   - [flake.ID.MarshalText]: the text form, for encoding.TextMarshaler.
//   - [flake.ID.UnmarshalText]: reads the text form, as [Parse] does.
//   - [flake.ID.AppendBinary]: appends the 8-byte big-endian form.
//   - [flake.ID.MarshalBinary]: the 8-byte big-endian form (gob).
//   - [flake.ID.UnmarshalBinary]: reads the 8-byte form.
//   - [flake.ID.MarshalJSON]: a JSON string holding the text form.
//   - [flake.ID.UnmarshalJSON]: reads that string, or a bare number up to 2^53.
//   - [flake.ID.MarshalJSONTo]: json/v2's encoder (GOEXPERIMENT=jsonv2).
//   - [flake.ID.UnmarshalJSONFrom]: json/v2's decoder (GOEXPERIMENT=jsonv2).
//   - [flake.ID.Value]: the int64 a bigint column stores, or [ErrZeroID].
//   - [flake.ID.Scan]: reads a bigint from database/sql; NULL is refused.
//   - [flake.ID.GormDataType]: declares a GORM column as a plain bigint.
//   - [flake.ID.MarshalGQL]: the GraphQL string (gqlgen).
//   - [flake.ID.UnmarshalGQL]: reads a GraphQL string (gqlgen).
//   - [flake.ID.Bind]: reads a URL parameter (oapi-codegen).
type ID = flake.ID

// NullID is an ID for a nullable bigint column: Valid false for NULL. It
// is an alias of [sqltype.NullID], where its methods are documented; they
// are:
//
//   - [sqltype.NullID.String]: the ID's text form, or NULL when not valid.
//   - [sqltype.NullID.Format]: prints as its ID does when valid.
//   - [sqltype.NullID.IsZero]: not valid, or the zero ID.
//   - [sqltype.NullID.AppendText], [sqltype.NullID.MarshalText]: the text
//     form; empty when not valid.
//   - [sqltype.NullID.UnmarshalText]: the text form; empty text is not valid.
//   - [sqltype.NullID.AppendBinary], [sqltype.NullID.MarshalBinary]: the
//     8-byte form; empty when not valid.
//   - [sqltype.NullID.UnmarshalBinary]: the 8-byte form; empty is not valid.
//   - [sqltype.NullID.MarshalJSON]: null when not valid, else the ID's string.
//   - [sqltype.NullID.UnmarshalJSON]: null or "" is not valid, else an ID.
//   - [sqltype.NullID.Value]: nil when not valid, else the ID's int64.
//   - [sqltype.NullID.Scan]: NULL and 0 are not valid; negatives refused.
//   - [sqltype.NullID.GormDataType]: declares a GORM column as a plain bigint.
type NullID = sqltype.NullID

// TextID is an ID stored as 13-character text. It is an alias of
// [sqltype.TextID], which embeds [ID] and has its methods, and three of its
// own, documented there:
//
//   - [sqltype.TextID.Value]: the 13-character string, for database/sql.
//   - [sqltype.TextID.Scan]: reads the text form from a text column.
//   - [sqltype.TextID.GormDataType]: declares a GORM column as varchar(13).
type TextID = sqltype.TextID

// Bound is an ID used as a query bound, where the zero ID means "below
// every ID", as the first cursor of keyset pagination. It is an alias of
// [sqltype.Bound], where its methods are documented; they are:
//
//   - [sqltype.Bound.Value]: the int64, 0 for the zero ID.
//   - [sqltype.Bound.String]: the 13-character text form.
//   - [sqltype.Bound.Format]: prints as an ID does.
type Bound = sqltype.Bound

// TrustedID is an ID for decoding JSON written with exact integers, as
// PostgreSQL's row_to_json and json_agg write it. It is an alias of
// [flake.TrustedID], which embeds [ID] and has its methods, and its own
// decoders, documented there:
//
//   - [flake.TrustedID.UnmarshalJSON]: a bare integer up to 2^63-1, exactly.
//   - [flake.TrustedID.UnmarshalJSONFrom]: the same for json/v2
//     (GOEXPERIMENT=jsonv2).
type TrustedID = flake.TrustedID

// Prefix names the prefix of a [Prefixed] ID type; see flake.Prefix.
type Prefix = flake.Prefix

// Prefixed is an ID whose text form carries its type's prefix,
// cus_00EZJCRCB4650, stored as the same bigint as [ID]; see flake.Prefixed.
// Declare one per entity, with an exported marker (flake.Prefix says why):
//
//	type CustomerPrefix struct{}
//
//	func (CustomerPrefix) Prefix() string { return "cus" }
//
//	type CustomerID = ulidflake.Prefixed[CustomerPrefix]
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

// ErrMonotonicOverflow is the error of [New] and [Generator]'s New when
// this millisecond's IDs are used up: flake.ErrMonotonicOverflow.
var ErrMonotonicOverflow = flake.ErrMonotonicOverflow

// ErrClockBehind is the error of [New], [NewWait] and [Generator]'s
// methods when the clock has stepped back further than the generator's
// max lead (10 s by default): they make no ID until the clock catches up
// or the generator is Reset: flake.ErrClockBehind.
var ErrClockBehind = flake.ErrClockBehind

// ErrTimeRange is the error of [NewAt] for a time before the epoch or
// past the last millisecond an ID holds; its message names the fix, an
// earlier epoch chosen before the first ID: flake.ErrTimeRange.
var ErrTimeRange = flake.ErrTimeRange

// ErrOption: an invalid option, of a generator or of any package of this
// module; the error names the option and its value. See [flake.ErrOption].
var ErrOption = flake.ErrOption

// Generator makes IDs. It is an alias of [flake.Generator], where its
// methods are documented: [flake.Generator.New], [flake.Generator.NewWait],
// [flake.Generator.NewAt], [flake.Generator.Epoch], [flake.Generator.Ceiling]
// and [flake.Generator.Reset].
type Generator = flake.Generator

// Source is anything that makes IDs: a *Generator, a *sidlease.Lease or a
// *blocks.Source. See [flake.Source].
type Source = flake.Source

// Option configures a [Generator]: [WithEpoch], [WithSID],
// [WithObserver], and the options of package flake (flake.WithEntropy,
// flake.WithClock, flake.WithMaxLead, ...).
type Option = flake.Option

// NewGenerator returns a generator configured by opts; see
// flake.NewGenerator.
func NewGenerator(opts ...Option) (*Generator, error) { return flake.NewGenerator(opts...) }

// Observer receives a generator's events (overflows, waits, clock steps)
// for metrics: see [flake.Observer], [flake.Event], and the OpenTelemetry
// adapter, package github.com/ulidflake/ulidflake/otelulidflake.
type Observer = flake.Observer

// WithObserver sends the generator's events to o; see flake.WithObserver.
func WithObserver(o Observer) Option { return flake.WithObserver(o) }

// WithSID selects the scalable layout with the SID sid (0..31):
// generators with distinct SIDs never make the same ID; see flake.WithSID.
func WithSID(sid int) Option { return flake.WithSID(sid) }

// Epoch is the time an ID's timestamp counts from. An ID does not carry
// it, so an ID's time and a time's bounds are read through one: the
// generator's (g.Epoch()) or [DefaultEpoch]. It is an alias of
// [flake.Epoch], where its methods are documented: [flake.Epoch.Time],
// [flake.Epoch.MinID], [flake.Epoch.MaxID], [flake.Epoch.Timestamp],
// [flake.Epoch.UnixMilli] and [flake.Epoch.String].
type Epoch = flake.Epoch

// DefaultEpoch returns the default epoch, 2024-01-01T00:00:00Z, the epoch
// of [New], [NewAt] and every generator not given [WithEpoch]:
// DefaultEpoch().Time(id) reads their IDs' times, and
// DefaultEpoch().MinID(t) bounds a time range; see flake.DefaultEpoch.
func DefaultEpoch() Epoch { return flake.DefaultEpoch() }

// NewEpoch returns the epoch that starts at t, truncated to the
// millisecond; see flake.NewEpoch.
func NewEpoch(t time.Time) (Epoch, error) { return flake.NewEpoch(t) }

// WithEpoch makes a generator count from e instead of the default epoch,
// 2024-01-01; see flake.WithEpoch. Read its IDs' times with e.Time(id).
func WithEpoch(e Epoch) Option { return flake.WithEpoch(e) }

// New returns an ID from the process's default stand-alone generator. It
// returns [ErrMonotonicOverflow] when this millisecond's capacity (at
// least flake.MinBurst, 2,056 IDs, about 6,100 on average) is used up;
// [NewWait] waits instead.
func New() (ID, error) { return flake.New() }

// NewWait returns an ID from the default generator, waiting for the next
// millisecond when this one is used up, until ctx ends.
func NewWait(ctx context.Context) (ID, error) { return flake.NewWait(ctx) }

// NewAt returns a new ID for the time t rather than the clock, for
// backfills (docs/backfill.md), or [ErrTimeRange] for a time before
// 2024-01-01 (the default epoch): history older than that needs a
// generator with an earlier epoch ([WithEpoch]). See
// [flake.Generator.NewAt].
func NewAt(t time.Time) (ID, error) { return flake.NewAt(t) }

// Parse decodes the 13-character text form; see flake.Parse.
func Parse(s string) (ID, error) { return flake.Parse(s) }

// MustParse is like [Parse] but panics on error.
func MustParse(s string) ID { return flake.MustParse(s) }

// ParseInt decodes the decimal integer form, as a bigint prints; see
// flake.ParseInt.
func ParseInt(s string) (ID, error) { return flake.ParseInt(s) }

// FromInt returns the ID with the value v, refusing a negative v, for an
// int64 from input you do not trust; see flake.FromInt.
func FromInt(v int64) (ID, error) { return flake.FromInt(v) }
