package gormplugin

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"gorm.io/gorm"

	"github.com/ulidflake/ulidflake/flake"
)

// explainZeroID runs after GORM's INSERT: when the driver refused a zero
// ID (flake.ErrZeroID names no column), it names the model's ID fields
// that hold zero, and says why a reference can be zero.
func explainZeroID(db *gorm.DB) {
	st := db.Statement
	var done *zeroIDError
	if !errors.Is(db.Error, flake.ErrZeroID) || errors.As(db.Error, &done) || st.Schema == nil {
		return
	}
	var zero []string
	for _, f := range st.Schema.Fields {
		if f.DBName == "" || !f.Creatable || f.FieldType.Kind() == reflect.Pointer || !isIDType(f.FieldType) {
			continue
		}
		_ = eachValue(reflect.Indirect(st.ReflectValue), func(v reflect.Value) error {
			if v, ok := deref(v); ok && v.Kind() == reflect.Struct {
				if _, isZero := f.ValueOf(st.Context, v); isZero {
					zero = append(zero, fmt.Sprintf("%s.%s (%s.%s)", st.Schema.Name, f.Name, st.Table, f.DBName))
					return errStop
				}
			}
			return nil
		})
	}
	if len(zero) > 0 {
		db.Error = &zeroIDError{fields: strings.Join(zero, ", "), err: db.Error}
	}
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

// errStop ends an eachValue walk early.
var errStop = errors.New("stop")
