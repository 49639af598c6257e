package gormplugin

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/schema"
)

// realignKey is the statement setting under which fill leaves the upsert
// whose returned rows realign must give back to their own values.
const realignKey = "ulidflake:realign"

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

// returnColumns adds the key and the conflict columns to the statement's
// RETURNING, keeping the columns already there (RETURNING * stays).
func returnColumns(st *gorm.Statement, fields ...*schema.Field) {
	c, ok := st.Clauses["RETURNING"]
	if !ok {
		r := clause.Returning{}
		for _, f := range fields {
			r.Columns = append(r.Columns, clause.Column{Name: f.DBName})
		}
		st.AddClause(r)
		return
	}
	r, _ := c.Expression.(clause.Returning)
	if len(r.Columns) == 0 {
		return // RETURNING *
	}
	for _, f := range fields {
		if !returns(r, f.DBName) {
			r.Columns = append(r.Columns, clause.Column{Name: f.DBName})
		}
	}
	c.Expression = r
	st.Clauses["RETURNING"] = c
}

// returns reports whether r returns the column name.
func returns(r clause.Returning, name string) bool {
	for _, c := range r.Columns {
		if c.Name == name {
			return true
		}
	}
	return false
}

// snapshot runs just before GORM's INSERT, after the hooks and the
// associations that come first: it copies the values that realign will
// put back in place.
func snapshot(db *gorm.DB) {
	r := realignmentOf(db.Statement)
	if r == nil || db.Error != nil {
		return
	}
	_ = eachValue(reflect.Indirect(r.st.ReflectValue), func(v reflect.Value) error {
		v, _ = deref(v)
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		r.values, r.before = append(r.values, v), append(r.before, c)
		return nil
	})
}

// realignmentOf returns the realignment that fill left for st.
func realignmentOf(st *gorm.Statement) *realignment {
	v, ok := st.Settings.Load(realignKey)
	if !ok || v.(*realignment).st != st {
		return nil
	}
	return v.(*realignment)
}

// realign runs after the INSERT: GORM scanned its n returned rows into the
// first n values. It takes the rows out, puts every value back as it was
// before the INSERT, and gives each value the returned columns of the row
// with its conflict columns, or a zero key when there is none.
func (r *realignment) realign(db *gorm.DB) {
	ctx := r.st.Context
	n := min(int(db.RowsAffected), len(r.values))
	rows := make(map[string]reflect.Value, n)
	for i := range n {
		row := reflect.New(r.values[i].Type()).Elem()
		row.Set(r.values[i])
		rows[r.conflictKey(row)] = row
	}
	cols := returnedFields(r.st)
	for i, v := range r.values {
		v.Set(r.before[i])
		row, ok := rows[r.conflictKey(v)]
		if !ok {
			f := r.pk.ReflectValueOf(ctx, v)
			f.Set(reflect.Zero(f.Type()))
			continue
		}
		for _, f := range cols {
			f.ReflectValueOf(ctx, v).Set(f.ReflectValueOf(ctx, row))
		}
	}
}

// conflictKey returns the conflict columns of struct v as a string that is
// the same for a value and the row it wrote (times compare at the
// microseconds PostgreSQL keeps).
func (r *realignment) conflictKey(v reflect.Value) string {
	var b strings.Builder
	for _, f := range r.conflict {
		val, _ := f.ValueOf(r.st.Context, v)
		if t, ok := val.(time.Time); ok {
			val = t.UnixMicro()
		}
		fmt.Fprintf(&b, "%#v\x00", val)
	}
	return b.String()
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
