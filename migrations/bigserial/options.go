package bigserial

import "time"

// Option configures [ConvertSerial] and [ConvertKeys].
type Option func(*convertOptions)

type convertOptions struct {
	lockTimeout  time.Duration
	defaultExpr  string
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

// WithDefault sets the default expression (default: ulid_flake(),
// qualified with the schema the functions were installed in; for example
// "ids.ulid_flake_scalable()" once ulid_flake_set_sid fixed the SID). It is
// SQL written by the program, not a name: it is used as given, under
// search_path pg_catalog, so every function in it must be
// schema-qualified.
func WithDefault(expr string) Option {
	return func(o *convertOptions) { o.defaultExpr = expr }
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
