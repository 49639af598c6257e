package sqltype

import (
	"database/sql/driver"
)

// NullID is an ID that may be NULL, for nullable bigint columns (a
// reference that is optional, say). Valid is false for NULL. It marshals to
// JSON null when not valid.
type NullID struct {
	ID    ID
	Valid bool
}

// Value implements [driver.Valuer]: nil when not valid, else the ID's
// Value (so a valid zero ID is still [ErrZeroID]).
func (n NullID) Value() (driver.Value, error) {
	if !n.Valid {
		return nil, nil
	}
	return n.ID.Value()
}

// Scan implements [sql.Scanner]: NULL makes it not valid; anything else is
// scanned as by [ID.Scan].
func (n *NullID) Scan(src any) error {
	if src == nil {
		*n = NullID{}
		return nil
	}
	if err := n.ID.Scan(src); err != nil {
		*n = NullID{}
		return err
	}
	n.Valid = true
	return nil
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

// UnmarshalJSON implements [json.Unmarshaler]: null makes it not valid.
func (n *NullID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = NullID{}
		return nil
	}
	var id ID
	if err := id.UnmarshalJSON(b); err != nil {
		return err
	}
	*n = NullID{ID: id, Valid: true}
	return nil
}
