// Package sqltype provides Ulid-Flake types for database/sql: [ID] for
// bigint columns, [NullID] for nullable ones and [TextID] for IDs stored as
// 13-character text.
//
// # Zero IDs are never written
//
// The zero ID means "unset". Writing it as a key is the classic silent bug:
// a model whose ID was never filled in lands as row 0, and the next one
// fails with a duplicate key, or worse, overwrites it. So [ID.Value] and
// [TextID.Value] return [ErrZeroID] for the zero ID, and the statement fails
// before it reaches the database. Use [NullID] (or sql.Null[ID]) for a
// column that may be NULL.
//
// A driver cannot tell a value being stored from a value being compared, so
// this holds for every statement argument. Where the zero ID is meant, as
// the "from the start" cursor of keyset pagination (WHERE id > $1), pass
// [Bound](cursor): it writes the zero ID as 0, which sorts below every ID.
//
// # Reading
//
// [ID.Scan] accepts what drivers hand over for a bigint: an int64, or a
// decimal integer as []byte or string; and this module's own ID types
// (ID, flake.ID and pointers to them, as code generators such as ent pass
// them). It rejects NULL ([ErrNull]), negative values, non-integers and
// other types, with errors that name the value.
//
// This package depends on the standard library only; most programs use it
// through the root package github.com/ulidflake/ulidflake, whose ID is this
// ID.
package sqltype

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/ulidflake/ulidflake/flake"
)

// Errors, besides those of package flake that Scan passes through
// (flake.ErrIntRange for a negative value, flake.ErrCharacter for a
// non-integer, and so on).
var (
	// ErrZeroID: a zero (unset) ID was passed as a statement argument. It
	// is refused so that it is never stored as a key. It is flake.ErrZeroID.
	ErrZeroID = flake.ErrZeroID
	// ErrNull: a NULL was scanned into an ID or TextID.
	ErrNull = errors.New("sqltype: NULL scanned into a non-null ID (use NullID)")
	// ErrType: a value of a type no Ulid-Flake column holds was scanned.
	ErrType = errors.New("sqltype: cannot scan into an ID")
)

// ID is a Ulid-Flake stored as a bigint. It has all the behaviour of
// flake.ID (text, binary and JSON forms, fields, time, comparison with <)
// and implements [driver.Valuer] and [sql.Scanner]. Convert with ID(x) and
// flake.ID(x); both are free.
type ID flake.ID

// Flake returns id as a flake.ID.
func (id ID) Flake() flake.ID { return flake.ID(id) }

// Value implements [driver.Valuer]: the int64. It returns [ErrZeroID] for
// the zero ID.
func (id ID) Value() (driver.Value, error) {
	if id == 0 {
		return nil, ErrZeroID
	}
	if id < 0 {
		return nil, fmt.Errorf("sqltype: writing ID: %w: %d is negative", flake.ErrIntRange, int64(id))
	}
	return int64(id), nil
}

// Scan implements [sql.Scanner]. It accepts an int64, a decimal integer as
// []byte or string, and ID, flake.ID and pointers to them. It returns
// [ErrNull] for NULL (a nil pointer included), [ErrType] for any other type,
// and the error of flake.FromInt or flake.ParseInt for a negative value or a
// non-integer.
func (id *ID) Scan(src any) error {
	v, err := scanInt(src)
	if err != nil {
		return err
	}
	*id = ID(v)
	return nil
}

func scanInt(src any) (flake.ID, error) {
	var v flake.ID
	var err error
	switch s := src.(type) {
	case int64:
		v, err = flake.FromInt(s)
	case []byte:
		v, err = flake.ParseInt(string(s))
	case string:
		v, err = flake.ParseInt(s)
	case ID:
		v, err = flake.FromInt(int64(s))
	case flake.ID:
		v, err = flake.FromInt(int64(s))
	case *ID:
		if s == nil {
			return 0, ErrNull
		}
		v, err = flake.FromInt(int64(*s))
	case *flake.ID:
		if s == nil {
			return 0, ErrNull
		}
		v, err = flake.FromInt(int64(*s))
	case Bound:
		v, err = flake.FromInt(int64(s))
	case nil:
		return 0, ErrNull
	default:
		return 0, fmt.Errorf("%w: %T %v is not an int64 or a decimal integer", ErrType, src, src)
	}
	if err != nil {
		return 0, fmt.Errorf("sqltype: scanning ID: %w", err)
	}
	return v, nil
}

// GormDataType tells GORM to declare the column as a plain bigint: not
// bigserial, and without GORM's auto-increment assumption for integer keys.
func (ID) GormDataType() string { return "bigint" }

// String returns the 13-character text form; see flake.ID.String.
func (id ID) String() string { return flake.ID(id).String() }

// AppendText appends the text form to b; see flake.ID.AppendText.
func (id ID) AppendText(b []byte) ([]byte, error) { return flake.ID(id).AppendText(b) }

// MarshalText implements [encoding.TextMarshaler].
func (id ID) MarshalText() ([]byte, error) { return flake.ID(id).MarshalText() }

// UnmarshalText implements [encoding.TextUnmarshaler]; see flake.Parse.
func (id *ID) UnmarshalText(b []byte) error { return (*flake.ID)(id).UnmarshalText(b) }

// AppendBinary appends the 8-byte big-endian form to b.
func (id ID) AppendBinary(b []byte) ([]byte, error) { return flake.ID(id).AppendBinary(b) }

// MarshalBinary implements [encoding.BinaryMarshaler].
func (id ID) MarshalBinary() ([]byte, error) { return flake.ID(id).MarshalBinary() }

// UnmarshalBinary implements [encoding.BinaryUnmarshaler].
func (id *ID) UnmarshalBinary(b []byte) error { return (*flake.ID)(id).UnmarshalBinary(b) }

// MarshalJSON implements [json.Marshaler]: a string; see flake.ID.MarshalJSON.
func (id ID) MarshalJSON() ([]byte, error) { return flake.ID(id).MarshalJSON() }

// UnmarshalJSON implements [json.Unmarshaler]; see flake.ID.UnmarshalJSON.
func (id *ID) UnmarshalJSON(b []byte) error { return (*flake.ID)(id).UnmarshalJSON(b) }

// Int64 returns the ID as an int64.
func (id ID) Int64() int64 { return int64(id) }

// IsZero reports whether id is the unset ID.
func (id ID) IsZero() bool { return id == 0 }

// Compare returns -1, 0 or +1 as id is less than, equal to or greater than
// other.
func (id ID) Compare(other ID) int { return flake.ID(id).Compare(flake.ID(other)) }

// Timestamp returns the raw timestamp field, ms since the epoch.
func (id ID) Timestamp() int64 { return flake.ID(id).Timestamp() }

// Randomness returns the 20-bit randomness of the stand-alone layout.
func (id ID) Randomness() uint32 { return flake.ID(id).Randomness() }

// ScalableRandomness returns the 15-bit randomness of the scalable layout.
func (id ID) ScalableRandomness() uint16 { return flake.ID(id).ScalableRandomness() }

// SID returns the scalability id of the scalable layout.
func (id ID) SID() int { return flake.ID(id).SID() }

// Time returns the time carried by id under flake.DefaultEpoch; use
// flake.Epoch.Time for another epoch.
func (id ID) Time() time.Time { return flake.ID(id).Time() }
