package bigserial

import "time"

// Option configures [ConvertSerial] and [ConvertKeys].
type Option func(*convertOptions)

type convertOptions struct {
	lockTimeout  time.Duration
	scalable     bool   // WithScalable
	defaultExpr  string // the default's SQL, made from the install schema
	drop, create string // the SQL of WithDependents
}

// DefaultLockTimeout is how long the conversion waits for its locks
// unless [WithLockTimeout] says otherwise.
const DefaultLockTimeout = 5 * time.Second

// WithLockTimeout bounds how long the conversion waits for its locks
// (default [DefaultLockTimeout], at least 1ms): past it the conversion
// fails instead of queueing every other query on the tables behind it.
func WithLockTimeout(d time.Duration) Option {
	return func(o *convertOptions) { o.lockTimeout = d }
}

// WithScalable makes the keys' default the install's scalable generator,
// ulid_flake_scalable() of the schema the functions were found in, instead
// of ulid_flake(): the default of a node with a SID (ulid_flake_set_sid),
// in a mesh of writable nodes, where ulid_flake() makes no ID (55U04).
// The conversion refuses ([ErrConvert]) a scalable default on a node with
// no SID, where every insert would fail, and without WithScalable it
// refuses a node of a mesh: it runs the node's check and reads its SID,
// in a transaction it rolls back, making no ID.
func WithScalable() Option {
	return func(o *convertOptions) { o.scalable = true }
}

// WithDependents puts SQL of the program's own around the conversion, in
// its transaction: drop runs after the tables are locked and before
// anything changes, create after the last change; both under the
// caller's search_path (the one in force when the up side starts). It is
// the way on when objects stand in the way ([ErrDependents]): drop holds
// the DROP statements of the objects [Conversion.Dependents] names (or
// ALTER statements that stop them using the sequence), create the
// statements that create them again; pg_get_viewdef, pg_get_triggerdef,
// pg_get_functiondef and pg_get_expr print their definitions. Up, [Conversion.Apply] and
// [Conversion.Files] then carry them in place; the down side, which
// changes no column's type, holds neither. Each is statements that end in a
// semicolon, without BEGIN or COMMIT. Nothing checks that they drop every
// dependent: PostgreSQL refuses the conversion, and rolls it back whole,
// while one is left.
func WithDependents(drop, create string) Option {
	return func(o *convertOptions) { o.drop, o.create = drop, create }
}
