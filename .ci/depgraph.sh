#!/usr/bin/env bash
# Users' dependency graph: a scratch module that imports the root package
# must list no test harness, container, SQLite, plotting or telemetry module
# in `go list -m all`: the harness, the integration tests, the quickstart and
# the examples are modules of their own. What it does list is pgx and GORM
# (required by pgxtype, sidlease, migrations and gormplugin) and what their
# go.mod files bring (stretchr/testify through pgx's).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
cat > main.go <<'GO'
package main

import "github.com/ulidflake/ulidflake"

func main() { _, _ = ulidflake.New() }
GO
export GOWORK=off GOFLAGS=-mod=mod
go mod init scratch >/dev/null 2>&1
go mod edit -require=github.com/ulidflake/ulidflake@v0.0.0 -replace=github.com/ulidflake/ulidflake="$root"
go mod tidy >/dev/null 2>&1
go build ./...
mods=$(go list -m all)
echo "$mods"
echo "$(echo "$mods" | wc -l) modules; go mod graph: $(go mod graph | wc -l) lines"
if echo "$mods" | grep -Ei 'testcontainers|moby|docker|containerd|sqlite|glebarez|modernc|opentelemetry|gonum|ent$|entgo|uptrace|sqlc'; then
	echo "users' graph holds a test, container or example module (above)"; exit 1
fi
