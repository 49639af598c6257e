package migrations

import (
	"errors"
	"fmt"

	"github.com/ulidflake/ulidflake/flake"
)

// Errors of the migration set and of the database's version table.
var (
	// ErrMissing: a version has no up or down file, or the versions have a gap.
	ErrMissing = errors.New("migrations: missing migration")
	// ErrDuplicate: two files claim the same version and direction.
	ErrDuplicate = errors.New("migrations: duplicate migration")
	// ErrUnknownVersion: the database records a version this package does not have.
	ErrUnknownVersion = errors.New("migrations: unknown version in the database")
	// ErrTarget: a target version, or a [Direction], that does not exist:
	// a bad option, so it wraps [flake.ErrOption].
	ErrTarget = fmt.Errorf("%w: migrations: no such target version", flake.ErrOption)
	// ErrNotInstalled: the database has no ulid_flake functions where they
	// were looked for; install them first ([Migrate]). Every package of
	// this module that needs the functions wraps this one sentinel.
	ErrNotInstalled = errors.New("migrations: the ulid_flake functions are not installed")
)

// Errors of [Migrate] that say why it refuses the database.
var (
	// ErrAhead: the database records versions this build does not know (a
	// newer release migrated it, as in a rolling deploy). Migrate's up does
	// nothing and returns an *AheadError that wraps it; [DirectionDown] and
	// [WithTarget] refuse with one. Callers of an older release can treat errors.Is(err,
	// ErrAhead) from an up as "nothing to do".
	ErrAhead = errors.New("migrations: the database is ahead of this build")
	// ErrSchema: the schema cannot be the install schema: search_path does
	// not read it as itself ("$user", a schema that does not exist), or
	// the search_path names no schema that exists; or, without
	// [WithSchema], the database has no install there but one in another
	// schema (the error names it: pass WithSchema with it, or WithSchema
	// with the new schema for a second install on purpose).
	ErrSchema = errors.New("migrations: not an install schema")
	// ErrForeignOwner: the install schema is not the installer's alone:
	// a role other than the one running Migrate (or a superuser) owns it
	// (for a schema owned by pg_database_owner, public from PostgreSQL 15
	// on, the database's owner), may create in it, or owns an object of
	// the install's names there (SQLSTATE 55U05, which every migration
	// file from version 5 on raises too, and Migrate checks before every
	// step); or the version table, or an object Migrate reads or calls by
	// name, is another role's. Such a role could drop what is there and
	// put its own state or functions in its place, or run its code with
	// the caller's rights.
	ErrForeignOwner = errors.New("migrations: the install schema is not the installer's alone")
	// ErrEpoch: the functions were installed with another epoch than the
	// one [WithEpoch] gives, or version 5 would fix an epoch other than the one
	// the settings gave sessions that made IDs, or [WithEpoch] is given with a
	// target below version 5 (where nothing keeps it), or ulid_flake_ext
	// 1.0 (which reads the epoch from the setting) is beside version 5. Migrate never
	// changes an installed epoch (that moves the time of every ID already
	// made): ulid_flake_set_epoch(ms), as the install's owner, does.
	ErrEpoch = errors.New("migrations: the installed epoch is another")
	// ErrSID: version 5 fixes the node's SID (the one ulid_flake_scalable()
	// uses when its call gives none) at the one the installing session's
	// ulid_flake.sid gives, and the settings give other sessions another;
	// or a Down to version 4, which reads the setting again, would give
	// sessions another than the fixed one. ulid_flake_set_sid(sid), as the
	// install's owner, changes it.
	ErrSID = errors.New("migrations: the settings give sessions another SID")
	// ErrMesh: ulid_flake_check_node() (version 5 on) refused the node, so
	// that it makes no ID before the operator acts, with one SQLSTATE per
	// refusal (the message starts "ulid_flake mesh:"): this database is a
	// copy (a pg_basebackup clone or a promoted replica: another timeline;
	// a restore: another system or database) of a node while other nodes'
	// rows are here, until ulid_flake_new_node(sid) makes it a node of its
	// own, with a SID of its own (55U01); another node's row
	// in ulid_flake_nodes holds this node's SID (55U02); a subscription
	// copies ulid_flake_state into this database (55U03); or a table that
	// the node publishes or receives by subscription takes its default
	// from ulid_flake(), which ignores the SID (55U04). The error wraps the
	// server's.
	ErrMesh = errors.New("migrations: the mesh refuses this node")
)

// AheadError names the database's version and the newest this build knows.
type AheadError struct {
	Database int    // the newest version the database records
	Build    int    // the newest version this build knows
	Op       string // "up" (nothing done), "down" or "target" (refused)
}

func (e *AheadError) Error() string {
	what := "up does nothing"
	if e.Op != "up" {
		what = e.Op + " refused"
	}
	return fmt.Sprintf("%v: the database is at version %d, this build knows 1..%d: %s", ErrAhead, e.Database, e.Build, what)
}

func (e *AheadError) Unwrap() error { return ErrAhead }
