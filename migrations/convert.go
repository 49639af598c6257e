package migrations

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrConvert: the column cannot be converted as asked.
var ErrConvert = errors.New("migrations: cannot convert")

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
// "ids.ulid_flake_scalable()" with ulid_flake.sid set). It is SQL written by
// the program, not a name: it is used as given.
func Generator(expr string) ConvertOption {
	return func(o *convertOptions) { o.generator = expr }
}

// serialLimit separates the keys a sequence made from Ulid-Flakes: below
// 2^40 (a trillion rows) is taken as the sequence's, when going back.
const serialLimit = 1 << 40

// ConvertSerial reads the catalog of db and returns the SQL that converts
// table.column (a serial, bigserial, smallserial or identity column) to
// DEFAULT ulid_flake(). table is read as PostgreSQL reads a table name
// (schema-qualified or not, double quotes for mixed case). The up side, in
// one transaction:
//
//   - sets lock_timeout;
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
func ConvertSerial(ctx context.Context, db *sql.DB, table, column string, opts ...ConvertOption) (Conversion, error) {
	o := convertOptions{lockTimeout: 5 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	c := Conversion{Table: table, Column: column}
	if o.lockTimeout < time.Millisecond {
		return c, fmt.Errorf("%w: lock timeout %s is below 1ms (0 would wait forever)", ErrConvert, o.lockTimeout)
	}

	var oid uint32
	var nsp, rel, owner string
	var inserters []string
	err := db.QueryRowContext(ctx, `SELECT c.oid, n.nspname, c.relname, pg_get_userbyid(c.relowner),
			coalesce((SELECT array_agg(DISTINCT CASE WHEN x.grantee = 0 THEN '' ELSE pg_get_userbyid(x.grantee) END)
				FROM aclexplode(c.relacl) x WHERE x.privilege_type = 'INSERT' AND x.grantee <> c.relowner), '{}')::text
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)`, table).
		Scan(&oid, &nsp, &rel, &owner, (*textArray)(&inserters))
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("%w: no table %q (in the search_path, or schema-qualified)", ErrConvert, table)
	}
	if err != nil {
		return c, fmt.Errorf("%w: looking up table %q: %v", ErrConvert, table, err)
	}
	tableSQL := quoteIdent(nsp) + "." + quoteIdent(rel)
	name := fmt.Sprintf("%s.%s", tableSQL, quoteIdent(column)) // for messages: quoted, so that nothing in it misleads

	var typ, baseTyp, identity string
	var def, seq sql.NullString
	var callsFlake bool
	err = db.QueryRowContext(ctx, `
		SELECT format_type(a.atttypid, a.atttypmod), format_type(coalesce(nullif(t.typbasetype, 0), a.atttypid), NULL),
			a.attidentity::text, pg_get_expr(d.adbin, d.adrelid),
			pg_get_serial_sequence(quote_ident($3) || '.' || quote_ident($4), a.attname),
			`+defaultCallsFlake("d.oid")+`
		FROM pg_attribute a
		JOIN pg_type t ON t.oid = a.atttypid
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE a.attrelid = $1 AND a.attname = $2 AND a.attnum > 0 AND NOT a.attisdropped`, oid, column, nsp, rel).
		Scan(&typ, &baseTyp, &identity, &def, &seq, &callsFlake)
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("%w: %s has no column %s", ErrConvert, tableSQL, quoteIdent(column))
	}
	if err != nil {
		return c, fmt.Errorf("%w: reading %s: %v", ErrConvert, name, err)
	}
	switch baseTyp {
	case "smallint", "integer", "bigint":
	default:
		return c, fmt.Errorf("%w: %s is %s, not an integer", ErrConvert, name, typ)
	}
	if typ != baseTyp && baseTyp != "bigint" {
		return c, fmt.Errorf("%w: %s is the domain %s over %s: widening it would drop the domain; change the domain first", ErrConvert, name, typ, baseTyp)
	}
	isIdentity := identity != ""
	converted := !isIdentity && callsFlake
	if !isIdentity && !converted && (!def.Valid || !strings.HasPrefix(def.String, "nextval(") || !seq.Valid) {
		return c, fmt.Errorf("%w: %s is neither serial nor identity, nor converted (default %q)", ErrConvert, name, def.String)
	}

	// The functions: in the search_path, or in exactly one schema.
	var fnSchema string
	err = db.QueryRowContext(ctx, `SELECT n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE p.proname = 'ulid_flake_min' AND p.pronargs = 1
		ORDER BY coalesce(array_position(current_schemas(false), n.nspname), 1000), n.nspname LIMIT 1`).Scan(&fnSchema)
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("%w: ulid_flake_min() is not installed in this database: run migrations.Migrate first", ErrConvert)
	}
	if err != nil {
		return c, fmt.Errorf("%w: looking for the ulid_flake functions: %v", ErrConvert, err)
	}
	fn := quoteIdent(fnSchema) + "."
	gen := o.generator
	if gen == "" {
		gen = fn + "ulid_flake()"
	}

	type fk struct{ table, column, typ, base string }
	var refs []fk
	rows, err := db.QueryContext(ctx, `
		SELECT quote_ident(n.nspname) || '.' || quote_ident(r.relname), a.attname,
			format_type(a.atttypid, a.atttypmod), format_type(coalesce(nullif(t.typbasetype, 0), a.atttypid), NULL)
		FROM pg_constraint c
		CROSS JOIN LATERAL unnest(c.conkey, c.confkey) AS k(child, parent)
		JOIN pg_class r ON r.oid = c.conrelid
		JOIN pg_namespace n ON n.oid = r.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.child
		JOIN pg_type t ON t.oid = a.atttypid
		JOIN pg_attribute p ON p.attrelid = c.confrelid AND p.attnum = k.parent
		WHERE c.contype = 'f' AND c.confrelid = $1 AND p.attname = $2
			AND c.conparentid = 0 -- a partition's copy of its parent's key: the parent is altered
			AND a.attinhcount = 0 -- an inherited column follows its parent
		ORDER BY 1, 2`, oid, column)
	if err != nil {
		return c, fmt.Errorf("%w: reading foreign keys to %s: %v", ErrConvert, name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r fk
		if err := rows.Scan(&r.table, &r.column, &r.typ, &r.base); err != nil {
			return c, err
		}
		if r.typ != r.base && r.base != "bigint" {
			return c, fmt.Errorf("%w: %s.%s references %s and is the domain %s over %s: widening it would drop the domain; change the domain first",
				ErrConvert, r.table, quoteIdent(r.column), name, r.typ, r.base)
		}
		refs = append(refs, r)
	}
	if err := rows.Err(); err != nil {
		return c, err
	}

	col := quoteIdent(column)
	lock := fmt.Sprintf("SET LOCAL lock_timeout = '%dms';\n", o.lockTimeout.Milliseconds())
	if !converted {
		var up strings.Builder
		up.WriteString("-- Convert a serial or identity key to a Ulid-Flake default, in one transaction.\nBEGIN;\n")
		up.WriteString(lock)
		fmt.Fprintf(&up, "LOCK TABLE %s IN ACCESS EXCLUSIVE MODE;\n", tableSQL)
		// The guard, as a string-literal DO body: names inside are quoted
		// identifiers, and the message takes them as values.
		guard := fmt.Sprintf(`BEGIN
	IF (SELECT max(%s) FROM %s) >= %sulid_flake_min(now()) THEN
		RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format('ulidflake: %%s.%%s already holds keys in the Ulid-Flake range; new keys would not sort after them', %s::oid::regclass, %s);
	END IF;
END`, col, tableSQL, fn, fmt.Sprint(oid), quoteLiteral(column))
		fmt.Fprintf(&up, "DO %s;\n", quoteLiteral(guard))
		if isIdentity {
			fmt.Fprintf(&up, "ALTER TABLE %s ALTER COLUMN %s DROP IDENTITY;\n", tableSQL, col)
		} else {
			fmt.Fprintf(&up, "ALTER TABLE %s ALTER COLUMN %s DROP DEFAULT;\n", tableSQL, col)
		}
		for _, r := range refs {
			if r.base != "bigint" {
				fmt.Fprintf(&up, "ALTER TABLE %s ALTER COLUMN %s TYPE bigint;\n", r.table, quoteIdent(r.column))
			}
		}
		if baseTyp != "bigint" {
			fmt.Fprintf(&up, "ALTER TABLE %s ALTER COLUMN %s TYPE bigint;\n", tableSQL, col)
		}
		fmt.Fprintf(&up, "ALTER TABLE %s ALTER COLUMN %s SET DEFAULT %s;\n", tableSQL, col, gen)
		if !isIdentity {
			// pg_get_serial_sequence returns a quoted, qualified name.
			fmt.Fprintf(&up, "DROP SEQUENCE %s;\n", seq.String)
		}
		up.WriteString("COMMIT;\n")
		c.Up = up.String()
	}

	// The way back: a new sequence named as PostgreSQL names a serial's,
	// in the table's schema.
	seqName, err := freeSequenceName(ctx, db, nsp, rel, column, seq, converted)
	if err != nil {
		return c, err
	}
	var down strings.Builder
	down.WriteString("-- Back from a Ulid-Flake default to a sequence, in one transaction; the column stays bigint.\nBEGIN;\n")
	down.WriteString(lock)
	fmt.Fprintf(&down, "LOCK TABLE %s IN ACCESS EXCLUSIVE MODE;\n", tableSQL)
	// The guard: the column's default must call a Ulid-Flake generator when
	// the script runs, or the way back would swap a serial's sequence.
	downGuard := fmt.Sprintf(`BEGIN
	IF NOT coalesce((SELECT %s FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
			WHERE d.adrelid = %d AND a.attname = %s), false) THEN
		RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format('ulidflake: %%s.%%s is not converted: its default calls no ulid_flake function', %d::oid::regclass, %s);
	END IF;
END`, defaultCallsFlake("d.oid"), oid, quoteLiteral(column), oid, quoteLiteral(column))
	fmt.Fprintf(&down, "DO %s;\n", quoteLiteral(downGuard))
	fmt.Fprintf(&down, "ALTER TABLE %s ALTER COLUMN %s DROP DEFAULT;\n", tableSQL, col)
	fmt.Fprintf(&down, "CREATE SEQUENCE %s AS bigint;\n", seqName)
	fmt.Fprintf(&down, "ALTER SEQUENCE %s OWNER TO %s;\n", seqName, quoteIdent(owner))
	fmt.Fprintf(&down, "ALTER SEQUENCE %s OWNED BY %s.%s;\n", seqName, tableSQL, col)
	for _, r := range inserters { // who may insert needs the sequence, as with a serial
		grantee := "PUBLIC"
		if r != "" {
			grantee = quoteIdent(r)
		}
		fmt.Fprintf(&down, "GRANT USAGE ON SEQUENCE %s TO %s;\n", seqName, grantee)
	}
	fmt.Fprintf(&down, "SELECT setval(%s::regclass, coalesce((SELECT max(%s) FROM %s WHERE %s < %d), 0) + 1, false);\n",
		quoteLiteral(seqName), col, tableSQL, col, int64(serialLimit))
	fmt.Fprintf(&down, "ALTER TABLE %s ALTER COLUMN %s SET DEFAULT nextval(%s::regclass);\n", tableSQL, col, quoteLiteral(seqName))
	down.WriteString("COMMIT;\n")
	c.Down = down.String()
	return c, nil
}

// defaultCallsFlake returns SQL that is true when the column default whose
// pg_attrdef OID is attrdef calls ulid_flake or ulid_flake_scalable (by the
// dependency PostgreSQL records, not by the default's text, which a table
// or sequence name could match).
func defaultCallsFlake(attrdef string) string {
	return `EXISTS (SELECT 1 FROM pg_depend dep JOIN pg_proc p ON p.oid = dep.refobjid
		WHERE dep.classid = 'pg_attrdef'::regclass AND dep.objid = ` + attrdef + `
			AND dep.refclassid = 'pg_proc'::regclass AND p.proname IN ('ulid_flake', 'ulid_flake_scalable'))`
}

// freeSequenceName returns the quoted, schema-qualified name of the
// sequence the way back creates: the old serial's name when the up side
// drops it, otherwise table_column_seq (cut to 63 bytes, as PostgreSQL
// does), with a number added while the name is taken.
func freeSequenceName(ctx context.Context, db *sql.DB, nsp, rel, column string, seq sql.NullString, converted bool) (string, error) {
	if seq.Valid && !converted {
		return seq.String, nil // dropped by the up side, so free when the way back runs
	}
	for i := 0; i < 100; i++ {
		suffix := "_seq"
		if i > 0 {
			suffix = fmt.Sprintf("_seq%d", i)
		}
		base := truncate(rel, 29) + "_" + truncate(column, 29)
		name := truncate(base, 63-len(suffix)) + suffix
		q := quoteIdent(nsp) + "." + quoteIdent(name)
		var taken bool
		if err := db.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, q).Scan(&taken); err != nil {
			return "", fmt.Errorf("%w: naming the sequence: %v", ErrConvert, err)
		}
		if !taken {
			return q, nil
		}
	}
	return "", fmt.Errorf("%w: no free sequence name for %s.%s", ErrConvert, quoteIdent(rel), quoteIdent(column))
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

// quoteLiteral quotes s as an SQL string literal (standard_conforming_strings,
// the default since PostgreSQL 9.1: backslashes are plain characters).
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// Apply runs the up side (or, with up false, the down side) on db. It
// returns [ErrConvert] when there is nothing to run (Up of a column that
// is converted already).
func (c Conversion) Apply(ctx context.Context, db *sql.DB, up bool) error {
	body := c.Down
	if up {
		body = c.Up
	}
	if body == "" {
		return fmt.Errorf("%w: %s.%s is converted already", ErrConvert, c.Table, c.Column)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, body); err != nil {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		return fmt.Errorf("migrations: converting %s.%s: %w", c.Table, c.Column, err)
	}
	return nil
}

// textArray scans a PostgreSQL text[] in its text form ({a,"b c"}).
type textArray []string

func (a *textArray) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("migrations: cannot scan %T into a text array", src)
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	*a = (*a)[:0]
	for len(s) > 0 {
		var item string
		if s[0] == '"' {
			var b strings.Builder
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			item, s = b.String(), s[min(i+1, len(s)):]
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			item, s = s[:end], s[end:]
		}
		*a = append(*a, item)
		s = strings.TrimPrefix(s, ",")
	}
	return nil
}
