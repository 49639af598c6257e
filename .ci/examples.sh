#!/usr/bin/env bash
# The example modules (examples/sqlc, ent, bun, libpq): each is a Go module of
# its own, so that the root module gains none of their dependencies. For
# each: go vet, go test -race on the PostgreSQL servers the harness starts
# (every test must pass on every server, none may skip), and for sqlc and
# ent, a check that the committed generated code is what the pinned
# generator makes. .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
# Like the root module's tests, they need no environment: the harness
# starts PostgreSQL 15, 17 and 18 by itself.

# sqlc at a pinned version, built from the Go module proxy (its PostgreSQL
# parser, pg_query_go, needs cgo: a C compiler).
SQLC=github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1

step() { printf '\n=== %s\n' "$*"; }

# The subtest names the servers get: pg15, pg17, ...
servers="pg15 pg17 pg18"

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

step "examples/sqlc: generated code up to date (sqlc generate, $SQLC)"
uptodate examples/sqlc
(cd examples/sqlc && CGO_ENABLED=1 go run "$SQLC" generate)
uptodate examples/sqlc

step "examples/ent: generated code up to date (go generate ./ent)"
uptodate examples/ent
(cd examples/ent && go generate ./ent && go mod tidy)
uptodate examples/ent

for ex in sqlc ent bun libpq; do
	step "examples/$ex: go vet, go test -race"
	log=$(mktemp)
	status=0
	(cd "examples/$ex" && go mod verify >/dev/null && go vet ./... && go test -race -count=1 -v ./...) > "$log" 2>&1 || status=$?
	grep -v -E '^=== (RUN|PAUSE|CONT|NAME)' "$log" | grep -v -E '^\s+--- PASS' || true
	if [ "$status" -ne 0 ]; then
		echo "examples/$ex failed"; exit "$status"
	fi
	if grep -E -- '--- SKIP' "$log"; then
		echo "examples/$ex: tests were skipped"; exit 1
	fi
	# Every top-level database test passed on every server.
	for test in $(grep -oE -- '^--- PASS: Test[A-Za-z0-9_]+' "$log" | awk '{print $3}'); do
		for v in $servers; do
			grep -q -- "--- PASS: $test/$v" "$log" || { echo "examples/$ex: $test did not pass on $v"; exit 1; }
		done
	done
	rm -f "$log"
done

step "examples: done in $(( $(date +%s) - start ))s"
