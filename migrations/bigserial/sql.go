package bigserial

import (
	"fmt"
	"strings"

	"github.com/ulidflake/ulidflake/migrations/internal/pgsql"
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
	if t.identity == "" && !t.converted && (!strings.HasPrefix(t.def, "nextval(") || t.seq == nil) {
		return fmt.Errorf("%w: %s is neither serial nor identity, nor converted (default %q)", ErrConvert, t.name(), t.def)
	}
	for _, r := range t.refs {
		if r.typ != r.base && r.base != "bigint" {
			return fmt.Errorf("%w: %s.%s references %s and is the domain %s over %s: widening it would drop the domain; change the domain first",
				ErrConvert, r.table.sql(), pgsql.QuoteIdent(r.column), t.name(), r.typ, r.base)
		}
	}
	return nil
}

// savedPath is the setting that keeps the caller's search_path while a
// side runs under [pinnedPath], so that the statements after it in the
// same transaction (a migration tool's own, under goose) see theirs.
const savedPath = "ulidflake_convert.search_path"

// serialLimit separates the keys a sequence made from Ulid-Flakes: below
// 2^40 (a trillion rows) is taken as the sequence's, when going back.
const serialLimit = 1 << 40

// lockAll returns the first statements of either side: it keeps the
// caller's search_path, sets lock_timeout and locks every table of ts in
// one statement (by quoted, schema-qualified names, which no search_path
// changes).
func lockAll(ts []target, o convertOptions) []string {
	tables := make([]string, len(ts))
	for i, t := range ts {
		tables[i] = t.table.sql()
	}
	return []string{
		fmt.Sprintf("SELECT pg_catalog.set_config('%s', pg_catalog.current_setting('search_path'), true);\n", savedPath),
		fmt.Sprintf("SET LOCAL lock_timeout = '%dms';\n", o.lockTimeout.Milliseconds()),
		fmt.Sprintf("LOCK TABLE %s IN ACCESS EXCLUSIVE MODE;\n", strings.Join(tables, ", ")),
	}
}

// pin sets search_path to [pinnedPath] for the statements of the
// conversion itself.
const pin = "SET LOCAL search_path = " + pinnedPath + ";\n"

// unpin gives search_path back the value that [lockAll] kept.
const unpin = "SELECT pg_catalog.set_config('search_path', pg_catalog.current_setting('" + savedPath + "'), true);\n"

// The comments over each side.
const (
	upComment   = "Convert serial or identity keys to a Ulid-Flake default, in one transaction."
	downComment = "Back from a Ulid-Flake default to sequences, in one transaction; the columns stay bigint."
)

// transaction returns stmts as one transaction, under a comment.
func transaction(comment string, stmts []string) string {
	return "-- " + comment + "\nBEGIN;\n" + strings.Join(stmts, "") + "COMMIT;\n"
}

// oneQuery returns stmts under a comment, without BEGIN and COMMIT: sent
// as one query, PostgreSQL runs them as one transaction, and a failure
// ends it, so the connection stays usable (an explicit BEGIN would leave
// it in a failed transaction until a ROLLBACK that golang-migrate never
// sends, its advisory lock held).
func oneQuery(comment string, stmts []string) string {
	return "-- " + comment + " Send it as one query: PostgreSQL runs it as one transaction.\n" + strings.Join(stmts, "")
}

// regclassOf returns SQL for the OID of the table q, found by its quoted,
// schema-qualified name when the statement runs.
func regclassOf(q qualified) string { return pgsql.QuoteLiteral(q.sql()) + "::regclass" }

// upStatements returns the up side (see [ConvertKeys]).
func upStatements(ts []target, o convertOptions) []string {
	out := lockAll(ts, o)
	if o.drop != "" {
		out = append(out, dependentsSQL("The DROP statements given to WithDependents, under the caller's search_path.", o.drop))
	}
	out = append(out, pin)
	for _, t := range ts {
		// The guard: the message names the table by its regclass and the
		// column by %I of a literal.
		out = append(out, doBlock(fmt.Sprintf(`BEGIN
	IF (SELECT max(%s) FROM %s) >= %s.ulid_flake_min(now()) THEN
		RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format('ulidflake: %%s.%%I already holds keys in the Ulid-Flake range; new keys would not sort after them', %s, %s);
	END IF;
END`, pgsql.QuoteIdent(t.column), t.table.sql(), pgsql.QuoteIdent(t.fnSchema), regclassOf(t.table), pgsql.QuoteLiteral(t.column))))
	}
	for _, t := range ts {
		what := "DEFAULT"
		if t.identity != "" {
			what = "IDENTITY"
		}
		out = append(out, fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s DROP %s;\n", t.table.sql(), pgsql.QuoteIdent(t.column), what))
	}
	widened := map[string]bool{}
	widen := func(table qualified, column, base string) {
		stmt := fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s TYPE bigint;\n", table.sql(), pgsql.QuoteIdent(column))
		if base != "bigint" && !widened[stmt] {
			widened[stmt] = true
			out = append(out, stmt)
		}
	}
	for _, t := range ts {
		for _, r := range t.refs {
			widen(r.table, r.column, r.base)
		}
		widen(t.table, t.column, t.base)
	}
	for _, t := range ts {
		out = append(out, fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s SET DEFAULT %s;\n", t.table.sql(), pgsql.QuoteIdent(t.column), o.defaultExpr))
		if t.identity == "" {
			out = append(out, fmt.Sprintf("DROP SEQUENCE %s;\n", t.seq.sql()))
		}
	}
	out = append(out, unpin)
	if o.create != "" {
		out = append(out, dependentsSQL("The CREATE statements given to WithDependents, under the caller's search_path.", o.create))
	}
	return out
}

// dependentsSQL returns SQL given to [WithDependents] as one statement of
// a side, under a comment line: goose runs it as one statement (between
// StatementBegin and StatementEnd), whatever it holds.
func dependentsSQL(comment, sql string) string {
	return "-- " + comment + "\n" + strings.TrimSpace(sql) + "\n"
}

// downStatements returns the down side: for each key a new sequence named
// as PostgreSQL names a serial's, in the table's schema, owned and granted
// as a serial's is, by what the catalog says when it runs.
func downStatements(ts []target, o convertOptions) []string {
	out := append(lockAll(ts, o), pin)
	for _, t := range ts {
		out = append(out, downGuard(t))
	}
	for _, t := range ts {
		out = append(out, backStatements(t)...)
	}
	return append(out, unpin)
}

// backStatements put t's column back on a sequence that starts after the
// old keys: an identity as it was, or a serial's sequence.
func backStatements(t target) []string {
	table, col, seq := t.table.sql(), pgsql.QuoteIdent(t.column), t.backSeq.sql()
	restart := fmt.Sprintf("coalesce((SELECT max(%s) FROM %s WHERE %s < %d), 0) + 1, false", col, table, col, int64(serialLimit))
	drop := fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s DROP DEFAULT;\n", table, col)
	if t.identity != "" {
		return []string{drop,
			fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s ADD GENERATED %s AS IDENTITY;\n", table, col, t.identity),
			fmt.Sprintf("SELECT setval(pg_get_serial_sequence(%s, %s)::regclass, %s);\n", pgsql.QuoteLiteral(table), pgsql.QuoteLiteral(t.column), restart)}
	}
	return []string{drop,
		fmt.Sprintf("CREATE SEQUENCE %s AS bigint;\n", seq),
		grantLikeSerial(t),
		fmt.Sprintf("ALTER SEQUENCE %s OWNED BY %s.%s;\n", seq, table, col),
		fmt.Sprintf("SELECT setval(%s::regclass, %s);\n", pgsql.QuoteLiteral(seq), restart),
		fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s SET DEFAULT nextval(%s::regclass);\n", table, col, pgsql.QuoteLiteral(seq))}
}

// downGuard refuses the way back unless the column's default calls a
// Ulid-Flake ID function when the script runs, or it would swap a serial's
// sequence.
func downGuard(t target) string {
	return doBlock(fmt.Sprintf(`BEGIN
	IF NOT coalesce((SELECT %s FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
			WHERE d.adrelid = %s AND a.attname = %s), false) THEN
		RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format('ulidflake: %%s.%%I is not converted: its default calls no ulid_flake function', %s, %s);
	END IF;
END`, defaultCallsFlake("d.oid"), regclassOf(t.table), pgsql.QuoteLiteral(t.column), regclassOf(t.table), pgsql.QuoteLiteral(t.column)))
}

// grantLikeSerial gives the new sequence to the table's owner and USAGE
// on it to every role that may insert into the table, as with a serial:
// both read from the catalog when it runs.
func grantLikeSerial(t target) string {
	return doBlock(fmt.Sprintf(`DECLARE
	r record;
BEGIN
	EXECUTE format('ALTER SEQUENCE %%s OWNER TO %%I', %[1]s::regclass,
		(SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = %[2]s));
	FOR r IN SELECT DISTINCT x.grantee FROM pg_class c, aclexplode(c.relacl) x
		WHERE c.oid = %[2]s AND x.privilege_type = 'INSERT' AND x.grantee <> c.relowner ORDER BY 1
	LOOP
		EXECUTE format('GRANT USAGE ON SEQUENCE %%s TO %%s', %[1]s::regclass,
			CASE WHEN r.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(r.grantee)) END);
	END LOOP;
END`, pgsql.QuoteLiteral(t.backSeq.sql()), regclassOf(t.table)))
}

// doBlock returns a DO statement that runs body.
func doBlock(body string) string { return "DO " + pgsql.QuoteLiteral(body) + ";\n" }

// idents returns every name read from the catalog that t's SQL may hold.
func (t *target) idents() []string {
	out := []string{t.table.schema, t.table.name, t.column, t.fnSchema, t.backSeq.schema, t.backSeq.name}
	if t.seq != nil {
		out = append(out, t.seq.schema, t.seq.name)
	}
	for _, r := range t.refs {
		if r.base != "bigint" { // widened
			out = append(out, r.table.schema, r.table.name, r.column)
		}
	}
	return out
}
