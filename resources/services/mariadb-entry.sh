#!/bin/sh
# Starts MariaDB. On the first start (an empty /var/lib/mysql) it creates the system tables, the
# database MYSQL_DATABASE and the user MYSQL_USER (password MYSQL_PASSWORD) with every right on
# it, the variables the official mysql and mariadb images read. root keeps unix-socket
# authentication only, so it cannot log in over the network.
set -eu
: "${MYSQL_USER:?MYSQL_USER must be set}"
: "${MYSQL_PASSWORD:?MYSQL_PASSWORD must be set}"
: "${MYSQL_DATABASE:?MYSQL_DATABASE must be set}"
datadir=/var/lib/mysql
sql_string() { printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g"; }
sql_name() { printf '%s' "$1" | sed 's/`/``/g'; }

mkdir -p "$datadir" /run/mysqld
chown mysql:mysql "$datadir" /run/mysqld
if [ ! -d "$datadir/mysql" ]; then
    mariadb-install-db --user=mysql --datadir="$datadir" --skip-test-db --auth-root-authentication-method=socket \
        >/dev/null
    # Bootstrap mode: no server listens while the user is made.
    mariadbd --user=mysql --datadir="$datadir" --bootstrap --skip-networking <<SQL
FLUSH PRIVILEGES;
CREATE DATABASE IF NOT EXISTS \`$(sql_name "$MYSQL_DATABASE")\`;
CREATE USER '$(sql_string "$MYSQL_USER")'@'%' IDENTIFIED BY '$(sql_string "$MYSQL_PASSWORD")';
GRANT ALL ON \`$(sql_name "$MYSQL_DATABASE")\`.* TO '$(sql_string "$MYSQL_USER")'@'%';
SQL
fi
exec mariadbd --user=mysql --datadir="$datadir" --bind-address=0.0.0.0 --skip-name-resolve
