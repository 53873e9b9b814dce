#include "repositories.h"

#include "sql.h"

using namespace Qt::StringLiterals;

namespace pando::core {

Status TokenRepository::remove(const QString &id)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(), u"DELETE FROM tokens WHERE id = ?"_s, {detail::text(id)},
                         u"remove token "_s + id);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Status TokenRepository::create(const TokenRecord &token)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q =
        detail::run(*db, m_db.isPostgres(),
                    u"INSERT INTO tokens (id, name, digest, role, created_ms, revoked_ms) VALUES (?, ?, ?, ?, ?, ?)"_s,
                    {detail::text(token.id), detail::text(token.name), detail::text(token.digest),
                     detail::text(token.role), token.createdMs, token.revokedMs},
                    u"create token "_s + token.id);
    if (!q) {
        // The digest is never put in a message: it stands for a secret.
        if (q.error().code == ErrorCode::Conflict)
            return fail(ErrorCode::Conflict, u"a token with id "_s + token.id + u" or the same secret already exists"_s,
                        u"tokens"_s);
        return std::unexpected(q.error());
    }
    return {};
}

Result<TokenRecord> TokenRepository::findByDigest(const QString &digest)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(),
                         u"SELECT id, name, digest, role, created_ms, revoked_ms FROM tokens"
                         " WHERE digest = ? AND revoked_ms = 0"_s,
                         {detail::text(digest)}, u"find token"_s);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"no valid token matches"_s, u"tokens"_s);
    TokenRecord token;
    token.id = q->value(0).toString();
    token.name = q->value(1).toString();
    token.digest = q->value(2).toString();
    token.role = q->value(3).toString();
    token.createdMs = q->value(4).toLongLong();
    token.revokedMs = q->value(5).toLongLong();
    q->finish();
    return token;
}

// Counts the valid tokens: "are there any?" decides whether an install still needs its first one.
Result<int> TokenRepository::count()
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(), u"SELECT COUNT(*) FROM tokens WHERE revoked_ms = 0"_s, {},
                         u"count tokens"_s);
    if (!q)
        return std::unexpected(q.error());
    const int n = q->next() ? q->value(0).toInt() : 0;
    q->finish();
    return n;
}

} // namespace pando::core
