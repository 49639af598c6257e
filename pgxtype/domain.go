package pgxtype

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// domainQuery finds every ulid_flake_id domain (migrations version 2) the
// connection can see, in any schema, with its array type. format_type names
// them as the connection's search_path would (schema-qualified when not on
// it).
// Every function and operator is pg_catalog's, with exact argument types,
// whatever the connection's search_path holds.
const domainQuery = `SELECT t.oid, pg_catalog.format_type(t.oid, NULL::pg_catalog.int4), t.typarray,
	pg_catalog.format_type(t.typarray, NULL::pg_catalog.int4)
FROM pg_catalog.pg_type t
WHERE t.typname OPERATOR(pg_catalog.=) 'ulid_flake_id'::pg_catalog.name
	AND t.typtype OPERATOR(pg_catalog.=) 'd'::pg_catalog."char"
	AND t.typbasetype OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype::pg_catalog.oid`

// registerDomains registers the domain ulid_flake_id and its array type on
// conn, with the ID codec, by the OIDs this database gave them. Without it,
// pgx cannot encode a slice of IDs for a parameter the server describes as
// ulid_flake_id[] (sqlc's ANY(@ids::ulid_flake_id[])): "unknown type (OID
// ...)". A database without the domain registers nothing. AfterConnect
// calls it.
func registerDomains(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, domainQuery, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return fmt.Errorf("pgxtype: looking up the ulid_flake_id domain: %w", err)
	}
	type domain struct {
		oid, arrayOID   uint32
		name, arrayName string
	}
	var found []domain
	for rows.Next() {
		var d domain
		if err := rows.Scan(&d.oid, &d.name, &d.arrayOID, &d.arrayName); err != nil {
			rows.Close()
			return fmt.Errorf("pgxtype: looking up the ulid_flake_id domain: %w", err)
		}
		found = append(found, d)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pgxtype: looking up the ulid_flake_id domain: %w", err)
	}
	m := conn.TypeMap()
	for _, d := range found {
		elem := &pgtype.Type{Name: d.name, OID: d.oid, Codec: codec{}}
		m.RegisterType(elem)
		if d.arrayOID != 0 {
			m.RegisterType(&pgtype.Type{Name: d.arrayName, OID: d.arrayOID, Codec: &pgtype.ArrayCodec{ElementType: elem}})
		}
	}
	return nil
}
