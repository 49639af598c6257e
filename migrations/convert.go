package migrations

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrConvert: the column cannot be converted as asked.
var ErrConvert = errors.New("migrations: cannot convert")

// Conversion is the SQL that moves a serial, bigserial or identity column to
// DEFAULT ulid_flake(), and back. Each side is one transaction.
type Conversion struct {
	Table, Column string
	Up, Down      string
}

// ConvertOption configures [ConvertSerial].
type ConvertOption func(*convertOptions)

type convertOptions struct {
	lockTimeout time.Duration
	generator   string
}

// LockTimeout bounds how long the conversion waits for its locks (default
// 5s): past it the conversion fails instead of queueing every other query on
// the table behind it.
func LockTimeout(d time.Duration) ConvertOption {
	return func(o *convertOptions) { o.lockTimeout = d }
}

// Generator sets the default expression (default "ulid_flake()"; for
// example "ulid_flake_scalable()" with ulid_flake.sid set).
func Generator(expr string) ConvertOption {
	return func(o *convertOptions) { o.generator = expr }
}

// serialLimit separates the keys a sequence made from Ulid-Flakes: below
// 2^40 (a trillion rows) is taken as the sequence's, when going back.
const serialLimit = 1 << 40

// ConvertSerial reads the catalog of db and returns the SQL that converts
// table.column (a serial, bigserial or identity column) to
// DEFAULT ulid_flake(). The up side, in one transaction:
//
//   - sets lock_timeout;
//   - refuses to go on if existing keys reach the Ulid-Flake range (new keys
//     must sort after the old ones);
//   - drops the identity, or the sequence default;
//   - widens the column and every foreign-key column that references it to
//     bigint where they are smaller;
//   - sets DEFAULT ulid_flake();
//   - drops the old sequence, so that nothing can mint keys from it again.
//
// Old rows keep their keys. The down side restores a sequence default that
// starts at the largest old key plus one (keys below 2^40 count as old),
// keeping the column bigint. Neither side runs: see [Conversion.Apply].
func ConvertSerial(ctx context.Context, db *sql.DB, table, column string, opts ...ConvertOption) (Conversion, error) {
	o := convertOptions{lockTimeout: 5 * time.Second, generator: "ulid_flake()"}
	for _, opt := range opts {
		opt(&o)
	}
	c := Conversion{Table: table, Column: column}
	var typ, identity string
	var def, seq sql.NullString
	err := db.QueryRowContext(ctx, `
		SELECT format_type(a.atttypid, a.atttypmod), a.attidentity::text,
			pg_get_expr(d.adbin, d.adrelid), pg_get_serial_sequence($1, $2)
		FROM pg_attribute a
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE a.attrelid = $1::regclass AND a.attname = $2 AND NOT a.attisdropped`, table, column).
		Scan(&typ, &identity, &def, &seq)
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("%w: %s has no column %q", ErrConvert, table, column)
	}
	if err != nil {
		return c, fmt.Errorf("%w: reading %s.%s: %v", ErrConvert, table, column, err)
	}
	switch typ {
	case "smallint", "integer", "bigint":
	default:
		return c, fmt.Errorf("%w: %s.%s is %s, not an integer", ErrConvert, table, column, typ)
	}
	isIdentity := identity != ""
	if !isIdentity && (!def.Valid || !strings.HasPrefix(def.String, "nextval(") || !seq.Valid) {
		return c, fmt.Errorf("%w: %s.%s is neither serial nor identity (default %q)", ErrConvert, table, column, def.String)
	}

	type fk struct{ table, column, typ string }
	var refs []fk
	rows, err := db.QueryContext(ctx, `
		SELECT c.conrelid::regclass::text, a.attname, format_type(a.atttypid, a.atttypmod)
		FROM pg_constraint c
		CROSS JOIN LATERAL unnest(c.conkey, c.confkey) AS k(child, parent)
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.child
		JOIN pg_attribute p ON p.attrelid = c.confrelid AND p.attnum = k.parent
		WHERE c.contype = 'f' AND c.confrelid = $1::regclass AND p.attname = $2
		ORDER BY 1, 2`, table, column)
	if err != nil {
		return c, fmt.Errorf("%w: reading foreign keys to %s.%s: %v", ErrConvert, table, column, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r fk
		if err := rows.Scan(&r.table, &r.column, &r.typ); err != nil {
			return c, err
		}
		refs = append(refs, r)
	}
	if err := rows.Err(); err != nil {
		return c, err
	}

	var tableSQL string
	if err := db.QueryRowContext(ctx, `SELECT $1::regclass::text`, table).Scan(&tableSQL); err != nil {
		return c, err
	}
	col := quoteIdent(column)
	var up strings.Builder
	fmt.Fprintf(&up, "-- Convert %s.%s (%s%s) to DEFAULT %s.\nBEGIN;\n", tableSQL, column, typ, map[bool]string{true: ", identity", false: ", serial"}[isIdentity], o.generator)
	fmt.Fprintf(&up, "SET LOCAL lock_timeout = '%dms';\n", o.lockTimeout.Milliseconds())
	fmt.Fprintf(&up, "LOCK TABLE %s IN ACCESS EXCLUSIVE MODE;\n", tableSQL)
	fmt.Fprintf(&up, `DO $check$
BEGIN
	IF (SELECT max(%s) FROM %s) >= ulid_flake_min(now()) THEN
		RAISE EXCEPTION 'ulidflake: %s.%s already holds keys in the Ulid-Flake range; new keys would not sort after them';
	END IF;
END
$check$;
`, col, tableSQL, strings.ReplaceAll(tableSQL, "'", "''"), column)
	if isIdentity {
		fmt.Fprintf(&up, "ALTER TABLE %s ALTER COLUMN %s DROP IDENTITY;\n", tableSQL, col)
	} else {
		fmt.Fprintf(&up, "ALTER TABLE %s ALTER COLUMN %s DROP DEFAULT;\n", tableSQL, col)
	}
	for _, r := range refs {
		if r.typ != "bigint" {
			fmt.Fprintf(&up, "ALTER TABLE %s ALTER COLUMN %s TYPE bigint;\n", r.table, quoteIdent(r.column))
		}
	}
	if typ != "bigint" {
		fmt.Fprintf(&up, "ALTER TABLE %s ALTER COLUMN %s TYPE bigint;\n", tableSQL, col)
	}
	fmt.Fprintf(&up, "ALTER TABLE %s ALTER COLUMN %s SET DEFAULT %s;\n", tableSQL, col, o.generator)
	if !isIdentity {
		fmt.Fprintf(&up, "DROP SEQUENCE %s;\n", seq.String)
	}
	up.WriteString("COMMIT;\n")

	seqName := seq.String
	if isIdentity || seqName == "" {
		seqName = tableSQL + "_" + column + "_seq"
		if i := strings.LastIndex(seqName, "."); i >= 0 {
			seqName = seqName[:i+1] + quoteIdent(strings.Trim(seqName[i+1:], `"`))
		} else {
			seqName = quoteIdent(seqName)
		}
	}
	var down strings.Builder
	fmt.Fprintf(&down, "-- Back from DEFAULT %s to a sequence on %s.%s; the column stays bigint.\nBEGIN;\n", o.generator, tableSQL, column)
	fmt.Fprintf(&down, "SET LOCAL lock_timeout = '%dms';\n", o.lockTimeout.Milliseconds())
	fmt.Fprintf(&down, "ALTER TABLE %s ALTER COLUMN %s DROP DEFAULT;\n", tableSQL, col)
	fmt.Fprintf(&down, "CREATE SEQUENCE %s AS bigint OWNED BY %s.%s;\n", seqName, tableSQL, col)
	fmt.Fprintf(&down, "SELECT setval('%s', coalesce((SELECT max(%s) FROM %s WHERE %s < %d), 0) + 1, false);\n",
		strings.ReplaceAll(seqName, "'", "''"), col, tableSQL, col, int64(serialLimit))
	fmt.Fprintf(&down, "ALTER TABLE %s ALTER COLUMN %s SET DEFAULT nextval('%s');\n", tableSQL, col, strings.ReplaceAll(seqName, "'", "''"))
	down.WriteString("COMMIT;\n")
	c.Up, c.Down = up.String(), down.String()
	return c, nil
}

// Apply runs the up side (or, with up false, the down side) on db.
func (c Conversion) Apply(ctx context.Context, db *sql.DB, up bool) error {
	body := c.Down
	if up {
		body = c.Up
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
