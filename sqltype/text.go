package sqltype

import (
	"database/sql/driver"
	"fmt"

	"github.com/ulidflake/ulidflake/flake"
)

// TextID is an ID stored in its 13-character text form, for char(13) or
// text columns. It has all the methods of flake.ID but writes and scans the
// Base32 text. Prefer an ID and bigint for new schemas: half the size, and
// sorted by the database as numbers.
type TextID struct{ flake.ID }

// Value implements [driver.Valuer]: the 13-character string (a string,
// not bytes, so that SQLite stores text, which compares equal to the text
// form). It returns flake.ErrZeroID for the zero ID.
func (t TextID) Value() (driver.Value, error) {
	if t.ID == 0 {
		return nil, flake.ErrZeroID
	}
	return t.ID.String(), nil
}

// Scan implements [sql.Scanner]. It accepts the text form as string or
// []byte, with the rules of flake.Parse (case-insensitive, exactly 13
// bytes; a char(13) column pads nothing, since the form is always 13), and
// ID, flake.ID and pointers to them. It returns flake.ErrNull for NULL and
// flake.ErrType for other types.
func (t *TextID) Scan(src any) error {
	var v flake.ID
	var err error
	switch s := src.(type) {
	case string:
		v, err = flake.Parse(s)
	case []byte:
		v, err = flake.Parse(string(s))
	case nil:
		return flake.ErrNull
	case flake.ID, *flake.ID, Bound: // the module's own types, as code generators pass them
		return t.ID.Scan(src)
	case TextID:
		*t = s
		return nil
	case *TextID:
		if s == nil {
			return flake.ErrNull
		}
		*t = *s
		return nil
	default:
		return fmt.Errorf("%w: %T %v is not text", flake.ErrType, src, src)
	}
	if err != nil {
		return fmt.Errorf("sqltype: scanning text ID: %w", err)
	}
	t.ID = v
	return nil
}

// GormDataType declares the column as varchar(13): the form is always 13
// characters, and GORM's PostgreSQL migrator, which reads char(13) back as
// bpchar, would alter a char(13) column again on every AutoMigrate.
func (TextID) GormDataType() string { return "varchar(13)" }
