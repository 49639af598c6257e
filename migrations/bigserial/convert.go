package bigserial

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/migrations/internal/pgsql"
)

// Conversion is the SQL that moves serial, bigserial or identity columns
// to DEFAULT ulid_flake(), and back. Each side is one transaction, for
// every key at once. Every name in it is schema-qualified and quoted, and
// it holds nothing else of the database it was read from (no OID, no
// column number, no role): it converts the same tables under any
// search_path, on any database with the same schema, and no name can end a
// comment, a literal or a statement.
type Conversion struct {
	Keys []Key // as given
	// Up converts; it is empty when every column is converted already.
	Up string
	// Down goes back to sequences; run it after Up (or on columns that
	// were converted before).
	Down string
	// Dependents names the objects that keep Up from running, as
	// PostgreSQL describes them (see [ErrDependents]); Apply and Files
	// refuse Up while there are any, unless [WithDependents] gave the SQL
	// that drops them and creates them again.
	Dependents []string

	up, down []string // the statements of each side, for Files
	idents   []string // every name read from the catalog that the SQL holds, for Files
	fnSchema string   // where the functions it calls are installed
	carried  bool     // WithDependents gave SQL: Up drops and creates the dependents itself
}

// ConvertSerial is [ConvertKeys] for one key column.
func ConvertSerial(ctx context.Context, db *sql.DB, table, column string, opts ...Option) (Conversion, error) {
	return ConvertKeys(ctx, db, []Key{{table, column}}, opts...)
}

// ConvertKeys reads the catalog of db and returns the SQL that converts
// each key (a serial, bigserial, smallserial or identity column) to
// DEFAULT ulid_flake(), every one in the same transaction. The tables are
// read with the caller's search_path; the functions are those owned by the
// converting role or a superuser, outside temporary schemas: first on the
// search_path, or else first by schema name. The up side, in one
// transaction:
//
//   - sets lock_timeout and locks the tables;
//   - runs the DROP statements of [WithDependents], if given;
//   - sets search_path to pg_catalog;
//   - refuses to go on if existing keys reach the Ulid-Flake range (new keys
//     must sort after the old ones);
//   - drops each identity, or sequence default;
//   - widens each column and every foreign-key column that references it
//     to bigint where they are smaller (on a partitioned table, its parent
//     only; a domain over bigint is kept; a domain over a smaller type is
//     refused, as the domain would be lost);
//   - sets DEFAULT ulid_flake() of the install, or with [WithScalable]
//     its ulid_flake_scalable();
//   - drops the old sequences, so that nothing can mint keys from them;
//   - gives search_path back the value it had;
//   - runs the CREATE statements of [WithDependents], if given.
//
// Old rows keep their keys. The down side restores, for each key, a
// sequence default that starts at the largest old key plus one (keys below
// 2^40 count as old), owned by the table's owner and usable by the roles
// that may insert when it runs, keeping the column bigint. When every
// column is converted already, Up is empty and Down is the way back; a mix
// of converted and unconverted columns is refused. Neither side runs: see
// [Conversion.Apply] and [Conversion.Files].
//
// Views, materialized views, rules, policies, triggers, generated columns,
// SQL-standard function bodies and publications on a column that must be
// widened, and any object that uses a sequence it drops, are refused up
// front with [ErrDependents], which names each of them, unless
// [WithDependents] gives the SQL that drops them and creates them again;
// the returned Conversion holds the SQL all the same. A bigint key needs
// no widening, so only users of its sequence stand in the way.
//
// No SQL text it builds depends on a server setting or on the database it
// was read from: names are quoted identifiers, the only string literals
// are written E'...' with backslashes and quotes doubled, tables are found
// at run time by their qualified names, and every function, operator and
// type resolves to pg_catalog or the install schema. See docs/bigserial.md.
func ConvertKeys(ctx context.Context, db *sql.DB, keys []Key, opts ...Option) (Conversion, error) {
	o := convertOptions{lockTimeout: DefaultLockTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	c := Conversion{Keys: keys}
	if o.lockTimeout < time.Millisecond {
		return c, fmt.Errorf("%w: lock timeout %s is below 1ms (0 would wait forever)", ErrConvert, o.lockTimeout)
	}
	if len(keys) == 0 {
		return c, fmt.Errorf("%w: no key to convert: name at least one table", ErrConvert)
	}
	for _, given := range [][2]string{{"drop", o.drop}, {"create", o.create}} {
		if t := strings.TrimSpace(given[1]); t != "" && !strings.HasSuffix(t, ";") {
			return c, fmt.Errorf("%w: the %s SQL of WithDependents does not end in a semicolon", ErrConvert, given[0])
		}
	}
	ts, err := inspect(ctx, db, keys)
	if err != nil {
		return c, err
	}
	converted, err := checkAll(ts)
	if err != nil {
		return c, err
	}
	c.fnSchema = ts[0].fnSchema
	c.carried = o.drop != "" || o.create != ""
	o.defaultExpr = pgsql.QuoteIdent(ts[0].fnSchema) + ".ulid_flake()"
	if o.scalable {
		o.defaultExpr = pgsql.QuoteIdent(ts[0].fnSchema) + ".ulid_flake_scalable()"
	}
	if !converted {
		if err := checkDefault(ctx, db, ts[0].fnSchema, o.scalable); err != nil {
			return c, err
		}
		c.up = upStatements(ts, o)
		c.Up = transaction(upComment, c.up)
	}
	c.down = downStatements(ts, o)
	c.Down = transaction(downComment, c.down)
	for _, t := range ts {
		c.Dependents = append(c.Dependents, t.dependents...)
		c.idents = append(c.idents, t.idents()...)
	}
	if len(c.Dependents) > 0 && !c.carried {
		return c, dependentsError(c.names(), c.Dependents)
	}
	return c, nil
}

// checkAll checks every target and reports whether all are converted
// already; a mix is refused, as no one side fits it.
func checkAll(ts []target) (converted bool, err error) {
	var done, todo []string
	for _, t := range ts {
		if err := t.check(); err != nil {
			return false, err
		}
		if t.converted {
			done = append(done, t.name())
		} else {
			todo = append(todo, t.name())
		}
	}
	if len(done) > 0 && len(todo) > 0 {
		return false, fmt.Errorf("%w: %s converted already and %s not: convert them apart, or those not converted first",
			ErrConvert, strings.Join(done, ", "), strings.Join(todo, ", "))
	}
	return len(todo) == 0, nil
}

// names lists the keys as given, for messages.
func (c Conversion) names() string {
	out := make([]string, len(c.Keys))
	for i, k := range c.Keys {
		out[i] = k.Table + "." + pgsql.QuoteIdent(k.Column)
	}
	return strings.Join(out, ", ")
}

// dependentsError names every dependent object and says how to go on.
func dependentsError(name string, deps []string) error {
	return fmt.Errorf("%w: converting %s: %s; drop them and create them again in the conversion's transaction: "+
		"give the DROP and the CREATE statements to WithDependents (ulidflake convert: -drop FILE -create FILE), "+
		"which puts them in place in the SQL, in Apply and in the migration files",
		ErrDependents, name, strings.Join(deps, ", "))
}

// Apply runs the up side ([migrations.DirectionUp]) or the down side
// ([migrations.DirectionDown]) on db. It returns [ErrConvert] when there is nothing
// to run (Up of columns that are converted already), and [ErrDependents]
// for Up while objects stand in its way and [WithDependents] gave no SQL
// for them.
func (c Conversion) Apply(ctx context.Context, db *sql.DB, dir migrations.Direction) error {
	body, err := c.side(dir)
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("bigserial: converting %s: %w", c.names(), err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, body); err != nil {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		return fmt.Errorf("bigserial: converting %s (%s): %w", c.names(), dir, err)
	}
	return nil
}

// side returns the SQL of one direction, or why it cannot run.
func (c Conversion) side(dir migrations.Direction) (string, error) {
	switch dir {
	case migrations.DirectionUp:
		if len(c.Dependents) > 0 && !c.carried {
			return "", dependentsError(c.names(), c.Dependents)
		}
		if c.Up == "" {
			return "", fmt.Errorf("%w: %s converted already: the down side is the way back", ErrConvert, c.names())
		}
		return c.Up, nil
	case migrations.DirectionDown:
		if c.Down == "" {
			return "", fmt.Errorf("%w: no conversion: call ConvertKeys", ErrConvert)
		}
		return c.Down, nil
	}
	return "", fmt.Errorf("%w: unknown direction %q", ErrConvert, string(dir))
}

// Files returns the conversion as migration files for tool, named after
// base, a version and a name ("000002_ulid_flake_keys"): for
// "golang-migrate", base.up.sql and base.down.sql without BEGIN and
// COMMIT, as golang-migrate's postgres and pgx drivers send a file as one
// query, which PostgreSQL runs as one transaction: a failure rolls back
// the whole file and leaves the connection usable, so golang-migrate
// releases its lock (do not set x-multi-statement, which splits the DO
// blocks); for "goose", one base.sql with its Up and Down sections, run in
// goose's transaction, the DO blocks between StatementBegin and
// StatementEnd. The files replay on any database with the same schema (see
// [ConvertKeys]). It returns [ErrConvert] for another tool, a bad base,
// columns converted already (no up side: the file would record nothing),
// and, for goose, which reads the file line by line, a name with a line
// break (table, column, sequence, foreign key or install schema) or any
// line it would take for an annotation (the SQL of [WithDependents]
// included); [ErrDependents] while objects stand in the way of Up and
// WithDependents gave no SQL for them.
func (c Conversion) Files(tool, base string) (map[string]string, error) {
	if _, err := c.side(migrations.DirectionUp); err != nil {
		return nil, err
	}
	if !fileBase.MatchString(base) {
		return nil, fmt.Errorf("%w: file name %q: want a version and a name, like 000002_ulid_flake_keys", ErrConvert, base)
	}
	switch tool {
	case "golang-migrate":
		return map[string]string{base + ".up.sql": oneQuery(upComment, c.up), base + ".down.sql": oneQuery(downComment, c.down)}, nil
	case "goose":
		if err := c.gooseSafe(); err != nil {
			return nil, err
		}
		return map[string]string{base + ".sql": "-- +goose Up\n" + gooseStatements(c.up) + "\n-- +goose Down\n" + gooseStatements(c.down)}, nil
	}
	return nil, fmt.Errorf("%w: unknown tool %q: want golang-migrate or goose", ErrConvert, tool)
}

// EpochFiles returns, as migration files for tool named after base (as
// [Conversion.Files] names them), the application's migration that fixes
// the epoch: ulid_flake_set_epoch with epoch's Unix milliseconds, in the
// schema of the functions the conversion calls. Put it in the
// application's history after the library's install and before the
// conversion (and any table whose default calls the ID functions), so that
// a database replayed from history gets the epoch, which otherwise lives
// only in the installing session's settings (docs/sql.md, "The epoch").
// Where the epoch is in force already it changes nothing; where another is
// and IDs may exist, it fails (55000) rather than move their times. Its
// down side changes nothing: IDs may exist under the epoch by then. It
// returns [ErrConvert] for another tool, a bad base, or a Conversion that
// [ConvertKeys] did not make.
func (c Conversion) EpochFiles(tool, base string, epoch flake.Epoch) (map[string]string, error) {
	if c.fnSchema == "" {
		return nil, fmt.Errorf("%w: no conversion: call ConvertKeys", ErrConvert)
	}
	if !fileBase.MatchString(base) {
		return nil, fmt.Errorf("%w: file name %q: want a version and a name, like 000002_ulid_flake_epoch", ErrConvert, base)
	}
	comment := fmt.Sprintf("-- The epoch of the application's IDs, %s, fixed before any column takes them\n"+
		"-- (docs/sql.md, \"The epoch\"): a database replayed from history gets it too.\n",
		time.UnixMilli(epoch.UnixMilli()).UTC().Format(time.RFC3339))
	up := fmt.Sprintf("SELECT %s.ulid_flake_set_epoch(%d::bigint);\n", pgsql.QuoteIdent(c.fnSchema), epoch.UnixMilli())
	down := "SELECT 1; -- the epoch stays: IDs may have been made under it\n"
	switch tool {
	case "golang-migrate":
		return map[string]string{base + ".up.sql": comment + up, base + ".down.sql": down}, nil
	case "goose":
		if strings.ContainsAny(c.fnSchema, "\r\n") {
			return nil, fmt.Errorf("%w: schema %s: goose reads files line by line, and this name holds a line break",
				ErrConvert, pgsql.QuoteIdent(c.fnSchema))
		}
		return map[string]string{base + ".sql": comment + "-- +goose Up\n" + up + "-- +goose Down\n" + down}, nil
	}
	return nil, fmt.Errorf("%w: unknown tool %q: want golang-migrate or goose", ErrConvert, tool)
}

// fileBase is a migration's version and name, as both tools read them.
var fileBase = regexp.MustCompile(`^[0-9]+_[A-Za-z0-9_]+$`)

// gooseSafe refuses what goose would read otherwise than PostgreSQL: a
// name with a line break (goose drops the \r of a \r\n, and may take the
// line after for an annotation or the end of a statement), and any line
// of a statement that goose reads as an annotation ("--" and "+goose").
func (c Conversion) gooseSafe() error {
	for _, name := range c.idents {
		if strings.ContainsAny(name, "\r\n") {
			return fmt.Errorf("%w: the name %s holds a line break, and goose reads files line by line: rename it, or use golang-migrate's files",
				ErrConvert, pgsql.QuoteIdent(truncate(name, 100)))
		}
	}
	for _, s := range append(append([]string(nil), c.up...), c.down...) {
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "--") && strings.Contains(line, "+goose") {
				return fmt.Errorf("%w: goose would read the line %q of the conversion as an annotation: use golang-migrate's files",
					ErrConvert, truncate(line, 100))
			}
		}
	}
	return nil
}

// gooseStatements writes stmts for goose, which ends a statement at a line
// ending in a semicolon, except between StatementBegin and StatementEnd.
func gooseStatements(stmts []string) string {
	var b strings.Builder
	for _, s := range stmts {
		if strings.Contains(strings.TrimSuffix(s, "\n"), "\n") {
			s = "-- +goose StatementBegin\n" + s + "-- +goose StatementEnd\n"
		}
		b.WriteString(s)
	}
	return b.String()
}
