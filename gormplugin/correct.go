package gormplugin

import (
	"database/sql"
	"fmt"
	"reflect"
	"slices"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/schema"
)

// lookUpChunk bounds the keys of one look-up query.
const lookUpChunk = 1000

// plan makes sure that, after an INSERT with ON CONFLICT, the key in
// memory of each value is its row's: by RETURNING where it reports every
// value's row (DO UPDATE without WHERE), by RETURNING matched to the
// values by their conflict columns (realign: DO UPDATE with WHERE), else
// by a look-up (lookUp).
func (c *create) plan(db *gorm.DB, pk *schema.Field) {
	oc, ok := onConflict(c.st)
	if !ok {
		return
	}
	if r, ok := newRealignment(db, oc, pk); ok {
		c.realign = r
		returnColumns(c.st, append([]*schema.Field{pk}, r.conflict...)...)
		return
	}
	if mustLookUp(db, oc) {
		c.lookUp = true
		return
	}
	// DO UPDATE: the row that was there keeps its key; RETURNING puts it in
	// memory, in the order of the values given.
	returnColumns(c.st, pk)
}

// mustLookUp reports whether, after an INSERT with oc, the plugin must look
// up which keys were written, rather than have RETURNING report the rows'
// keys. RETURNING reports one row per row written, and GORM puts them into
// the values given in order: that is right only when every value given
// writes a row, as with DO UPDATE without a WHERE. Maps are always looked
// up: GORM does not put RETURNING into them.
func mustLookUp(db *gorm.DB, oc clause.OnConflict) bool {
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
	oc, ok := st.Clauses["ON CONFLICT"].Expression.(clause.OnConflict)
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

// returnColumns adds the columns of fields to the statement's RETURNING,
// keeping the columns already there (RETURNING * stays).
func returnColumns(st *gorm.Statement, fields ...*schema.Field) {
	c, ok := st.Clauses["RETURNING"]
	r, _ := c.Expression.(clause.Returning)
	if ok && len(r.Columns) == 0 {
		return // RETURNING *
	}
	for _, f := range fields {
		if !slices.ContainsFunc(r.Columns, func(c clause.Column) bool { return c.Name == f.DBName }) {
			r.Columns = append(r.Columns, clause.Column{Name: f.DBName})
		}
	}
	c.Name, c.Expression = r.Name(), r
	st.Clauses["RETURNING"] = c
}

// correct runs after the INSERT: it names the fields of a zero ID the
// driver refused, then corrects the keys of an upsert as fill planned.
func correct(db *gorm.DB) {
	explainZeroID(db)
	c := createOf(db.Statement)
	switch {
	case c == nil || db.Error != nil:
	case c.realign != nil:
		c.realign.realign(db)
	case c.lookUp:
		lookUp(db)
	}
}

// lookUp zeroes the keys of the statement's values (as they are after the
// BeforeCreate hooks) that are not in the table: ON CONFLICT did not write
// their rows.
func lookUp(db *gorm.DB) {
	st := db.Statement
	rv := reflect.Indirect(st.ReflectValue)
	oc, _ := onConflict(st)
	if oc.DoNothing && db.RowsAffected == int64(valueCount(rv)) {
		return // every value was written
	}
	pk := st.Schema.PrioritizedPrimaryField
	var keys []any
	var held []reflect.Value
	_ = eachValue(rv, func(v reflect.Value) error {
		if key, ok := keyOf(st, pk, v); ok {
			keys, held = append(keys, key), append(held, v)
		}
		return nil
	})
	written, err := writtenKeys(db, pk, keys)
	if err != nil {
		_ = db.AddError(fmt.Errorf("gormplugin: finding which rows ON CONFLICT wrote: %w", err))
		return
	}
	for i, v := range held {
		if id, _ := keyInt(keys[i]); !written[id] {
			zeroKeyOf(st, pk, v)
		}
	}
}

// valueCount returns how many values rv holds.
func valueCount(rv reflect.Value) int {
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		return rv.Len()
	}
	return 1
}

// writtenKeys returns which of keys are in the table the statement wrote
// to: its own table expression (db.Table("shop.accounts"), quoted as GORM
// quoted it for the INSERT) or its model's table, queried on the
// statement's connection (its transaction, if any).
func writtenKeys(db *gorm.DB, pk *schema.Field, keys []any) (map[int64]bool, error) {
	st := db.Statement
	written := make(map[int64]bool, len(keys))
	for chunk := range slices.Chunk(keys, lookUpChunk) {
		q := db.Session(&gorm.Session{NewDB: true, SkipHooks: true}).Table(st.Table)
		if st.TableExpr != nil {
			q.Statement.TableExpr = st.TableExpr
		}
		var found []any
		err := q.Where(clause.IN{Column: clause.Column{Name: pk.DBName}, Values: chunk}).
			Pluck(pk.DBName, &found).Error
		if err != nil {
			return nil, err
		}
		for _, raw := range found {
			id, err := scanKey(pk, raw)
			if err != nil {
				return nil, err
			}
			written[id] = true
		}
	}
	return written, nil
}

// scanKey reads a key from the database as the key's own type scans it:
// a TextID key is stored as text.
func scanKey(pk *schema.Field, raw any) (int64, error) {
	t := pk.FieldType
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	dst := reflect.New(t)
	sc, ok := dst.Interface().(sql.Scanner)
	if !ok {
		return 0, fmt.Errorf("%s is no sql.Scanner", t)
	}
	if err := sc.Scan(raw); err != nil {
		return 0, err
	}
	id, _ := keyInt(dst.Elem().Interface())
	return id, nil
}

// keyOf returns the key that value v (a struct or a map) holds, if it is
// a non-zero ID, as the column stores it.
func keyOf(st *gorm.Statement, pk *schema.Field, v reflect.Value) (any, bool) {
	v, ok := deref(v)
	if !ok {
		return nil, false
	}
	switch v.Kind() {
	case reflect.Struct:
		val, _ := pk.ValueOf(st.Context, v)
		id, ok := keyInt(val)
		return val, ok && id != 0
	case reflect.Map:
		// A map may hold the key as an ID, an integer or a decimal string.
		if key, held := mapKey(v, pk); held && present(v, key) {
			if id, err := heldID(v.MapIndex(key)); err == nil && id != 0 {
				return asType(id, pk.FieldType), true
			}
		}
	}
	return nil, false
}

// zeroKeyOf zeroes the key of value v, a struct (a pointer key becomes
// nil) or a map (zero of the type it holds the key as: 0, "", a zero ID).
func zeroKeyOf(st *gorm.Statement, pk *schema.Field, v reflect.Value) {
	v, _ = deref(v)
	if v.Kind() == reflect.Struct {
		setZero(st.Context, pk, v)
		return
	}
	key, _ := mapKey(v, pk)
	held := v.MapIndex(key)
	if held.Kind() == reflect.Interface {
		held = held.Elem() // the dynamic value: a pointer becomes nil
	}
	v.SetMapIndex(key, reflect.Zero(held.Type()))
}
