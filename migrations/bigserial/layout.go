package bigserial

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/ulidflake/ulidflake/migrations/internal/pgsql"
)

// checkDefault refuses a default the node would refuse at every insert:
// ulid_flake() on a node of a mesh (55U04), ulid_flake_scalable() on a
// node with no SID (23514), or either where the node makes no ID at all.
// It runs the check the ID functions run before a server start's first
// ID, ulid_flake_verify(scalable), which any role may call, and reads
// ulid_flake_node_sid(), as the converting role, in a transaction it
// rolls back: it makes no ID and draws no sequence value. Both must be
// owned by the converting role or a superuser, as for the functions the
// conversion finds ([target.resolve]), so that no other role's code
// runs. An install before version 5 has neither, and knows no mesh: a
// plain default passes, a scalable one (its SID a session setting then)
// is refused.
func checkDefault(ctx context.Context, db *sql.DB, schema string, scalable bool) error {
	q := pgsql.QuoteIdent(schema)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("bigserial: checking the node: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var owned bool
	if err := tx.QueryRowContext(ctx, `SELECT pg_catalog.count(*) OPERATOR(pg_catalog.=) 2 FROM pg_catalog.pg_proc p
		JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) p.proowner
		WHERE p.oid OPERATOR(pg_catalog.=) ANY (ARRAY[
			pg_catalog.to_regprocedure(pg_catalog.quote_ident($1::pg_catalog.text) OPERATOR(pg_catalog.||) '.ulid_flake_verify(boolean)'),
			pg_catalog.to_regprocedure(pg_catalog.quote_ident($1::pg_catalog.text) OPERATOR(pg_catalog.||) '.ulid_flake_node_sid()')])
		AND (r.rolname OPERATOR(pg_catalog.=) CURRENT_USER OR r.rolsuper)`, schema).Scan(&owned); err != nil {
		return fmt.Errorf("bigserial: looking up the node check in %s: %w", q, err)
	}
	switch {
	case !owned && scalable:
		return fmt.Errorf("%w: no ulid_flake_verify(boolean) and ulid_flake_node_sid() in schema %s owned by this role or a superuser: "+
			"a scalable default needs the node's SID of migration version 5: run migrations.Migrate as the install's owner", ErrConvert, q)
	case !owned:
		return nil
	}
	var sid sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT `+q+`.ulid_flake_node_sid() FROM (SELECT `+q+`.ulid_flake_verify($1::pg_catalog.bool) OFFSET 0) AS v`,
		scalable).Scan(&sid)
	switch code := pgsql.SQLState(err); {
	case code == "55U04" && !scalable:
		return fmt.Errorf("%w: this database is a node of a mesh, where %s.ulid_flake() makes no ID: convert with WithScalable "+
			"(ulidflake convert -scalable) to %s.ulid_flake_scalable(): %w", ErrConvert, q, q, err)
	case strings.HasPrefix(code, "55U"), code == "55000":
		return fmt.Errorf("%w: this node makes no ID: %w", ErrConvert, err)
	case code == "25006":
		return fmt.Errorf("%w: the node's check writes at the first ID after a server start, and this session is read-only "+
			"(default_transaction_read_only, or a standby): convert from a read-write session on the primary: %w", ErrConvert, err)
	case code == "42725":
		return fmt.Errorf("%w: another function of the same name in schema %s makes the node's check ambiguous: "+
			"drop the overloads other roles made there: %w", ErrConvert, q, err)
	case err != nil:
		return fmt.Errorf("bigserial: checking the node in %s: %w", q, err)
	case scalable && !sid.Valid:
		return fmt.Errorf("%w: this node has no SID, so %s.ulid_flake_scalable() would refuse every insert (23514): "+
			"give it one first, as the install's owner: SELECT %s.ulid_flake_set_sid(n), n from 0 to 31 and no other node's",
			ErrConvert, q, q)
	}
	return nil
}
