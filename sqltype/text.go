package sqltype

import (
	"database/sql/driver"
	"fmt"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/bigint"
)

// TextID is an ID stored in its 13-character text form, for char(13) or
// text columns. It has all the methods of flake.ID but writes and scans the
// Base32 text. Prefer an ID and bigint for new schemas: half the size, and
// sorted by the database as numbers.
type TextID struct{ flake.ID }

// Value implements [driver.Valuer]: the 13-character string (a string,
// not bytes, so that SQLite stores text, which compares equal to the text
// form). It refuses what flake.ID.Value refuses: the zero ID
// (flake.ErrZeroID) and a negative one (flake.ErrRange).
func (t TextID) Value() (driver.Value, error) {
	if _, err := bigint.Write(int64(t.ID)); err != nil {
		return nil, err
	}
	return t.ID.String(), nil
}

// Scan implements [sql.Scanner]. It accepts the text form as string or
// []byte, with the rules of flake.Parse (case-insensitive, exactly 13
// bytes; a char(13) column pads nothing, since the form is always 13), and
// ID, TextID, Bound and pointers to them, as ID.Scan takes them. It
// returns flake.ErrNull for NULL, flake.ErrRange for a negative ID and
// flake.ErrType for other types.
func (t *TextID) Scan(src any) error {
	switch s := src.(type) {
	case string:
		return t.parse(s)
	case []byte:
		return t.parse(string(s))
	case TextID: // the module's own types, as code generators pass them
		src = s.ID
	case *TextID:
		src = (*flake.ID)(nil)
		if s != nil {
			src = s.ID
		}
	case nil, flake.ID, *flake.ID, Bound:
	default:
		return fmt.Errorf("%w: %T %v is not text", flake.ErrType, src, src)
	}
	return t.ID.Scan(src)
}

func (t *TextID) parse(s string) error {
	id, err := flake.Parse(s)
	if err != nil {
		return fmt.Errorf("sqltype: scanning text ID: %w", err)
	}
	t.ID = id
	return nil
}

// GormDataType declares the column as varchar(13): the form is always 13
// characters, and GORM's PostgreSQL migrator, which reads char(13) back as
// bpchar, would alter a char(13) column again on every AutoMigrate.
func (TextID) GormDataType() string { return "varchar(13)" }
