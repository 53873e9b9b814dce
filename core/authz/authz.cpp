#include "authz.h"

#include "core/state/repositories.h"
#include "core/state/sql.h"

using namespace Qt::StringLiterals;

namespace pando::core::authz {

using accounts::Principal;
using accounts::Role;

namespace {

Result<QSqlQuery> query(Database &db, const QString &sql, const QVariantList &values, const QString &what)
{
    auto connection = db.connection();
    if (!connection)
        return std::unexpected(connection.error());
    return core::detail::run(*connection, db.isPostgres(), sql, values, what);
}

bool is(std::string_view a, std::string_view b)
{
    return a == b;
}

// The permissions a member holds only on objects with one of these grants.
QStringList grantsNeeded(std::string_view permission, ObjectKind kind)
{
    using namespace permission;
    if (kind == ObjectKind::App && is(permission, AppsWrite))
        return {u"owner"_s};
    if (kind == ObjectKind::App && is(permission, DeploysWrite))
        return {u"owner"_s, u"deployer"_s};
    if (kind == ObjectKind::Pipeline && is(permission, PipelinesWrite))
        return {u"owner"_s};
    if (kind == ObjectKind::Pipeline && is(permission, RunsWrite))
        return {u"owner"_s, u"operator"_s};
    // Who may deploy the app, or run the pipeline, may sign off on what waits in it.
    if (kind == ObjectKind::App && is(permission, ApprovalsWrite))
        return {u"owner"_s, u"deployer"_s};
    if (kind == ObjectKind::Pipeline && is(permission, ApprovalsWrite))
        return {u"owner"_s, u"operator"_s};
    return {};
}

Decision deny(const QString &reason)
{
    return Decision{false, reason};
}

QString readGrantsOf(ObjectKind kind)
{
    return kind == ObjectKind::App ? u"owner, deployer or viewer"_s : u"owner, operator or viewer"_s;
}

// Members and viewers read an app or pipeline only with a grant on it, and lists (no object)
// answer them only those. The refusal names neither the object (a deploy's or run's ID would
// reveal its app or pipeline) nor whether it exists: both read as the same 403.
Result<Decision> decideRead(Database &db, const Principal &principal, std::string_view permission,
                            const ObjectRef &object)
{
    if (object.kind == ObjectKind::None)
        return Decision{true, {}};
    const QString permissionName = QString::fromLatin1(permission.data(), qsizetype(permission.size()));
    if (object.kind != ObjectKind::App && object.kind != ObjectKind::Pipeline)
        return deny(
            u"the role %1 lacks the permission \"%2\""_s.arg(accounts::roleName(principal.role), permissionName));
    if (!object.name.isEmpty()) {
        auto held = GrantRepository(db).roles(object.kind, object.name, principal.userId);
        if (!held)
            return std::unexpected(held.error());
        if (!held->isEmpty())
            return Decision{true, {}};
    }
    return deny(u"%1 needs a grant on the %2 (%3); its owner or an operator can add one"_s.arg(
        permissionName, objectKindName(object.kind), readGrantsOf(object.kind)));
}

} // namespace

QString scopeFor(std::string_view permission)
{
    using namespace permission;
    if (is(permission, Public) || is(permission, Self))
        return {};
    if (is(permission, LogsRead))
        return u"apps:read"_s;
    if (is(permission, UsersRead) || is(permission, UsersWrite) || is(permission, SettingsWrite))
        return u"admin"_s;
    QString scope = QString::fromLatin1(permission.data(), qsizetype(permission.size()));
    scope.replace(u'.', u':');
    return scope;
}

QString objectKindName(ObjectKind kind)
{
    switch (kind) {
    case ObjectKind::App:
        return u"app"_s;
    case ObjectKind::Pipeline:
        return u"pipeline"_s;
    case ObjectKind::Token:
        return u"token"_s;
    case ObjectKind::Connection:
        return u"connection"_s;
    case ObjectKind::None:
        break;
    }
    return {};
}

QString ObjectRef::text() const
{
    if (kind == ObjectKind::None)
        return {};
    return objectKindName(kind) + u'/' + name;
}

bool isValidGrantRole(ObjectKind kind, const QString &role)
{
    if (kind == ObjectKind::App)
        return role == u"owner"_s || role == u"deployer"_s || role == u"viewer"_s;
    if (kind == ObjectKind::Pipeline)
        return role == u"owner"_s || role == u"operator"_s || role == u"viewer"_s;
    if (kind == ObjectKind::Connection)
        return role == u"user"_s;
    return false;
}

Status GrantRepository::add(const Grant &grant)
{
    if (!isValidGrantRole(grant.kind, grant.role))
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a grant role for a %2"_s.arg(grant.role, objectKindName(grant.kind)), u"role"_s);
    auto exists = roles(grant.kind, grant.object, grant.userId);
    if (!exists)
        return std::unexpected(exists.error());
    if (exists->contains(grant.role))
        return {};
    auto q =
        query(m_db, u"INSERT INTO grants (object_kind, object, user_id, role, created_ms) VALUES (?, ?, ?, ?, ?)"_s,
              {objectKindName(grant.kind), core::detail::text(grant.object), core::detail::text(grant.userId),
               grant.role, grant.createdMs},
              u"add a grant on %1/%2"_s.arg(objectKindName(grant.kind), grant.object));
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Status GrantRepository::remove(ObjectKind kind, const QString &object, const QString &userId, const QString &role)
{
    auto q = query(m_db, u"DELETE FROM grants WHERE object_kind = ? AND object = ? AND user_id = ? AND role = ?"_s,
                   {objectKindName(kind), core::detail::text(object), core::detail::text(userId), role},
                   u"remove a grant on %1/%2"_s.arg(objectKindName(kind), object));
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Status GrantRepository::removeAll(ObjectKind kind, const QString &object)
{
    auto q = query(m_db, u"DELETE FROM grants WHERE object_kind = ? AND object = ?"_s,
                   {objectKindName(kind), core::detail::text(object)},
                   u"remove the grants on %1/%2"_s.arg(objectKindName(kind), object));
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Result<QStringList> GrantRepository::roles(ObjectKind kind, const QString &object, const QString &userId)
{
    auto q = query(m_db, u"SELECT role FROM grants WHERE object_kind = ? AND object = ? AND user_id = ?"_s,
                   {objectKindName(kind), core::detail::text(object), core::detail::text(userId)},
                   u"read the grants on %1/%2"_s.arg(objectKindName(kind), object));
    if (!q)
        return std::unexpected(q.error());
    QStringList list;
    while (q->next())
        list.append(q->value(0).toString());
    q->finish();
    return list;
}

Result<QList<Grant>> GrantRepository::list(ObjectKind kind, const QString &object)
{
    auto q = query(m_db,
                   u"SELECT user_id, role, created_ms FROM grants WHERE object_kind = ? AND object = ?"
                   " ORDER BY created_ms, user_id, role"_s,
                   {objectKindName(kind), core::detail::text(object)},
                   u"list the grants on %1/%2"_s.arg(objectKindName(kind), object));
    if (!q)
        return std::unexpected(q.error());
    QList<Grant> list;
    while (q->next())
        list.append(Grant{kind, object, q->value(0).toString(), q->value(1).toString(), q->value(2).toLongLong()});
    q->finish();
    return list;
}

Result<int> GrantRepository::countOwned(ObjectKind kind, const QString &userId)
{
    auto q = query(m_db, u"SELECT COUNT(*) FROM grants WHERE object_kind = ? AND user_id = ? AND role = 'owner'"_s,
                   {objectKindName(kind), core::detail::text(userId)}, u"count the objects a user owns"_s);
    if (!q)
        return std::unexpected(q.error());
    const int n = q->next() ? q->value(0).toInt() : 0;
    q->finish();
    return n;
}

bool isReadPermission(std::string_view permission)
{
    using namespace permission;
    return is(permission, AppsRead) || is(permission, LogsRead) || is(permission, PipelinesRead);
}

bool Visibility::sees(const ObjectRef &object) const
{
    switch (object.kind) {
    case ObjectKind::App:
        return allApps || apps.contains(object.name);
    case ObjectKind::Pipeline:
        return allPipelines || pipelines.contains(object.name);
    case ObjectKind::None:
    case ObjectKind::Token:
    case ObjectKind::Connection:
        break;
    }
    return allApps && allPipelines;
}

Result<QSet<QString>> GrantRepository::objectsOf(ObjectKind kind, const QString &userId)
{
    auto q = query(m_db, u"SELECT DISTINCT object FROM grants WHERE object_kind = ? AND user_id = ?"_s,
                   {objectKindName(kind), core::detail::text(userId)}, u"read the objects a user holds grants on"_s);
    if (!q)
        return std::unexpected(q.error());
    QSet<QString> objects;
    while (q->next())
        objects.insert(q->value(0).toString());
    q->finish();
    return objects;
}

Result<bool> mayUseConnection(Database &db, const QString &userId, bool installAuthority, const QString &name)
{
    if (installAuthority)
        return true;
    if (userId.isEmpty())
        return false;
    auto roles = GrantRepository(db).roles(ObjectKind::Connection, name, userId);
    if (!roles)
        return std::unexpected(roles.error());
    return roles->contains(u"user"_s);
}

bool roleAllows(Role role, std::string_view permission)
{
    using namespace permission;
    if (is(permission, Public) || is(permission, Self))
        return true;
    const bool read = isReadPermission(permission);
    switch (role) {
    case Role::Admin:
        return isKnown(permission);
    case Role::Operator:
        return read || is(permission, AppsWrite) || is(permission, DeploysWrite) || is(permission, PipelinesWrite) ||
               is(permission, RunsWrite) || is(permission, ApprovalsWrite);
    case Role::Member:
    case Role::Viewer:
        return false;
    }
    return false;
}

Result<Visibility> Authorizer::visibility(const Principal &principal)
{
    Visibility v;
    const bool readsApps = principal.hasScope(u"apps:read"_s);
    const bool readsPipelines = principal.hasScope(u"pipelines:read"_s);
    if (roleAllows(principal.role, permission::AppsRead)) {
        v.allApps = readsApps;
        v.allPipelines = readsPipelines;
        return v;
    }
    GrantRepository grants(m_db);
    if (readsApps) {
        auto apps = grants.objectsOf(ObjectKind::App, principal.userId);
        if (!apps)
            return std::unexpected(apps.error());
        v.apps = *apps;
    }
    if (readsPipelines) {
        auto pipelines = grants.objectsOf(ObjectKind::Pipeline, principal.userId);
        if (!pipelines)
            return std::unexpected(pipelines.error());
        v.pipelines = *pipelines;
    }
    return v;
}

Result<Decision> Authorizer::decide(const Principal &principal, std::string_view permission, const ObjectRef &object)
{
    using namespace permission;
    const QString permissionName = QString::fromLatin1(permission.data(), qsizetype(permission.size()));
    if (!isKnown(permission))
        return deny(u"the permission \"%1\" is unknown"_s.arg(permissionName));
    if (is(permission, Public))
        return Decision{true, {}};

    // Scopes narrow every role: a token without the scope gets nothing, whatever its user's role.
    const QString scope = scopeFor(permission);
    if (!scope.isEmpty() && !principal.hasScope(scope))
        return deny(u"the token lacks the scope \"%1\""_s.arg(scope));

    // A token belongs to its user: the owner, or an administrator, may act on it.
    // Another user's token needs an administrator whose own token is not narrowed.
    if (object.kind == ObjectKind::Token) {
        if (!object.ownerId.isEmpty() && object.ownerId == principal.userId)
            return Decision{true, {}};
        if (principal.role == Role::Admin && principal.hasScope(u"admin"_s))
            return Decision{true, {}};
        return deny(u"the token belongs to another user"_s);
    }

    if (roleAllows(principal.role, permission))
        return Decision{true, {}};
    if (isReadPermission(permission) && (principal.role == Role::Member || principal.role == Role::Viewer) &&
        !principal.userId.isEmpty())
        return decideRead(m_db, principal, permission, object);

    // Members act on what they hold a grant on, and create apps up to the limit.
    if (principal.role == Role::Member && !principal.userId.isEmpty()) {
        if (is(permission, AppsWrite) && object.kind == ObjectKind::None) {
            // The apps they made, whoever owns them now: dropping one's own owner grant (or giving
            // an app away) frees no place; apps given to them do not take one.
            auto made = AppRepository(m_db).countCreatedBy(principal.userId);
            if (!made)
                return std::unexpected(made.error());
            if (*made >= m_options.appLimit)
                return deny(u"the app limit is reached: %1 made %2 apps, the limit is %3 (removing one frees a place)"_s
                                .arg(principal.username)
                                .arg(*made)
                                .arg(m_options.appLimit));
            return Decision{true, {}};
        }
        const QStringList needed = grantsNeeded(permission, object.kind);
        if (!needed.isEmpty() && !object.name.isEmpty()) {
            auto held = GrantRepository(m_db).roles(object.kind, object.name, principal.userId);
            if (!held)
                return std::unexpected(held.error());
            for (const QString &role : std::as_const(*held)) {
                if (needed.contains(role))
                    return Decision{true, {}};
            }
            return deny(
                u"%1 needs one of the grants %2 on %3"_s.arg(permissionName, needed.join(u", "_s), object.text()));
        }
    }
    return deny(u"the role %1 lacks the permission \"%2\""_s.arg(accounts::roleName(principal.role), permissionName));
}

} // namespace pando::core::authz
