package migrations

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Conversion is the SQL that moves a serial, bigserial or identity column to
// DEFAULT ulid_flake(), and back. Each side is one transaction. Every name
// in it is schema-qualified and quoted, so it converts the same table under
// any search_path, and no name can end a comment, a literal or a statement.
type Conversion struct {
	Table, Column string // as given
	// Up converts; it is empty when the column is converted already.
	Up string
	// Down goes back to a sequence; run it after Up (or on a column that
	// was converted before).
	Down string
	// Dependents names the objects that keep Up from running, as
	// PostgreSQL describes them (see [ErrDependents]); Apply refuses Up
	// while there are any.
	Dependents []string
}

// ConvertOption configures [ConvertSerial].
type ConvertOption func(*convertOptions)

type convertOptions struct {
	lockTimeout time.Duration
	generator   string
}

// LockTimeout bounds how long the conversion waits for its locks (default
// 5s, at least 1ms): past it the conversion fails instead of queueing every
// other query on the table behind it.
func LockTimeout(d time.Duration) ConvertOption {
	return func(o *convertOptions) { o.lockTimeout = d }
}

// Generator sets the default expression (default: ulid_flake(), qualified
// with the schema the functions were installed in; for example
// "ids.ulid_flake_scalable()" once ulid_flake_set_sid fixed the SID). It is SQL written by
// the program, not a name: it is used as given, under search_path
// pg_catalog, so every function in it must be schema-qualified.
func Generator(expr string) ConvertOption {
	return func(o *convertOptions) { o.generator = expr }
}

// serialLimit separates the keys a sequence made from Ulid-Flakes: below
// 2^40 (a trillion rows) is taken as the sequence's, when going back.
const serialLimit = 1 << 40

// ConvertSerial reads the catalog of db and returns the SQL that converts
// table.column (a serial, bigserial, smallserial or identity column) to
// DEFAULT ulid_flake(). table is read as PostgreSQL reads a table name,
// with the caller's search_path (schema-qualified or not, double quotes for
// mixed case); the functions are those owned by the converting role or a
// superuser, outside temporary schemas: first on the search_path, or else
// first by schema name. The up side, in one transaction:
//
//   - sets search_path to pg_catalog and lock_timeout;
//   - refuses to go on if existing keys reach the Ulid-Flake range (new keys
//     must sort after the old ones);
//   - drops the identity, or the sequence default;
//   - widens the column and every foreign-key column that references it to
//     bigint where they are smaller (on a partitioned table, its parent
//     only; a domain over bigint is kept; a domain over a smaller type is
//     refused, as the domain would be lost);
//   - sets DEFAULT ulid_flake();
//   - drops the old sequence, so that nothing can mint keys from it again.
//
// Old rows keep their keys. The down side restores a sequence default that
// starts at the largest old key plus one (keys below 2^40 count as old),
// keeping the column bigint. On a column converted before, Up is empty and
// Down is the way back. Neither side runs: see [Conversion.Apply].
//
// Views, materialized views, rules, policies, triggers, generated columns,
// SQL-standard function bodies and publications on a column that must be
// widened, and any object that uses the sequence, are refused up front
// with [ErrDependents], which names each of them; the returned Conversion
// then holds the SQL all the same, to run between the statements that
// drop and recreate them. A bigint key needs no widening, so only users of
// its sequence stand in the way.
//
// No SQL text it builds depends on a server setting: names are quoted
// identifiers, the only string literals are written E'...' with
// backslashes and quotes doubled, and every function, operator and type
// resolves to pg_catalog or the install schema (tested with
// standard_conforming_strings off, a search_path that puts a hostile
// schema first, and other DateStyle, IntervalStyle, TimeZone and
// extra_float_digits). See docs/bigserial.md.
func ConvertSerial(ctx context.Context, db *sql.DB, table, column string, opts ...ConvertOption) (Conversion, error) {
	o := convertOptions{lockTimeout: 5 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	c := Conversion{Table: table, Column: column}
	if o.lockTimeout < time.Millisecond {
		return c, fmt.Errorf("%w: lock timeout %s is below 1ms (0 would wait forever)", ErrConvert, o.lockTimeout)
	}
	t, err := inspect(ctx, db, table, column)
	if err != nil {
		return c, err
	}
	if err := t.check(); err != nil {
		return c, err
	}
	if o.generator == "" {
		o.generator = quoteIdent(t.fnSchema) + ".ulid_flake()"
	}
	if !t.converted {
		c.Up = upSQL(t, o)
	}
	c.Down = downSQL(t, o)
	c.Dependents = t.dependents
	if len(t.dependents) > 0 {
		return c, dependentsError(t.name(), t.dependents)
	}
	return c, nil
}

// dependentsError names every dependent object and says how to go on.
func dependentsError(name string, deps []string) error {
	return fmt.Errorf("%w: converting %s: %s; drop them, run the conversion and create them again, "+
		"in one transaction: put the DROP statements after the BEGIN of the printed SQL "+
		"(ulidflake convert without -apply, or Conversion.Up) and the CREATE statements before its COMMIT",
		ErrDependents, name, strings.Join(deps, ", "))
}

// Apply runs the up side ([DirectionUp]) or the down side
// ([DirectionDown]) on db. It returns [ErrConvert] when there is nothing
// to run (Up of a column that is converted already), and [ErrDependents]
// for Up while objects stand in its way.
func (c Conversion) Apply(ctx context.Context, db *sql.DB, dir Direction) error {
	var body string
	switch dir {
	case DirectionUp:
		if len(c.Dependents) > 0 {
			return dependentsError(quoteIdent(c.Table)+"."+quoteIdent(c.Column), c.Dependents)
		}
		body = c.Up
	case DirectionDown:
		body = c.Down
	default:
		return fmt.Errorf("%w: unknown direction %q", ErrConvert, string(dir))
	}
	if body == "" {
		return fmt.Errorf("%w: %s.%s is converted already", ErrConvert, c.Table, c.Column)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrations: converting %s.%s: %w", c.Table, c.Column, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, body); err != nil {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		return fmt.Errorf("migrations: converting %s.%s (%s): %w", c.Table, c.Column, dir, err)
	}
	return nil
}

// truncate cuts s to at most n bytes on a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
