package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/migrations"
)

// mergeDocs is where the docs say what keeps IDs of databases apart when
// their rows meet.
const mergeDocs = "docs/deployments.md#databases-that-merge"

// errOverlap: IDs of two of the databases nodes read can collide once
// their rows meet (exit status 1).
var errOverlap = errors.New("IDs of these databases can collide once their rows meet")

// node is what nodes reads of one install of the functions: a database,
// and the schema the functions are in.
type node struct {
	url        int    // the URL's place on the command line, from 1
	database   string // current_database()
	system     string // pg_control_system().system_identifier
	started    string // pg_postmaster_start_time(): two copies of one server differ here
	databaseID string // the database's OID
	schema     string // the install schema
	sid        sql.NullInt64
	epochMS    int64
	offset     string   // the offset, or why it is not shown
	standAlone []string // columns whose DEFAULT calls ulid_flake(), which ignores the SID
}

// label names n for a CLI user.
func (n node) label() string {
	return fmt.Sprintf("URL %d (database %s, schema %s)", n.url, printable(n.database), printable(n.schema))
}

// layout is the layout of the IDs n's database makes by default.
func (n node) layout() string {
	switch {
	case !n.sid.Valid:
		return "stand-alone"
	case len(n.standAlone) > 0:
		return "scalable+stand-alone"
	}
	return "scalable"
}

// sameInstall reports whether n and o are one install reached by two URLs.
func (n node) sameInstall(o node) bool {
	return n.system == o.system && n.started == o.started && n.databaseID == o.databaseID && n.schema == o.schema
}

// cmdNodes lists the installs of the databases the URLs name, and refuses
// a set whose IDs could collide once their rows meet.
func cmdNodes(args []string, stdout io.Writer) error {
	fs := newFlagSet("nodes")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for each database")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("%w: nodes needs the URL of at least one database", errUsage)
	}
	if *timeout <= 0 {
		return fmt.Errorf("%w: -timeout %s: want more than 0", errUsage, *timeout)
	}
	var nodes []node
	var errs []error
	for i, url := range fs.Args() {
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		found, err := readNodes(ctx, i+1, url)
		cancel()
		for _, e := range splitJoined(err) {
			errs = append(errs, fmt.Errorf("URL %d: %w", i+1, e))
		}
		nodes = append(nodes, found...)
	}
	if err := printNodes(stdout, nodes); err != nil {
		return err
	}
	if found := overlaps(nodes); len(found) > 0 {
		errs = append(errs, fmt.Errorf("%w:\n%s", errOverlap, strings.Join(found, "\n")))
	}
	return errors.Join(errs...)
}

// splitJoined returns the errors errors.Join joined into err, or err.
func splitJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err != nil {
		return []error{err}
	}
	return nil
}

// printNodes prints one row per install.
func printNodes(w io.Writer, nodes []node) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "URL\tdatabase\tsystem\tschema\tlayout\tsid\tepoch\toffset")
	for _, n := range nodes {
		sid := "-"
		if n.sid.Valid {
			sid = fmt.Sprint(n.sid.Int64)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.url, printable(n.database), n.system, printable(n.schema),
			n.layout(), sid, epochText(n.epochMS), n.offset)
	}
	return tw.Flush()
}

// printable returns a name as it is, or quoted (Go syntax) when it holds
// a character that would break a line or a column: a tab, a newline.
func printable(name string) string {
	if strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(name)
	}
	return name
}

// epochText writes an epoch in Unix milliseconds as a time.
func epochText(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(flake.RFC3339Milli)
}

// overlaps returns, for each pair of installs whose IDs could collide once
// their rows meet, why and what to do.
func overlaps(nodes []node) []string {
	var found []string
	for i, a := range nodes {
		for _, b := range nodes[i+1:] {
			if a.sameInstall(b) {
				continue // one database given twice
			}
			found = append(found, pairProblems(a, b)...)
		}
	}
	return found
}

// pairProblems says why IDs of a and b could collide, or read other times,
// once their rows meet.
func pairProblems(a, b node) []string {
	pair := a.label() + " and " + b.label()
	kind := "two databases"
	if a.system == b.system && a.started == b.started && a.databaseID == b.databaseID {
		kind = "two installs in one database" // a tool run without the install's search_path
	}
	var out []string
	if a.epochMS != b.epochMS {
		out = append(out, fmt.Sprintf("%s: epochs %s and %s: their IDs read other times, and their times repeat IDs of the other; "+
			"databases whose rows meet need one epoch, fixed before they make IDs (migrations.WithEpoch, ulid_flake_set_epoch)",
			pair, epochText(a.epochMS), epochText(b.epochMS)))
	}
	if why := standAloneWhy(a, b); why != "" {
		out = append(out, fmt.Sprintf("%s: %s: stand-alone IDs of %s can be equal, whatever their offsets; "+
			"give each database a SID of its own (SELECT ulid_flake_set_sid(n), as the install's owner) and DEFAULT ulid_flake_scalable(), "+
			"or make the IDs in Go; IDs made before may already repeat the other's: see %s", pair, why, kind, mergeDocs))
		return out
	}
	if a.sid.Int64 == b.sid.Int64 {
		out = append(out, fmt.Sprintf("%s: both make IDs with SID %d; "+
			"give one of them a SID no other database of the set uses (SELECT ulid_flake_set_sid(n), as the install's owner); "+
			"IDs made before may already repeat the other's: see %s", pair, a.sid.Int64, mergeDocs))
	}
	return out
}

// standAloneWhy says which of a and b make stand-alone IDs, or "".
func standAloneWhy(a, b node) string {
	var why []string
	for _, n := range []node{a, b} {
		switch {
		case !n.sid.Valid:
			why = append(why, fmt.Sprintf("URL %d has no SID", n.url))
		case len(n.standAlone) > 0:
			why = append(why, fmt.Sprintf("URL %d has DEFAULT ulid_flake() (no SID) on %s", n.url, printable(strings.Join(n.standAlone, ", "))))
		}
	}
	return strings.Join(why, ", ")
}

// readNodes reads the installs of the database at url, the n-th URL.
func readNodes(ctx context.Context, n int, url string) ([]node, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot connect: %w", err)
	}
	defer conn.Close()
	// Every name below is qualified or pg_catalog's; the install schema is
	// set as search_path through a bind parameter, never pasted.
	if _, err := conn.ExecContext(ctx, `SELECT pg_catalog.set_config('search_path', 'pg_catalog', false)`); err != nil {
		return nil, fmt.Errorf("cannot connect: %w", err)
	}
	base := node{url: n}
	if err := conn.QueryRowContext(ctx, `SELECT current_database()::text, c.system_identifier::text,
			pg_postmaster_start_time()::text, d.oid::text
		FROM pg_control_system() AS c, pg_database AS d WHERE d.datname = current_database()`).
		Scan(&base.database, &base.system, &base.started, &base.databaseID); err != nil {
		return nil, err
	}
	schemas, err := installSchemas(ctx, conn, base.database)
	if err != nil {
		return nil, err
	}
	var nodes []node
	var errs []error
	for _, s := range schemas {
		nd := base
		nd.schema = s
		if err := readInstall(ctx, conn, &nd); err != nil {
			errs = append(errs, fmt.Errorf("schema %s: %w", printable(s), err))
			continue
		}
		nodes = append(nodes, nd)
	}
	return nodes, errors.Join(errs...)
}

// installSchemas returns the schemas of the database that hold
// ulid_flake(): an install each. One without ulid_flake_node_sid() is older
// than version 5, which nodes needs.
func installSchemas(ctx context.Context, conn *sql.Conn, database string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT n.nspname::text,
			bool_or(p.proname = 'ulid_flake_node_sid') AND bool_or(p.proname = 'ulid_flake_epoch_ms')
		FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace
		WHERE p.pronargs = 0 AND p.proname IN ('ulid_flake', 'ulid_flake_node_sid', 'ulid_flake_epoch_ms')
		GROUP BY 1 HAVING bool_or(p.proname = 'ulid_flake') ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var schemas, old []string
	for rows.Next() {
		var s string
		var current bool
		if err := rows.Scan(&s, &current); err != nil {
			return nil, err
		}
		schemas = append(schemas, s)
		if !current {
			old = append(old, s)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(schemas) == 0 {
		return nil, fmt.Errorf("%w: database %s has ulid_flake() in no schema; install them first (migrations.Migrate, or ulidflake migrations up | psql -v ON_ERROR_STOP=1)",
			migrations.ErrNotInstalled, database)
	}
	if len(old) > 0 {
		return nil, fmt.Errorf("%w: schema %s of database %s holds an install older than version 5 (no ulid_flake_node_sid()); upgrade it first (migrations.Migrate, or ulidflake migrations up)",
			migrations.ErrNotInstalled, strings.Join(old, ", "), database)
	}
	return schemas, nil
}

// readInstall reads n's SID, epoch, offset and stand-alone defaults from
// its install schema. It calls the install's functions as the role that
// owns them (SET ROLE), unless that is a superuser or this role: a role
// that may create in some schema could otherwise plant an install there
// whose functions run with the rights of whoever runs nodes.
func readInstall(ctx context.Context, conn *sql.Conn, n *node) (err error) {
	if _, err := conn.ExecContext(ctx, `SELECT pg_catalog.set_config('search_path', 'pg_catalog', false)`); err != nil {
		return err
	}
	own, err := installOwner(ctx, conn, n.schema)
	if err != nil {
		return err
	}
	if !own.trusted {
		if _, err := conn.ExecContext(ctx, `SELECT pg_catalog.set_config('role', $1, false)`, own.role); err != nil {
			return fmt.Errorf("its functions belong to role %s, as whom nodes runs them, and this role may not become it: connect as %[1]s or a superuser: %w", own.role, err)
		}
		defer func() {
			if _, e := conn.ExecContext(ctx, `RESET ROLE`); err == nil {
				err = e
			}
		}()
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident($1), false)`, n.schema); err != nil {
		return err
	}
	if err := conn.QueryRowContext(ctx, `SELECT ulid_flake_node_sid(), ulid_flake_epoch_ms()`).Scan(&n.sid, &n.epochMS); err != nil {
		return err
	}
	switch {
	case !own.state.Valid:
		n.offset = "none drawn: run Migrate"
	case !own.state.Bool:
		n.offset = "? (ulid_flake_state is not a table of the install's owner)"
	default:
		if n.offset, err = readOffset(ctx, conn, n.schema); err != nil {
			return err
		}
	}
	n.standAlone, err = standAloneDefaults(ctx, conn, n.schema)
	return err
}

// owner is who owns an install's functions, and what nodes may trust.
type owner struct {
	role    string       // the owner of ulid_flake()
	trusted bool         // a superuser, or the role nodes runs as
	state   sql.NullBool // ulid_flake_state is a table of role's (NULL: there is none)
}

// installOwner returns the owner of the install in schema. The functions
// nodes calls must be that role's.
func installOwner(ctx context.Context, conn *sql.Conn, schema string) (owner, error) {
	var o owner
	var same bool
	err := conn.QueryRowContext(ctx, `SELECT r.rolname::text, r.rolsuper OR r.rolname = current_user,
			NOT EXISTS (SELECT FROM pg_proc AS o WHERE o.pronamespace = f.pronamespace AND o.pronargs = 0
				AND o.proname IN ('ulid_flake_node_sid', 'ulid_flake_epoch_ms') AND o.proowner <> f.proowner),
			(SELECT c.relkind = 'r' AND c.relowner = f.proowner FROM pg_class AS c
				WHERE c.relnamespace = f.pronamespace AND c.relname = 'ulid_flake_state')
		FROM pg_proc AS f JOIN pg_roles AS r ON r.oid = f.proowner JOIN pg_namespace AS n ON n.oid = f.pronamespace
		WHERE n.nspname = $1 AND f.proname = 'ulid_flake' AND f.pronargs = 0`, schema).Scan(&o.role, &o.trusted, &same, &o.state)
	if err != nil {
		return o, err
	}
	if !same {
		return o, fmt.Errorf("ulid_flake_node_sid() or ulid_flake_epoch_ms() is not owned by %s, who owns ulid_flake(): the install is not one role's; run Migrate as %[1]s, which refuses it and says why", o.role)
	}
	return o, nil
}

// readOffset returns the offset of the install in schema, with a note
// when it was drawn on another database (a copy that Migrate has not
// seen), or when this role may not read it.
func readOffset(ctx context.Context, conn *sql.Conn, schema string) (string, error) {
	var readable bool
	err := conn.QueryRowContext(ctx, `SELECT pg_catalog.has_table_privilege(c.oid, 'SELECT')
		FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		WHERE n.nspname OPERATOR(pg_catalog.=) $1 AND c.relname OPERATOR(pg_catalog.=) 'ulid_flake_state'`, schema).Scan(&readable)
	if err != nil {
		return "", err
	}
	if !readable {
		return "? (only the install's owner may read it)", nil
	}
	var offset int64
	var here bool
	err = conn.QueryRowContext(ctx, `SELECT s."offset", s.system_id OPERATOR(pg_catalog.=) c.system_identifier
			AND s.database_oid OPERATOR(pg_catalog.=) d.oid
		FROM ulid_flake_state AS s, pg_catalog.pg_control_system() AS c, pg_catalog.pg_database AS d
		WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()`).Scan(&offset, &here)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "none drawn: run Migrate", nil
	case err != nil:
		return "", err
	case !here:
		return fmt.Sprintf("%d (drawn on another database: run Migrate)", offset), nil
	}
	return fmt.Sprint(offset), nil
}

// standAloneDefaults returns the columns (schema.table.column) whose
// DEFAULT or generated expression calls the install's ulid_flake(), which
// makes stand-alone IDs whatever the node's SID.
func standAloneDefaults(ctx context.Context, conn *sql.Conn, schema string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT DISTINCT pg_catalog.format('%I.%I.%I', cn.nspname, c.relname, a.attname)
		FROM pg_catalog.pg_depend AS d
		JOIN pg_catalog.pg_attrdef AS ad ON ad.oid OPERATOR(pg_catalog.=) d.objid
		JOIN pg_catalog.pg_attribute AS a ON a.attrelid OPERATOR(pg_catalog.=) ad.adrelid AND a.attnum OPERATOR(pg_catalog.=) ad.adnum
		JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) ad.adrelid
		JOIN pg_catalog.pg_namespace AS cn ON cn.oid OPERATOR(pg_catalog.=) c.relnamespace
		JOIN pg_catalog.pg_proc AS p ON p.oid OPERATOR(pg_catalog.=) d.refobjid
		JOIN pg_catalog.pg_namespace AS pn ON pn.oid OPERATOR(pg_catalog.=) p.pronamespace
		WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
			AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
			AND p.proname OPERATOR(pg_catalog.=) 'ulid_flake' AND p.pronargs OPERATOR(pg_catalog.=) 0
			AND pn.nspname OPERATOR(pg_catalog.=) $1
		ORDER BY 1`, schema)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}
