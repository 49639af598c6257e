#!/bin/bash
# Entrypoint of the locally built Postgres images. It behaves like the
# official postgres image's entrypoint where testcontainers-go relies on it:
# POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB, POSTGRES_HOST_AUTH_METHOD,
# POSTGRES_INITDB_ARGS and PGDATA; initdb only into an empty data directory;
# /docker-entrypoint-initdb.d/*.sql|*.sql.gz|*.sh run on a temporary server
# that listens on no TCP address; then "PostgreSQL init process complete" and
# exec postgres, listening on all addresses. The server therefore logs
# "database system is ready to accept connections" twice on first start.
set -Eeo pipefail

if [ "${1:0:1}" = '-' ]; then
	set -- postgres "$@"
fi
if [ "$1" != 'postgres' ]; then
	exec "$@"
fi

: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
export PGDATA

mkdir -p "$PGDATA"
chmod 700 "$PGDATA"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
	if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "${POSTGRES_HOST_AUTH_METHOD:-}" != 'trust' ]; then
		echo >&2 'error: the database is uninitialized and POSTGRES_PASSWORD is not set.'
		echo >&2 '       Set POSTGRES_PASSWORD, or POSTGRES_HOST_AUTH_METHOD=trust to allow all connections without one.'
		exit 1
	fi
	pwfile=$(mktemp)
	printf '%s' "${POSTGRES_PASSWORD:-}" > "$pwfile"
	# shellcheck disable=SC2086
	initdb --username="$POSTGRES_USER" --pwfile="$pwfile" -D "$PGDATA" ${POSTGRES_INITDB_ARGS:-}
	rm -f "$pwfile"

	auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
	printf '\nhost all all all %s\n' "$auth" >> "$PGDATA/pg_hba.conf"
	printf "\nlisten_addresses = '*'\n" >> "$PGDATA/postgresql.conf"

	# A temporary server on the Unix socket only, for the init scripts.
	pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p ${PGPORT:-5432}" -w start
	export PGPASSWORD="${POSTGRES_PASSWORD:-}"
	psql=(psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc)
	if [ "$POSTGRES_DB" != 'postgres' ]; then
		"${psql[@]}" --dbname postgres --set db="$POSTGRES_DB" <<-'SQL'
			CREATE DATABASE :"db" ;
		SQL
	fi
	for f in /docker-entrypoint-initdb.d/*; do
		case "$f" in
			*.sh)     echo "running $f"; . "$f" ;;
			*.sql)    echo "running $f"; "${psql[@]}" --dbname "$POSTGRES_DB" -f "$f" ;;
			*.sql.gz) echo "running $f"; gunzip -c "$f" | "${psql[@]}" --dbname "$POSTGRES_DB" ;;
			*)        [ -e "$f" ] && echo "ignoring $f" ;;
		esac
	done
	pg_ctl -D "$PGDATA" -m fast -w stop
	unset PGPASSWORD
	echo
	echo 'PostgreSQL init process complete; ready for start up.'
	echo
fi

exec "$@"
