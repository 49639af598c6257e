package gormplugin

import (
	"context"
	"reflect"
	"slices"
	"sync"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"
)

// stateKey is the one statement setting the plugin keeps: the statement's
// *create. GORM copies settings into the statements that create
// associations, so such a statement finds there, until fill replaces it,
// the create of the statement that creates it.
const stateKey = "ulidflake:create"

// create is the plugin's state in one create statement. fill makes it
// (begin); snapshot, correct and finish, later in the same statement, read
// it (createOf). The creates of associations that GORM runs inside it make
// their own, with this one as outer.
type create struct {
	st      *gorm.Statement
	outer   *create      // the create whose associations this one creates, or nil
	undo    *undoLog     // the outermost create's: the outer creates share it
	lookUp  bool         // after the INSERT, zero the keys not written
	realign *realignment // after the INSERT, give each value its returned row
}

// begin makes the statement's create.
func begin(st *gorm.Statement) *create {
	c := &create{st: st, undo: &undoLog{}}
	if v, ok := st.Settings.Load(stateKey); ok && v.(*create).st != st {
		c.outer = v.(*create)
		c.undo = c.outer.undo
	}
	st.Settings.Store(stateKey, c)
	return c
}

// createOf returns the create that fill made in st, or nil.
func createOf(st *gorm.Statement) *create {
	c, _ := st.Settings.Load(stateKey)
	if c, ok := c.(*create); ok && c.st == st {
		return c
	}
	return nil
}

// setByOuter reports whether field f is set from the key of a model that
// creates c's model in the same call, or from c's own key: the foreign key
// of a has-one or has-many association of c's model or of an outer one.
func (c *create) setByOuter(f *schema.Field) bool {
	for o := c; o != nil; o = o.outer {
		for _, rel := range o.st.Schema.Relationships.Relations {
			if rel.Type != schema.HasOne && rel.Type != schema.HasMany {
				continue
			}
			for _, ref := range rel.References {
				if ref.OwnPrimaryKey && ref.ForeignKey == f {
					return true
				}
			}
		}
	}
	return false
}

// finish runs last in a create. When the outermost create failed, it puts
// back every key the plugin filled in it and in its associations (zero, or
// what a map held), so that no struct keeps an ID of a row that was not
// written. It then forgets the statement's create, so that a reused
// statement starts anew.
func finish(db *gorm.DB) {
	c := createOf(db.Statement)
	if c == nil {
		return
	}
	db.Statement.Settings.Delete(stateKey)
	if c.outer == nil && db.Error != nil {
		c.undo.run()
	}
}

// undoLog records how to put back each field the plugin filled.
type undoLog struct {
	mu   sync.Mutex
	undo []func()
}

func (l *undoLog) add(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.undo = append(l.undo, f)
}

func (l *undoLog) run() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range slices.Backward(l.undo) {
		f()
	}
}

// setZero sets field f of struct v to its zero value (nil for a pointer).
func setZero(ctx context.Context, f *schema.Field, v reflect.Value) {
	fv := f.ReflectValueOf(ctx, v)
	fv.Set(reflect.Zero(fv.Type()))
}

// restoreMapKey returns a function that puts back what map m held under
// key (nothing: the key is deleted).
func restoreMapKey(m, key reflect.Value) func() {
	held := m.MapIndex(key)
	return func() { m.SetMapIndex(key, held) }
}
