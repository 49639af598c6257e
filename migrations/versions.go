package migrations

import (
	"context"
	"fmt"
	"strings"
)

// The versions the Go side acts on, named where they are used.
const (
	// versionCheckNode adds ulid_flake_state and ulid_flake_check_node(),
	// which Migrate runs at every start.
	versionCheckNode = 4
	// versionOwner makes what the ID functions read the install owner's: the
	// epoch fixed at install (ulid_flake_epoch_ms(), which Migrate compares
	// with [WithEpoch]'s), the SID, the offset, and the mesh.
	versionOwner = 5
)

// The kinds of object a version's fingerprint names.
const (
	kindRelation = "relation" // a table or a sequence, by name
	kindType     = "type"     // a type or a domain, by name
	kindFunction = "function" // a function, by signature
)

// object is one object of the install schema.
type object struct{ kind, name string }

// version is what the Go side knows of one migration version. The table
// below has one per file pair in sql/, and TestVersionTable holds it to
// the files (CONTRIBUTING.md, "Adding a migration"). Which objects another
// role owns needs no list: the install schema is the installer's alone
// (aloneSQL), checked before every step.
type version struct {
	number int
	// adds says what the version adds that the Go side checks.
	adds string
	// fingerprint: objects that all exist in the install schema once this
	// version is installed, and not together before it: Migrate reads an
	// install that another tool made (or a newer release left) from them.
	fingerprint []object
	// refusals: the sentinel each SQLSTATE that the up file raises stands
	// for (see [classify]).
	refusals map[string]error
}

// The SQLSTATEs of version 5's refusals of its own: the mesh's
// (ulid_flake_node_sync), one per refusal, and the SID's, all in class 55
// (object not in prerequisite state).
const (
	stateMeshCopy       = "55U01" // a copy of a node while other nodes' rows are here
	stateMeshSIDHeld    = "55U02" // another node's row holds the SID
	stateMeshStateSub   = "55U03" // ulid_flake_state is replicated in by subscription
	stateMeshReplicated = "55U04" // a replicated column's default is ulid_flake()
	stateSID            = "55U06" // the settings give sessions another SID
)

func fn(name string) object  { return object{kindFunction, name} }
func rel(name string) object { return object{kindRelation, name} }
func typ(name string) object { return object{kindType, name} }

// versions holds each version's facts, in order: versions[v-1] is version v.
var versions = []version{
	{number: 1, adds: "the sequence and the ID functions",
		fingerprint: []object{rel("ulid_flake_seq")}},
	{number: 2, adds: "the domain ulid_flake_id",
		fingerprint: []object{typ("ulid_flake_id")}},
	{number: 3, adds: "the domains of the settings",
		fingerprint: []object{typ("ulid_flake_epoch_setting")}},
	{number: versionCheckNode, adds: "ulid_flake_state and ulid_flake_check_node()",
		fingerprint: []object{rel("ulid_flake_state")}},
	{number: versionOwner, adds: "the install schema alone; the owner's epoch, SID and offset; the mesh; ulid_flake_at, prefixed text forms, ulid_flake_block",
		fingerprint: []object{fn("ulid_flake_node_sync(text, bigint, boolean, uuid, bigint, integer)")},
		refusals: map[string]error{"55000": ErrEpoch, "42501": ErrEpoch, stateSID: ErrSID,
			stateMeshCopy: ErrMesh, stateMeshSIDHeld: ErrMesh, stateMeshStateSub: ErrMesh, stateMeshReplicated: ErrMesh}},
}

// meshStates are the SQLSTATEs of the mesh's refusals, from whichever
// function raises them.
var meshStates = map[string]bool{stateMeshCopy: true, stateMeshSIDHeld: true, stateMeshStateSub: true, stateMeshReplicated: true}

// installedVersion reads the newest version whose fingerprint is in the
// install schema, whatever the version table says: an older release that
// adopted an install of a newer one records only the versions it knows.
// The names travel as parameters, one per line.
func installedVersion(ctx context.Context, tx execer) (int, error) {
	var kinds, names []string
	for _, v := range versions {
		for _, o := range v.fingerprint {
			kinds, names = append(kinds, o.kind), append(names, o.name)
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT CASE
			WHEN f.kind OPERATOR(pg_catalog.=) 'function' THEN pg_catalog.to_regprocedure(pg_catalog.format('%I.%s', x.s, f.name)) IS NOT NULL
			WHEN f.kind OPERATOR(pg_catalog.=) 'relation' THEN pg_catalog.to_regclass(pg_catalog.format('%I.%I', x.s, f.name)) IS NOT NULL
			ELSE pg_catalog.to_regtype(pg_catalog.format('%I.%I', x.s, f.name)) IS NOT NULL END
		FROM ROWS FROM (pg_catalog.unnest(pg_catalog.string_to_array($1::pg_catalog.text, pg_catalog.chr(10))),
				pg_catalog.unnest(pg_catalog.string_to_array($2::pg_catalog.text, pg_catalog.chr(10)))) WITH ORDINALITY AS f(kind, name, n),
			(SELECT pg_catalog.current_schema() AS s) AS x
		ORDER BY f.n`, strings.Join(kinds, "\n"), strings.Join(names, "\n"))
	if err != nil {
		return 0, fmt.Errorf("migrations: looking for the objects of an install: %w", err)
	}
	defer rows.Close()
	var exists []bool
	for rows.Next() {
		var ok bool
		if err := rows.Scan(&ok); err != nil {
			return 0, fmt.Errorf("migrations: looking for the objects of an install: %w", err)
		}
		exists = append(exists, ok)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("migrations: looking for the objects of an install: %w", err)
	}
	return newestInstalled(exists), nil
}

// newestInstalled walks the ladder from the newest version down: the
// first whose fingerprint objects all exist (exists holds one answer per
// fingerprint object, in the table's order). 0: none.
func newestInstalled(exists []bool) int {
	at := make([]int, len(versions)) // where each version's answers start
	n := 0
	for i, v := range versions {
		at[i] = n
		n += len(v.fingerprint)
	}
	for i := len(versions) - 1; i >= 0; i-- {
		all := len(exists) >= at[i]+len(versions[i].fingerprint)
		for j := range versions[i].fingerprint {
			all = all && exists[at[i]+j]
		}
		if all {
			return versions[i].number
		}
	}
	return 0
}
