package migrations

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"io"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/migrations/internal/pgsql"
)

// DefaultVersionTable is the version table Migrate keeps.
const DefaultVersionTable = "ulid_flake_migrations"

// DefaultSchema is the schema that the packages of this module look for
// the install in when they are given none (their WithSchema). Migrate
// itself installs in the first schema of search_path that exists unless
// [WithSchema] names one: public, under PostgreSQL's default search_path.
const DefaultSchema = "public"

// aloneSQL refuses (SQLSTATE 55U05, [ErrForeignOwner]) an install schema
// that is not the installing role's alone: the body of version 5's
// ulid_flake_alone(schema), which every file from version 5 on calls
// first, and which Migrate runs as a DO block before every step, whatever
// the version.
//
//go:embed alone.sql
var aloneSQL string

// stateNotAlone is the SQLSTATE of aloneSQL's refusal.
const stateNotAlone = "55U05"

// aloneStatement is aloneSQL as the statement Migrate runs.
func aloneStatement() string {
	return "DO $alone$\nDECLARE\n\tschema pg_catalog.name := pg_catalog.current_schema();\n" + aloneSQL + "$alone$"
}

// lockKey serialises concurrent Migrate calls on one database
// (pg_advisory_xact_lock). It is "ulidflak" read as a big-endian integer.
const lockKey = 0x756c6964666c616b

// Option configures [Migrate]. The options are named WithX, as in flake,
// sidlease and gormplugin.
type Option func(*options)

type options struct {
	target    int // -1: latest
	dir       Direction
	dryRun    io.Writer
	schema    string
	table     string
	targetSet bool
	epoch     *flake.Epoch
}

// WithTarget migrates up or down to version v (0 removes everything). It
// takes precedence over [WithDirection].
func WithTarget(v int) Option { return func(o *options) { o.target, o.targetSet = v, true } }

// WithDirection says which way Migrate goes, as bigserial's Conversion.Apply takes
// it. [DirectionUp], the default, applies every version this build knows.
// [DirectionDown] reverts the newest version this build knows, if it is
// applied, and nothing else: calling it again, or from several processes,
// does no more. Run it alone: callers that migrate up at the same time
// undo it. Use [WithTarget] to go further down. Like every step, it reads
// the version table of the schema it changes: [WithSchema], else the first
// schema of the caller's search_path that exists. Another Direction is
// refused with [ErrTarget].
func WithDirection(d Direction) Option { return func(o *options) { o.dir = d } }

// WithDryRun writes the SQL that would run, with the transaction around
// each version, to w, and runs nothing.
func WithDryRun(w io.Writer) Option { return func(o *options) { o.dryRun = w } }

// WithSchema installs into the schema name, which must exist: each
// version runs with search_path set to it. The version table lives there
// too.
func WithSchema(name string) Option { return func(o *options) { o.schema = name } }

// WithVersionTable names the version table (default [DefaultVersionTable]).
func WithVersionTable(name string) Option { return func(o *options) { o.table = name } }

// WithEpoch installs the functions with epoch e, the one the application's
// Go generators use ([flake.WithEpoch]); without it they count from the
// setting ulid_flake.epoch_ms as it reads in Migrate's sessions, else from
// the default, 2024-01-01. Version 5 fixes the epoch at install. On a
// database that has version 5 with another epoch, Migrate returns
// [ErrEpoch] and changes nothing: give WithEpoch in every instance, the
// same.
func WithEpoch(e flake.Epoch) Option { return func(o *options) { o.epoch = &e } }

// Step is one version applied or reverted (or, in a dry run, planned).
type Step struct {
	Version   int
	Name      string
	Direction Direction
}

// Migrate brings db to the latest version (or as the options say) and
// returns the steps it took. Before anything runs it checks that the
// embedded versions have no gap or duplicate and that every version the
// database records is known. Each version runs in its own transaction,
// and is recorded in the version table in the same transaction; a failure
// leaves the versions before it applied.
//
// Any number of callers may migrate the same database at once (instances of
// the application that each migrate at start-up): every transaction first takes an
// advisory lock (pg_advisory_xact_lock, so it also works through a
// transaction pooler), then creates the version table if it is missing and
// reads the versions again, so the first caller does the work and the
// others find it done and return no steps. This holds for [DirectionDown]
// too, which reverts the newest version this build knows (when it is applied):
// callers that run it together revert that one version between them.
func Migrate(ctx context.Context, db *sql.DB, opts ...Option) ([]Step, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	return migrate(ctx, db, all, opts...)
}

// migrate is Migrate with the versions this build knows given: tests run
// two releases at once by giving the older one fewer.
func migrate(ctx context.Context, db *sql.DB, all []Migration, opts ...Option) ([]Step, error) {
	o := options{target: -1, table: DefaultVersionTable, dir: DirectionUp}
	for _, opt := range opts {
		opt(&o)
	}
	if o.dir != DirectionUp && o.dir != DirectionDown {
		return nil, fmt.Errorf("%w: direction %q (want DirectionUp or DirectionDown)", ErrTarget, string(o.dir))
	}
	if o.targetSet && (o.target < 0 || o.target > len(all)) {
		return nil, fmt.Errorf("%w: %d (versions 0..%d)", ErrTarget, o.target, len(all))
	}
	if o.epoch != nil && ((o.targetSet && o.target < versionOwner) || o.dir == DirectionDown) {
		return nil, fmt.Errorf("%w: WithEpoch is kept from version 5 on, not by DirectionDown or a target below it", ErrEpoch)
	}
	table := pgsql.QuoteIdent(o.table)
	if o.schema != "" {
		table = pgsql.QuoteIdent(o.schema) + "." + table
	}
	if err := checkSchema(ctx, db, o.schema); err != nil {
		return nil, err
	}
	// The versions as the call starts, without the lock: the plan of a dry
	// run, and the reference of Down.
	current, err := startVersion(ctx, db, o.schema, table, all)
	if err != nil {
		return nil, refuseAhead(err, o)
	}
	target := len(all)
	switch {
	case o.targetSet:
		target = o.target
	case o.dir == DirectionDown:
		// The newest version this build knows, if it is applied: the same
		// target for every caller, whenever it starts.
		target = min(current, len(all)-1)
	}

	if o.dryRun != nil {
		for _, s := range plan(current, target, all) {
			m := all[s.Version-1]
			body := m.Down
			if s.Direction == DirectionUp {
				body = m.Up
			}
			fmt.Fprintf(o.dryRun, "-- version %d %s (%s)\nBEGIN;\n", s.Version, m.Name, s.Direction)
			for _, q := range preamble(o) {
				fmt.Fprintf(o.dryRun, "%s;\n", q)
			}
			fmt.Fprintf(o.dryRun, "%s\n%s\nCOMMIT;\n\n", body, recordSQL(table, m, s.Direction))
		}
		return plan(current, target, all), nil
	}

	var steps []Step
	for {
		s, done, err := step(ctx, db, o, table, all, target)
		if err != nil {
			return steps, refuseAhead(err, o)
		}
		if done {
			return steps, nil
		}
		steps = append(steps, s)
	}
}

// startVersion reads the versions before any step, in a read-only
// transaction whose search_path is pinned as each step pins it: a Down or
// a dry run plans from the version table the steps then change, not from
// another one further along the caller's search_path.
func startVersion(ctx context.Context, db *sql.DB, schema, table string, all []Migration) (int, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if err := pinSchema(ctx, tx, schema); err != nil {
		return 0, err
	}
	return currentVersion(ctx, tx, table, all, false)
}

// plan lists the steps from version current to target.
func plan(current, target int, all []Migration) []Step {
	var steps []Step
	for v := current + 1; v <= target; v++ {
		steps = append(steps, Step{Version: v, Name: all[v-1].Name, Direction: DirectionUp})
	}
	for v := current; v > target; v-- {
		steps = append(steps, Step{Version: v, Name: all[v-1].Name, Direction: DirectionDown})
	}
	return steps
}

// preamble is what each step's transaction runs before anything else, in
// order, and what a dry run writes before each version's file: the lock,
// the install schema (WithSchema; else the caller's first schema that
// exists, which [pinSchema] then pins), the epoch (WithEpoch), and the
// check that the schema is the installer's alone (aloneSQL).
func preamble(o options) []string {
	stmts := []string{fmt.Sprintf("SELECT pg_catalog.pg_advisory_xact_lock(%d)", int64(lockKey))}
	if o.schema != "" {
		stmts = append(stmts, "SET LOCAL search_path TO "+pgsql.QuoteIdent(o.schema))
	}
	if o.epoch != nil {
		stmts = append(stmts, fmt.Sprintf("SET LOCAL ulid_flake.epoch_ms TO '%d'", o.epoch.UnixMilli()))
	}
	return append(stmts, aloneStatement())
}

// step takes one version towards target in a transaction of its own, under
// the lock, reading the versions again once the lock is held. It reports
// done when the database is at target.
func step(ctx context.Context, db *sql.DB, o options, table string, all []Migration, target int) (Step, bool, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return Step{}, false, err
	}
	defer tx.Rollback()
	for _, q := range preamble(o) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return Step{}, false, fmt.Errorf("migrations: before a step: %w", classify(0, err))
		}
	}
	if err := pinSchema(ctx, tx, o.schema); err != nil {
		return Step{}, false, err
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (
		version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return Step{}, false, fmt.Errorf("migrations: creating the version table %s: %w", table, err)
	}
	if err := trusted(ctx, tx, table); err != nil {
		return Step{}, false, err
	}
	current, err := currentVersion(ctx, tx, table, all, true)
	if err != nil {
		return Step{}, false, err
	}
	if current == 0 && target > 0 {
		if current, err = adopt(ctx, tx, table, all); err != nil {
			return Step{}, false, err
		}
		if current == 0 && o.schema == "" {
			if err := secondInstall(ctx, tx); err != nil {
				return Step{}, false, err
			}
		}
	}
	steps := plan(current, target, all)
	if len(steps) == 0 {
		if err := checkNode(ctx, tx, current); err != nil {
			return Step{}, false, err
		}
		if err := checkEpoch(ctx, tx, current, o.epoch); err != nil {
			return Step{}, false, err
		}
		return Step{}, true, tx.Commit()
	}
	s := steps[0]
	m := all[s.Version-1]
	body, record, args := m.Down, `DELETE FROM `+table+` WHERE version = $1`, []any{m.Version}
	if s.Direction == DirectionUp {
		body, record, args = m.Up, `INSERT INTO `+table+` (version, name) VALUES ($1, $2)`, []any{m.Version, m.Name}
	}
	fail := func(err error) (Step, bool, error) {
		return Step{}, false, fmt.Errorf("migrations: version %d %s (%s): %w", s.Version, m.Name, s.Direction, err)
	}
	// An up whose objects are there already (an older release adopted an
	// install of this one, recording only the versions it knew) is
	// recorded without running it again.
	installed := 0
	if s.Direction == DirectionUp {
		if installed, err = installedVersion(ctx, tx); err != nil {
			return fail(err)
		}
	}
	if installed < s.Version {
		if _, err := tx.ExecContext(ctx, body); err != nil {
			return fail(classify(m.Version, err))
		}
	}
	if _, err := tx.ExecContext(ctx, record, args...); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return s, false, nil
}

// classify wraps the sentinel that a refusal of version's file stands for,
// read from its SQLSTATE: [ErrForeignOwner] for the refusal of every file
// from version 5 on (and of the check Migrate runs before each step,
// version 0 here), else the version's refusals ([versions]).
func classify(version int, err error) error {
	code := pgsql.SQLState(err)
	if code == stateNotAlone {
		return fmt.Errorf("%w: %w", ErrForeignOwner, err)
	}
	if version < 1 || version > len(versions) || code == "" {
		return err
	}
	if sentinel := versions[version-1].refusals[code]; sentinel != nil {
		return fmt.Errorf("%w: %w", sentinel, err)
	}
	return err
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// currentVersion reads the versions the table records (none when it does
// not exist, unless it must) and checks them against the embedded ones.
func currentVersion(ctx context.Context, q querier, table string, all []Migration, mustExist bool) (int, error) {
	if !mustExist {
		var exists bool
		if err := q.QueryRowContext(ctx, `SELECT pg_catalog.to_regclass($1) IS NOT NULL`, table).Scan(&exists); err != nil {
			return 0, fmt.Errorf("migrations: looking for %s: %w", table, err)
		}
		if !exists {
			return 0, nil
		}
	}
	applied, err := appliedVersions(ctx, q, table)
	if err != nil {
		return 0, err
	}
	for i, v := range applied {
		if v != i+1 {
			if v > len(all) {
				return 0, fmt.Errorf("%w: %s records version %d; this build knows 1..%d", ErrUnknownVersion, table, v, len(all))
			}
			return 0, fmt.Errorf("%w: %s records versions %v, with a gap", ErrMissing, table, applied)
		}
	}
	if len(applied) > len(all) {
		// Versions 1..n without a gap, n above what this build knows: a
		// newer release migrated the database (a rolling deploy).
		return 0, &AheadError{Database: len(applied), Build: len(all)}
	}
	return len(applied), nil
}

func recordSQL(table string, m Migration, dir Direction) string {
	if dir == DirectionUp {
		return fmt.Sprintf("INSERT INTO %s (version, name) VALUES (%d, '%s');", table, m.Version, m.Name)
	}
	return fmt.Sprintf("DELETE FROM %s WHERE version = %d;", table, m.Version)
}

func appliedVersions(ctx context.Context, q querier, table string) ([]int, error) {
	rows, err := q.QueryContext(ctx, `SELECT version FROM `+table+` ORDER BY version`)
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

// checkSchema refuses a schema that search_path does not read as itself,
// before anything runs (a dry run included).
func checkSchema(ctx context.Context, db *sql.DB, schema string) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return pinSchema(ctx, tx, schema)
}
