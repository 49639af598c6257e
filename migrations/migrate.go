package migrations

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"slices"
)

// DefaultTable is the version table Migrate keeps.
const DefaultTable = "ulid_flake_migrations"

// lockKey serialises concurrent Migrate calls on one database
// (pg_advisory_xact_lock). It is "ulidflak" read as a big-endian integer.
const lockKey = 0x756c6964666c616b

// Option configures [Migrate].
type Option func(*options)

type options struct {
	target    int // -1: latest
	down      int // steps down; 0: none
	dryRun    io.Writer
	schema    string
	table     string
	targetSet bool
}

// To migrates up or down to version v (0 removes everything).
func To(v int) Option { return func(o *options) { o.target, o.targetSet = v, true } }

// Down reverts the last version only. Use [To] to go further down.
func Down() Option { return func(o *options) { o.down = 1 } }

// DryRun writes the SQL that would run, with the transaction around each
// version, to w, and runs nothing.
func DryRun(w io.Writer) Option { return func(o *options) { o.dryRun = w } }

// Schema installs into schema, which must exist: each version runs with
// search_path set to it. The version table lives there too.
func Schema(schema string) Option { return func(o *options) { o.schema = schema } }

// Table names the version table (default ulid_flake_migrations).
func Table(name string) Option { return func(o *options) { o.table = name } }

// Step is one version applied or reverted (or, in a dry run, planned).
type Step struct {
	Version int
	Name    string
	Up      bool
}

// Migrate brings db to the latest version (or as the options say) and
// returns the steps it took. Before anything runs it checks that the
// embedded versions have no gap or duplicate and that every version the
// database records is known. Each version runs in its own transaction,
// under an advisory lock, and is recorded in the version table in the same
// transaction; a failure leaves the versions before it applied.
func Migrate(ctx context.Context, db *sql.DB, opts ...Option) ([]Step, error) {
	o := options{target: -1, table: DefaultTable}
	for _, opt := range opts {
		opt(&o)
	}
	all, err := All()
	if err != nil {
		return nil, err
	}
	if o.targetSet && (o.target < 0 || o.target > len(all)) {
		return nil, fmt.Errorf("%w: %d (versions 0..%d)", ErrTarget, o.target, len(all))
	}
	table := quoteIdent(o.table)
	if o.schema != "" {
		table = quoteIdent(o.schema) + "." + table
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (
		version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("migrations: creating the version table %s: %w", table, err)
	}
	applied, err := appliedVersions(ctx, db, table)
	if err != nil {
		return nil, err
	}
	for i, v := range applied {
		if v != i+1 {
			if v > len(all) {
				return nil, fmt.Errorf("%w: %s records version %d; this build knows 1..%d", ErrUnknownVersion, table, v, len(all))
			}
			return nil, fmt.Errorf("%w: %s records versions %v, with a gap", ErrMissing, table, applied)
		}
	}
	current := len(applied)
	target := len(all)
	switch {
	case o.targetSet:
		target = o.target
	case o.down > 0:
		target = max(current-o.down, 0)
	}

	var steps []Step
	for v := current + 1; v <= target; v++ {
		steps = append(steps, Step{Version: v, Name: all[v-1].Name, Up: true})
	}
	for v := current; v > target; v-- {
		steps = append(steps, Step{Version: v, Name: all[v-1].Name, Up: false})
	}
	for _, s := range steps {
		m := all[s.Version-1]
		body, record := m.Down, `DELETE FROM `+table+` WHERE version = $1`
		if s.Up {
			body, record = m.Up, `INSERT INTO `+table+` (version, name) VALUES ($1, $2)`
		}
		if o.dryRun != nil {
			fmt.Fprintf(o.dryRun, "-- version %d %s (%s)\nBEGIN;\n", s.Version, m.Name, direction(s.Up))
			if o.schema != "" {
				fmt.Fprintf(o.dryRun, "SET LOCAL search_path TO %s;\n", quoteIdent(o.schema))
			}
			fmt.Fprintf(o.dryRun, "%s\n%s\nCOMMIT;\n\n", body, recordSQL(table, m, s.Up))
			continue
		}
		if err := runStep(ctx, db, o.schema, body, record, m); err != nil {
			return steps[:slices.Index(steps, s)], fmt.Errorf("migrations: version %d %s (%s): %w", s.Version, m.Name, direction(s.Up), err)
		}
	}
	return steps, nil
}

func runStep(ctx context.Context, db *sql.DB, schema, body, record string, m Migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(lockKey)); err != nil {
		return err
	}
	if schema != "" {
		if _, err := tx.ExecContext(ctx, `SELECT set_config('search_path', $1, true)`, quoteIdent(schema)); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return err
	}
	args := []any{m.Version}
	if record[0] == 'I' {
		args = append(args, m.Name)
	}
	if _, err := tx.ExecContext(ctx, record, args...); err != nil {
		return err
	}
	return tx.Commit()
}

func recordSQL(table string, m Migration, up bool) string {
	if up {
		return fmt.Sprintf("INSERT INTO %s (version, name) VALUES (%d, '%s');", table, m.Version, m.Name)
	}
	return fmt.Sprintf("DELETE FROM %s WHERE version = %d;", table, m.Version)
}

func direction(up bool) string {
	if up {
		return "up"
	}
	return "down"
}

func appliedVersions(ctx context.Context, db *sql.DB, table string) ([]int, error) {
	rows, err := db.QueryContext(ctx, `SELECT version FROM `+table+` ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("migrations: reading %s: %w", table, err)
	}
	defer rows.Close()
	var v []int
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		v = append(v, n)
	}
	return v, rows.Err()
}

// quoteIdent quotes a PostgreSQL identifier.
func quoteIdent(s string) string {
	out := []byte{'"'}
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			out = append(out, '"')
		}
		out = append(out, s[i])
	}
	return string(append(out, '"'))
}
