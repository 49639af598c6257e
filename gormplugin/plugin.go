// Package gormplugin fills Ulid-Flake primary keys on create, so that GORM
// models declare
//
//	type Order struct {
//		ID ulidflake.ID
//		...
//	}
//
// and get an ID with no hook to write:
//
//	db.Use(gormplugin.New())
//	db.Create(&order) // order.ID is set before the INSERT
//
// Before GORM's own before-create step, so that BeforeCreate hooks already
// see it, the plugin gives every zero-valued ID field of the primary key a
// new ID: on Create of a struct, a slice or array of structs or pointers,
// pointers to them, a map or a slice of maps; in CreateInBatches, Save of a
// new record, FirstOrCreate, and on the associations GORM creates in the same
// call (has-one, has-many, many2many, belongs-to). It never overwrites a
// non-zero ID. A field outside the primary key opts in with the struct tag
// ulidflake:"fill"; [WithFields] replaces that rule.
//
// ID fields are those of type ulidflake.ID (sqltype.ID) or flake.ID. Their
// GormDataType is bigint, so AutoMigrate creates a plain bigint primary key
// (not bigserial, not identity) and GORM neither skips the key on INSERT nor
// asks for RETURNING id.
//
// When the plugin is not registered, a zero ulidflake.ID key is not written
// as 0: its Value method fails the INSERT with sqltype.ErrZeroID.
//
// When a millisecond's IDs are used up, the plugin waits for the next one,
// honouring the statement's context: overflow is never an error for the
// caller, and never a duplicate. If the context ends first, the create fails
// with the context's error and writes nothing. (GORM joins errors that
// follow it, such as the rolled-back transaction's, with %v; errors.Is then
// no longer sees the context's error, but the message names it.)
package gormplugin

import (
	"context"
	"fmt"
	"reflect"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sqltype"
)

// Source makes IDs: a *flake.Generator, or a *sidlease.Lease whose SID is
// held in PostgreSQL.
type Source interface {
	NewWait(ctx context.Context) (flake.ID, error)
}

// Plugin is a gorm.Plugin that fills ID fields on create.
type Plugin struct {
	gen    Source
	fields func(*schema.Field) bool
	err    error
}

// Option configures a [Plugin].
type Option func(*Plugin)

// WithGenerator sets where the IDs come from: a flake.Generator with the
// layout, SID, epoch and entropy of its options, or a sidlease.Lease.
// Default: a stand-alone generator with the default epoch.
func WithGenerator(g Source) Option {
	return func(p *Plugin) { p.gen = g }
}

// WithFields replaces the rule that chooses the fields to fill (by default:
// the primary key, and fields tagged ulidflake:"fill"). It is asked only
// about fields of an ID type.
func WithFields(fill func(*schema.Field) bool) Option {
	return func(p *Plugin) { p.fields = fill }
}

// DefaultFields is the default rule: fields of the primary key, and fields
// tagged ulidflake:"fill".
func DefaultFields(f *schema.Field) bool {
	return f.PrimaryKey || f.Tag.Get("ulidflake") == "fill"
}

// New returns the plugin; pass it to db.Use.
func New(opts ...Option) *Plugin {
	p := &Plugin{fields: DefaultFields}
	for _, o := range opts {
		o(p)
	}
	if p.gen == nil {
		var g *flake.Generator
		g, p.err = flake.NewGenerator()
		p.gen = g
	}
	if p.fields == nil {
		p.err = fmt.Errorf("gormplugin: WithFields(nil)")
	}
	return p
}

// Name implements gorm.Plugin.
func (*Plugin) Name() string { return "ulidflake" }

// Initialize implements gorm.Plugin: it registers the fill step before
// gorm:before_create.
func (p *Plugin) Initialize(db *gorm.DB) error {
	if p.err != nil {
		return p.err
	}
	return db.Callback().Create().Before("gorm:before_create").Register("ulidflake:fill_ids", p.fill)
}

var (
	idType      = reflect.TypeFor[sqltype.ID]()
	flakeIDType = reflect.TypeFor[flake.ID]()
)

// fill gives every chosen zero ID field of the statement's value a new ID.
func (p *Plugin) fill(db *gorm.DB) {
	st := db.Statement
	if db.Error != nil || st.Schema == nil {
		return
	}
	var fields []*schema.Field
	for _, f := range st.Schema.Fields {
		if (f.FieldType == idType || f.FieldType == flakeIDType) && p.fields(f) {
			fields = append(fields, f)
		}
	}
	if len(fields) == 0 {
		return
	}
	rv := reflect.Indirect(st.ReflectValue)
	var err error
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		for i := 0; i < rv.Len() && err == nil; i++ {
			err = p.fillValue(db, fields, rv.Index(i))
		}
	default:
		err = p.fillValue(db, fields, rv)
	}
	if err != nil {
		_ = db.AddError(err)
	}
}

func (p *Plugin) fillValue(db *gorm.DB, fields []*schema.Field, v reflect.Value) error {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		for _, f := range fields {
			if _, zero := f.ValueOf(db.Statement.Context, v); !zero {
				continue
			}
			val, err := p.newValue(db, f)
			if err != nil {
				return err
			}
			if err := f.Set(db.Statement.Context, v, val); err != nil {
				return fmt.Errorf("gormplugin: setting %s.%s: %w", db.Statement.Schema.Name, f.Name, err)
			}
		}
	case reflect.Map:
		return p.fillMap(db, fields, v)
	}
	return nil
}

// newValue returns a new ID of f's type, waiting out a used-up millisecond
// until the statement's context ends.
func (p *Plugin) newValue(db *gorm.DB, f *schema.Field) (any, error) {
	id, err := p.gen.NewWait(db.Statement.Context)
	if err != nil {
		return nil, fmt.Errorf("gormplugin: filling %s.%s: %w", db.Statement.Schema.Name, f.Name, err)
	}
	if f.FieldType == flakeIDType {
		return id, nil
	}
	return sqltype.ID(id), nil
}

// fillMap adds a new ID under the field's name to a map that has neither
// its name nor its column name, for db.Model(&T{}).Create(map[string]any{...}).
func (p *Plugin) fillMap(db *gorm.DB, fields []*schema.Field, m reflect.Value) error {
	if m.Type().Key().Kind() != reflect.String {
		return nil
	}
	for _, f := range fields {
		if present(m, f.Name) || present(m, f.DBName) {
			continue
		}
		val, err := p.newValue(db, f)
		if err != nil {
			return err
		}
		rv := reflect.ValueOf(val)
		if !rv.Type().AssignableTo(m.Type().Elem()) {
			return fmt.Errorf("gormplugin: cannot fill %s.%s into a %s", db.Statement.Schema.Name, f.Name, m.Type())
		}
		m.SetMapIndex(reflect.ValueOf(f.Name).Convert(m.Type().Key()), rv)
	}
	return nil
}

// present reports whether map m has a non-zero value under key.
func present(m reflect.Value, key string) bool {
	v := m.MapIndex(reflect.ValueOf(key).Convert(m.Type().Key()))
	if !v.IsValid() {
		return false
	}
	if v.Kind() == reflect.Interface {
		if v.IsNil() {
			return false
		}
		v = v.Elem()
	}
	return !v.IsZero()
}
