#!/usr/bin/env bash
# Runs the Go benchmarks of the given packages six times each and summarises
# them with benchstat. The figures in BENCHMARKS.md come from here.
#
#   scripts/bench.sh ./flake       # core: generation, parse, format, JSON
#   scripts/bench.sh ./pgxtype     # pgx codec: ID vs int64, with and without Register
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- ./flake ./pgxtype
out=$(mktemp)
go test -run '^$' -bench . -benchmem -count 6 "$@" | tee "$out"
echo
go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$out"
