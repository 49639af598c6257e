// Package sqlcexample shows sqlc with Ulid-Flake IDs: the domain
// ulid_flake_id in the schema, the overrides in sqlc.yaml, and the code sqlc
// generates from them for pgx/v5 (dbpgx) and database/sql (dbstd). The
// customers' key is a prefixed ID, idtype.CustomerID (cus_...), mapped by
// column overrides. converted/ is the recipe for a schema that `ulidflake
// convert` moved from bigserial: plain bigint columns, column overrides.
// Both read migrations/declarations.sql, which declares every function
// users may call. The tests run the generated queries on PostgreSQL.
package sqlcexample

import _ "embed"

// Regenerate with the pinned sqlc (.ci/examples.sh checks it is up to date):
//go:generate go run github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1 generate
//go:generate go run github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1 generate -f converted/sqlc.yaml

// Schema creates the example's tables; the ulidflake migrations must run first.
//
//go:embed schema.sql
var Schema string

// ConvertedSchema creates converted/'s tables as they were before the
// conversion (bigserial keys) and the domains of its casts; the ulidflake
// migrations must run first.
//
//go:embed converted/schema.sql
var ConvertedSchema string
