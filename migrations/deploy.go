package migrations

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/migrations/internal/pgsql"
)

// refuseAhead names the operation in an *AheadError.
func refuseAhead(err error, o options) error {
	var ahead *AheadError
	if !errors.As(err, &ahead) {
		return err
	}
	op := "up"
	switch {
	case o.targetSet:
		op = "target"
	case o.dir == DirectionDown:
		op = "down"
	}
	return &AheadError{Database: ahead.Database, Build: ahead.Build, Op: op}
}

// execer is a *sql.Tx (or a *sql.Conn).
type execer interface {
	querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// pinSchema puts schema alone on the transaction's search_path (quoted by
// the server, so that no setting changes its reading) and checks that
// PostgreSQL reads it as that schema: "$user" on a search_path is the
// role's schema, whatever the quotes. With no schema, the first schema of
// the caller's search_path that exists is pinned, the one the migration
// files install into.
func pinSchema(ctx context.Context, tx execer, schema string) error {
	// No operator here (nullif would look one up): the caller's search_path
	// is still in force.
	if _, err := tx.ExecContext(ctx, `SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(
		CASE WHEN $2::pg_catalog.bool THEN $1::pg_catalog.text ELSE pg_catalog.current_schema()::pg_catalog.text END), true)`,
		schema, schema != ""); err != nil {
		return fmt.Errorf("migrations: setting search_path to %q: %w", schema, err)
	}
	var cur sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT pg_catalog.current_schema()`).Scan(&cur); err != nil {
		return fmt.Errorf("migrations: reading current_schema(): %w", err)
	}
	switch {
	case !cur.Valid && schema == "":
		return fmt.Errorf("%w: no schema on search_path exists", ErrSchema)
	case !cur.Valid || (schema != "" && cur.String != schema):
		return fmt.Errorf("%w: %q does not exist, or search_path reads it as another schema (%q)", ErrSchema, schema, cur.String)
	}
	return nil
}

// adopt records the versions of an install that another tool made (the
// migration files run by golang-migrate, goose or psql) when the version
// table is empty: the version is read from the objects each one creates in
// the install schema. It returns the version.
func adopt(ctx context.Context, tx execer, table string, all []Migration) (int, error) {
	v, err := installedVersion(ctx, tx)
	if err != nil {
		return 0, err
	}
	if v > len(all) {
		return 0, &AheadError{Database: v, Build: len(all)}
	}
	for _, m := range all[:v] {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			return 0, fmt.Errorf("migrations: adopting version %d: %w", m.Version, err)
		}
	}
	return v, nil
}

// checkNode runs ulid_flake_check_node() (version 4 on), which draws a new
// generator offset when the state was recorded on another database: a
// clone, a dump restored elsewhere, CREATE DATABASE ... TEMPLATE. From
// version 5 on it also checks the node against the mesh's rows
// (ulid_flake_nodes) and writes its own; its refusals (SQLSTATEs 55U01 to
// 55U04) are [ErrMesh], and its refusal of a schema that is not the
// installer's alone (55U05) or of a state other roles may write (42501)
// [ErrForeignOwner]. It is called by the install schema's name.
func checkNode(ctx context.Context, tx execer, current int) error {
	if current < versionCheckNode {
		return nil
	}
	var schema string
	if err := tx.QueryRowContext(ctx, `SELECT pg_catalog.quote_ident(pg_catalog.current_schema())`).Scan(&schema); err != nil {
		return fmt.Errorf("migrations: checking the generator state: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT `+schema+`.ulid_flake_check_node()`); err != nil {
		switch code := pgsql.SQLState(err); {
		case meshStates[code]:
			return fmt.Errorf("%w: %w", ErrMesh, err)
		case code == "42501" || code == stateNotAlone:
			return fmt.Errorf("%w: %w", ErrForeignOwner, err)
		}
		return fmt.Errorf("migrations: checking the generator state: %w", err)
	}
	return nil
}

// checkEpoch returns ErrEpoch when the install (version 5 on, where the
// epoch is fixed) has another epoch than want (when given), or has
// ulid_flake_ext 1.0 beside it, which reads the setting instead. It calls
// ulid_flake_epoch_ms() by the install schema's name.
func checkEpoch(ctx context.Context, tx execer, current int, want *flake.Epoch) error {
	if current < versionOwner {
		return nil
	}
	var ext sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT e.extversion FROM pg_catalog.pg_extension AS e
		WHERE e.extname OPERATOR(pg_catalog.=) 'ulid_flake_ext' AND e.extnamespace OPERATOR(pg_catalog.=)
			pg_catalog.to_regnamespace(pg_catalog.quote_ident(pg_catalog.current_schema()))`).Scan(&ext)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("migrations: reading the extension's version: %w", err)
	}
	if ext.String == "1.0" {
		return fmt.Errorf("%w: ulid_flake_ext 1.0 is installed beside version %d; it reads the epoch from the setting ulid_flake.epoch_ms, not the one version 5 fixes: install its 1.1 files on the server and run ALTER EXTENSION ulid_flake_ext UPDATE", ErrEpoch, current)
	}
	if want == nil {
		return nil
	}
	var schema string
	if err := tx.QueryRowContext(ctx, `SELECT pg_catalog.quote_ident(pg_catalog.current_schema())`).Scan(&schema); err != nil {
		return fmt.Errorf("migrations: reading the epoch: %w", err)
	}
	var ms int64
	if err := tx.QueryRowContext(ctx, `SELECT `+schema+`.ulid_flake_epoch_ms()`).Scan(&ms); err != nil {
		return fmt.Errorf("migrations: reading the epoch: %w", err)
	}
	if ms != want.UnixMilli() {
		return fmt.Errorf("%w: the functions count from Unix ms %d (%s), not %d (%s): every instance must pass the same WithEpoch, the one its generators use (changing the installed one: docs/sql.md, \"The epoch\")",
			ErrEpoch, ms, time.UnixMilli(ms).UTC().Format(flake.RFC3339Milli), want.UnixMilli(), want)
	}
	return nil
}

// trusted returns ErrForeignOwner when the version table is owned by a
// role that is neither the one running Migrate nor a superuser: a trigger
// on a planted version table would run with the caller's rights. The
// install's own objects need no list here: aloneSQL, run before every
// step, refuses a schema where another role owns any of them.
func trusted(ctx context.Context, tx execer, table string) error {
	var foreign sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT 'table ' OPERATOR(pg_catalog.||) c.oid::pg_catalog.regclass::pg_catalog.text
			OPERATOR(pg_catalog.||) ' (owner ' OPERATOR(pg_catalog.||) pg_catalog.quote_ident(r.rolname) OPERATOR(pg_catalog.||) ')'
		FROM pg_catalog.pg_class c JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) c.relowner
		WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass($1)
			AND NOT r.rolsuper AND r.rolname OPERATOR(pg_catalog.<>) CURRENT_USER`, table).Scan(&foreign)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("migrations: reading the owner of the version table: %w", err)
	}
	if foreign.Valid {
		return fmt.Errorf("%w: %s; drop what that role made, or give it to the install's owner (REASSIGN OWNED BY ... TO ...); only if that role is meant to own the install, run Migrate as it", ErrForeignOwner, foreign.String)
	}
	return nil
}

// secondInstall returns [ErrSchema] when the database holds an install
// (the sequence ulid_flake_seq of version 1, owned by the caller or a
// superuser: another role's sequence of that name is no install this
// caller could use, and would name a schema of its choice) in a schema
// other than the pinned one, where Migrate without [WithSchema] would begin another: two
// installs in one database keep two offsets, two epochs and two SIDs, and
// their IDs can repeat. The error names the schemas to pass to WithSchema.
// An install in a second schema, on purpose, is made with WithSchema.
func secondInstall(ctx context.Context, tx execer) error {
	var others sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT pg_catalog.string_agg(n.nspname::pg_catalog.text, pg_catalog.chr(10) ORDER BY n.nspname)
		FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
			JOIN pg_catalog.pg_roles AS r ON r.oid OPERATOR(pg_catalog.=) c.relowner
		WHERE c.relname OPERATOR(pg_catalog.=) 'ulid_flake_seq' AND c.relkind OPERATOR(pg_catalog.=) 'S'
			AND (r.rolsuper OR r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
			AND n.nspname OPERATOR(pg_catalog.<>) pg_catalog.current_schema()
			AND NOT pg_catalog.starts_with(n.nspname::pg_catalog.text, 'pg_temp_')`).Scan(&others); err != nil {
		return fmt.Errorf("migrations: looking for other installs: %w", err)
	}
	if others.Valid {
		var here string
		if err := tx.QueryRowContext(ctx, `SELECT pg_catalog.current_schema()`).Scan(&here); err != nil {
			return fmt.Errorf("migrations: looking for other installs: %w", err)
		}
		names := strings.Split(others.String, "\n")
		return fmt.Errorf("%w: this database has an install in schema %q already, and none in %q, the first schema of search_path: pass WithSchema(%q) to reach it; for a second, separate install on purpose, pass WithSchema(%q)",
			ErrSchema, strings.Join(names, `", "`), here, names[0], here)
	}
	return nil
}
