#pragma once
// Package accounts: the people and machines that may use an install. Users with install roles,
// the one-time bootstrap of the first administrator, login sessions for people and scoped,
// expiring API tokens for machines; every secret is shown once and kept only as a keyed digest.
// This header holds the value types the API layer sees; AccountService (accountservice.h) is
// the service over the state store.

#include "core/audit/auditlog.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <optional>

namespace pando::core::accounts {

// Install roles, strongest first. What each may do is decided by authz; here they are only
// stored and carried.
enum class Role { Admin, Operator, Member, Viewer };
QString roleName(Role role);
std::optional<Role> roleFromName(const QString &name);

// Usernames: 1..64 of a-z 0-9 . _ -, starting with a letter or digit.
bool isValidUsername(const QString &username);
// The scopes an API token may carry; "admin" stands for all of them.
const QStringList &knownScopes();

struct User {
    QString id; // "u" + 16 hex digits
    QString username;
    QString displayName;
    Role role = Role::Viewer;
    bool disabled = false;
    qint64 createdMs = 0;
    qint64 updatedMs = 0;
    QJsonObject toJson() const;
};

// An API token as listed: never its secret, never its digest.
struct ApiToken {
    QString id; // "t" + 16 hex digits
    QString userId;
    QString name;
    QStringList scopes;
    qint64 createdMs = 0;
    qint64 expiresMs = 0; // 0: does not expire
    qint64 revokedMs = 0; // 0 while valid
    QJsonObject toJson() const;
};

struct IssuedToken {
    ApiToken token;
    QString secret; // shown once: the install keeps only its digest
};

struct Session {
    QString id; // "s" + 16 hex digits
    QString userId;
    QString source; // the address the login came from
    qint64 createdMs = 0;
    qint64 expiresMs = 0;
    qint64 revokedMs = 0;
};

struct IssuedSession {
    Session session;
    User user;
    QString secret; // "pandosess_..."; shown once
};

// Who a bearer secret stands for, as authenticate() found it.
struct Principal {
    enum class Kind { Session, Token, Initial };
    QString userId;   // empty for Kind::Initial
    QString username; // empty for Kind::Initial
    Role role = Role::Viewer;
    QStringList scopes; // a token's scopes; empty for sessions and the initial token
    QString tokenId;    // the session's, token's or initial token's id
    Kind kind = Kind::Session;
    qint64 expiresMs = 0; // when the session or token stops working; 0: never (the initial token)

    // Sessions and the initial token are not narrowed by scopes (their role decides); an API
    // token needs the scope itself or "admin".
    bool hasScope(const QString &scope) const;
    // How the audit log names this principal: "user:alice" for a session,
    // "user:alice/token:t…" for an API token, "token:initial-admin" for the initial token.
    QString actorName() const;
    Actor actor(const QString &source, const QString &requestId = {}) const;
    QJsonObject toJson() const;
};

QString principalKindName(Principal::Kind kind);

} // namespace pando::core::accounts
