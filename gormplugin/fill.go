package gormplugin

import (
	"fmt"
	"math"
	"reflect"

	"github.com/ulidflake/ulidflake/flake"
	"gorm.io/gorm"
	"gorm.io/gorm/schema"
)

// fill gives every chosen zero ID field of the statement's values a new ID,
// and plans the correction of an upsert.
func (p *Plugin) fill(db *gorm.DB) {
	st := db.Statement
	if db.Error != nil || st.Schema == nil {
		return
	}
	c := begin(st)
	fields, err := p.fillable(c)
	if err == nil && len(fields) > 0 {
		err = eachValue(reflect.Indirect(st.ReflectValue), func(v reflect.Value) error {
			return p.fillValue(db, c, fields, v)
		})
	}
	if err != nil {
		_ = db.AddError(err)
		return
	}
	if pk := ownKey(st, fields); pk != nil {
		c.plan(db, pk)
	}
}

// fillable returns the ID fields of the statement's model to fill. It
// returns ErrNotFillable for a tagged field that is a reference or a part
// of a composite key.
func (p *Plugin) fillable(c *create) ([]*schema.Field, error) {
	st := c.st
	var fields []*schema.Field
	for _, f := range st.Schema.Fields {
		if !isIDType(f.FieldType) {
			continue
		}
		if isReference(c, f) || f.PrimaryKey && len(st.Schema.PrimaryFields) > 1 {
			if tagged(f) {
				return nil, fmt.Errorf("%w: %s.%s", ErrNotFillable, st.Schema.Name, f.Name)
			}
			continue
		}
		if p.fields(f) {
			fields = append(fields, f)
		}
	}
	return fields, nil
}

// isReference reports whether f refers to another row: a foreign key of
// one of the model's belongs-to associations, or one that an owner created
// in the same call sets.
func isReference(c *create, f *schema.Field) bool {
	for _, rel := range c.st.Schema.Relationships.BelongsTo {
		for _, ref := range rel.References {
			if !ref.OwnPrimaryKey && ref.ForeignKey == f {
				return true
			}
		}
	}
	return c.setByOuter(f)
}

// ownKey returns the statement's single-column ID primary key when it is
// among the fields the plugin fills, or nil.
func ownKey(st *gorm.Statement, fields []*schema.Field) *schema.Field {
	pk := st.Schema.PrioritizedPrimaryField
	if len(st.Schema.PrimaryFields) != 1 || pk == nil {
		return nil
	}
	for _, f := range fields {
		if f == pk {
			return pk
		}
	}
	return nil
}

// eachValue calls fn for each value of rv: its elements when it is a slice
// or an array, else rv itself. It stops at the first error.
func eachValue(rv reflect.Value, fn func(reflect.Value) error) error {
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return fn(rv)
	}
	for i := range rv.Len() {
		if err := fn(rv.Index(i)); err != nil {
			return err
		}
	}
	return nil
}

// fillValue fills the zero ID fields of one value: a struct or a map,
// through any pointers or interfaces.
func (p *Plugin) fillValue(db *gorm.DB, c *create, fields []*schema.Field, v reflect.Value) error {
	v, ok := deref(v)
	if !ok {
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		return p.fillStruct(db, c, fields, v)
	case reflect.Map:
		return p.fillMap(db, c, fields, v)
	}
	return nil
}

// deref follows pointers and interfaces; it returns false at a nil.
func deref(v reflect.Value) (reflect.Value, bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return v, false
		}
		v = v.Elem()
	}
	return v, true
}

// fillStruct gives each zero field of struct v a new ID.
func (p *Plugin) fillStruct(db *gorm.DB, c *create, fields []*schema.Field, v reflect.Value) error {
	ctx := db.Statement.Context
	for _, f := range fields {
		if cur, zero := f.ValueOf(ctx, v); !zero {
			if k, ok := keyInt(cur); !ok || k != 0 { // a *ID pointing at zero is zero too
				continue
			}
		}
		val, err := p.newValue(db, f)
		if err != nil {
			return err
		}
		if err := f.Set(ctx, v, val); err != nil {
			return fmt.Errorf("gormplugin: setting %s.%s: %w", db.Statement.Schema.Name, f.Name, err)
		}
		c.undo.add(func() { setZero(ctx, f, v) })
	}
	return nil
}

// fillMap gives a map a new ID for each field it holds no non-zero value
// for, under the key it holds for the field (its name or its column name),
// or under its column name, where GORM puts a key the database made.
func (p *Plugin) fillMap(db *gorm.DB, c *create, fields []*schema.Field, m reflect.Value) error {
	if m.Type().Key().Kind() != reflect.String {
		return nil
	}
	for _, f := range fields {
		key, held := mapKey(m, f)
		if held && present(m, key) {
			id, err := heldID(m.MapIndex(key))
			if err != nil {
				return fmt.Errorf("gormplugin: %s.%s: the map's key %q: %w", db.Statement.Schema.Name, f.Name, key.String(), err)
			}
			if id != 0 {
				continue
			}
		}
		val, err := p.newValue(db, f)
		if err != nil {
			return err
		}
		rv := reflect.ValueOf(val)
		if !rv.Type().AssignableTo(m.Type().Elem()) {
			return fmt.Errorf("gormplugin: cannot fill %s.%s into a %s", db.Statement.Schema.Name, f.Name, m.Type())
		}
		c.undo.add(restoreMapKey(m, key))
		m.SetMapIndex(key, rv)
	}
	return nil
}

// mapKey returns the key under which map m holds field f: its name or its
// column name; or its column name, and false, if m holds neither.
func mapKey(m reflect.Value, f *schema.Field) (reflect.Value, bool) {
	for _, k := range []string{f.Name, f.DBName} {
		key := reflect.ValueOf(k).Convert(m.Type().Key())
		if m.MapIndex(key).IsValid() {
			return key, true
		}
	}
	return reflect.ValueOf(f.DBName).Convert(m.Type().Key()), false
}

// heldID reads the key a map holds as an ID: an ID type, an integer, or a
// decimal string ("0" is the zero ID, to be filled, never written as 0).
func heldID(v reflect.Value) (flake.ID, error) {
	v, _ = deref(v)
	if k, ok := keyInt(v.Interface()); ok {
		return flake.FromInt(k)
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return flake.FromInt(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.Uint() > math.MaxInt64 {
			return 0, fmt.Errorf("%w: %d is above 9223372036854775807", flake.ErrRange, v.Uint())
		}
		return flake.FromInt(int64(v.Uint()))
	case reflect.String:
		return flake.ParseInt(v.String())
	}
	return 0, fmt.Errorf("%w: %s %v is not an ID, an integer or a decimal string", flake.ErrType, v.Type(), v.Interface())
}

// present reports whether map m has a non-zero value under key.
func present(m reflect.Value, key reflect.Value) bool {
	v, ok := deref(m.MapIndex(key))
	return ok && v.IsValid() && !v.IsZero()
}
