package bigserial

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/ulidflake/ulidflake/migrations/internal/pgsql"
)

// checkDefault refuses a default the node would refuse at every insert:
// ulid_flake() on a node of a mesh (55U04), ulid_flake_scalable() on a
// node with no SID (23514), or either where the node makes no ID at all.
// It makes one ID with the default, as the converting role, in a
// transaction it rolls back, so that the refusal is the one an insert
// would get, whatever the install's version or the role's privileges;
// and only from a function owned by the converting role or a superuser,
// as for the functions the conversion finds ([target.resolve]), so that
// no other role's code runs.
func checkDefault(ctx context.Context, db *sql.DB, schema string, scalable bool) error {
	q := pgsql.QuoteIdent(schema)
	name, sig, expr := "ulid_flake()", "ulid_flake()", q+".ulid_flake()"
	if scalable {
		name, sig, expr = "ulid_flake_scalable()", "ulid_flake_scalable(integer)", q+".ulid_flake_scalable()"
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("bigserial: trying the default %s: %w", expr, err)
	}
	defer func() { _ = tx.Rollback() }()
	var owned bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT FROM pg_catalog.pg_proc p
		JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) p.proowner
		WHERE p.oid OPERATOR(pg_catalog.=) pg_catalog.to_regprocedure(pg_catalog.quote_ident($1::pg_catalog.text) OPERATOR(pg_catalog.||) $2::pg_catalog.text)
		AND (r.rolname OPERATOR(pg_catalog.=) CURRENT_USER OR r.rolsuper))`, schema, "."+sig).Scan(&owned); err != nil {
		return fmt.Errorf("bigserial: looking up %s: %w", expr, err)
	}
	if !owned {
		return fmt.Errorf("%w: no %s in schema %s owned by this role or a superuser, beside the install's ulid_flake_min: run migrations.Migrate as the install's owner",
			ErrConvert, name, q)
	}
	_, err = tx.ExecContext(ctx, `SELECT `+expr)
	switch code := pgsql.SQLState(err); {
	case err == nil:
		return nil
	case code == "55U04" && !scalable:
		return fmt.Errorf("%w: this database is a node of a mesh, where %s makes no ID: convert with WithScalable "+
			"(ulidflake convert -scalable) to %s.ulid_flake_scalable(): %w", ErrConvert, expr, q, err)
	case code == "23514" && scalable:
		return fmt.Errorf("%w: this node has no SID, so %s refuses every insert: give it one first, as the install's owner: "+
			"SELECT %s.ulid_flake_set_sid(n), n from 0 to 31 and no other node's: %w", ErrConvert, expr, q, err)
	default:
		return fmt.Errorf("%w: the default %s makes no ID on this database: %w", ErrConvert, expr, err)
	}
}
