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
// ID fields are those of type ulidflake.ID (sqltype.ID) or flake.ID, a
// per-entity ID type declared as a struct that embeds ulidflake.ID and
// nothing else (type CustomerID struct{ ulidflake.ID }), or pointers to
// them (a nil pointer is filled). Their GormDataType is bigint,
// so AutoMigrate creates a plain bigint primary key (not bigserial, not
// identity) and GORM neither skips the key on INSERT nor asks for RETURNING
// id.
//
// # Upserts: the ID in memory is the row's
//
// With an ON CONFLICT clause, a row may not be inserted: it keeps the ID it
// already had (DO UPDATE), or nothing is written (DO NOTHING). After every
// create, the ID in memory is the ID of the row in the database, or zero
// where the database does not say which row it is: with DO UPDATE the
// plugin asks for RETURNING of the key (PostgreSQL and SQLite); with DO
// NOTHING, when fewer rows were written than given, and with DO UPDATE
// WHERE, whose RETURNING leaves out the rows the WHERE skips (so that GORM
// would put the keys it reports into the wrong values), it looks up which
// of the values' IDs exist, made by the plugin or set by the caller, and
// zeroes the others (a pointer key becomes nil). Children of a value
// whose ID is zeroed are then refused (sqltype.ErrZeroID), never written
// pointing at nothing. This holds for the associations GORM creates in the
// same call (it creates them with ON CONFLICT DO NOTHING, or DO UPDATE with
// FullSaveAssociations). It needs a single-column primary key; for a
// composite key, IDs are filled but not corrected.
//
// When the plugin is not registered, a zero ulidflake.ID or flake.ID key is
// not written as 0: its Value method fails the INSERT with
// sqltype.ErrZeroID (flake.ErrZeroID).
//
// # NOT NULL keys
//
// A primary key column is NOT NULL in PostgreSQL. SQLite lets a key that is
// not an INTEGER PRIMARY KEY hold NULL, so on SQLite the plugin wraps the
// dialector (db.Dialector; Unwrap returns the driver's own) and AutoMigrate
// declares an ID key NOT NULL. Register the plugin before AutoMigrate: a
// table created without it keeps a nullable key, which AutoMigrate does not
// change (tag the field gorm:"not null" there, and rebuild the table).
//
// Not supported: creates without a model (db.Table("t").Create(map)),
// where GORM knows no key to fill. The key is whatever the map holds; a
// missing one is refused by the NOT NULL key column.
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
	"slices"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/schema"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sqltype"
)

// Source makes IDs: a *ulidflake.Generator (ulidflake.NewGenerator with
// flake options), or a *sidlease.Lease whose SID is held in PostgreSQL.
type Source interface {
	NewWait(ctx context.Context) (sqltype.ID, error)
}

// defaultSource is a stand-alone generator with the default epoch.
type defaultSource struct{ g *flake.Generator }

func (d defaultSource) NewWait(ctx context.Context) (sqltype.ID, error) {
	id, err := d.g.NewWait(ctx)
	return sqltype.ID(id), err
}

// Plugin is a gorm.Plugin that fills ID fields on create.
type Plugin struct {
	gen    Source
	fields func(*schema.Field) bool
	err    error
}

// Option configures a [Plugin].
type Option func(*Plugin)

// WithGenerator sets where the IDs come from: a ulidflake.Generator with
// the layout, SID, epoch and entropy of its options, or a sidlease.Lease.
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
		p.gen = defaultSource{g}
	}
	if p.fields == nil {
		p.err = fmt.Errorf("gormplugin: WithFields(nil)")
	}
	return p
}

// Name implements gorm.Plugin.
func (*Plugin) Name() string { return "ulidflake" }

// Initialize implements gorm.Plugin: it registers the fill step before
// gorm:before_create and the correction after gorm:create, and on SQLite
// wraps the dialector so that AutoMigrate declares ID keys NOT NULL.
func (p *Plugin) Initialize(db *gorm.DB) error {
	if p.err != nil {
		return p.err
	}
	wrapSQLite(db)
	if err := db.Callback().Create().Before("gorm:before_create").Register("ulidflake:fill_ids", p.fill); err != nil {
		return err
	}
	return db.Callback().Create().After("gorm:create").Before("gorm:save_after_associations").
		Register("ulidflake:correct_ids", p.correct)
}

var (
	idType      = reflect.TypeFor[sqltype.ID]()
	flakeIDType = reflect.TypeFor[flake.ID]()
)

// isIDType reports whether t is an ID type the plugin fills: ID, flake.ID,
// a per-entity ID type (a struct that embeds ID and nothing else), or a
// pointer to one.
func isIDType(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t == idType || t == flakeIDType || isEntityIDType(t)
}

// isEntityIDType reports whether t is struct{ ulidflake.ID }, the form of
// a per-entity ID type that keeps every method of ID.
func isEntityIDType(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.NumField() == 1 && t.Field(0).Anonymous && t.Field(0).Type == idType
}

// madeKey is the statement setting under which fill leaves the keys of the
// values of a statement with ON CONFLICT.
const madeKey = "ulidflake:made"

// fill gives every chosen zero ID field of the statement's value a new ID.
func (p *Plugin) fill(db *gorm.DB) {
	st := db.Statement
	if db.Error != nil || st.Schema == nil {
		return
	}
	var fields []*schema.Field
	for _, f := range st.Schema.Fields {
		if isIDType(f.FieldType) && p.fields(f) {
			fields = append(fields, f)
		}
	}
	if len(fields) == 0 {
		return
	}
	rv := reflect.Indirect(st.ReflectValue)
	var err error
	var made []any
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		for i := 0; i < rv.Len() && err == nil; i++ {
			made, err = p.fillValue(db, fields, rv.Index(i), made)
		}
	default:
		made, err = p.fillValue(db, fields, rv, made)
	}
	if err != nil {
		_ = db.AddError(err)
		return
	}
	pk := st.Schema.PrioritizedPrimaryField
	if len(st.Schema.PrimaryFields) != 1 || !isIDType(pk.FieldType) || !slices.Contains(fields, pk) {
		return
	}
	oc, ok := onConflict(st)
	if !ok {
		return
	}
	// Every key the values hold, made here or set by the caller: after the
	// INSERT, each must be the key of a row in the table, or zero.
	keys := keysOf(st, pk, rv)
	if len(keys) == 0 {
		return
	}
	st.Settings.Store(madeKey, keys)
	if !lookUp(db, oc) {
		// DO UPDATE: the row that was there keeps its key; RETURNING puts
		// it in memory, in the order of the rows given.
		if c, ok := st.Clauses["RETURNING"]; ok {
			r, _ := c.Expression.(clause.Returning)
			if len(r.Columns) > 0 && !slices.ContainsFunc(r.Columns, func(c clause.Column) bool { return c.Name == pk.DBName }) {
				r.Columns = append(r.Columns, clause.Column{Name: pk.DBName})
				c.Expression = r
				st.Clauses["RETURNING"] = c
			}
		} else {
			st.AddClause(clause.Returning{Columns: []clause.Column{{Name: pk.DBName}}})
		}
	}
}

// lookUp reports whether, after an INSERT with oc, the plugin must look up
// which of the keys it made were written, rather than have RETURNING report
// the rows' keys. RETURNING reports one row per row written, and GORM puts
// them into the values given in order: that is right only when every value
// given writes a row, as with DO UPDATE without a WHERE.
// Maps are always looked up: GORM does not put RETURNING into them.
func lookUp(db *gorm.DB, oc clause.OnConflict) bool {
	rv := reflect.Indirect(db.Statement.ReflectValue)
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		if rv.Len() == 0 {
			return true
		}
		rv = reflect.Indirect(rv.Index(0))
	}
	return oc.DoNothing || len(oc.Where.Exprs) > 0 || !returning(db) || rv.Kind() == reflect.Map
}

// onConflict returns the statement's ON CONFLICT clause.
func onConflict(st *gorm.Statement) (clause.OnConflict, bool) {
	c, ok := st.Clauses["ON CONFLICT"]
	if !ok {
		return clause.OnConflict{}, false
	}
	oc, ok := c.Expression.(clause.OnConflict)
	return oc, ok
}

// returning reports whether the dialect takes RETURNING in an INSERT:
// PostgreSQL and SQLite (3.35 and later) do.
func returning(db *gorm.DB) bool {
	switch db.Dialector.Name() {
	case "postgres", "sqlite":
		return true
	}
	return false
}

// correct runs after the INSERT of a statement with ON CONFLICT for which
// the plugin made keys: unless RETURNING reported every row's key, it
// zeroes the keys it made for rows that are not in the table.
func (p *Plugin) correct(db *gorm.DB) {
	st := db.Statement
	v, ok := st.Settings.LoadAndDelete(madeKey)
	if !ok || db.Error != nil {
		return
	}
	made := v.([]any)
	oc, _ := onConflict(st)
	if !lookUp(db, oc) {
		return // RETURNING has set every key
	}
	rv := reflect.Indirect(st.ReflectValue)
	rows := 1
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		rows = rv.Len()
	}
	if oc.DoNothing && db.RowsAffected == int64(rows) {
		return // every row was written, with the keys made
	}
	pk := st.Schema.PrioritizedPrimaryField
	var found []int64
	err := db.Session(&gorm.Session{NewDB: true, SkipHooks: true}).Table(st.Table).
		Where(clause.IN{Column: clause.Column{Name: pk.DBName}, Values: made}).
		Pluck(pk.DBName, &found).Error
	if err != nil {
		_ = db.AddError(fmt.Errorf("gormplugin: finding which rows ON CONFLICT wrote: %w", err))
		return
	}
	written := make(map[int64]bool, len(found))
	for _, id := range found {
		written[id] = true
	}
	madeHere := func(val any) bool {
		id, ok := keyInt(val)
		return ok && id != 0 && !written[id]
	}
	zero := func(v reflect.Value) {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				return
			}
			v = v.Elem()
		}
		switch v.Kind() {
		case reflect.Struct:
			if val, isZero := pk.ValueOf(st.Context, v); !isZero && madeHere(val) {
				f := pk.ReflectValueOf(st.Context, v) // a pointer key becomes nil
				f.Set(reflect.Zero(f.Type()))
			}
		case reflect.Map:
			if key, held := mapKey(v, pk); held && madeHere(v.MapIndex(key).Interface()) {
				v.SetMapIndex(key, reflect.Zero(pk.FieldType))
			}
		}
	}
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		for i := range rv.Len() {
			zero(rv.Index(i))
		}
	} else {
		zero(rv)
	}
}

// keyInt returns the int64 of an ID value of any of the filled types.
func keyInt(v any) (int64, bool) {
	switch k := v.(type) {
	case sqltype.ID:
		return int64(k), true
	case flake.ID:
		return int64(k), true
	case *sqltype.ID:
		if k != nil {
			return int64(*k), true
		}
	case *flake.ID:
		if k != nil {
			return int64(*k), true
		}
	default:
		rv := reflect.ValueOf(v)
		if rv.Kind() == reflect.Pointer && !rv.IsNil() {
			rv = rv.Elem()
		}
		if rv.IsValid() && isEntityIDType(rv.Type()) {
			return int64(rv.Field(0).Interface().(sqltype.ID)), true
		}
	}
	return 0, false
}

// fillValue fills the zero ID fields of one value and appends the keys it
// made to made.
func (p *Plugin) fillValue(db *gorm.DB, fields []*schema.Field, v reflect.Value, made []any) ([]any, error) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return made, nil
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		for _, f := range fields {
			if cur, zero := f.ValueOf(db.Statement.Context, v); !zero {
				if k, ok := keyInt(cur); !ok || k != 0 { // a *ID pointing at zero is zero too
					continue
				}
			}
			val, err := p.newValue(db, f)
			if err != nil {
				return made, err
			}
			if err := f.Set(db.Statement.Context, v, val); err != nil {
				return made, fmt.Errorf("gormplugin: setting %s.%s: %w", db.Statement.Schema.Name, f.Name, err)
			}
			if f.PrimaryKey {
				made = append(made, val)
			}
		}
	case reflect.Map:
		return p.fillMap(db, fields, v, made)
	}
	return made, nil
}

// newValue returns a new ID of f's type, waiting out a used-up millisecond
// until the statement's context ends.
func (p *Plugin) newValue(db *gorm.DB, f *schema.Field) (any, error) {
	id, err := p.gen.NewWait(db.Statement.Context)
	if err != nil {
		return nil, fmt.Errorf("gormplugin: filling %s.%s: %w", db.Statement.Schema.Name, f.Name, err)
	}
	if t := f.FieldType; isEntityIDType(t) || t.Kind() == reflect.Pointer && isEntityIDType(t.Elem()) {
		v := reflect.New(t)
		if t.Kind() == reflect.Pointer {
			v.Elem().Set(reflect.New(t.Elem()))
		}
		e := reflect.Indirect(v.Elem())
		e.Field(0).Set(reflect.ValueOf(id))
		return v.Elem().Interface(), nil
	}
	switch f.FieldType {
	case flakeIDType:
		return flake.ID(id), nil
	case reflect.PointerTo(flakeIDType):
		v := flake.ID(id)
		return &v, nil
	case reflect.PointerTo(idType):
		return &id, nil
	}
	return id, nil
}

// fillMap gives a map a new ID for each field it holds no non-zero value
// for, under the key it holds for the field (its name or its column name),
// or under its name, for db.Model(&T{}).Create(map[string]any{...}).
func (p *Plugin) fillMap(db *gorm.DB, fields []*schema.Field, m reflect.Value, made []any) ([]any, error) {
	if m.Type().Key().Kind() != reflect.String {
		return made, nil
	}
	for _, f := range fields {
		key, held := mapKey(m, f)
		if held && present(m, key) {
			continue
		}
		val, err := p.newValue(db, f)
		if err != nil {
			return made, err
		}
		rv := reflect.ValueOf(val)
		if !rv.Type().AssignableTo(m.Type().Elem()) {
			return made, fmt.Errorf("gormplugin: cannot fill %s.%s into a %s", db.Statement.Schema.Name, f.Name, m.Type())
		}
		m.SetMapIndex(key, rv)
		if f.PrimaryKey {
			made = append(made, val)
		}
	}
	return made, nil
}

// mapKey returns the key under which map m holds field f: its name or its
// column name; or its name, and false, if m holds neither.
func mapKey(m reflect.Value, f *schema.Field) (reflect.Value, bool) {
	for _, k := range []string{f.Name, f.DBName} {
		key := reflect.ValueOf(k).Convert(m.Type().Key())
		if m.MapIndex(key).IsValid() {
			return key, true
		}
	}
	return reflect.ValueOf(f.Name).Convert(m.Type().Key()), false
}

// keysOf returns the non-zero keys that the values of the statement hold.
func keysOf(st *gorm.Statement, pk *schema.Field, rv reflect.Value) []any {
	var keys []any
	add := func(v reflect.Value) {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				return
			}
			v = v.Elem()
		}
		var val any
		switch v.Kind() {
		case reflect.Struct:
			val, _ = pk.ValueOf(st.Context, v)
		case reflect.Map:
			if key, held := mapKey(v, pk); held {
				val = v.MapIndex(key).Interface()
			}
		}
		if id, ok := keyInt(val); ok && id != 0 {
			keys = append(keys, val)
		}
	}
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		for i := range rv.Len() {
			add(rv.Index(i))
		}
	} else {
		add(rv)
	}
	return keys
}

// present reports whether map m has a non-zero value under key.
func present(m reflect.Value, key reflect.Value) bool {
	v := m.MapIndex(key)
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
