#!/usr/bin/env bash
# Builds localhost/ulidflake/postgres-ext:N, the test image with
# ulid_flake_ext installed, FROM localhost/ulidflake/postgres:N (which must
# exist: internal/pgtest builds it, or internal/pgtest/image/build.sh N).
# The test harness (pgtest.MainExtension) runs it by itself; by hand:
#
#   extension/image/build.sh 18
#
# The image carries a hash of the extension's sources, of this recipe and
# of the base image's ID: when an image with the same hash exists, the
# script does nothing; otherwise it builds it again. Needs Docker, and the
# Debian mirror of the base image's apt sources (from inside a build).
#
# The module must be built against the headers of the very server that
# loads it: after the build, the script compares postgres --version in the
# image with the headers' pg_config --version (recorded by the build in
# ulid_flake_ext.built-for), and removes the image and fails when they
# differ.
set -euo pipefail

version=${1:?usage: $0 15|17|18}
base=localhost/ulidflake/postgres:$version
image=localhost/ulidflake/postgres-ext:$version
ext=$(cd "$(dirname "$0")/.." && pwd)

baseid=$(docker image inspect --format '{{.Id}}' "$base" 2>/dev/null) || {
	echo "$0: no image $base: build it first (internal/pgtest/image/build.sh $version)" >&2
	exit 1
}
# The build context: the extension's files, and the module as it was
# before issue #40's check at a server's first ID (commit 84ac12b, the
# same symbol ulid_flake_next_1_2), which the image carries as
# ulid_flake_ext_pre40.so for BenchmarkDefaults to compare with. Without
# the repository's history (a source tarball) that file is empty, and the
# image has no baseline.
baseline=84ac12b
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
(cd "$ext" && cp Makefile ulid_flake_ext.control ulid_flake_ext--1.0.sql ulid_flake_ext--1.0--1.1.sql \
	ulid_flake_ext--1.1--1.2.sql ulid_flake_ext--1.2.sql ulid_flake_ext.c "$ctx/")
git -C "$ext" show "$baseline:extension/ulid_flake_ext.c" >"$ctx/ulid_flake_ext_pre40.c" 2>/dev/null || : >"$ctx/ulid_flake_ext_pre40.c"
hash=$( (cd "$ctx" && cat Makefile ulid_flake_ext.control ulid_flake_ext--1.0.sql ulid_flake_ext--1.0--1.1.sql \
	ulid_flake_ext--1.1--1.2.sql ulid_flake_ext--1.2.sql ulid_flake_ext.c ulid_flake_ext_pre40.c \
	"$ext/image/Dockerfile" "$ext/image/build.sh"
	echo "$baseid") | sha256sum | cut -c1-16)

if [ "$(docker image inspect --format '{{index .Config.Labels "org.ulidflake.extension"}}' "$image" 2>/dev/null)" = "$hash" ]; then
	echo "$image is present"
	exit 0
fi
old=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
echo "building $image FROM $base" >&2
DOCKER_BUILDKIT=0 docker build --quiet --force-rm --tag "$image" \
	--build-arg BASE="$base" --build-arg PG_MAJOR="$version" --build-arg HASH="$hash" \
	--build-arg BASE_USER="$(docker image inspect --format '{{.Config.User}}' "$base" | sed 's/^$/root/')" \
	-f "$ext/image/Dockerfile" "$ctx" 2>&1 >/dev/null | grep -v -e DEPRECATED -e BuildKit -e environment-variable >&2 || true
[ "$(docker image inspect --format '{{index .Config.Labels "org.ulidflake.extension"}}' "$image" 2>/dev/null)" = "$hash" ] || {
	echo "$0: building $image failed" >&2
	exit 1
}
# The server in the image is the one the module was built for, or the
# image goes.
built=$(docker run --rm --entrypoint cat "$image" "/usr/share/postgresql/$version/extension/ulid_flake_ext.built-for" 2>&1) || built="(none: $built)"
server=$(docker run --rm --entrypoint "/usr/lib/postgresql/$version/bin/postgres" "$image" --version 2>&1) || server="(none: $server)"
if [ "PostgreSQL ${server#postgres (PostgreSQL) }" != "$built" ]; then
	docker image rm -f "$image" >/dev/null 2>&1 || true
	echo "$0: $image: the server is not the one the module was built for" >&2
	echo "  server:  $server" >&2
	echo "  headers: $built" >&2
	echo "  The image was removed: the server would not load the module, or not safely." >&2
	exit 1
fi
# The previous image, unless a container still uses it. The build stage stays in
# the cache: a change to the C source rebuilds from the installed compiler.
[ -z "$old" ] || [ "$old" = "$(docker image inspect --format '{{.Id}}' "$image")" ] || docker image rm "$old" >/dev/null 2>&1 || true
echo "built $image" >&2
