package sqltype

import (
	"database/sql/driver"
	"fmt"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/bigint"
)

// Bound is an ID used as a query bound, where the zero ID means "below
// every ID": the first page of keyset pagination, say. Unlike an ID, its
// Value writes the zero ID (as 0) instead of refusing it. Use it only for
// comparisons, never for a value that is stored.
//
//	rows, err := db.Query(`SELECT id, name FROM customers WHERE id > $1 ORDER BY id LIMIT 100`, sqltype.Bound(cursor))
type Bound flake.ID

// Value implements [driver.Valuer]: the int64, 0 for the zero ID. Any
// other ID is written as flake.ID.Value writes it, which returns
// flake.ErrRange for a negative value.
func (b Bound) Value() (driver.Value, error) {
	if b == 0 {
		return int64(0), nil // below every ID
	}
	v, err := bigint.Write(int64(b))
	if err != nil {
		return nil, err
	}
	return v, nil
}

// String returns the 13-character text form.
func (b Bound) String() string { return flake.ID(b).String() }

// Format implements fmt.Formatter as flake.ID.Format does.
func (b Bound) Format(f fmt.State, verb rune) { flake.ID(b).Format(f, verb) }
