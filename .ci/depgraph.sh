#!/usr/bin/env bash
# Users' dependency graph, from a scratch module that requires this one as
# users do (GOWORK off):
#  1. each package imports, from outside the standard library and this
#     module, exactly the modules the README says it needs: flake, sqltype,
#     migrations, migrations/bigserial and blocks (database/sql only),
#     migrations/internal/pgsql and the root package none;
#     pgxtype, sidlease and the CLI pgx; gormplugin GORM. Both ways: a
#     package that starts needing a module, or stops needing one the README
#     names, fails; so does a package this list misses.
#  2. `go list -m all` lists no test harness, container, SQLite, plotting or
#     telemetry module: the harness, the integration tests, the quickstart
#     and the examples are modules of their own. It does list pgx and GORM
#     (this module requires them) and what their go.mod files bring
#     (stretchr/testify through pgx's).
#  3. the OpenTelemetry adapter (github.com/ulidflake/ulidflake/otelulidflake)
#     is a module of its own: 1 and 2 are the graph of a user who does not
#     import it, and a user who does links OpenTelemetry's API (otel and
#     otel/metric, and xxhash, which otel/attribute uses) and nothing else
#     beyond the standard library and this repository's modules: not the
#     SDK, which only its tests use.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mod=github.com/ulidflake/ulidflake
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
go mod edit -require=$mod@v0.0.0 -replace=$mod="$root"
go mod tidy >/dev/null 2>&1
go build ./...

# needs PKG prints the modules, other than the standard library and this
# one, whose packages PKG or the packages of this module it links import
# directly: what it needs, not what those modules need in turn.
needs() {
	go list -deps -f '{{.ImportPath}}|{{with .Module}}{{.Path}}{{end}}|{{join .Imports ","}}' "$1" |
		awk -F'|' -v self=$mod '
			{ module[$1] = $2 }
			$2 == self { imports[++n] = $3 }
			END {
				for (i = 1; i <= n; i++) {
					k = split(imports[i], a, ",")
					for (j = 1; j <= k; j++)
						if (module[a[j]] != "" && module[a[j]] != self) print module[a[j]]
				}
			}' | sort -u | paste -sd' ' -
}
pgx=github.com/jackc/pgx/v5
gorm=gorm.io/gorm
list="
/flake
/sqltype
/migrations
/migrations/bigserial
/migrations/internal/pgsql
/blocks
/pgxtype $pgx
/sidlease $pgx
/gormplugin $gorm
/cmd/ulidflake $pgx
/internal/bigint"
bad=0
while read -r pkg want; do
	got=$(needs "$mod$pkg")
	printf '%-22s needs %s\n' "${pkg:-/ (root)}" "${got:-the standard library only}"
	if [ "$got" != "$want" ]; then
		echo "  want ${want:-the standard library only}: fix the package or the README's Install section"
		bad=1
	fi
done <<<"$list"
listed=$(echo "$list" | wc -l) have=$(go list $mod/... | wc -l)
if [ "$have" -ne "$listed" ]; then
	echo "the module has $have packages, this list $listed: add the new one"
	bad=1
fi

mods=$(go list -m all)
echo "$mods"
echo "$(echo "$mods" | wc -l) modules; go mod graph: $(go mod graph | wc -l) lines"
if echo "$mods" | grep -Ei 'testcontainers|moby|docker|containerd|sqlite|glebarez|modernc|opentelemetry|gonum|ent$|entgo|uptrace|sqlc'; then
	echo "users' graph holds a test, container or example module (above)"
	bad=1
fi

mkdir "$tmp/otel"
cd "$tmp/otel"
cat > main.go <<'GO'
package main

import (
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/otelulidflake"
)

func main() {
	o, _ := otelulidflake.NewObserver(noop.NewMeterProvider())
	_, _ = flake.NewGenerator(flake.WithObserver(o))
}
GO
go mod init scratch >/dev/null 2>&1
go mod edit -require=$mod@v0.0.0 -replace=$mod="$root" -require=$mod/otelulidflake@v0.0.0 -replace=$mod/otelulidflake="$root/otelulidflake"
go mod tidy >/dev/null 2>&1
go build ./...
want="github.com/cespare/xxhash/v2 go.opentelemetry.io/otel go.opentelemetry.io/otel/metric" # xxhash: otel/attribute's
got=$(go list -deps -f '{{with .Module}}{{.Path}}{{end}}' . | grep -Fvx -e scratch -e $mod -e $mod/otelulidflake | sort -u | paste -sd' ' -)
printf '%-22s links %s\n' /otelulidflake "$got"
if [ "$got" != "$want" ]; then
	echo "  want $want: the adapter links more than OpenTelemetry's API"
	bad=1
fi
exit $bad
