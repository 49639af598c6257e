package flake

import (
	"database/sql/driver"
	"fmt"
)

// Value implements [driver.Valuer], so that a flake.ID is never stored by
// accident as 0: it returns the int64, [ErrZeroID] for the zero ID and
// [ErrIntRange] for a negative value. Models and queries normally use the
// root package's ulidflake.ID, which also scans; flake.ID has this method so
// that a model field declared as flake.ID behaves the same when written.
func (id ID) Value() (driver.Value, error) {
	if id == 0 {
		return nil, ErrZeroID
	}
	if id < 0 {
		return nil, fmt.Errorf("flake: ID argument: %w", intRangeError(int64(id)))
	}
	return int64(id), nil
}

// GormDataType declares a GORM column of this type as a plain bigint: not
// bigserial, not identity, and without GORM's assumption that an integer
// primary key is filled by the database. (GORM finds the method by its
// name; this package does not import GORM.)
func (ID) GormDataType() string { return "bigint" }
