// Package ulidflake makes Ulid-Flake IDs a primary key for PostgreSQL: 64-bit,
// time-sortable, fitting an int64 and a bigint, written as 13 characters of
// Crockford Base32.
//
// This is the one import most programs need:
//
//	type Order struct {
//		ID ulidflake.ID // bigint primary key, 00EZJCRCB4650 in JSON
//	}
//
//	id, err := ulidflake.New()
//
// [ID] is sqltype.ID: a flake.ID that is also a driver.Valuer and
// sql.Scanner. The format, generator options and sentinel errors live in
// package flake; pgx support in pgxtype; GORM support in gormplugin.
package ulidflake

import (
	"context"
	"time"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sqltype"
)

// ID is a Ulid-Flake for a bigint column. See sqltype.ID.
type ID = sqltype.ID

// NullID is an ID for a nullable bigint column. See sqltype.NullID.
type NullID = sqltype.NullID

// TextID is an ID stored as 13-character text. See sqltype.TextID.
type TextID = sqltype.TextID

// ErrZeroID is the error of writing the zero (unset) ID, in every driver
// and by GORM. See sqltype.ErrZeroID.
var ErrZeroID = sqltype.ErrZeroID

// Bound is an ID used as a query bound, where the zero ID means "below
// every ID", as the first cursor of keyset pagination. See sqltype.Bound.
type Bound = sqltype.Bound

// New returns an ID from the process's default stand-alone generator. It
// returns flake.ErrMonotonicOverflow when this millisecond's capacity (at
// least flake.MinBurst, 2,056 IDs, about 6,000 on average) is used up;
// [NewWait] waits instead.
func New() (ID, error) {
	id, err := flake.New()
	return ID(id), err
}

// NewWait returns an ID from the default generator, waiting for the next
// millisecond when this one is used up, until ctx ends.
func NewWait(ctx context.Context) (ID, error) {
	id, err := flake.NewWait(ctx)
	return ID(id), err
}

// Parse decodes the 13-character text form; see flake.Parse.
func Parse(s string) (ID, error) {
	id, err := flake.Parse(s)
	return ID(id), err
}

// MustParse is like [Parse] but panics on error.
func MustParse(s string) ID { return ID(flake.MustParse(s)) }

// ParseInt decodes the decimal form; see flake.ParseInt.
func ParseInt(s string) (ID, error) {
	id, err := flake.ParseInt(s)
	return ID(id), err
}

// FromInt converts an int64, refusing negative values; see flake.FromInt.
func FromInt(v int64) (ID, error) {
	id, err := flake.FromInt(v)
	return ID(id), err
}

// MinID returns the smallest ID of t's millisecond under flake.DefaultEpoch,
// the lower bound of a time-range query (id >= MinID(from) AND id <
// MinID(to)); see flake.MinID.
func MinID(t time.Time) (ID, error) {
	id, err := flake.MinID(t)
	return ID(id), err
}

// MaxID returns the largest ID of t's millisecond under flake.DefaultEpoch;
// see flake.MaxID.
func MaxID(t time.Time) (ID, error) {
	id, err := flake.MaxID(t)
	return ID(id), err
}

// Generator makes IDs of type [ID]; see flake.Generator.
type Generator struct{ g *flake.Generator }

// NewGenerator returns a generator configured by flake options
// (flake.WithSID, flake.WithEpoch, flake.WithEntropy, ...).
func NewGenerator(opts ...flake.Option) (*Generator, error) {
	g, err := flake.NewGenerator(opts...)
	if err != nil {
		return nil, err
	}
	return &Generator{g}, nil
}

// New returns the next ID; see flake.Generator.New.
func (g *Generator) New() (ID, error) {
	id, err := g.g.New()
	return ID(id), err
}

// NewWait returns the next ID, waiting out a used-up millisecond; see
// flake.Generator.NewWait.
func (g *Generator) NewWait(ctx context.Context) (ID, error) {
	id, err := g.g.NewWait(ctx)
	return ID(id), err
}

// Reset makes the generator forget its last ID, after
// flake.ErrClockBehind once the clock is right; see flake.Generator.Reset.
func (g *Generator) Reset() { g.g.Reset() }
