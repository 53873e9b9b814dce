#include "sql.h"

#include <QMutex>
#include <QSqlError>
#include <map>
#include <memory>
#include <optional>
#include <utility>

using namespace Qt::StringLiterals;

namespace pando::core::detail {

QVariant text(const QString &value)
{
    return value.isNull() ? QVariant(u""_s) : QVariant(value);
}

Error unknownWord(const QString &column, const QString &row, const QString &word)
{
    return Error{ErrorCode::Internal,
                 u"%1 of %2 holds \"%3\", which this version of Pando does not know"_s.arg(column, row, word), column,
                 u"the database was written by a newer Pando or edited by hand; run the version that wrote it"_s};
}

namespace {

ErrorCode postgresCode(const QString &state)
{
    // Every error the server reports carries an SQLSTATE; none means libpq lost the connection
    // (the server closed it, crashed or restarted).
    if (state.isEmpty())
        return ErrorCode::Unavailable;
    if (state == "23505"_L1)
        return ErrorCode::Conflict; // unique_violation
    if (state == "23503"_L1)
        return ErrorCode::NotFound; // foreign_key_violation
    if (state == "40001"_L1 || state == "40P01"_L1)
        return ErrorCode::Conflict; // serialization failure, deadlock: the caller may retry
    if (state.startsWith("08"_L1) || state == "57P01"_L1 || state == "57P02"_L1 || state == "57P03"_L1 ||
        state == "53300"_L1)
        return ErrorCode::Unavailable; // connection exceptions, shutdown, too many connections
    return ErrorCode::Internal;
}

ErrorCode sqliteCode(const QString &native, const QString &text)
{
    bool ok = false;
    const int code = native.toInt(&ok);
    if (!ok)
        return ErrorCode::Internal;
    switch (code) {
    case 1555: // SQLITE_CONSTRAINT_PRIMARYKEY
    case 2067: // SQLITE_CONSTRAINT_UNIQUE
        return ErrorCode::Conflict;
    case 787: // SQLITE_CONSTRAINT_FOREIGNKEY
        return ErrorCode::NotFound;
    case 19: // SQLITE_CONSTRAINT without extended codes: tell by the message
        if (text.contains("UNIQUE"_L1, Qt::CaseInsensitive))
            return ErrorCode::Conflict;
        if (text.contains("FOREIGN KEY"_L1, Qt::CaseInsensitive))
            return ErrorCode::NotFound;
        return ErrorCode::Invalid;
    }
    switch (code & 0xff) {
    case 5:  // SQLITE_BUSY: the busy timeout ran out
    case 6:  // SQLITE_LOCKED
    case 10: // SQLITE_IOERR
    case 14: // SQLITE_CANTOPEN
        return ErrorCode::Unavailable;
    }
    return ErrorCode::Internal;
}

} // namespace

Error sqlError(const QSqlError &error, const QString &what, bool postgres)
{
    ErrorCode code =
        postgres ? postgresCode(error.nativeErrorCode()) : sqliteCode(error.nativeErrorCode(), error.databaseText());
    if (code == ErrorCode::Internal && error.type() == QSqlError::ConnectionError)
        code = ErrorCode::Unavailable;
    QString message = error.databaseText().trimmed();
    if (message.isEmpty())
        message = error.driverText().trimmed();
    if (!error.nativeErrorCode().isEmpty() && !message.contains(error.nativeErrorCode()))
        message += u" (code "_s + error.nativeErrorCode() + u')';
    return Error{code, message, u"database: "_s + what, {}};
}

namespace {

// Runs the statement; on failure `query` is left alive so the caller decides what happens
// before its destructor runs.
std::optional<Error> runInto(QSqlQuery &query, bool postgres, const QString &sql, const QVariantList &values,
                             const QString &what)
{
    query.setForwardOnly(true);
    // PostgreSQL cannot PREPARE DDL or LOCK; a statement without values has nothing to bind.
    if (values.isEmpty()) {
        if (!query.exec(sql))
            return sqlError(query.lastError(), what, postgres);
        return std::nullopt;
    }
    if (!query.prepare(sql))
        return sqlError(query.lastError(), what, postgres);
    for (const QVariant &value : values)
        query.addBindValue(value);
    if (!query.exec())
        return sqlError(query.lastError(), what, postgres);
    return std::nullopt;
}

// SQLite lets one writer at a time into a file, and a writer that finds the lock taken sleeps
// in SQLite's busy handler for 1, 2, 5, 10 ms... before it looks again, while a write here holds
// the lock for a fraction of a millisecond: under concurrent writers most of the time went to
// those sleeps. So writers of this process first queue on a lock per database file, which wakes
// the next one the moment the lock is free; the busy timeout still covers other processes. The
// lock is recursive because a thread inside a transaction may run more statements, and it is
// waited for no longer than the busy timeout, after which SQLite's own lock decides as before.
constexpr int kGateWaitMs = 5000; // PRAGMA busy_timeout in database.cpp

struct Gates {
    QMutex mutex;
    std::map<QString, std::unique_ptr<QRecursiveMutex>> byFile; // a few files per process, kept
};
Q_GLOBAL_STATIC(Gates, g_gates)

QRecursiveMutex *writeGate(const QSqlDatabase &db, bool postgres)
{
    if (postgres)
        return nullptr; // PostgreSQL locks rows, and waits for a lock without sleeping
    QMutexLocker lock(&g_gates->mutex);
    std::unique_ptr<QRecursiveMutex> &gate = g_gates->byFile[db.databaseName()];
    if (!gate)
        gate = std::make_unique<QRecursiveMutex>();
    return gate.get();
}

// Returns the gate locked, or nullptr when there is none or it was not had in time.
QRecursiveMutex *enterGate(const QSqlDatabase &db, bool postgres)
{
    QRecursiveMutex *gate = writeGate(db, postgres);
    return gate && gate->tryLock(kGateWaitMs) ? gate : nullptr;
}

// A statement that writes, run outside a transaction (its own autocommit transaction).
bool isWrite(const QString &sql)
{
    const QStringView head = QStringView(sql).trimmed().left(8);
    for (const auto &verb : {"INSERT"_L1, "UPDATE"_L1, "DELETE"_L1, "REPLACE"_L1})
        if (head.startsWith(verb, Qt::CaseInsensitive))
            return true;
    return false;
}

// A PostgreSQL connection whose server went away stays "open" to Qt; close it so that the
// thread's next Database::connection() opens a new one instead of failing forever.
void closeIfLost(const QSqlDatabase &db, bool postgres, const Error &error)
{
    if (postgres && error.code == ErrorCode::Unavailable) {
        QSqlDatabase shared = db; // copies share the driver
        shared.close();
    }
}

} // namespace

Result<QSqlQuery> run(Database &database, const QString &sql, const QVariantList &values, const QString &what)
{
    auto db = database.connection();
    if (!db)
        return std::unexpected(db.error());
    return run(*db, database.isPostgres(), sql, values, what);
}

Result<QSqlQuery> run(const QSqlDatabase &db, bool postgres, const QString &sql, const QVariantList &values,
                      const QString &what)
{
    std::optional<Error> error;
    {
        // An autocommit write has committed when exec() returns, so the gate is held just that long.
        QRecursiveMutex *gate = !postgres && isWrite(sql) ? enterGate(db, postgres) : nullptr;
        QSqlQuery query(db);
        error = runInto(query, postgres, sql, values, what);
        if (gate)
            gate->unlock();
        if (!error)
            return query;
    }
    closeIfLost(db, postgres, *error);
    return std::unexpected(*error);
}

Result<QSqlQuery> Transaction::run(const QString &sql, const QVariantList &values, const QString &what)
{
    std::optional<Error> error;
    {
        QSqlQuery query(m_db);
        error = runInto(query, m_postgres, sql, values, what);
        if (!error)
            return query;
        // A failed statement aborts a PostgreSQL transaction, and QPSQL's DEALLOCATE of the
        // prepared statement would then fail too ("current transaction is aborted"): end the
        // transaction first, then let the query go.
        end();
    }
    closeIfLost(m_db, m_postgres, *error);
    return std::unexpected(*error);
}

Result<Transaction> Transaction::begin(Database &database, const QString &what)
{
    auto db = database.connection();
    if (!db)
        return std::unexpected(db.error());
    const bool postgres = database.isPostgres();
    if (postgres) {
        if (!db->transaction()) {
            const Error error = sqlError(db->lastError(), u"begin "_s + what, postgres);
            closeIfLost(*db, postgres, error);
            return std::unexpected(error);
        }
        return Transaction(*db, postgres, what, nullptr);
    }
    QRecursiveMutex *gate = enterGate(*db, postgres);
    // QSqlDatabase::transaction() would issue a plain (deferred) BEGIN on SQLite.
    QSqlQuery begin(*db);
    if (!begin.exec(u"BEGIN IMMEDIATE"_s)) {
        if (gate)
            gate->unlock();
        return std::unexpected(sqlError(begin.lastError(), u"begin "_s + what, postgres));
    }
    return Transaction(*db, postgres, what, gate);
}

Transaction::Transaction(Transaction &&other) noexcept
    : m_db(other.m_db), m_postgres(other.m_postgres), m_open(other.m_open), m_what(std::move(other.m_what)),
      m_gate(std::exchange(other.m_gate, nullptr))
{
    other.m_open = false;
}

Transaction::~Transaction()
{
    end();
}

void Transaction::end()
{
    if (m_open) {
        m_open = false;
        m_db.rollback();
    }
    if (m_gate)
        std::exchange(m_gate, nullptr)->unlock();
}

Status Transaction::commit()
{
    m_open = false;
    if (!m_db.commit()) {
        const Error error = sqlError(m_db.lastError(), u"commit "_s + m_what, m_postgres);
        m_db.rollback();
        end();
        closeIfLost(m_db, m_postgres, error);
        return std::unexpected(error);
    }
    end();
    return {};
}

} // namespace pando::core::detail
