#pragma once
// Helpers the repositories share: running a prepared statement with bound values, turning a
// driver's error into an Error, and a write transaction that locks early enough on SQLite.

#include "database.h"

#include "core/vocab/vocab.h"

#include <QRecursiveMutex>
#include <QSqlQuery>
#include <QVariant>
#include <QVariantList>

namespace pando::core::detail {

// Qt binds a null QString as SQL NULL; our text columns are NOT NULL DEFAULT '', so a null
// string is bound as an empty one.
QVariant text(const QString &value);

// Maps a driver error to an ErrorCode: duplicate key → Conflict, a foreign key naming a row that
// is not there → NotFound, lost connection or a lock not granted in time → Unavailable.
Error sqlError(const QSqlError &error, const QString &what, bool postgres);

// A vocabulary word read from a column (core/vocab). A word no table holds (a database written
// by a newer Pando, or edited by hand) is an Internal error naming the row, never some other
// state: column is "deploys.status", row "deploy d0123456789ab".
Error unknownWord(const QString &column, const QString &row, const QString &word);
template<typename E> Result<E> word(const QVariant &value, const QString &column, const QString &row)
{
    const QString text = value.toString();
    if (std::optional<E> parsed = vocab::parse<E>(text))
        return *parsed;
    return std::unexpected(unknownWord(column, row, text));
}

// Prepares sql (with ? placeholders), binds values in order and runs it. `what` names the
// operation for the error message ("insert app hello").
Result<QSqlQuery> run(const QSqlDatabase &db, bool postgres, const QString &sql, const QVariantList &values,
                      const QString &what);
// The same on the calling thread's connection of database.
Result<QSqlQuery> run(Database &database, const QString &sql, const QVariantList &values, const QString &what);

// A transaction on the calling thread's connection; rolled back unless commit() succeeds.
// Write transactions on SQLite begin with BEGIN IMMEDIATE, which takes the write lock up front:
// with a plain BEGIN two connections could both read and then one of them fail to upgrade.
// On SQLite, writers of one process first queue on a lock per database file (see sql.cpp).
class Transaction {
public:
    static Result<Transaction> begin(Database &database, const QString &what);
    Transaction(Transaction &&other) noexcept;
    Transaction &operator=(Transaction &&) = delete;
    ~Transaction();

    // On failure the transaction is rolled back at once (see sql.cpp).
    Result<QSqlQuery> run(const QString &sql, const QVariantList &values, const QString &what);
    const QSqlDatabase &db() const { return m_db; }
    bool isPostgres() const { return m_postgres; }
    Status commit();

private:
    Transaction(QSqlDatabase db, bool postgres, QString what, QRecursiveMutex *gate)
        : m_db(std::move(db)), m_postgres(postgres), m_what(std::move(what)), m_gate(gate)
    {}
    void end(); // rolls back if still open, then lets the next writer of this process in
    QSqlDatabase m_db;
    bool m_postgres = false;
    bool m_open = true;
    QString m_what;
    QRecursiveMutex *m_gate = nullptr; // held (SQLite) until the transaction ends
};

// Runs body (which returns a Result/Status) again while it fails with Conflict, for inserts
// whose key is computed from the table (MAX(id)+1) and may lose a race with another writer.
template<class F> auto retryOnConflict(F &&body, int attempts = 100) -> decltype(body())
{
    for (int i = 1;; ++i) {
        auto result = body();
        if (result || result.error().code != ErrorCode::Conflict || i >= attempts)
            return result;
    }
}

} // namespace pando::core::detail
