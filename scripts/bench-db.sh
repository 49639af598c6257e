#!/usr/bin/env bash
# Runs the benchmarks that need PostgreSQL (GORM plugin against bigserial,
# ulid_flake() against nextval()) six times on the servers the tests use,
# and summarises them with benchstat.
#
#   scripts/bench-db.sh                  # on the local images (built if missing)
#   scripts/bench-db.sh 'BenchmarkGorm'  # a subset
#
# Servers: ULIDFLAKE_PG_IMAGES or ULIDFLAKE_TEST_DATABASE_URL as for the tests;
# by default both local images, as CI builds them.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern=${1:-'BenchmarkGormCreate|BenchmarkSQLGenerate'}
if [ -z "${ULIDFLAKE_TEST_DATABASE_URL:-}" ] && [ -z "${ULIDFLAKE_PG_IMAGES:-}" ]; then
	.ci/postgres-image.sh 15 >&2
	.ci/postgres-image.sh 17 >&2
	export ULIDFLAKE_PG_IMAGES=localhost/ulidflake/postgres:15,localhost/ulidflake/postgres:17
	export TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=localhost
fi
out=$(mktemp)
go test -run '^$' -bench "$pattern" -benchtime 20x -count 6 ./integration_test/ | tee "$out"
echo
go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da -col /name "$out" 2>/dev/null || \
	go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$out"
