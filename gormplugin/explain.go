package gormplugin

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/ulidflake/ulidflake/flake"
)

// explainZeroID runs after GORM's INSERT: when the driver refused a zero
// ID (flake.ErrZeroID names no column), it names the columns of the
// INSERT whose values are zero IDs, and says why a reference can be zero.
func explainZeroID(db *gorm.DB) {
	st := db.Statement
	var done *zeroIDError
	if !errors.Is(db.Error, flake.ErrZeroID) || errors.As(db.Error, &done) || st.Schema == nil {
		return
	}
	c, ok := st.Clauses["VALUES"]
	if !ok {
		return
	}
	values, _ := c.Expression.(clause.Values)
	var zero []string
	for i, col := range values.Columns {
		for _, row := range values.Values {
			if i < len(row) && isZeroID(row[i]) {
				name := st.Table + "." + col.Name
				if f := st.Schema.LookUpField(col.Name); f != nil {
					name = fmt.Sprintf("%s.%s (%s)", st.Schema.Name, f.Name, name)
				}
				zero = append(zero, name)
				break
			}
		}
	}
	if len(zero) > 0 {
		db.Error = &zeroIDError{fields: strings.Join(zero, ", "), err: db.Error}
	}
}

// isZeroID reports whether v is a value whose Value method refuses it as
// the zero ID.
func isZeroID(v any) bool {
	valuer, ok := v.(driver.Valuer)
	if !ok {
		return false
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return false // NULL
	}
	_, err := valuer.Value()
	return errors.Is(err, flake.ErrZeroID)
}

// zeroIDError is flake.ErrZeroID with the fields that hold the zero ID.
type zeroIDError struct {
	fields string
	err    error
}

func (e *zeroIDError) Error() string {
	return "gormplugin: " + e.fields + " holds the zero ID: a reference never set, " +
		"or set from a row that ON CONFLICT did not write: " + e.err.Error()
}

func (e *zeroIDError) Unwrap() error { return e.err }
