#include "accounts.h"

#include <QJsonArray>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::core::accounts {

QString roleName(Role role)
{
    switch (role) {
    case Role::Admin:
        return u"admin"_s;
    case Role::Operator:
        return u"operator"_s;
    case Role::Member:
        return u"member"_s;
    case Role::Viewer:
        return u"viewer"_s;
    }
    return u"viewer"_s;
}

std::optional<Role> roleFromName(const QString &name)
{
    for (Role r : {Role::Admin, Role::Operator, Role::Member, Role::Viewer})
        if (roleName(r) == name)
            return r;
    return std::nullopt;
}

bool isValidUsername(const QString &username)
{
    static const QRegularExpression re(u"^[a-z0-9][a-z0-9._-]{0,63}$"_s);
    return re.match(username).hasMatch();
}

const QStringList &knownScopes()
{
    static const QStringList scopes{u"apps:read"_s,       u"apps:write"_s,      u"deploys:write"_s,
                                    u"pipelines:read"_s,  u"pipelines:write"_s, u"runs:write"_s,
                                    u"approvals:write"_s, u"audit:read"_s,      u"admin"_s};
    return scopes;
}

QJsonObject User::toJson() const
{
    return {{u"id"_s, id},
            {u"username"_s, username},
            {u"displayName"_s, displayName},
            {u"role"_s, roleName(role)},
            {u"disabled"_s, disabled},
            {u"createdMs"_s, createdMs},
            {u"updatedMs"_s, updatedMs}};
}

QJsonObject ApiToken::toJson() const
{
    return {{u"id"_s, id},
            {u"userId"_s, userId},
            {u"name"_s, name},
            {u"scopes"_s, QJsonArray::fromStringList(scopes)},
            {u"createdMs"_s, createdMs},
            {u"expiresMs"_s, expiresMs},
            {u"revokedMs"_s, revokedMs}};
}

bool Principal::hasScope(const QString &scope) const
{
    if (kind != Kind::Token)
        return true;
    return scopes.contains(scope) || scopes.contains(u"admin"_s);
}

QString Principal::actorName() const
{
    switch (kind) {
    case Kind::Session:
        return u"user:"_s + username;
    case Kind::Token:
        return u"user:"_s + username + u"/token:"_s + tokenId;
    case Kind::Initial:
        return u"token:initial-admin"_s;
    }
    return u"unknown"_s;
}

Actor Principal::actor(const QString &source, const QString &requestId) const
{
    return Actor{actorName(), source.isEmpty() ? u"engine"_s : source, requestId, userId, role};
}

QString principalKindName(Principal::Kind kind)
{
    switch (kind) {
    case Principal::Kind::Session:
        return u"session"_s;
    case Principal::Kind::Token:
        return u"token"_s;
    case Principal::Kind::Initial:
        return u"initial"_s;
    }
    return u"unknown"_s;
}

QJsonObject Principal::toJson() const
{
    return {{u"userId"_s, userId},       {u"username"_s, username},
            {u"role"_s, roleName(role)}, {u"scopes"_s, QJsonArray::fromStringList(scopes)},
            {u"tokenId"_s, tokenId},     {u"kind"_s, principalKindName(kind)}};
}

} // namespace pando::core::accounts
