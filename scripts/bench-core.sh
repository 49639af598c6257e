#!/usr/bin/env bash
# Runs the core benchmarks of package flake six times and summarises them
# with benchstat. Usage: scripts/bench-core.sh [output-file]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-core.txt}
go test -run '^$' -bench . -benchmem -count 6 ./flake | tee "$out"
go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$out"
