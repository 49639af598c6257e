#!/usr/bin/env bash
# Builds a PostgreSQL image from Debian packages, for machines that cannot
# pull images from a registry. The test harness (internal/pgtest) runs it by
# itself when it needs an image; by hand:
#
#   internal/pgtest/image/build.sh 15  ->  localhost/ulidflake/postgres:15  (Debian bookworm)
#   internal/pgtest/image/build.sh 17  ->  localhost/ulidflake/postgres:17  (Debian trixie)
#   internal/pgtest/image/build.sh 18  ->  localhost/ulidflake/postgres:18  (Debian forky)
#   internal/pgtest/image/build.sh 19  ->  localhost/ulidflake/postgres:19  (forky and experimental)
#
# It bootstraps a root file system with mmdebstrap from the Debian mirror
# this machine's apt is configured with, then builds an image FROM scratch.
# The image has PostgreSQL with its contrib modules, and pgbouncer. The
# entrypoint (docker-entrypoint.sh beside this file) behaves like the
# official image's, so the testcontainers-go postgres module runs it
# unchanged. The image carries a label with a hash of this recipe: when an
# image with the same recipe exists, the script does nothing; when the
# recipe changed, it builds the image again. Needs root (mmdebstrap), which
# it installs with apt when missing.
set -euo pipefail

version=${1:?usage: $0 15|17|18|19}
aptopts=()
extra= # a second suite, for the packages of postgresql-$version only
case "$version" in
	15) suite=bookworm ;;
	17) suite=trixie ;;
	# forky (testing) Release files can be past their Valid-Until date on
	# snapshot mirrors; the packages are still signed and checked.
	18) suite=forky; aptopts=(--aptopt='Acquire::Check-Valid-Until "false"') ;;
	# 19 is a release candidate, in experimental only: forky, and
	# experimental for the packages built from postgresql-19's source (the
	# server, its client, libpq5). Debian ranks experimental below forky;
	# a pin in the image lifts those packages, so that apt there (the
	# extension's build, extension/image) takes them from it too.
	19) suite=forky; aptopts=(--aptopt='Acquire::Check-Valid-Until "false"') extra=experimental ;;
	*) echo "$0: no recipe for PostgreSQL $version (15, 17, 18 or 19)" >&2; exit 2 ;;
esac
image=localhost/ulidflake/postgres:$version
here=$(cd "$(dirname "$0")" && pwd)
# The recipe: this script and the entrypoint (internal/pgtest computes the
# same hash from its embedded copies).
recipe=$(cat "$here/build.sh" "$here/docker-entrypoint.sh" | sha256sum | cut -c1-16)

if [ "$(docker image inspect --format '{{index .Config.Labels "org.ulidflake.recipe"}}' "$image" 2>/dev/null)" = "$recipe" ]; then
	echo "$image is present"
	exit 0
fi
old=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)

if ! command -v mmdebstrap >/dev/null; then
	# Builds of several versions may run at once: one installs.
	exec 9>"${TMPDIR:-/tmp}/ulidflake-mmdebstrap.lock"
	flock 9
	if ! command -v mmdebstrap >/dev/null; then
		echo "installing mmdebstrap" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -qq -o DPkg::Lock::Timeout=600 mmdebstrap >/dev/null 2>&1 ||
			{ apt-get update -qq -o DPkg::Lock::Timeout=600 &&
				apt-get install -y -qq -o DPkg::Lock::Timeout=600 mmdebstrap >/dev/null; }
	fi
	exec 9>&-
fi

# The Debian mirror apt already uses here: the first URI of a non-security
# Debian source, in deb822 (.sources) or one-line (.list) form.
mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
	awk '/^URIs:/ {uri=$2} /^Suites:/ && uri != "" && $0 !~ /security/ {print uri; exit}')
if [ -z "$mirror" ]; then
	mirror=$(grep -hE '^deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		grep -v security | awk '{print $2; exit}')
fi
if [ -z "$mirror" ]; then
	echo "$0: no Debian mirror found in /etc/apt/sources.list*" >&2
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mirrors=("$mirror")
hooks=()
if [ -n "$extra" ]; then
	mirrors=("deb $mirror $suite main" "deb $mirror $extra main")
	printf 'Package: src:postgresql-%s\nPin: release a=%s\nPin-Priority: 500\n' "$version" "$extra" >"$work/postgresql-$version.pref"
	hooks=(--setup-hook='mkdir -p "$1/etc/apt/preferences.d"'
		--setup-hook="copy-in $work/postgresql-$version.pref /etc/apt/preferences.d")
fi
echo "building $image from $suite${extra:+ and $extra} at $mirror" >&2
bin=/usr/lib/postgresql/$version/bin
mmdebstrap --variant=apt --quiet "${aptopts[@]}" "${hooks[@]}" \
	--include="postgresql-$version,pgbouncer,mawk,gzip,tzdata" \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--essential-hook='mkdir -p "$1/etc/postgresql-common" && echo "create_main_cluster = false" > "$1/etc/postgresql-common/createcluster.conf"' \
	--customize-hook="copy-in $here/docker-entrypoint.sh /usr/local/bin" \
	--customize-hook='chmod 755 "$1/usr/local/bin/docker-entrypoint.sh"' \
	--customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/*' \
	"$suite" "$work/rootfs.tar" "${mirrors[@]}"

# docker build rather than docker import: the Engine here (20.10) takes no
# STOPSIGNAL in import --change. FROM scratch needs no registry.
cat > "$work/Dockerfile" <<DOCKERFILE
FROM scratch
ADD rootfs.tar /
LABEL org.ulidflake.recipe=$recipe
RUN mkdir -p /docker-entrypoint-initdb.d /var/lib/postgresql/data /var/run/postgresql \\
 && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql \\
 && chmod 2777 /var/run/postgresql
ENV PATH=$bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ENV PGDATA=/var/lib/postgresql/data
ENV LANG=C.UTF-8
USER postgres
WORKDIR /var/lib/postgresql
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
EXPOSE 5432
STOPSIGNAL SIGINT
DOCKERFILE
DOCKER_BUILDKIT=0 docker build --quiet --tag "$image" "$work" 2>&1 >/dev/null | grep -v -e DEPRECATED -e BuildKit -e environment-variable >&2 || true
docker image inspect "$image" >/dev/null
# The image of the previous recipe, unless a container still uses it.
[ -z "$old" ] || docker image rm "$old" >/dev/null 2>&1 || true
echo "built $image" >&2
