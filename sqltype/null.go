package sqltype

import (
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/bigint"
)

// The not-valid NullID has no text and no binary form: it marshals to an
// empty slice, and an empty input (or JSON "", what an HTML form sends for
// an empty field) unmarshals to it.

// NullID is an ID that may be NULL, for nullable bigint columns (a
// reference that is optional, say). Valid is false for NULL. It marshals to
// JSON null when not valid.
type NullID struct {
	ID    flake.ID
	Valid bool
}

// Value implements [driver.Valuer]: nil when not valid, else the ID's
// value as flake.ID.Value writes it (so a valid zero ID is still
// flake.ErrZeroID).
func (n NullID) Value() (driver.Value, error) {
	if !n.Valid {
		return nil, nil
	}
	v, err := bigint.Write(int64(n.ID))
	if errors.Is(err, flake.ErrZeroID) {
		return nil, errValidZero
	} else if err != nil {
		return nil, err
	}
	return v, nil
}

// errValidZero is the error of a NullID that is valid but holds the zero
// ID; errors.Is(errValidZero, flake.ErrZeroID) holds.
var errValidZero = fmt.Errorf("sqltype: NullID{Valid: true} holds the zero ID (for NULL, leave Valid false): %w", flake.ErrZeroID)

// Scan implements [sql.Scanner], by the rule of flake.ID.Scan: NULL
// makes it not valid; so do a nil *ID, a NullID or *NullID that is not
// valid, and a zero ID (a 0 in the column). Anything else is scanned as by
// ID.Scan. On error it is left not valid.
func (n *NullID) Scan(src any) error {
	switch s := src.(type) {
	case NullID:
		return n.set(s.ID, !s.Valid)
	case *NullID:
		if s == nil {
			return n.set(0, true)
		}
		return n.set(s.ID, !s.Valid)
	}
	var id flake.ID
	err := id.Scan(src)
	if errors.Is(err, flake.ErrNull) {
		return n.set(0, true)
	} else if err != nil {
		*n = NullID{}
		return err
	}
	return n.set(id, false)
}

// set sets n to what a column holding id, or NULL, reads as, by the rule
// of flake.ID.Scan. On error it leaves n not valid.
func (n *NullID) set(id flake.ID, null bool) error {
	v, valid, err := bigint.Read(int64(id), null)
	*n = NullID{ID: flake.ID(v), Valid: valid}
	if null {
		return nil // NULL is what a NullID holds when not valid
	}
	return err
}

// GormDataType declares the column as a plain bigint.
func (NullID) GormDataType() string { return "bigint" }

// MarshalJSON implements [json.Marshaler]: null when not valid, else the
// ID's string.
func (n NullID) MarshalJSON() ([]byte, error) {
	if !n.Valid {
		return []byte("null"), nil
	}
	return n.ID.MarshalJSON()
}

// IsZero reports whether n is not valid, or holds the zero ID.
func (n NullID) IsZero() bool { return !n.Valid || n.ID == 0 }

// AppendText appends the text form to b; nothing when not valid.
func (n NullID) AppendText(b []byte) ([]byte, error) {
	if !n.Valid {
		return b, nil
	}
	return n.ID.AppendText(b)
}

// MarshalText implements [encoding.TextMarshaler]: empty when not valid.
func (n NullID) MarshalText() ([]byte, error) { return n.AppendText(nil) }

// UnmarshalText implements [encoding.TextUnmarshaler]: empty text makes it
// not valid; anything else is parsed as by flake.Parse.
func (n *NullID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*n = NullID{}
		return nil
	}
	var id flake.ID
	if err := id.UnmarshalText(b); err != nil {
		return err
	}
	return n.set(id, false) // the zero ID is unset: NULL
}

// AppendBinary appends the 8-byte form to b; nothing when not valid.
func (n NullID) AppendBinary(b []byte) ([]byte, error) {
	if !n.Valid {
		return b, nil
	}
	return n.ID.AppendBinary(b)
}

// MarshalBinary implements [encoding.BinaryMarshaler]: empty when not
// valid, else 8 bytes, big-endian.
func (n NullID) MarshalBinary() ([]byte, error) { return n.AppendBinary(nil) }

// UnmarshalBinary implements [encoding.BinaryUnmarshaler]: empty input makes
// it not valid; otherwise it must be 8 bytes.
func (n *NullID) UnmarshalBinary(b []byte) error {
	if len(b) == 0 {
		*n = NullID{}
		return nil
	}
	var id flake.ID
	if err := id.UnmarshalBinary(b); err != nil {
		return err
	}
	return n.set(id, false) // the zero ID is unset: NULL
}

// UnmarshalJSON implements [json.Unmarshaler]: null, "" (an empty form
// field) and the zero ID make it not valid.
func (n *NullID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" || string(b) == `""` {
		*n = NullID{}
		return nil
	}
	var id flake.ID
	if err := id.UnmarshalJSON(b); err != nil {
		return err
	}
	return n.set(id, false) // the zero ID is unset: NULL
}

// nullText is what a not-valid NullID prints.
const nullText = "NULL"

// String returns the text form of the ID, or NULL when not valid.
func (n NullID) String() string {
	if !n.Valid {
		return nullText
	}
	return n.ID.String()
}

// Format implements fmt.Formatter: a valid NullID prints as its ID does
// (see flake.ID.Format: %s, %v and %q the text form, %d, %x and %X the
// integer); a not-valid one prints NULL, unquoted, for every verb, padded
// with spaces to the width (on the right with the - flag); no other flag
// or precision applies, so it is never taken for an ID, a number or a
// string.
func (n NullID) Format(f fmt.State, verb rune) {
	if n.Valid {
		n.ID.Format(f, verb)
		return
	}
	width, _ := f.Width()
	if f.Flag('-') {
		fmt.Fprintf(f, "%-*s", width, nullText)
		return
	}
	fmt.Fprintf(f, "%*s", width, nullText)
}
