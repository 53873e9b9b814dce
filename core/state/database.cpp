#include "database.h"

#include "migrations.h"
#include "sql.h"

#include "core/state/datadir.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QThreadStorage>
#include <atomic>
#include <fcntl.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

// The connections the current thread opened, removed when the thread ends: QThreadStorage
// deletes its value from the finishing thread itself (for the main thread, when the
// application object goes), which is the one thread allowed to close a Qt Sql connection.
struct ThreadConnections {
    QStringList names;
    ~ThreadConnections()
    {
        for (const QString &name : std::as_const(names))
            QSqlDatabase::removeDatabase(name);
    }
};

Q_GLOBAL_STATIC(QThreadStorage<ThreadConnections *>, g_threadConnections)

std::atomic<quint64> g_nextDatabase{1};

ThreadConnections &threadConnections()
{
    if (!g_threadConnections->hasLocalData())
        g_threadConnections->setLocalData(new ThreadConnections);
    return *g_threadConnections->localData();
}

QString threadConnectionName(const QString &prefix)
{
    return prefix + QString::number(reinterpret_cast<quintptr>(QThread::currentThreadId()), 16);
}

Status execPlain(QSqlDatabase &db, const QString &sql, bool postgres)
{
    QSqlQuery query(db);
    if (!query.exec(sql))
        return std::unexpected(detail::sqlError(query.lastError(), sql, postgres));
    return {};
}

} // namespace

Result<DatabaseConfig> DatabaseConfig::fromUrl(const QString &text)
{
    const QString where = u"database url"_s;
    if (text.trimmed().isEmpty())
        return fail(ErrorCode::Invalid, u"is empty; expected sqlite:///path/to/pando.db or postgres://user@host/db"_s,
                    where);
    const QUrl url(text, QUrl::StrictMode);
    if (!url.isValid())
        return fail(ErrorCode::Invalid, u"is not a valid URL: "_s + url.errorString(), where);
    const QString scheme = url.scheme().toLower();
    DatabaseConfig config;
    if (scheme == "sqlite"_L1) {
        config.driver = Driver::Sqlite;
        if (!url.host().isEmpty())
            return fail(ErrorCode::Invalid,
                        u"sqlite URL has a host (\""_s + url.host() +
                            u"\"); write an absolute path after three slashes: sqlite:///var/lib/pando/pando.db"_s,
                        where);
        const QString path = url.path(QUrl::FullyDecoded);
        if (path.isEmpty() || !path.startsWith(u'/') || path.endsWith(u'/'))
            return fail(ErrorCode::Invalid,
                        u"sqlite URL needs an absolute file path, as in sqlite:///var/lib/pando/pando.db"_s, where);
        config.sqlitePath = QDir::cleanPath(path);
        config.name = config.sqlitePath;
        return config;
    }
    if (scheme == "postgres"_L1 || scheme == "postgresql"_L1) {
        config.driver = Driver::Postgres;
        config.host = url.host();
        if (config.host.isEmpty())
            return fail(ErrorCode::Invalid, u"postgres URL has no host, as in postgres://user@host:5432/pando"_s,
                        where);
        config.port = url.port(5432);
        if (config.port <= 0 || config.port > 65535)
            return fail(ErrorCode::Invalid,
                        u"postgres URL has port "_s + QString::number(config.port) + u", outside 1..65535"_s, where);
        QString name = url.path(QUrl::FullyDecoded);
        if (name.startsWith(u'/'))
            name.remove(0, 1);
        if (name.isEmpty() || name.contains(u'/'))
            return fail(ErrorCode::Invalid,
                        u"postgres URL needs one database name as its path, as in postgres://user@host/pando"_s, where);
        config.name = name;
        config.user = url.userName(QUrl::FullyDecoded);
        config.password = url.password(QUrl::FullyDecoded);
        if (url.hasQuery() || url.hasFragment())
            return fail(ErrorCode::Invalid, u"postgres URL has a query or fragment, which Pando does not read"_s,
                        where);
        return config;
    }
    return fail(ErrorCode::Invalid,
                u"has scheme \""_s + url.scheme() + u"\"; expected sqlite, postgres or postgresql"_s, where);
}

Database::Database(DatabaseConfig config)
    : m_config(std::move(config)),
      m_connectionPrefix(u"pando-state-"_s + QString::number(g_nextDatabase.fetch_add(1)) + u'-')
{}

Database::~Database()
{
    // The calling thread's connection goes now; those of other threads go when their threads end
    // (a connection may only be closed by its own thread).
    const QString name = threadConnectionName(m_connectionPrefix);
    if (QSqlDatabase::contains(name)) {
        QSqlDatabase::removeDatabase(name);
        threadConnections().names.removeAll(name);
    }
}

namespace {

// SQLite makes its files with the process's umask, and its -wal and -shm files with the mode of
// the database file: so the database is made 0600 before SQLite first opens it, and one found
// readable by others (made by an older Pando) is made private with its companions.
Status makePrivateDatabaseFiles(const QString &path)
{
    if (path.isEmpty() || path.startsWith(u':') || path.startsWith(u"file:"_s))
        return {};
    const QByteArray native = QFile::encodeName(path);
    const int fd = ::open(native.constData(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0)
        ::close(fd);
    for (const QString &file : QStringList{path, path + u"-wal"_s, path + u"-shm"_s, path + u"-journal"_s}) {
        auto changed = makePrivateFile(file);
        if (!changed)
            return std::unexpected(changed.error());
        if (*changed)
            qWarning("state: %s was readable by other users; it is private (0600) now", qPrintable(file));
    }
    return {};
}

} // namespace

Result<QSqlDatabase> Database::connection()
{
    const QString name = threadConnectionName(m_connectionPrefix);
    const bool postgres = isPostgres();
    const QString where =
        postgres ? u"postgres://"_s + m_config.host + u':' + QString::number(m_config.port) + u'/' + m_config.name
                 : m_config.sqlitePath;
    QSqlDatabase db;
    if (QSqlDatabase::contains(name)) {
        db = QSqlDatabase::database(name, false);
        if (db.isOpen())
            return db;
    } else {
        const QString driver = postgres ? u"QPSQL"_s : u"QSQLITE"_s;
        if (!QSqlDatabase::isDriverAvailable(driver))
            return fail(ErrorCode::Unavailable, u"the Qt Sql driver "_s + driver + u" is not installed"_s, where,
                        postgres ? u"install libqt6sql6-psql"_s : u"install libqt6sql6-sqlite"_s);
        db = QSqlDatabase::addDatabase(driver, name);
        threadConnections().names.append(name);
        if (postgres) {
            db.setHostName(m_config.host);
            db.setPort(m_config.port);
            db.setDatabaseName(m_config.name);
            db.setUserName(m_config.user);
            db.setPassword(m_config.password);
            db.setConnectOptions(u"connect_timeout=5"_s);
        } else {
            db.setDatabaseName(m_config.sqlitePath);
        }
    }
    if (!postgres) {
        const QFileInfo file(m_config.sqlitePath);
        if (!QDir().mkpath(file.absolutePath()))
            return fail(ErrorCode::Unavailable, u"cannot create the database's directory "_s + file.absolutePath(),
                        where);
        if (auto made = makePrivateDatabaseFiles(m_config.sqlitePath); !made)
            return std::unexpected(made.error());
    }
    if (!db.open())
        return fail(ErrorCode::Unavailable, u"cannot open the database: "_s + db.lastError().text(), where);
    // Per-connection settings: SQLite keeps them per connection, not in the file.
    const QStringList settings = postgres ? QStringList{u"SET client_min_messages TO WARNING"_s}
                                          : QStringList{u"PRAGMA journal_mode=WAL"_s, u"PRAGMA foreign_keys=ON"_s,
                                                        u"PRAGMA busy_timeout=5000"_s, u"PRAGMA synchronous=NORMAL"_s};
    for (const QString &sql : settings) {
        if (auto ok = execPlain(db, sql, postgres); !ok) {
            db.close();
            return std::unexpected(ok.error());
        }
    }
    return db;
}

Result<int> Database::schemaVersion()
{
    auto db = connection();
    if (!db)
        return std::unexpected(db.error());
    if (!db->tables().contains(u"schema_migrations"_s))
        return 0;
    auto query = detail::run(*db, isPostgres(), u"SELECT COALESCE(MAX(version), 0) FROM schema_migrations"_s, {},
                             u"read schema version"_s);
    if (!query)
        return std::unexpected(query.error());
    const int version = query->next() ? query->value(0).toInt() : 0;
    query->finish();
    return version;
}

Status Database::open()
{
    auto db = connection();
    if (!db)
        return std::unexpected(db.error());
    const bool postgres = isPostgres();
    if (!db->tables().contains(u"schema_migrations"_s)) {
        // IF NOT EXISTS: another process may create it between our check and here.
        if (auto ok = execPlain(*db,
                                u"CREATE TABLE IF NOT EXISTS schema_migrations ("
                                " version INTEGER NOT NULL PRIMARY KEY, applied_ms BIGINT NOT NULL)"_s,
                                postgres);
            !ok)
            return ok;
    }
    auto current = schemaVersion();
    if (!current)
        return std::unexpected(current.error());
    for (const detail::Migration &migration : detail::migrations()) {
        if (migration.version <= *current)
            continue;
        const QString what = u"migration "_s + QString::number(migration.version) + u" ("_s + migration.name + u')';
        auto tx = detail::Transaction::begin(*this, what);
        if (!tx)
            return std::unexpected(tx.error());
        // Another process may be migrating too: take the lock, then look again.
        if (postgres) {
            if (auto lock = tx->run(u"LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE"_s, {}, what); !lock)
                return std::unexpected(lock.error());
        }
        auto applied =
            tx->run(u"SELECT COUNT(*) FROM schema_migrations WHERE version = ?"_s, {migration.version}, what);
        if (!applied)
            return std::unexpected(applied.error());
        const bool already = applied->next() && applied->value(0).toInt() > 0;
        applied->finish();
        if (already)
            continue;
        for (const QString &statement : migration.statements) {
            auto ok = tx->run(statement, {}, what);
            if (!ok)
                return std::unexpected(ok.error());
            ok->finish();
        }
        if (auto ok = tx->run(u"INSERT INTO schema_migrations (version, applied_ms) VALUES (?, ?)"_s,
                              {migration.version, QDateTime::currentMSecsSinceEpoch()}, what);
            !ok)
            return std::unexpected(ok.error());
        if (auto ok = tx->commit(); !ok)
            return ok;
    }
    return {};
}

} // namespace pando::core
