#include "adapters/services/docker/servicekinds.h"

using namespace Qt::StringLiterals;

namespace pando::adapters::docker::detail {

namespace {

// The official mariadb images from 11 on have only the mariadb-named tools; Debian's and the
// mysql images have the mysql-named ones. U and D carry the user and database.
QStringList mysqlTool(const QString &mariadbName, const QString &mysqlName, const QString &args)
{
    return {u"sh"_s, u"-c"_s,
            u"t=$(command -v %1 || command -v %2) && exec \"$t\" %3"_s.arg(mariadbName, mysqlName, args)};
}

} // namespace

ServiceKind serviceKind(const QString &kind, const ServiceCredentials &c)
{
    ServiceKind k;
    if (kind == u"postgres") {
        k.port = 5432;
        k.dataPath = u"/var/lib/postgresql/data"_s;
        k.env = {{u"POSTGRES_USER"_s, c.user}, {u"POSTGRES_PASSWORD"_s, c.password}, {u"POSTGRES_DB"_s, c.database}};
        k.toolEnv = {{u"PGPASSWORD"_s, c.password}, {u"PGCONNECT_TIMEOUT"_s, u"5"_s}};
        k.readyCommand = {u"psql"_s, u"-h"_s,    u"127.0.0.1"_s, u"-U"_s,      c.user,
                          u"-d"_s,   c.database, u"-tAc"_s,      u"select 1"_s};
        k.dumpCommand = {u"pg_dump"_s, u"-h"_s, u"127.0.0.1"_s, u"-U"_s, c.user, u"-d"_s, c.database};
        k.dumpSuffix = u".sql"_s;
        k.seedCommand = {u"psql"_s,
                         u"-h"_s,
                         u"127.0.0.1"_s,
                         u"-U"_s,
                         c.user,
                         u"-d"_s,
                         c.database,
                         u"-q"_s,
                         u"-v"_s,
                         u"ON_ERROR_STOP=1"_s,
                         u"--single-transaction"_s,
                         u"-f"_s,
                         SeedPath};
    } else if (kind == u"mysql" || kind == u"mariadb") {
        k.port = 3306;
        k.dataPath = u"/var/lib/mysql"_s;
        k.env = {{u"MYSQL_USER"_s, c.user},
                 {u"MYSQL_PASSWORD"_s, c.password},
                 {u"MYSQL_DATABASE"_s, c.database},
                 // The official images want a root password; nobody needs it, so let them pick one.
                 {u"MYSQL_RANDOM_ROOT_PASSWORD"_s, u"yes"_s}};
        k.toolEnv = {{u"MYSQL_PWD"_s, c.password}, {u"U"_s, c.user}, {u"D"_s, c.database}};
        k.readyCommand =
            mysqlTool(u"mariadb"_s, u"mysql"_s, u"-h127.0.0.1 -u\"$U\" --connect-timeout=5 -e 'select 1' \"$D\""_s);
        k.dumpCommand = mysqlTool(u"mariadb-dump"_s, u"mysqldump"_s,
                                  u"-h127.0.0.1 -u\"$U\" --single-transaction --no-tablespaces \"$D\""_s);
        k.dumpSuffix = u".sql"_s;
        k.seedCommand = mysqlTool(u"mariadb"_s, u"mysql"_s, u"-h127.0.0.1 -u\"$U\" \"$D\" < %1"_s.arg(SeedPath));
    } else if (kind == u"redis") {
        k.port = 6379;
        k.dataPath = u"/data"_s;
        k.env = {{u"REDIS_PASSWORD"_s, c.password}};
        // The same line as resources/services/redis-entry.sh, so the official image, which reads
        // no password variable, runs the same way. The password goes in through stdin.
        k.command = {u"sh"_s, u"-c"_s,
                     u"mkdir -p /data && exec redis-server - --dir /data --appendonly yes --protected-mode no "
                     u"<<CONF\nrequirepass \"$REDIS_PASSWORD\"\nCONF\n"_s};
        k.toolEnv = {{u"REDISCLI_AUTH"_s, c.password}};
        k.readyCommand = {u"redis-cli"_s, u"-h"_s, u"127.0.0.1"_s, u"ping"_s};
        k.readyOutput = u"PONG"_s;
        k.dumpCommand = {u"sh"_s, u"-c"_s,
                         u"f=$(mktemp) && redis-cli -h 127.0.0.1 --rdb \"$f\" >/dev/null && cat \"$f\"; r=$?; "
                         u"rm -f \"$f\"; exit $r"_s};
        k.dumpSuffix = u".rdb"_s;
    }
    return k;
}

} // namespace pando::adapters::docker::detail
