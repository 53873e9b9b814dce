#include "accountrepository.h"

#include "core/state/sql.h"

using namespace Qt::StringLiterals;

namespace pando::core::accounts {

namespace {

const QString UserColumns = u"u.id, u.username, u.display_name, u.role, u.disabled, u.created_ms, u.updated_ms,"
                            " u.identity, u.password_hash"_s;

// Reads the nine UserColumns starting at column `at`.
UserRow readUser(const QSqlQuery &q, int at)
{
    UserRow row;
    row.user.id = q.value(at).toString();
    row.user.username = q.value(at + 1).toString();
    row.user.displayName = q.value(at + 2).toString();
    row.user.role = roleFromName(q.value(at + 3).toString()).value_or(Role::Viewer);
    row.user.disabled = q.value(at + 4).toInt() != 0;
    row.user.createdMs = q.value(at + 5).toLongLong();
    row.user.updatedMs = q.value(at + 6).toLongLong();
    row.identity = q.value(at + 7).toString();
    row.passwordHash = q.value(at + 8).toString();
    return row;
}

QStringList splitScopes(const QString &text)
{
    return text.split(u' ', Qt::SkipEmptyParts);
}

const QString TokenColumns = u"t.id, t.user_id, t.name, t.scopes, t.created_ms, t.expires_ms, t.revoked_ms"_s;

ApiToken readToken(const QSqlQuery &q)
{
    ApiToken t;
    t.id = q.value(0).toString();
    t.userId = q.value(1).toString();
    t.name = q.value(2).toString();
    t.scopes = splitScopes(q.value(3).toString());
    t.createdMs = q.value(4).toLongLong();
    t.expiresMs = q.value(5).toLongLong();
    t.revokedMs = q.value(6).toLongLong();
    return t;
}

} // namespace

Result<QSqlQuery> AccountRepository::query(const QString &sql, const QVariantList &values, const QString &what)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    return core::detail::run(*db, m_db.isPostgres(), sql, values, what);
}

Result<int> AccountRepository::countUsers()
{
    auto q = query(u"SELECT COUNT(*) FROM users"_s, {}, u"count users"_s);
    if (!q)
        return std::unexpected(q.error());
    const int n = q->next() ? q->value(0).toInt() : 0;
    q->finish();
    return n;
}

static QVariantList userValues(const UserRow &row)
{
    return {core::detail::text(row.user.id),
            core::detail::text(row.user.username),
            core::detail::text(row.user.displayName),
            roleName(row.user.role),
            row.user.disabled ? 1 : 0,
            core::detail::text(row.identity),
            core::detail::text(row.passwordHash),
            row.user.createdMs,
            row.user.updatedMs};
}

static const QString InsertUser =
    u"INSERT INTO users (id, username, display_name, role, disabled, identity, password_hash, created_ms, updated_ms)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"_s;

static Error userConflict(const Error &error, const QString &username)
{
    if (error.code == ErrorCode::Conflict)
        return Error{ErrorCode::Conflict, u"a user named %1 already exists"_s.arg(username), u"username"_s, {}};
    return error;
}

Status AccountRepository::createUser(const UserRow &row)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q =
        core::detail::run(*db, m_db.isPostgres(), InsertUser, userValues(row), u"create user "_s + row.user.username);
    if (!q)
        return std::unexpected(userConflict(q.error(), row.user.username));
    return {};
}

Status AccountRepository::removeNewUser(const QString &id)
{
    auto q = query(u"DELETE FROM users WHERE id = ?"_s, {core::detail::text(id)}, u"remove user "_s + id);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Status AccountRepository::createFirstAdmin(const UserRow &row, const QString &initialDigest, qint64 nowMs)
{
    auto tx = core::detail::Transaction::begin(m_db, u"bootstrap the first administrator"_s);
    if (!tx)
        return std::unexpected(tx.error());
    auto count = tx->run(u"SELECT COUNT(*) FROM users"_s, {}, u"count users"_s);
    if (!count)
        return std::unexpected(count.error());
    const int users = count->next() ? count->value(0).toInt() : 0;
    count->finish();
    if (users > 0)
        return fail(ErrorCode::Conflict, u"the install already has accounts; bootstrap works only once"_s,
                    u"bootstrap"_s, u"log in as an administrator and create users from there"_s);
    auto retired =
        tx->run(u"UPDATE tokens SET revoked_ms = ? WHERE digest = ? AND name = ? AND revoked_ms = 0"_s,
                {nowMs, core::detail::text(initialDigest), u"initial-admin"_s}, u"retire the initial admin token"_s);
    if (!retired)
        return std::unexpected(retired.error());
    if (retired->numRowsAffected() != 1)
        return fail(ErrorCode::Unauthorized, u"the initial admin token is not valid"_s, u"bootstrap"_s);
    if (auto inserted = tx->run(InsertUser, userValues(row), u"create user "_s + row.user.username); !inserted)
        return std::unexpected(userConflict(inserted.error(), row.user.username));
    return tx->commit();
}

Result<UserRow> AccountRepository::findUser(const QString &username)
{
    auto q = query(u"SELECT "_s + UserColumns + u" FROM users u WHERE u.username = ?"_s, {core::detail::text(username)},
                   u"find user"_s);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"no user named %1"_s.arg(username), u"users"_s);
    UserRow row = readUser(*q, 0);
    q->finish();
    return row;
}

Result<UserRow> AccountRepository::findUserById(const QString &id)
{
    auto q =
        query(u"SELECT "_s + UserColumns + u" FROM users u WHERE u.id = ?"_s, {core::detail::text(id)}, u"find user"_s);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"no user with id %1"_s.arg(id), u"users"_s);
    UserRow row = readUser(*q, 0);
    q->finish();
    return row;
}

Result<QList<User>> AccountRepository::listUsers()
{
    auto q = query(u"SELECT "_s + UserColumns + u" FROM users u ORDER BY u.username"_s, {}, u"list users"_s);
    if (!q)
        return std::unexpected(q.error());
    QList<User> users;
    while (q->next())
        users.append(readUser(*q, 0).user);
    return users;
}

Status AccountRepository::setDisabled(const QString &id, bool disabled, qint64 nowMs)
{
    auto q = query(u"UPDATE users SET disabled = ?, updated_ms = ? WHERE id = ?"_s,
                   {disabled ? 1 : 0, nowMs, core::detail::text(id)}, u"disable user "_s + id);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"no user with id %1"_s.arg(id), u"users"_s);
    return {};
}

Status AccountRepository::setPasswordHash(const QString &id, const QString &hash, qint64 nowMs)
{
    auto q = query(u"UPDATE users SET password_hash = ?, updated_ms = ? WHERE id = ?"_s,
                   {core::detail::text(hash), nowMs, core::detail::text(id)}, u"set the password of user "_s + id);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"no user with id %1"_s.arg(id), u"users"_s);
    return {};
}

Status AccountRepository::restoreAdmin(const QString &id, const QString &identity, const QString &hash, qint64 nowMs)
{
    auto q = query(
        u"UPDATE users SET role = ?, disabled = 0, identity = ?, password_hash = ?, updated_ms = ? "
        "WHERE id = ?"_s,
        {roleName(Role::Admin), core::detail::text(identity), core::detail::text(hash), nowMs, core::detail::text(id)},
        u"restore user "_s + id + u" as an administrator"_s);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"no user with id %1"_s.arg(id), u"users"_s);
    return {};
}

Result<int> AccountRepository::countOtherEnabledAdmins(const QString &exceptId)
{
    auto q = query(u"SELECT COUNT(*) FROM users WHERE role = ? AND disabled = 0 AND id <> ?"_s,
                   {roleName(Role::Admin), core::detail::text(exceptId)}, u"count administrators"_s);
    if (!q)
        return std::unexpected(q.error());
    const int n = q->next() ? q->value(0).toInt() : 0;
    q->finish();
    return n;
}

Status AccountRepository::createSession(const SessionRow &row)
{
    const Session &s = row.session;
    auto q = query(u"INSERT INTO sessions (id, user_id, digest, source, created_ms, expires_ms, revoked_ms)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?)"_s,
                   {core::detail::text(s.id), core::detail::text(s.userId), core::detail::text(row.digest),
                    core::detail::text(s.source), s.createdMs, s.expiresMs, s.revokedMs},
                   u"create session "_s + s.id);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Result<WithUser<Session>> AccountRepository::findSession(const QString &digest)
{
    auto q = query(u"SELECT s.id, s.user_id, s.source, s.created_ms, s.expires_ms, s.revoked_ms, "_s + UserColumns +
                       u" FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.digest = ?"_s,
                   {core::detail::text(digest)}, u"find session"_s);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"no session matches"_s, u"sessions"_s);
    WithUser<Session> found;
    found.row.id = q->value(0).toString();
    found.row.userId = q->value(1).toString();
    found.row.source = q->value(2).toString();
    found.row.createdMs = q->value(3).toLongLong();
    found.row.expiresMs = q->value(4).toLongLong();
    found.row.revokedMs = q->value(5).toLongLong();
    found.user = readUser(*q, 6).user;
    q->finish();
    return found;
}

Status AccountRepository::revokeSession(const QString &digest, qint64 nowMs)
{
    auto q = query(u"UPDATE sessions SET revoked_ms = ? WHERE digest = ? AND revoked_ms = 0"_s,
                   {nowMs, core::detail::text(digest)}, u"end session"_s);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"no open session matches"_s, u"sessions"_s);
    return {};
}

Status AccountRepository::revokeSessionsOf(const QString &userId, qint64 nowMs)
{
    auto q = query(u"UPDATE sessions SET revoked_ms = ? WHERE user_id = ? AND revoked_ms = 0"_s,
                   {nowMs, core::detail::text(userId)}, u"end the sessions of user "_s + userId);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Status AccountRepository::createToken(const TokenRow &row)
{
    const ApiToken &t = row.token;
    auto q = query(u"INSERT INTO api_tokens (id, user_id, name, digest, scopes, created_ms, expires_ms, revoked_ms)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"_s,
                   {core::detail::text(t.id), core::detail::text(t.userId), core::detail::text(t.name),
                    core::detail::text(row.digest), t.scopes.join(u' '), t.createdMs, t.expiresMs, t.revokedMs},
                   u"create token "_s + t.id);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Result<WithUser<ApiToken>> AccountRepository::findToken(const QString &digest)
{
    auto q = query(u"SELECT "_s + TokenColumns + u", "_s + UserColumns +
                       u" FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.digest = ?"_s,
                   {core::detail::text(digest)}, u"find token"_s);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"no token matches"_s, u"tokens"_s);
    WithUser<ApiToken> found{readToken(*q), readUser(*q, 7).user};
    q->finish();
    return found;
}

Result<ApiToken> AccountRepository::tokenById(const QString &id)
{
    auto q = query(u"SELECT "_s + TokenColumns + u" FROM api_tokens t WHERE t.id = ?"_s, {core::detail::text(id)},
                   u"find token "_s + id);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"no token with id %1"_s.arg(id), u"tokens"_s);
    ApiToken t = readToken(*q);
    q->finish();
    return t;
}

Result<QList<ApiToken>> AccountRepository::listTokens(const QString &userId)
{
    const QString where = userId.isEmpty() ? QString() : u" WHERE t.user_id = ?"_s;
    const QVariantList values = userId.isEmpty() ? QVariantList{} : QVariantList{userId};
    auto q =
        query(u"SELECT "_s + TokenColumns + u" FROM api_tokens t"_s + where + u" ORDER BY t.created_ms DESC, t.id"_s,
              values, u"list tokens"_s);
    if (!q)
        return std::unexpected(q.error());
    QList<ApiToken> tokens;
    while (q->next())
        tokens.append(readToken(*q));
    return tokens;
}

Status AccountRepository::revokeToken(const QString &id, qint64 nowMs)
{
    auto q = query(u"UPDATE api_tokens SET revoked_ms = ? WHERE id = ? AND revoked_ms = 0"_s,
                   {nowMs, core::detail::text(id)}, u"revoke token "_s + id);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"no valid token with id %1"_s.arg(id), u"tokens"_s);
    return {};
}

Result<std::pair<QString, QString>> AccountRepository::findLegacyToken(const QString &digest)
{
    auto q = query(u"SELECT id, name FROM tokens WHERE digest = ? AND revoked_ms = 0"_s, {core::detail::text(digest)},
                   u"find token"_s);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"no valid token matches"_s, u"tokens"_s);
    std::pair<QString, QString> found{q->value(0).toString(), q->value(1).toString()};
    q->finish();
    return found;
}

} // namespace pando::core::accounts
