#include "grantservice.h"

#include <QHash>

using namespace Qt::StringLiterals;

namespace pando::core::authz {

namespace {

QString objectText(ObjectKind kind, const QString &object)
{
    return ObjectRef{kind, object, {}}.text();
}

} // namespace

QStringList grantRoles(ObjectKind kind)
{
    if (kind == ObjectKind::Connection)
        return {u"user"_s};
    return kind == ObjectKind::App ? QStringList{u"owner"_s, u"deployer"_s, u"viewer"_s}
                                   : QStringList{u"owner"_s, u"operator"_s, u"viewer"_s};
}

Status checkGrantRole(ObjectKind kind, const QString &role)
{
    if (isValidGrantRole(kind, role))
        return {};
    return fail(ErrorCode::Invalid, u"\"%1\" is not a grant role for a %2"_s.arg(role, objectKindName(kind)), u"role"_s,
                u"the roles are: %1"_s.arg(grantRoles(kind).join(u", "_s)));
}

Result<Decision> GrantService::authorize(const accounts::Principal &principal, std::string_view permission,
                                         const ObjectRef &object, const Actor &actor, const QString &route)
{
    auto decision = Authorizer(m_db, options()).decide(principal, permission, object);
    if (!decision || *decision)
        return decision;
    if (auto audited = m_audit.record(actor, QString::fromLatin1(permission.data(), qsizetype(permission.size())),
                                      object.kind == ObjectKind::None ? route : object.text(), u"denied"_s,
                                      QJsonObject{{u"reason"_s, decision->reason}, {u"route"_s, route}});
        !audited)
        return std::unexpected(audited.error());
    return decision;
}

AuthzOptions GrantService::options() const
{
    QMutexLocker lock(&m_mutex);
    return m_options;
}

void GrantService::setOptions(const AuthzOptions &options)
{
    QMutexLocker lock(&m_mutex);
    m_options = options;
}

Result<QList<GrantView>> GrantService::list(ObjectKind kind, const QString &object, const QList<accounts::User> &users)
{
    auto grants = GrantRepository(m_db).list(kind, object);
    if (!grants)
        return std::unexpected(grants.error());
    QHash<QString, QString> usernames;
    for (const accounts::User &user : users)
        usernames.insert(user.id, user.username);
    QList<GrantView> views;
    for (const Grant &grant : std::as_const(*grants))
        views.append(GrantView{grant, usernames.value(grant.userId, grant.userId)});
    return views;
}

Result<GrantChange> GrantService::add(ObjectKind kind, const QString &object, const accounts::User &user,
                                      const QString &role, const Actor &actor)
{
    if (auto checked = checkGrantRole(kind, role); !checked)
        return std::unexpected(checked.error());
    GrantRepository grants(m_db);
    auto held = grants.roles(kind, object, user.id);
    if (!held)
        return std::unexpected(held.error());
    const GrantView view{Grant{kind, object, user.id, role, m_clock.nowMs()}, user.username};
    if (held->contains(role))
        return GrantChange{view, false};
    if (auto added = grants.add(view.grant); !added)
        return std::unexpected(added.error());
    if (auto audited = m_audit.record(actor, u"grant.add"_s, objectText(kind, object), u"success"_s,
                                      QJsonObject{{u"user"_s, user.username}, {u"role"_s, role}});
        !audited) {
        // Not audited, not granted.
        discardResult(grants.remove(kind, object, user.id, role), "the audit error is the answer");
        return std::unexpected(audited.error());
    }
    return GrantChange{view, true};
}

Status GrantService::remove(ObjectKind kind, const QString &object, const accounts::User &user, const QString &role,
                            const Actor &actor)
{
    if (auto checked = checkGrantRole(kind, role); !checked)
        return checked;
    GrantRepository grants(m_db);
    auto held = grants.roles(kind, object, user.id);
    if (!held)
        return std::unexpected(held.error());
    if (!held->contains(role))
        return fail(ErrorCode::NotFound,
                    u"%1 holds no %2 grant on %3"_s.arg(user.username, role, objectText(kind, object)), u"path"_s,
                    u"pando grants list %1 shows the grants"_s.arg(objectText(kind, object)));
    if (auto removed = grants.remove(kind, object, user.id, role); !removed)
        return removed;
    if (auto audited = m_audit.record(actor, u"grant.remove"_s, objectText(kind, object), u"success"_s,
                                      QJsonObject{{u"user"_s, user.username}, {u"role"_s, role}});
        !audited) {
        // Not audited, not removed: the grant is back as it was.
        discardResult(grants.add(Grant{kind, object, user.id, role, m_clock.nowMs()}), "the audit error is the answer");
        return audited;
    }
    return {};
}

Status GrantService::grantOwner(ObjectKind kind, const QString &object, const Actor &creator)
{
    if (creator.userId.isEmpty())
        return {};
    return GrantRepository(m_db).add(Grant{kind, object, creator.userId, u"owner"_s, m_clock.nowMs()});
}

Status GrantService::copy(ObjectKind kind, const QString &from, const QString &to)
{
    GrantRepository repo(m_db);
    auto grants = repo.list(kind, from);
    if (!grants)
        return std::unexpected(grants.error());
    for (Grant grant : std::as_const(*grants)) {
        grant.object = to;
        grant.createdMs = m_clock.nowMs();
        if (auto added = repo.add(grant); !added)
            return added;
    }
    return {};
}

Status GrantService::clear(ObjectKind kind, const QString &object)
{
    return GrantRepository(m_db).removeAll(kind, object);
}

} // namespace pando::core::authz
