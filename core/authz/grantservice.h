#pragma once
// GrantService: grants and ownership over the state store, every change audited. It decides
// requests (Authorizer, with the app limit) and writes each refusal to the audit log, adds and
// removes the grants people manage, gives whoever creates an app or pipeline its owner grant,
// and clears an object's grants once the object is gone. The engine holds the one instance
// (core/engine: Engine::authorize, addGrant, removeGrant, grants); the API reaches it only there.
//
// Threading: every method may be called from any thread.

#include "core/accounts/accounts.h"
#include "core/audit/auditlog.h"
#include "core/authz/authz.h"
#include "core/common/clock.h"
#include "core/state/database.h"

#include <QMutex>
#include <string_view>

namespace pando::core::authz {

// A grant with its holder's username, as grant lists show it.
struct GrantView {
    Grant grant;
    QString username; // the user id when the user is gone
};

// What addGrant() did: created false when the user already held the role (nothing changed,
// nothing was audited).
struct GrantChange {
    GrantView grant;
    bool created = false;
};

// The roles a grant on an object of this kind may carry, for hints.
QStringList grantRoles(ObjectKind kind);
// Invalid (where "role", the roles in the hint) unless the kind has the role.
Status checkGrantRole(ObjectKind kind, const QString &role);

class GrantService {
public:
    GrantService(Database &db, AuditLog &audit, Clock &clock) : m_db(db), m_audit(audit), m_clock(clock) {}

    // Decides with the role matrix, the grants and the token's scopes; a refusal is audited as
    // "denied" (the permission, the object or else route, the reason) before it is returned.
    Result<Decision> authorize(const accounts::Principal &principal, std::string_view permission,
                               const ObjectRef &object, const Actor &actor, const QString &route);
    AuthzOptions options() const;
    void setOptions(const AuthzOptions &options);

    // Every grant on the object, oldest first, with the holders' usernames from users.
    Result<QList<GrantView>> list(ObjectKind kind, const QString &object, const QList<accounts::User> &users);
    // Invalid for a role the kind has not; audited as grant.add when it changes anything.
    Result<GrantChange> add(ObjectKind kind, const QString &object, const accounts::User &user, const QString &role,
                            const Actor &actor);
    // NotFound when the user holds no such grant; audited as grant.remove.
    Status remove(ObjectKind kind, const QString &object, const accounts::User &user, const QString &role,
                  const Actor &actor);

    // The creator's owner grant on what it just created, in the caller's transaction when it
    // has one; nothing for an actor that is nobody (the system, the initial token).
    Status grantOwner(ObjectKind kind, const QString &object, const Actor &creator);
    // Every grant on `from` given on `to` as well (a preview of an app), in the caller's
    // transaction when it has one; not audited one by one (the creation of `to` is).
    Status copy(ObjectKind kind, const QString &from, const QString &to);
    // Every grant on an object that is gone, so a new one of that name inherits nobody.
    Status clear(ObjectKind kind, const QString &object);

private:
    Database &m_db;
    AuditLog &m_audit;
    Clock &m_clock;
    mutable QMutex m_mutex; // guards m_options: the app limit may change while requests run
    AuthzOptions m_options;
};

} // namespace pando::core::authz
