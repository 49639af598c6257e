package gormplugin

import (
	"fmt"
	"reflect"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"

	"github.com/ulidflake/ulidflake/flake"
)

var idType = reflect.TypeFor[flake.ID]()

// isIDType reports whether t is an ID type the plugin fills: ulidflake.ID,
// a per-entity ID type (a struct that embeds ID and nothing else), or a
// pointer to one.
func isIDType(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t == idType || isEntityIDType(t)
}

// isEntityIDType reports whether t is struct{ ulidflake.ID }, the form of
// a per-entity ID type that keeps every method of ID; flake.Prefixed[P] is
// one.
func isEntityIDType(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.NumField() == 1 && t.Field(0).Anonymous && t.Field(0).Type == idType
}

// keyInt returns the int64 of an ID value of any of the filled types.
func keyInt(v any) (int64, bool) {
	switch k := v.(type) {
	case flake.ID:
		return int64(k), true
	case *flake.ID:
		if k != nil {
			return int64(*k), true
		}
	default:
		rv, ok := deref(reflect.ValueOf(v))
		if ok && rv.IsValid() && isEntityIDType(rv.Type()) {
			return int64(rv.Field(0).Interface().(flake.ID)), true
		}
	}
	return 0, false
}

// newValue returns a new ID of f's type, waiting out a used-up millisecond
// until the statement's context ends.
func (p *Plugin) newValue(db *gorm.DB, f *schema.Field) (any, error) {
	id, err := p.src.NewWait(db.Statement.Context)
	if err != nil {
		return nil, fmt.Errorf("gormplugin: filling %s.%s: %w", db.Statement.Schema.Name, f.Name, err)
	}
	return asType(id, f.FieldType), nil
}

// asType returns id as a value of t, one of the ID types.
func asType(id flake.ID, t reflect.Type) any {
	if isEntityIDType(t) || t.Kind() == reflect.Pointer && isEntityIDType(t.Elem()) {
		v := reflect.New(t)
		if t.Kind() == reflect.Pointer {
			v.Elem().Set(reflect.New(t.Elem()))
		}
		reflect.Indirect(v.Elem()).Field(0).Set(reflect.ValueOf(id))
		return v.Elem().Interface()
	}
	if t == reflect.PointerTo(idType) {
		return &id
	}
	return id
}
