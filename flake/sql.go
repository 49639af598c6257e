package flake

import (
	"database/sql/driver"
	"fmt"
)

// Value implements [driver.Valuer]: the int64. It returns [ErrZeroID] for
// the zero ID, so that a key that was never filled is not stored as 0, and
// [ErrIntRange] for a negative value. A driver cannot tell a value being
// stored from one being compared: where zero is meant, as the first cursor
// of keyset pagination, pass a ulidflake.Bound.
func (id ID) Value() (driver.Value, error) {
	if id == 0 {
		return nil, ErrZeroID
	}
	if id < 0 {
		return nil, fmt.Errorf("flake: ID argument: %w", intRangeError(int64(id)))
	}
	return int64(id), nil
}

// Scan implements [sql.Scanner]. It accepts what drivers hand over for a
// bigint: an int64, or a decimal integer as []byte or string; an ID or *ID,
// as code generators such as ent pass them; and any other
// [driver.Valuer] whose value it accepts. It returns [ErrNull] for NULL (a
// nil *ID included), [ErrType] for any other type, and the error of
// [FromInt] or [ParseInt] for a negative value or a non-integer.
func (id *ID) Scan(src any) error {
	v, err := scan(src, 0)
	if err != nil {
		return fmt.Errorf("flake: scanning ID: %w", err)
	}
	*id = v
	return nil
}

func scan(src any, depth int) (ID, error) {
	switch s := src.(type) {
	case int64:
		return FromInt(s)
	case []byte:
		return ParseInt(string(s))
	case string:
		return ParseInt(s)
	case ID:
		return FromInt(int64(s))
	case *ID:
		if s == nil {
			return 0, ErrNull
		}
		return FromInt(int64(*s))
	case nil:
		return 0, ErrNull
	case driver.Valuer:
		if v, err := s.Value(); err == nil && depth == 0 {
			return scan(v, depth+1)
		}
	}
	return 0, fmt.Errorf("%w: %T %v is not an int64 or a decimal integer", ErrType, src, src)
}

// GormDataType declares a GORM column of this type as a plain bigint: not
// bigserial, not identity, and without GORM's assumption that an integer
// primary key is filled by the database. (GORM finds the method by its
// name; this package does not import GORM.)
func (ID) GormDataType() string { return "bigint" }
