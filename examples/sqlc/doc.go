// Package sqlcexample shows sqlc with Ulid-Flake IDs: the domain
// ulid_flake_id in the schema, the overrides in sqlc.yaml, and the code sqlc
// generates from them for pgx/v5 (dbpgx) and database/sql (dbstd). The
// customers' key is a prefixed ID, idtype.CustomerID (cus_...), mapped by
// column overrides. The tests run the generated queries on PostgreSQL.
package sqlcexample

import _ "embed"

// Regenerate with the pinned sqlc (.ci/examples.sh checks it is up to date):
//go:generate go run github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1 generate

// Schema creates the example's tables; the ulidflake migrations must run first.
//
//go:embed schema.sql
var Schema string
