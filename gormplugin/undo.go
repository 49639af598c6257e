package gormplugin

import (
	"context"
	"reflect"
	"slices"
	"sync"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"
)

// undoKey is the statement setting that holds the fills of a create and
// of the creates of its associations: GORM copies settings to the
// statements that create associations, so theirs join the owner's.
const undoKey = "ulidflake:undo"

// undoLog records how to put back each field the plugin filled.
type undoLog struct {
	owner *gorm.Statement // the create that made the log
	mu    sync.Mutex
	undo  []func()
}

// undoLogOf returns the statement's log, making it when the statement is
// not the create of an association.
func undoLogOf(st *gorm.Statement) *undoLog {
	if v, ok := st.Settings.Load(undoKey); ok {
		return v.(*undoLog)
	}
	l := &undoLog{owner: st}
	st.Settings.Store(undoKey, l)
	return l
}

func (l *undoLog) add(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.undo = append(l.undo, f)
}

// undoFills runs last in a create. When the create failed, it puts back
// every key the plugin filled in it and in its associations (zero, or what
// a map held), so that no struct keeps an ID of a row that was not
// written. It then forgets the log, so that a reused statement starts a
// new one.
func undoFills(db *gorm.DB) {
	v, ok := db.Statement.Settings.Load(undoKey)
	if !ok || v.(*undoLog).owner != db.Statement {
		return
	}
	l := v.(*undoLog)
	db.Statement.Settings.Delete(undoKey)
	if db.Error == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range slices.Backward(l.undo) {
		f()
	}
}

// zeroField returns a function that sets field f of struct v back to its
// zero value (nil for a pointer).
func zeroField(ctx context.Context, f *schema.Field, v reflect.Value) func() {
	return func() {
		fv := f.ReflectValueOf(ctx, v)
		fv.Set(reflect.Zero(fv.Type()))
	}
}

// restoreMapKey returns a function that puts back what map m held under
// key (nothing: the key is deleted).
func restoreMapKey(m, key reflect.Value) func() {
	held := m.MapIndex(key)
	return func() { m.SetMapIndex(key, held) }
}
