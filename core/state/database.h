#pragma once
// Package state: Pando's durable state through Qt Sql, on SQLite (the embedded default: WAL,
// foreign keys, busy timeout) or PostgreSQL (QPSQL), with the same numbered migrations and
// the same SQL on both.
//
// Threading: a Database may be used from any thread; each thread gets its own QSqlDatabase
// connection, opened on first use and closed when the thread ends.

#include "adapters/api/error.h"

#include <QSqlDatabase>
#include <QString>
#include <QUrl>

namespace pando::core {

struct DatabaseConfig {
    enum class Driver { Sqlite, Postgres };
    Driver driver = Driver::Sqlite;
    QString sqlitePath; // for Sqlite
    QString host;       // for Postgres
    int port = 5432;
    QString name;
    QString user;
    QString password;

    // "sqlite:///path/to/pando.db" or "postgres://user:pass@host:port/name"
    static Result<DatabaseConfig> fromUrl(const QString &url);
};

class Database {
public:
    explicit Database(DatabaseConfig config);
    ~Database();
    Database(const Database &) = delete;
    Database &operator=(const Database &) = delete;

    // Opens the calling thread's connection and runs the migrations not yet applied.
    Status open();
    // The calling thread's connection, opened on first use.
    Result<QSqlDatabase> connection();
    const DatabaseConfig &config() const { return m_config; }
    bool isPostgres() const { return m_config.driver == DatabaseConfig::Driver::Postgres; }
    // The highest migration applied.
    Result<int> schemaVersion();

private:
    struct Private;
    DatabaseConfig m_config;
    QString m_connectionPrefix;
};

} // namespace pando::core
