#!/bin/sh
# Starts PostgreSQL. On the first start (an empty $PGDATA) it creates the cluster with the
# superuser POSTGRES_USER (password POSTGRES_PASSWORD) and the database POSTGRES_DB, the same
# variables the official postgres image reads. Clients connect over TCP with a password
# (scram-sha-256); inside the container the unix socket trusts local users.
set -eu
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
PGDATA=${PGDATA:-/var/lib/postgresql/data}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

mkdir -p "$PGDATA" /var/run/postgresql
chown postgres:postgres "$PGDATA" /var/run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    chown postgres "$pwfile"
    as_postgres "$bin/initdb" -D "$PGDATA" -U "$user" --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
        # Single-user mode: no server listens while the database is made, so a client that
        # connects is never early.
        printf 'CREATE DATABASE "%s";\n' "$(printf '%s' "$db" | sed 's/"/""/g')" |
            as_postgres "$bin/postgres" --single -j -D "$PGDATA" postgres >/dev/null
    fi
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups "$bin/postgres" -D "$PGDATA" -c listen_addresses='*'
