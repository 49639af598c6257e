// Package bigserial moves serial, bigserial, smallserial and identity keys
// of existing tables to DEFAULT ulid_flake(), and back: [ConvertKeys] reads
// the catalog and returns a [Conversion], the SQL of both sides, which
// [Conversion.Apply] runs or [Conversion.Files] writes as migration files
// for goose or golang-migrate. [KeysIn] lists the keys of a schema.
//
// The conversion calls the SQL functions that package migrations installs;
// install them first ([migrations.Migrate]). Where objects stand in the
// way ([ErrDependents]), [WithDependents] carries the SQL that drops them
// and creates them again in the conversion's transaction. The walk-through
// is docs/bigserial.md; the command line is `ulidflake convert`.
//
// Every function takes a *sql.DB, so the package needs no driver of its
// own: with a pgx pool, pass stdlib.OpenDBFromPool(pool) (package
// github.com/jackc/pgx/v5/stdlib).
package bigserial
