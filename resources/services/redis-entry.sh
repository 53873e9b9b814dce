#!/bin/sh
# Starts Redis with the password REDIS_PASSWORD, keeping its data (append-only file and RDB
# snapshots) in /data. The password reaches the server through its configuration on stdin, not
# its command line, which every process on the host could read. Pando runs this same line on
# the official redis image, which reads no password variable of its own.
set -eu
: "${REDIS_PASSWORD:?REDIS_PASSWORD must be set}"
mkdir -p /data
exec redis-server - --dir /data --appendonly yes --protected-mode no <<CONF
requirepass "$REDIS_PASSWORD"
CONF
