#!/usr/bin/env bash
# The example modules (examples/quickstart, sqlc, ent, bun, libpq, graphql,
# openapi, protobuf, sqlx, bob, jet) are Go modules of their own, so that
# the root module gains none of their dependencies; their tests run with
# every other test in `go test work` (go.work). This checks that the
# committed generated code of sqlc, ent, gqlgen, oapi-codegen, buf
# (protoc-gen-go), go-jet and bobgen-psql is what the pinned generators
# make (quickstart, bun, libpq and sqlx generate nothing). .ci/run calls it
# twice: `.ci/examples.sh offline` for the generators that need no server
# (while the images build), `.ci/examples.sh database` for go-jet and Bob,
# which read a live database.
set -euo pipefail
part=${1:?usage: .ci/examples.sh offline|database}
cd "$(dirname "$0")/.."

# sqlc at a pinned version, built from the Go module proxy (its PostgreSQL
# parser, pg_query_go, needs cgo: a C compiler).
SQLC=github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1

step() { printf '\n=== %s\n' "$*"; }


# uptodate dir: fails when the generator changed anything under dir.
uptodate() {
	if [ -n "$(git status --porcelain -- "$1")" ]; then
		git status --short -- "$1"
		git diff --stat -- "$1"
		echo "$1: generated code is not up to date: regenerate and commit it"
		exit 1
	fi
}

start=$(date +%s)

if [ "$part" = offline ]; then

# Both recipes (the domain one, converted/ for plain bigint) read
# migrations/declarations.sql, and their queries call every function it
# declares (TestQueriesCallEveryFunction): a function sqlc cannot see fails
# the generation.
step "examples/sqlc: generated code up to date (sqlc generate, $SQLC)"
uptodate examples/sqlc
(cd examples/sqlc && CGO_ENABLED=1 go run "$SQLC" generate && CGO_ENABLED=1 go run "$SQLC" generate -f converted/sqlc.yaml)
uptodate examples/sqlc

step "examples/ent: generated code up to date (go generate ./ent)"
uptodate examples/ent
(cd examples/ent && GOWORK=off go generate ./ent && GOWORK=off go mod tidy)
uptodate examples/ent

step "examples/graphql: generated code up to date (go generate: gqlgen v0.17.90)"
uptodate examples/graphql
(cd examples/graphql && go generate ./...)
uptodate examples/graphql

step "examples/openapi: generated code up to date (go generate: oapi-codegen v2.8.2)"
uptodate examples/openapi
(cd examples/openapi && go generate ./...)
uptodate examples/openapi

step "examples/protobuf: generated code up to date (go generate: buf v1.75.0, protoc-gen-go)"
uptodate examples/protobuf
(cd examples/protobuf && go generate ./...)
uptodate examples/protobuf
fi

if [ "$part" = database ]; then
# go-jet reads the schema from a live database: the jetgen test sets one up
# (migrations.Migrate, schema.sql) and generates from it with jet v2.14.1
# (go.mod); -update rewrites gen/. Without -update, go test work checks gen/
# against every server.
step "examples/jet: generated code up to date (go test ./jetgen -args -update: jet v2.14.1)"
uptodate examples/jet
(cd examples/jet && ULIDFLAKE_PG_IMAGES=18 go test -count=1 -run '^TestGenerated$' ./jetgen -args -update)
uptodate examples/jet

# Bob's bobgen-psql also reads a live database: the bobgen test sets one up
# and runs `go tool bobgen-psql` (the version go.mod pins) with bobgen.yaml.
step "examples/bob: generated code up to date (go test ./bobgen -args -generate: bobgen-psql v0.45.0)"
uptodate examples/bob
(cd examples/bob && ULIDFLAKE_PG_IMAGES=18 go test -count=1 -run '^TestGenerate$' ./bobgen -args -generate)
uptodate examples/bob
fi

step "examples ($part): done in $(( $(date +%s) - start ))s"
