package flake

import (
	"database/sql/driver"
	"fmt"

	"github.com/ulidflake/ulidflake/internal/bigint"
)

func init() {
	bigint.Read = func(v int64, null bool) (int64, bool, error) {
		id, valid, err := fromColumn(v, null)
		return int64(id), valid, err
	}
	bigint.Write = func(id int64) (int64, error) { return ID(id).columnValue() }
}

// fromColumn is the rule for reading a bigint column as an ID
// (bigint.Read): the verdicts are listed there.
func fromColumn(v int64, null bool) (id ID, valid bool, err error) {
	switch {
	case null:
		return 0, false, ErrNull
	case v < 0:
		return 0, false, intRangeError(v)
	}
	return ID(v), v != 0, nil
}

// columnValue is the rule for writing an ID to a bigint column
// (bigint.Write): the int64 that stores id, [ErrZeroID] for the zero ID,
// [ErrRange] for a negative value.
func (id ID) columnValue() (int64, error) {
	switch {
	case id == 0:
		return 0, ErrZeroID
	case id < 0:
		return 0, intRangeError(int64(id))
	}
	return int64(id), nil
}

// Value implements [driver.Valuer]: the int64 that stores id. The zero ID
// is [ErrZeroID], so that a key that was never filled is not stored as 0,
// and a negative value [ErrRange]. A driver cannot tell a value being
// stored from one being compared: where zero is meant, as the first
// cursor of keyset pagination, pass a ulidflake.Bound.
func (id ID) Value() (driver.Value, error) {
	v, err := id.columnValue()
	if err != nil {
		return nil, err
	}
	return v, nil
}

// Scan implements [sql.Scanner]; 0 reads as the zero ID. It accepts what
// drivers hand over for a bigint: an int64, or a decimal integer as
// []byte or string; an ID or *ID, as code generators such as ent pass
// them; and any other [driver.Valuer] whose value it accepts. It returns
// [ErrNull] for NULL (a nil *ID included), [ErrType] for any other type,
// the error of [FromInt] or [ParseInt] for a negative value or a
// non-integer, and a Valuer's own error as it is (ErrZeroID for a valid
// NullID holding zero). On error it leaves id unchanged.
func (id *ID) Scan(src any) error {
	v, null, err := column(src, 0)
	if err != nil {
		return err
	}
	got, _, err := fromColumn(v, null)
	if err != nil {
		return err
	}
	*id = got
	return nil
}

// column returns the int64 that src, a value [ID.Scan] is given, holds,
// or null for NULL.
func column(src any, depth int) (v int64, null bool, err error) {
	switch s := src.(type) {
	case int64:
		return s, false, nil
	case []byte:
		id, err := ParseInt(string(s))
		return int64(id), false, err
	case string:
		id, err := ParseInt(s)
		return int64(id), false, err
	case ID:
		return int64(s), false, nil
	case *ID:
		if s == nil {
			return 0, true, nil
		}
		return int64(*s), false, nil
	case nil:
		return 0, true, nil
	case driver.Valuer:
		if depth > 0 {
			break // a Valuer whose value is a Valuer: not a column's value
		}
		v, err := s.Value()
		if err != nil {
			return 0, false, err // its own reason, such as ErrZeroID
		}
		return column(v, depth+1)
	}
	return 0, false, fmt.Errorf("%w: %T %v is not an int64 or a decimal integer", ErrType, src, src)
}

// GormDataType declares a GORM column of this type as a plain bigint: not
// bigserial, not identity, and without GORM's assumption that an integer
// primary key is filled by the database. (GORM finds the method by its
// name; this package does not import GORM.)
func (ID) GormDataType() string { return "bigint" }
