#pragma once
// The accounts tables (users, sessions, api_tokens; migration 4) and the initial-admin row of
// the tokens table that bootstrap retires. Same conventions as core/state/repositories.h: one
// statement or one transaction per call, duplicates are Conflict, missing rows NotFound.

#include "core/accounts/accounts.h"
#include "core/state/database.h"

#include <QList>
#include <QSqlQuery>
#include <QVariantList>

namespace pando::core::accounts {

struct UserRow {
    User user;
    QString identity = QStringLiteral("local"); // the identity adapter's kind()
    QString passwordHash;                       // encoded; empty for adapters without passwords
};

struct SessionRow {
    Session session;
    QString digest;
};

struct TokenRow {
    ApiToken token;
    QString digest;
};

// A session or token found by digest, with the user it belongs to.
template<class T> struct WithUser {
    T row;
    User user;
};

class AccountRepository {
public:
    explicit AccountRepository(Database &db) : m_db(db) {}

    Result<int> countUsers();
    Status createUser(const UserRow &row);
    // Takes back a user createUser() just made (nothing refers to it yet).
    Status removeNewUser(const QString &id);
    // In one transaction: refuses (Conflict) when any user exists, retires the valid
    // initial-admin token with this digest (Unauthorized when there is none) and inserts row.
    Status createFirstAdmin(const UserRow &row, const QString &initialDigest, qint64 nowMs);
    Result<UserRow> findUser(const QString &username);
    Result<UserRow> findUserById(const QString &id);
    Result<QList<User>> listUsers();
    Status setDisabled(const QString &id, bool disabled, qint64 nowMs);
    Status setPasswordHash(const QString &id, const QString &hash, qint64 nowMs);
    // Makes the user an enabled administrator with this password (pandod --reset-admin).
    Status restoreAdmin(const QString &id, const QString &identity, const QString &hash, qint64 nowMs);
    // Enabled admins other than exceptId: disabling the last one would lock the install.
    Result<int> countOtherEnabledAdmins(const QString &exceptId);

    Status createSession(const SessionRow &row);
    // The session with this digest (revoked or not) and its user.
    Result<WithUser<Session>> findSession(const QString &digest);
    // NotFound when no valid session has this digest.
    Status revokeSession(const QString &digest, qint64 nowMs);
    Status revokeSessionsOf(const QString &userId, qint64 nowMs);

    Status createToken(const TokenRow &row);
    Result<WithUser<ApiToken>> findToken(const QString &digest);
    Result<ApiToken> tokenById(const QString &id);
    // Newest first; all users' when userId is empty.
    Result<QList<ApiToken>> listTokens(const QString &userId);
    // NotFound when no valid token has this id.
    Status revokeToken(const QString &id, qint64 nowMs);

    // The valid (unrevoked) token of the engine's tokens table with this digest: id and name.
    Result<std::pair<QString, QString>> findLegacyToken(const QString &digest);

private:
    Result<QSqlQuery> query(const QString &sql, const QVariantList &values, const QString &what);
    Database &m_db;
};

} // namespace pando::core::accounts
