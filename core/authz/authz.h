#pragma once
// Package authz: what a principal may do. Two planes decide together: the install role
// (admin ⊃ operator ⊃ member ⊃ viewer) gives a permission everywhere or only on objects the
// person holds a grant on (per-app owner/deployer/viewer, per-pipeline owner/operator/viewer),
// and an API token's scopes narrow that further. The API asks decide() once per request.
// Reading follows the grants too: members and viewers read an app or pipeline (its logs, vars,
// secret names, runs) only with a grant on it, and lists show them only those (visibility()).

#include "core/accounts/accounts.h"
#include "core/state/database.h"

#include <QList>
#include <QSet>
#include <QString>
#include <string_view>

namespace pando::core::authz {

// The permissions a route may need. "self" is anything a signed-in principal does to its own
// session and tokens.
namespace permission {
inline constexpr std::string_view Public = "public";
inline constexpr std::string_view Self = "self";
inline constexpr std::string_view AppsRead = "apps.read";
inline constexpr std::string_view AppsWrite = "apps.write";
inline constexpr std::string_view DeploysWrite = "deploys.write";
inline constexpr std::string_view LogsRead = "logs.read";
inline constexpr std::string_view PipelinesRead = "pipelines.read";   // pipelines, runs, secret names
inline constexpr std::string_view PipelinesWrite = "pipelines.write"; // set, pause, remove; secrets
inline constexpr std::string_view RunsWrite = "runs.write";           // trigger and abort runs
inline constexpr std::string_view ApprovalsWrite = "approvals.write"; // approve and reject what waits
inline constexpr std::string_view AuditRead = "audit.read";
inline constexpr std::string_view UsersRead = "users.read";
inline constexpr std::string_view UsersWrite = "users.write";
// Install settings and the marks that widen what a pipeline may do (host execution): admins only.
inline constexpr std::string_view SettingsWrite = "settings.write";
inline constexpr std::string_view All[] = {Public,         AppsRead,  AppsWrite,      DeploysWrite, LogsRead,
                                           PipelinesRead,  Self,      UsersRead,      UsersWrite,   RunsWrite,
                                           PipelinesWrite, AuditRead, ApprovalsWrite, SettingsWrite};

constexpr bool isKnown(std::string_view p)
{
    for (std::string_view known : All) {
        if (known == p)
            return true;
    }
    return false;
}
} // namespace permission

// The token scope a permission needs (accounts::knownScopes()); empty: no scope needed.
QString scopeFor(std::string_view permission);

// Connection: a source connection (core/sourceconn), whose one grant role "user" lets a member
// read apps' sources through it.
enum class ObjectKind { None, App, Pipeline, Token, Connection };
QString objectKindName(ObjectKind kind);

// The object a request acts on, as the URL names it (never the body).
struct ObjectRef {
    ObjectKind kind = ObjectKind::None;
    QString name;         // app or pipeline name, token id; empty when it does not exist
    QString ownerId;      // for tokens: the user the token belongs to
    QString text() const; // "app/hello", "pipeline/ci", "token/t…", "" for none
};

// Grant roles: apps have owner, deployer, viewer; pipelines owner, operator, viewer; source
// connections user.
bool isValidGrantRole(ObjectKind kind, const QString &role);

struct Grant {
    ObjectKind kind = ObjectKind::App;
    QString object;
    QString userId;
    QString role;
    qint64 createdMs = 0;
};

class GrantRepository {
public:
    explicit GrantRepository(Database &db) : m_db(db) {}
    Status add(const Grant &grant); // an existing identical grant is kept
    Status remove(ObjectKind kind, const QString &object, const QString &userId, const QString &role);
    // Every grant on the object (its removal, say).
    Status removeAll(ObjectKind kind, const QString &object);
    Result<QStringList> roles(ObjectKind kind, const QString &object, const QString &userId);
    // Every grant on the object, oldest first.
    Result<QList<Grant>> list(ObjectKind kind, const QString &object);
    Result<int> countOwned(ObjectKind kind, const QString &userId);
    // The objects of this kind the user holds any grant on.
    Result<QSet<QString>> objectsOf(ObjectKind kind, const QString &userId);

private:
    Database &m_db;
};

// Whether someone may read through source connection name: with the install's authority any,
// a member only one granted to them as "user", nobody (an empty userId without that authority) none.
Result<bool> mayUseConnection(Database &db, const QString &userId, bool installAuthority, const QString &name);

struct AuthzOptions {
    int appLimit = 10; // apps a member may make (AppRecord::creatorId); operators and admins are not limited
};

struct Decision {
    bool allowed = false;
    QString reason; // why not, for the 403 and the audit line
    explicit operator bool() const { return allowed; }
};

// Whether a permission only reads (apps.read, logs.read, pipelines.read).
bool isReadPermission(std::string_view permission);

// What a principal sees in lists and streams: every app and pipeline (operators, administrators,
// the initial token), or only those it holds a grant on (members, viewers); a token without
// apps:read or pipelines:read sees none of that kind.
struct Visibility {
    bool allApps = false;
    bool allPipelines = false;
    QSet<QString> apps;
    QSet<QString> pipelines;
    // An object of kind None (nothing a grant is held on) is seen only by who sees everything.
    bool sees(const ObjectRef &object) const;
    bool seesApp(const QString &name) const { return sees(ObjectRef{ObjectKind::App, name, {}}); }
    bool seesPipeline(const QString &name) const { return sees(ObjectRef{ObjectKind::Pipeline, name, {}}); }
};

// Decides with the role matrix, the grants and the token's scopes. Threading: any thread.
class Authorizer {
public:
    explicit Authorizer(Database &db, AuthzOptions options = {}) : m_db(db), m_options(options) {}
    Result<Decision> decide(const accounts::Principal &principal, std::string_view permission, const ObjectRef &object);
    // What the principal's lists may show (Visibility).
    Result<Visibility> visibility(const accounts::Principal &principal);
    const AuthzOptions &options() const { return m_options; }
    // Before the first decide(): options are not guarded.
    void setOptions(const AuthzOptions &options) { m_options = options; }

private:
    Database &m_db;
    AuthzOptions m_options;
};

// What the role may do on every object without any grant; used by decide() and documented by
// the matrix test. Members and viewers read only what they hold a grant on, so no read is here.
bool roleAllows(accounts::Role role, std::string_view permission);

} // namespace pando::core::authz
