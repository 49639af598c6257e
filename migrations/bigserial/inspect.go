package bigserial

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/migrations/internal/pgsql"
)

// Key names a key column to convert: Table as PostgreSQL reads a table
// name (schema-qualified or not, double quotes for mixed case), Column as
// stored (no quotes).
type Key struct{ Table, Column string }

// target is what the catalog says about the column to convert, read in one
// read-only snapshot. Names are as stored: they are quoted where SQL is
// written.
type target struct {
	table     qualified // the table, as the catalog names it
	oid       uint32    // the table's OID
	column    string
	attnum    int
	typ, base string     // the column's type, and the type under a domain
	identity  string     // "ALWAYS" or "BY DEFAULT" for an identity column, else ""
	def       string     // the column default, as PostgreSQL prints it
	converted bool       // not identity, and the default calls a ulid_flake ID function
	seq       *qualified // the serial's or identity's sequence, if any
	seqOID    uint32
	fnSchema  string // where ulid_flake_min is installed
	refs      []reference
	// Objects that keep the conversion from running: users of the sequence
	// it drops, and objects on a column it widens that PostgreSQL cannot
	// carry across ALTER COLUMN TYPE.
	dependents []string
	backSeq    qualified // the sequence the way back creates
}

// qualified is a schema and a name in it.
type qualified struct{ schema, name string }

// sql returns the quoted, schema-qualified name.
func (q qualified) sql() string { return pgsql.QuoteIdent(q.schema) + "." + pgsql.QuoteIdent(q.name) }

// reference is a foreign-key column that references the converted column.
type reference struct {
	table     qualified
	oid       uint32
	column    string
	typ, base string
}

// pinnedPath is the search_path that catalog queries and the conversion's
// SQL run under: pg_catalog only (and the session's temporary schema last,
// which holds no functions or operators), so that no function, operator or
// type another role planted in a schema can stand in for a built-in one.
const pinnedPath = "pg_catalog, pg_temp"

// inspect reads every key from the catalog in one read-only snapshot: the
// table names are resolved with the caller's search_path, everything else
// under [pinnedPath].
func inspect(ctx context.Context, db *sql.DB, keys []Key) ([]target, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("bigserial: %w", err)
	}
	defer tx.Rollback()
	ts := make([]target, len(keys))
	seen := map[[2]any]bool{}
	for i, k := range keys {
		ts[i].column = k.Column
		if err := ts[i].resolve(ctx, tx, k.Table); err != nil {
			return nil, err
		}
		id := [2]any{ts[i].oid, k.Column}
		if seen[id] {
			return nil, fmt.Errorf("%w: %s.%s is named twice", ErrConvert, k.Table, pgsql.QuoteIdent(k.Column))
		}
		seen[id] = true
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_catalog.set_config('search_path', $1, true)`, pinnedPath); err != nil {
		return nil, fmt.Errorf("bigserial: setting search_path: %w", err)
	}
	for i := range ts {
		t := &ts[i]
		for _, read := range []func(context.Context, *sql.Tx) error{
			t.readTable, t.readColumn, t.readSequence, t.readReferences, t.readDependents, t.chooseBackSequence,
		} {
			if err := read(ctx, tx); err != nil {
				return nil, err
			}
		}
	}
	return ts, nil
}

// resolve finds the table's OID and the schema of the functions, with the
// caller's search_path: every name in the query is qualified. The functions
// count only where they are owned by the role that converts or by a
// superuser, and never in a temporary schema: another role's ulid_flake_min
// or ulid_flake(), planted in a schema it may create in (its own pg_temp
// included), would otherwise run with the converting role's rights. Among
// those, the first schema on the search_path wins, else the first by name.
func (t *target) resolve(ctx context.Context, tx *sql.Tx, table string) error {
	var oid sql.NullInt64
	var found, foreign sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT pg_catalog.to_regclass($1)::pg_catalog.oid,
		(SELECT n.nspname FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
			JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) p.proowner
			WHERE p.proname OPERATOR(pg_catalog.=) 'ulid_flake_min'
			AND p.proargtypes OPERATOR(pg_catalog.=) '1184'::pg_catalog.oidvector
			AND NOT n.nspname OPERATOR(pg_catalog.~~) E'pg\\_temp\\_%' AND NOT n.nspname OPERATOR(pg_catalog.~~) E'pg\\_toast\\_temp\\_%'
			AND (r.rolname OPERATOR(pg_catalog.=) CURRENT_USER OR r.rolsuper)
			ORDER BY pg_catalog.array_position(pg_catalog.current_schemas(false), n.nspname) NULLS LAST, n.nspname LIMIT 1),
		(SELECT pg_catalog.string_agg(pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) ' (owner ' OPERATOR(pg_catalog.||)
				pg_catalog.quote_ident(r.rolname) OPERATOR(pg_catalog.||) ')', ', ' ORDER BY n.nspname)
			FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
			JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) p.proowner
			WHERE p.proname OPERATOR(pg_catalog.=) 'ulid_flake_min'
			AND NOT (r.rolname OPERATOR(pg_catalog.=) CURRENT_USER OR r.rolsuper))`,
		table).Scan(&oid, &found, &foreign)
	if strings.HasPrefix(pgsql.SQLState(err), "42") {
		// A name PostgreSQL cannot read (too many dots): bad input.
		return fmt.Errorf("%w: table %q: %w", ErrConvert, table, err)
	}
	if err != nil {
		return fmt.Errorf("bigserial: looking up table %q: %w", table, err)
	}
	if !oid.Valid {
		return fmt.Errorf("%w: no table %q (in the search_path, or schema-qualified)", ErrConvert, table)
	}
	switch {
	case !found.Valid && foreign.Valid:
		return fmt.Errorf("%w: %w: ulid_flake_min is only in %s, owned by neither this role nor a superuser: "+
			"run the conversion as the role that installed the functions", ErrConvert, migrations.ErrNotInstalled, foreign.String)
	case !found.Valid:
		return fmt.Errorf("%w: %w (no ulid_flake_min in any schema): run migrations.Migrate first", ErrConvert, migrations.ErrNotInstalled)
	}
	t.oid, t.fnSchema = uint32(oid.Int64), found.String
	return nil
}

// readTable reads the table's schema and name.
func (t *target) readTable(ctx context.Context, tx *sql.Tx) error {
	err := tx.QueryRowContext(ctx, `SELECT n.nspname, c.relname
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1`, t.oid).
		Scan(&t.table.schema, &t.table.name)
	if err != nil {
		return fmt.Errorf("bigserial: reading table %d: %w", t.oid, err)
	}
	return nil
}

// readColumn reads the column's type, identity and default.
func (t *target) readColumn(ctx context.Context, tx *sql.Tx) error {
	err := tx.QueryRowContext(ctx, `
		SELECT a.attnum, format_type(a.atttypid, a.atttypmod), format_type(coalesce(nullif(t.typbasetype, 0), a.atttypid), NULL),
			CASE a.attidentity WHEN 'a' THEN 'ALWAYS' WHEN 'd' THEN 'BY DEFAULT' ELSE '' END, coalesce(pg_get_expr(d.adbin, d.adrelid), ''), `+defaultCallsFlake("d.oid")+`
		FROM pg_attribute a
		JOIN pg_type t ON t.oid = a.atttypid
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE a.attrelid = $1 AND a.attname = $2 AND a.attnum > 0 AND NOT a.attisdropped`, t.oid, t.column).
		Scan(&t.attnum, &t.typ, &t.base, &t.identity, &t.def, &t.converted)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %s has no column %s", ErrConvert, t.table.sql(), pgsql.QuoteIdent(t.column))
	}
	if err != nil {
		return fmt.Errorf("bigserial: reading %s: %w", t.name(), err)
	}
	t.converted = t.converted && t.identity == ""
	return nil
}

// readSequence finds the sequence the column owns (a serial's, or an
// identity's), as pg_get_serial_sequence does, and the objects other than
// the column's default that use it: they keep it from being dropped.
func (t *target) readSequence(ctx context.Context, tx *sql.Tx) error {
	var seq qualified
	err := tx.QueryRowContext(ctx, `
		SELECT s.oid, n.nspname, s.relname FROM pg_depend d
		JOIN pg_class s ON s.oid = d.objid JOIN pg_namespace n ON n.oid = s.relnamespace
		WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
			AND d.refobjid = $1 AND d.refobjsubid = $2 AND d.deptype IN ('a', 'i') AND s.relkind = 'S'
		ORDER BY s.oid LIMIT 1`, t.oid, t.attnum).Scan(&t.seqOID, &seq.schema, &seq.name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("bigserial: reading the sequence of %s: %w", t.name(), err)
	}
	t.seq = &seq
	if t.converted {
		return nil // the conversion leaves it alone
	}
	users, err := describeRows(ctx, tx, `
		SELECT DISTINCT `+describeDependent+` FROM pg_depend d
		WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = $1
			AND NOT (d.classid = 'pg_attrdef'::regclass AND d.objid IN (SELECT oid FROM pg_attrdef WHERE adrelid = $2 AND adnum = $3))
		ORDER BY 1`, t.seqOID, t.oid, t.attnum)
	if err != nil {
		return fmt.Errorf("bigserial: reading what uses %s: %w", seq.sql(), err)
	}
	for _, u := range users {
		t.dependents = append(t.dependents, u+" (uses the sequence "+seq.sql()+")")
	}
	return nil
}

// readReferences reads the foreign-key columns that reference the column:
// a partition's copy of its parent's key, and an inherited column, follow
// their parent, which is the one altered.
func (t *target) readReferences(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `
		SELECT n.nspname, r.relname, r.oid, a.attname,
			format_type(a.atttypid, a.atttypmod), format_type(coalesce(nullif(ty.typbasetype, 0), a.atttypid), NULL)
		FROM pg_constraint c
		CROSS JOIN LATERAL unnest(c.conkey, c.confkey) AS k(child, parent)
		JOIN pg_class r ON r.oid = c.conrelid
		JOIN pg_namespace n ON n.oid = r.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.child
		JOIN pg_type ty ON ty.oid = a.atttypid
		WHERE c.contype = 'f' AND c.confrelid = $1 AND k.parent = $2
			AND c.conparentid = 0 AND a.attinhcount = 0
		ORDER BY 1, 2, 4`, t.oid, t.attnum)
	if err != nil {
		return fmt.Errorf("bigserial: reading foreign keys to %s: %w", t.name(), err)
	}
	defer rows.Close()
	for rows.Next() {
		var r reference
		if err := rows.Scan(&r.table.schema, &r.table.name, &r.oid, &r.column, &r.typ, &r.base); err != nil {
			return fmt.Errorf("bigserial: reading foreign keys to %s: %w", t.name(), err)
		}
		t.refs = append(t.refs, r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("bigserial: reading foreign keys to %s: %w", t.name(), err)
	}
	return nil
}

// readDependents lists the objects on each column the conversion widens
// (in the table, its inheritors and partitions) that ALTER COLUMN TYPE
// cannot carry: views, materialized views, rules, policies, triggers,
// generated columns, SQL-standard function bodies, publications. Indexes,
// constraints and statistics are rebuilt by PostgreSQL, and need nothing.
func (t *target) readDependents(ctx context.Context, tx *sql.Tx) error {
	if t.converted {
		return nil
	}
	type column struct {
		oid                 uint32
		name, base, display string
	}
	widened := []column{{t.oid, t.column, t.base, t.name()}}
	for _, r := range t.refs {
		widened = append(widened, column{r.oid, r.column, r.base, r.table.sql() + "." + pgsql.QuoteIdent(r.column)})
	}
	for _, w := range widened {
		if w.base == "bigint" {
			continue
		}
		deps, err := describeRows(ctx, tx, `
			WITH RECURSIVE rels(relid) AS (
				SELECT $1::oid UNION SELECT i.inhrelid FROM pg_inherits i JOIN rels ON i.inhparent = rels.relid),
			cols AS (SELECT a.attrelid, a.attnum FROM rels JOIN pg_attribute a ON a.attrelid = rels.relid AND a.attname = $2)
			SELECT DISTINCT `+describeDependent+` FROM cols
			JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = cols.attrelid AND d.refobjsubid = cols.attnum
			WHERE d.classid NOT IN ('pg_constraint'::regclass, 'pg_statistic_ext'::regclass)
				AND NOT (d.classid = 'pg_class'::regclass AND (SELECT relkind FROM pg_class WHERE oid = d.objid) IN ('i', 'I', 'S'))
				AND NOT (d.classid = 'pg_attrdef'::regclass AND d.objid IN (SELECT oid FROM pg_attrdef WHERE adrelid = cols.attrelid AND adnum = cols.attnum))
			ORDER BY 1`, w.oid, w.name)
		if err != nil {
			return fmt.Errorf("bigserial: reading what depends on %s: %w", t.name(), err)
		}
		for _, d := range deps {
			t.dependents = append(t.dependents, d+" (on "+w.display+", which must become bigint)")
		}
	}
	return nil
}

// describeDependent names the object of a pg_depend row d as PostgreSQL
// does, with a view or materialized view named for itself rather than for
// its _RETURN rule, and a generated column for itself rather than for its
// expression. Under [pinnedPath] every name is schema-qualified.
const describeDependent = `CASE
	WHEN d.classid = 'pg_rewrite'::regclass THEN (SELECT CASE WHEN r.rulename = '_RETURN'
		THEN pg_describe_object('pg_class'::regclass, r.ev_class, 0) ELSE pg_describe_object(d.classid, d.objid, 0) END
		FROM pg_rewrite r WHERE r.oid = d.objid)
	WHEN d.classid = 'pg_attrdef'::regclass THEN (SELECT pg_describe_object('pg_class'::regclass, ad.adrelid, ad.adnum)
		FROM pg_attrdef ad WHERE ad.oid = d.objid)
	ELSE pg_describe_object(d.classid, d.objid, d.objsubid) END`

// describeRows runs query and returns its single text column.
func describeRows(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// chooseBackSequence names the sequence the way back creates, in the
// table's schema: the old serial's name when the up side drops it,
// otherwise table_column_seq (cut to 63 bytes, as PostgreSQL does), with a
// number added while the name is taken.
func (t *target) chooseBackSequence(ctx context.Context, tx *sql.Tx) error {
	if t.seq != nil && !t.converted {
		t.backSeq = *t.seq // dropped by the up side, so free when the way back runs
		return nil
	}
	for i := 0; i < 100; i++ {
		suffix := "_seq"
		if i > 0 {
			suffix = fmt.Sprintf("_seq%d", i)
		}
		base := truncate(t.table.name, 29) + "_" + truncate(t.column, 29)
		name := truncate(base, 63-len(suffix)) + suffix
		var taken bool
		err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
				WHERE n.nspname = $1 AND c.relname = $2)
			OR EXISTS (SELECT FROM pg_type y JOIN pg_namespace n ON n.oid = y.typnamespace WHERE n.nspname = $1 AND y.typname = $2)`,
			t.table.schema, name).Scan(&taken)
		if err != nil {
			return fmt.Errorf("bigserial: naming the sequence: %w", err)
		}
		if !taken {
			t.backSeq = qualified{t.table.schema, name}
			return nil
		}
	}
	return fmt.Errorf("%w: no free sequence name for %s", ErrConvert, t.name())
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

// name is the column's quoted, qualified name, for messages: quoted, so
// that nothing in it misleads.
func (t *target) name() string { return t.table.sql() + "." + pgsql.QuoteIdent(t.column) }

// defaultCallsFlake returns SQL that is true when the column default whose
// pg_attrdef OID is attrdef calls ulid_flake or ulid_flake_scalable (by the
// dependency PostgreSQL records, not by the default's text, which a table
// or sequence name could match). It must run under [pinnedPath].
func defaultCallsFlake(attrdef string) string {
	return `EXISTS (SELECT 1 FROM pg_depend dep JOIN pg_proc p ON p.oid = dep.refobjid
		WHERE dep.classid = 'pg_attrdef'::regclass AND dep.objid = ` + attrdef + `
			AND dep.refclassid = 'pg_proc'::regclass AND p.proname IN ('ulid_flake', 'ulid_flake_scalable'))`
}

// Skipped is a table that [KeysIn] leaves out, and why.
type Skipped struct {
	Table string // schema-qualified and quoted
	Why   string // "goose's version table", "the library's own", …
}

// historyKind returns SQL that names what the table c is when it is a
// migration tool's history or one of the library's tables, recognised by
// its shape rather than by its name alone (tools take custom names), and
// NULL otherwise. It must run under [pinnedPath].
const historyKind = `CASE
	WHEN left(c.relname, 11) = 'ulid_flake_' THEN 'the library''s own'
	WHEN has('version_id') AND has('is_applied') THEN 'goose''s version table'
	WHEN has('version') AND has('dirty') THEN 'golang-migrate''s version table'
	WHEN c.relname = 'atlas_schema_revisions' OR (has('partial_hashes') AND has('operator_version')) THEN 'Atlas''s revisions table'
	END`

// hasColumn is has(name) of [historyKind]: c has a live column name.
var hasColumn = strings.NewReplacer("has('", `EXISTS (SELECT FROM pg_attribute h WHERE h.attrelid = c.oid AND h.attnum > 0 AND NOT h.attisdropped AND h.attname = '`)

// KeysIn lists the key columns of every table in schema (its exact
// name, without quotes) that [ConvertKeys] takes: serial, bigserial,
// smallserial and identity columns, and columns converted already, of
// ordinary and partitioned tables (not of partitions, which follow their
// parent). Each Key's Table is schema-qualified and quoted.
//
// It leaves out, and returns as skipped, the tables that hold such a
// column but are a migration tool's history or the library's own, by
// their shape whatever their name: goose's (columns version_id and
// is_applied), golang-migrate's (version and dirty), Atlas's
// (atlas_schema_revisions, or partial_hashes and operator_version), and
// every table named ulid_flake_*. It returns [ErrConvert] when the schema
// does not exist or holds no other such column.
func KeysIn(ctx context.Context, db *sql.DB, schema string) (keys []Key, skipped []Skipped, err error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, nil, fmt.Errorf("bigserial: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_catalog.set_config('search_path', $1, true)`, pinnedPath); err != nil {
		return nil, nil, fmt.Errorf("bigserial: setting search_path: %w", err)
	}
	var exists bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil {
		return nil, nil, fmt.Errorf("bigserial: reading schema %s: %w", pgsql.QuoteIdent(schema), err)
	}
	if !exists {
		return nil, nil, fmt.Errorf("%w: no schema %s (give its exact name, without quotes)", ErrConvert, pgsql.QuoteIdent(schema))
	}
	keys, skipped, err = readKeysIn(ctx, tx, schema)
	if err != nil {
		return nil, nil, fmt.Errorf("bigserial: reading the keys of schema %s: %w", pgsql.QuoteIdent(schema), err)
	}
	if len(keys) == 0 {
		return nil, skipped, fmt.Errorf("%w: schema %s has no serial, identity or converted column%s",
			ErrConvert, pgsql.QuoteIdent(schema), skippedNote(skipped))
	}
	return keys, skipped, nil
}

// readKeysIn reads the key columns of schema, and the tables skipped.
func readKeysIn(ctx context.Context, tx *sql.Tx, schema string) ([]Key, []Skipped, error) {
	rows, err := tx.QueryContext(ctx, `
		SELECT c.relname, a.attname, coalesce(`+hasColumn.Replace(historyKind)+`, '') FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
			AND (a.attidentity <> ''
				OR EXISTS (SELECT FROM pg_depend s JOIN pg_class q ON q.oid = s.objid
					WHERE s.classid = 'pg_class'::regclass AND s.refclassid = 'pg_class'::regclass AND s.refobjid = c.oid
						AND s.refobjsubid = a.attnum AND s.deptype = 'a' AND q.relkind = 'S')
				OR coalesce(`+defaultCallsFlake("d.oid")+`, false))
		ORDER BY 1, 2`, schema)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var keys []Key
	var skipped []Skipped
	for rows.Next() {
		var table, column, why string
		if err := rows.Scan(&table, &column, &why); err != nil {
			return nil, nil, err
		}
		name := qualified{schema, table}.sql()
		switch {
		case why == "":
			keys = append(keys, Key{name, column})
		case len(skipped) == 0 || skipped[len(skipped)-1].Table != name:
			skipped = append(skipped, Skipped{name, why})
		}
	}
	return keys, skipped, rows.Err()
}

// skippedNote names the skipped tables for a message, or is empty.
func skippedNote(skipped []Skipped) string {
	if len(skipped) == 0 {
		return ""
	}
	out := make([]string, len(skipped))
	for i, s := range skipped {
		out[i] = s.Table + " (" + s.Why + ")"
	}
	return " other than " + strings.Join(out, ", ") + ", which it leaves alone"
}
