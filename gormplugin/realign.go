package gormplugin

import (
	"database/sql/driver"
	"fmt"
	"reflect"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/schema"
)

// realignment corrects an INSERT … ON CONFLICT (columns) DO UPDATE …
// WHERE. Its RETURNING reports a row for each value inserted or updated,
// and none for a value whose WHERE skipped the update; GORM scans the rows
// into the values in order, so that a skipped value shifts the rows of
// those after it. realign matches each row to its value by the conflict
// columns instead: a value gets its row's key, the key of the row it
// updated included, or zero when its row was not written.
type realignment struct {
	st       *gorm.Statement
	pk       *schema.Field
	conflict []*schema.Field
	values   []reflect.Value // the structs, as GORM scans into them
	before   []reflect.Value // copies of them just before the INSERT
}

// newRealignment returns the realignment of the statement, if it is an
// upsert that needs one and that realign can do: structs, a dialect with
// RETURNING, conflict columns that are fields of the model.
func newRealignment(db *gorm.DB, oc clause.OnConflict, pk *schema.Field) (*realignment, bool) {
	st := db.Statement
	updates := len(oc.DoUpdates) > 0 || oc.UpdateAll // GORM scans into the values given
	if !updates || len(oc.Where.Exprs) == 0 || len(oc.Columns) == 0 || !returning(db) {
		return nil, false
	}
	r := &realignment{st: st, pk: pk}
	for _, c := range oc.Columns {
		f := st.Schema.LookUpField(c.Name)
		if f == nil || f.DBName == "" {
			return nil, false
		}
		r.conflict = append(r.conflict, f)
	}
	structs := 0
	_ = eachValue(reflect.Indirect(st.ReflectValue), func(v reflect.Value) error {
		if v, ok := deref(v); ok && v.Kind() == reflect.Struct && v.CanSet() {
			structs++
		}
		return nil
	})
	return r, structs > 0 && structs == valueCount(reflect.Indirect(st.ReflectValue))
}

// snapshot runs just before GORM's INSERT, after the hooks and the
// associations that come first: it copies the values that realign will
// put back in place.
func snapshot(db *gorm.DB) {
	c := createOf(db.Statement)
	if c == nil || c.realign == nil || db.Error != nil {
		return
	}
	r := c.realign
	_ = eachValue(reflect.Indirect(r.st.ReflectValue), func(v reflect.Value) error {
		v, _ = deref(v)
		r.values, r.before = append(r.values, v), append(r.before, copyOf(v))
		return nil
	})
}

// realign runs after the INSERT: GORM scanned its n returned rows into the
// first n values. It takes the rows out and puts back the returned fields
// of those values as the INSERT sent them. Then each value gets the
// returned columns of its row: the row that carries the key it sent (it
// inserted it, or updated the row of that key), else the only row with
// the conflict columns it sent, when no other value sent the same ones.
// A value with no such row gets a zero key: its update was skipped, or the
// database does not say which row is its (conflict columns it changed, as
// citext or a NOCASE collation do; two values with the same ones).
func (r *realignment) realign(db *gorm.DB) {
	ctx := r.st.Context
	sent, ok := r.sentValues()
	n := min(int(db.RowsAffected), len(r.values))
	rows := make([]reflect.Value, n)
	cols := returnedFields(r.st)
	for i := range n {
		rows[i] = copyOf(r.values[i])
		r.restore(i, cols, sent)
	}
	match := map[int]reflect.Value{} // no VALUES to match by: every key zero
	if ok {
		match = r.match(rows, sent)
	}
	for i, v := range r.values {
		row, ok := match[i]
		if !ok {
			setZero(ctx, r.pk, v)
			continue
		}
		for _, f := range cols {
			f.ReflectValueOf(ctx, v).Set(f.ReflectValueOf(ctx, row))
		}
	}
}

// copyOf returns a copy of struct v.
func copyOf(v reflect.Value) reflect.Value {
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	return c
}

// sentValues returns, for each value, the columns the INSERT sent: GORM's
// VALUES clause, by column name.
func (r *realignment) sentValues() ([]map[string]any, bool) {
	values, _ := r.st.Clauses["VALUES"].Expression.(clause.Values)
	if len(values.Values) != len(r.values) {
		return nil, false
	}
	sent := make([]map[string]any, len(values.Values))
	for i, row := range values.Values {
		sent[i] = make(map[string]any, len(values.Columns))
		for j, c := range values.Columns {
			if j < len(row) {
				sent[i][c.Name] = row[j]
			}
		}
	}
	return sent, true
}

// restore puts back the returned fields of value i as the INSERT sent
// them, or as they were before it for those it did not send.
func (r *realignment) restore(i int, cols []*schema.Field, sent []map[string]any) {
	ctx := r.st.Context
	for _, f := range cols {
		if i < len(sent) {
			if val, ok := sent[i][f.DBName]; ok && f.Set(ctx, r.values[i], val) == nil {
				continue
			}
		}
		f.ReflectValueOf(ctx, r.values[i]).Set(f.ReflectValueOf(ctx, r.before[i]))
	}
}

// match gives each value its returned row: by the key it sent, then by
// conflict columns that one value alone sent.
func (r *realignment) match(rows []reflect.Value, sent []map[string]any) map[int]reflect.Value {
	ctx := r.st.Context
	match := map[int]reflect.Value{}
	byKey := map[int64]int{}
	senders := map[string][]int{}
	for i := range r.values {
		if id, ok := keyInt(sent[i][r.pk.DBName]); ok && id != 0 {
			byKey[id] = i
		}
		if k, ok := r.conflictKey(func(f *schema.Field) any { return sent[i][f.DBName] }); ok {
			senders[k] = append(senders[k], i)
		}
	}
	for _, row := range rows {
		val, _ := r.pk.ValueOf(ctx, row)
		if id, ok := keyInt(val); ok {
			if i, ok := byKey[id]; ok {
				match[i] = row
				continue
			}
		}
		k, ok := r.conflictKey(func(f *schema.Field) any { v, _ := f.ValueOf(ctx, row); return v })
		if s := senders[k]; ok && len(s) == 1 {
			if _, taken := match[s[0]]; !taken {
				match[s[0]] = row
			}
		}
	}
	return match
}

// conflictKey returns the conflict columns, as value gives them, as a
// string that is the same for a value sent and the row it wrote: pointers
// followed, driver values for Valuers, times at the microseconds
// PostgreSQL keeps. It reports false for a NULL.
func (r *realignment) conflictKey(value func(*schema.Field) any) (string, bool) {
	var b strings.Builder
	for _, f := range r.conflict {
		v, ok := plainValue(value(f))
		if !ok {
			return "", false
		}
		fmt.Fprintf(&b, "%T:%v\x00", v, v)
	}
	return b.String(), true
}

// plainValue returns v as a plain value to compare: pointers followed,
// a Valuer's driver value, a time as its microseconds.
func plainValue(v any) (any, bool) {
	for range 4 {
		rv := reflect.ValueOf(v)
		switch {
		case v == nil:
			return nil, false
		case rv.Kind() == reflect.Pointer:
			if rv.IsNil() {
				return nil, false
			}
			v = rv.Elem().Interface()
			continue
		}
		if t, ok := v.(time.Time); ok {
			return t.Round(time.Microsecond).UnixMicro(), true
		}
		if valuer, ok := v.(driver.Valuer); ok {
			dv, err := valuer.Value()
			if err != nil {
				return nil, false
			}
			v = dv
			continue
		}
		if b, ok := v.([]byte); ok {
			return string(b), true
		}
		return v, true
	}
	return nil, false
}

// returnedFields returns the fields of the statement's RETURNING clause:
// every column's for RETURNING *.
func returnedFields(st *gorm.Statement) []*schema.Field {
	c := st.Clauses["RETURNING"]
	r, _ := c.Expression.(clause.Returning)
	names := st.Schema.DBNames
	if len(r.Columns) > 0 && r.Columns[0].Name != "*" {
		names = nil
		for _, col := range r.Columns {
			names = append(names, col.Name)
		}
	}
	var fs []*schema.Field
	for _, name := range names {
		if f := st.Schema.LookUpField(name); f != nil && f.DBName != "" {
			fs = append(fs, f)
		}
	}
	return fs
}
