package migrations

import (
	"fmt"
	"strings"
)

// check refuses what the conversion cannot do as asked: a column that is
// not an integer, a domain it would drop, and a column that is neither
// serial nor identity nor converted.
func (t *target) check() error {
	switch t.base {
	case "smallint", "integer", "bigint":
	default:
		return fmt.Errorf("%w: %s is %s, not an integer", ErrConvert, t.name(), t.typ)
	}
	if t.typ != t.base && t.base != "bigint" {
		return fmt.Errorf("%w: %s is the domain %s over %s: widening it would drop the domain; change the domain first",
			ErrConvert, t.name(), t.typ, t.base)
	}
	if !t.identity && !t.converted && (!strings.HasPrefix(t.def, "nextval(") || t.seq == nil) {
		return fmt.Errorf("%w: %s is neither serial nor identity, nor converted (default %q)", ErrConvert, t.name(), t.def)
	}
	for _, r := range t.refs {
		if r.typ != r.base && r.base != "bigint" {
			return fmt.Errorf("%w: %s.%s references %s and is the domain %s over %s: widening it would drop the domain; change the domain first",
				ErrConvert, r.table.sql(), quoteIdent(r.column), t.name(), r.typ, r.base)
		}
	}
	return nil
}

// begin writes the start of either side: the transaction, the settings it
// relies on, and the lock.
func begin(b *strings.Builder, comment string, t target, o convertOptions) {
	fmt.Fprintf(b, "-- %s\nBEGIN;\n", comment)
	fmt.Fprintf(b, "SET LOCAL search_path = %s;\n", pinnedPath)
	fmt.Fprintf(b, "SET LOCAL lock_timeout = '%dms';\n", o.lockTimeout.Milliseconds())
	fmt.Fprintf(b, "LOCK TABLE %s IN ACCESS EXCLUSIVE MODE;\n", t.table.sql())
}

// upSQL returns the up side (see [ConvertSerial]).
func upSQL(t target, o convertOptions) string {
	var b strings.Builder
	begin(&b, "Convert a serial or identity key to a Ulid-Flake default, in one transaction.", t, o)
	table, col := t.table.sql(), quoteIdent(t.column)
	// The guard: the names inside are quoted identifiers; the message reads
	// them from the catalog by number.
	b.WriteString(doBlock(fmt.Sprintf(`BEGIN
	IF (SELECT max(%s) FROM %s) >= %s.ulid_flake_min(now()) THEN
		RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format('ulidflake: %%s.%%I already holds keys in the Ulid-Flake range; new keys would not sort after them', %d::oid::regclass, %s);
	END IF;
END`, col, table, quoteIdent(t.fnSchema), t.oid, attnameSQL(t))))
	if t.identity {
		fmt.Fprintf(&b, "ALTER TABLE %s ALTER COLUMN %s DROP IDENTITY;\n", table, col)
	} else {
		fmt.Fprintf(&b, "ALTER TABLE %s ALTER COLUMN %s DROP DEFAULT;\n", table, col)
	}
	for _, r := range t.refs {
		if r.base != "bigint" {
			fmt.Fprintf(&b, "ALTER TABLE %s ALTER COLUMN %s TYPE bigint;\n", r.table.sql(), quoteIdent(r.column))
		}
	}
	if t.base != "bigint" {
		fmt.Fprintf(&b, "ALTER TABLE %s ALTER COLUMN %s TYPE bigint;\n", table, col)
	}
	fmt.Fprintf(&b, "ALTER TABLE %s ALTER COLUMN %s SET DEFAULT %s;\n", table, col, o.generator)
	if !t.identity {
		fmt.Fprintf(&b, "DROP SEQUENCE %s;\n", t.seq.sql())
	}
	b.WriteString("COMMIT;\n")
	return b.String()
}

// downSQL returns the down side: a new sequence named as PostgreSQL names
// a serial's, in the table's schema, owned and granted as a serial's is.
func downSQL(t target, o convertOptions) string {
	var b strings.Builder
	begin(&b, "Back from a Ulid-Flake default to a sequence, in one transaction; the column stays bigint.", t, o)
	table, col, seq := t.table.sql(), quoteIdent(t.column), t.backSeq.sql()
	// The guard: the column's default must call a Ulid-Flake generator when
	// the script runs, or the way back would swap a serial's sequence.
	b.WriteString(doBlock(fmt.Sprintf(`BEGIN
	IF NOT coalesce((SELECT %s FROM pg_attrdef d WHERE d.adrelid = %d AND d.adnum = %d), false) THEN
		RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format('ulidflake: %%s.%%I is not converted: its default calls no ulid_flake function', %d::oid::regclass, %s);
	END IF;
END`, defaultCallsFlake("d.oid"), t.oid, t.attnum, t.oid, attnameSQL(t))))
	fmt.Fprintf(&b, "ALTER TABLE %s ALTER COLUMN %s DROP DEFAULT;\n", table, col)
	fmt.Fprintf(&b, "CREATE SEQUENCE %s AS bigint;\n", seq)
	fmt.Fprintf(&b, "ALTER SEQUENCE %s OWNER TO %s;\n", seq, quoteIdent(t.owner))
	fmt.Fprintf(&b, "ALTER SEQUENCE %s OWNED BY %s.%s;\n", seq, table, col)
	for _, r := range t.inserters { // who may insert needs the sequence, as with a serial
		grantee := "PUBLIC"
		if r != "" {
			grantee = quoteIdent(r)
		}
		fmt.Fprintf(&b, "GRANT USAGE ON SEQUENCE %s TO %s;\n", seq, grantee)
	}
	fmt.Fprintf(&b, "SELECT setval(%s::regclass, coalesce((SELECT max(%s) FROM %s WHERE %s < %d), 0) + 1, false);\n",
		quoteString(seq), col, table, col, int64(serialLimit))
	fmt.Fprintf(&b, "ALTER TABLE %s ALTER COLUMN %s SET DEFAULT nextval(%s::regclass);\n", table, col, quoteString(seq))
	b.WriteString("COMMIT;\n")
	return b.String()
}

// attnameSQL reads the column's name from the catalog by its number, for a
// message: no name is written into a literal.
func attnameSQL(t target) string {
	return fmt.Sprintf("(SELECT attname FROM pg_attribute WHERE attrelid = %d AND attnum = %d)", t.oid, t.attnum)
}

// doBlock returns a DO statement that runs body.
func doBlock(body string) string { return "DO " + quoteString(body) + ";\n" }

// quoteString quotes s as an escape string literal, E'...', with
// backslashes and quotes doubled: it reads the same whatever
// standard_conforming_strings and backslash_quote say.
func quoteString(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "E'" + strings.ReplaceAll(s, "'", "''") + "'"
}
