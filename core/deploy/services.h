#pragma once
// What the deploy pipeline and the reconciler work with: the state store, the adapters, the
// clock, the event bus and the audit log, plus the install's settings. The engine owns all of
// them; this is a borrowed view.

#include "adapters/api/routing.h"
#include "adapters/api/runtime.h"
#include "adapters/api/source.h"
#include "core/approval/approvalservice.h"
#include "core/audit/auditlog.h"
#include "core/common/clock.h"
#include "core/events/eventbus.h"
#include "core/pipelines/sealbox/sealbox.h"
#include "core/planner/planner.h"
#include "core/policy/policy.h"
#include "core/policy/sourceaccess.h"
#include "core/state/database.h"

#include <QHash>
#include <QMutex>
#include <QStringList>
#include <functional>
#include <memory>

namespace pando::core {

class AppServices;
class DeployLogFeed;
namespace sourceconn {
class InstallationTokens;
class OAuthGrants;
} // namespace sourceconn

// One mutex per app: the deploy's switch and retire, an app's removal and the reconciler's
// actions on an app never interleave.
class AppLocks {
public:
    std::shared_ptr<QMutex> lockFor(const QString &app);

private:
    QMutex m_mutex;
    QHash<QString, std::shared_ptr<QMutex>> m_locks;
};

struct Services {
    Database &db;
    adapters::Runtime &runtime;
    adapters::Router &router;
    adapters::SourceProvider &source;
    Clock &clock;
    EventBus &events;
    AuditLog &audit;
    HostPolicy policy;
    QString dataDir;
    QString installId;
    int retireGraceMs = 300;
    AppLocks &appLocks;
    // Sign-off: which deploys need it and where it is asked for (null: no deploy waits).
    ApprovalService *approvals = nullptr;
    const policy::Policy *approvalPolicy = nullptr;
    qint64 approvalTtlMs = 0;
    // Opens app secrets (core/secrets); null until the engine has loaded the seal key.
    const pipelines::SealBox *seal = nullptr;
    // The app's backing services (core/services); null when the install has no services adapter.
    AppServices *appServices = nullptr;
    // Hands each line a deploy step prints to those following the deploy live; null: nobody can.
    DeployLogFeed *logFeed = nullptr;
    // GitHub App connections' installation tokens (core/sourceconn); null: none can be had.
    sourceconn::InstallationTokens *installationTokens = nullptr;
    // OAuth connections' renewals (core/sourceconn); null: none can be used.
    sourceconn::OAuthGrants *oauthGrants = nullptr;

    // Labels every object of this install carries; with app and deploy when given.
    adapters::Labels labels(const QString &app = {}, const QString &deployId = {}) const;
    // Where the app's deploys check out and build: <data>/work/<app>.
    QString workRoot(const QString &app) const { return dataDir + QStringLiteral("/work/") + app; }
    void publish(EventType type, const QString &app, const QString &deployId, const QJsonObject &data = {}) const;
};

// What a fetch of an app's source may offer the remote (core/policy/sourceaccess.h): its
// writer's means under the settings as they are now and, when it reads through a source
// connection (AppRecord::sourceConnection), that connection's credential alone. The caller
// wipes the credential once the fetch is done.
Result<adapters::SourceAccess> fetchAccess(const Services &s, bool trusted, const policy::AppAccess &settings,
                                           const QString &connection);
// An image source's registry connection's login, for its pull; the caller wipes it.
Result<adapters::RegistryCredential> registryLogin(const Services &s, const QString &connection);
// A base image a build pulls through a registry connection, with its login (the caller wipes it).
struct BaseImageLogin {
    QString image;
    QString connection;
    adapters::RegistryCredential credential;
};
// For each of images (a Dockerfile's, core/detection/baseimages.h) that a registry connection
// covers: the closest one the person who last wrote app's spec may use now (AppRecord::
// specWriter; every one when they wrote it with the install's authority), and its login. Images
// no such connection covers are not listed. Errors: Conflict, where build.dockerfile, when two
// cover an image equally.
Result<QList<BaseImageLogin>> baseImageLogins(const Services &s, const AppRecord &app, const QStringList &images);
// After a fetch or forge API call through connection failed with error: a refusal of the
// credential (Unauthorized) drops a GitHub App token held for it, which GitHub revokes with its
// installation, so the next use mints a new one or says why it cannot.
void noteRefusal(const Services &s, const QString &connection, const Error &error);

// Images carry only the install's labels; their tags say which app and deploy they serve. A
// build of a tree the engine has built before (for any app) then hits the cache all the way,
// and one image may carry the tags of several deploys.
QString imageTag(const QString &app, const QString &deployId);
// The deploy a tag names ("pando/hello:d0123456789ab" → "d0123456789ab"); empty for other tags.
QString deployOfTag(const QString &app, const QString &tag);
// The app a tag names ("pando/hello:d0123456789ab" → "hello"); empty for other tags.
QString appOfTag(const QString &tag);
// Untags every tag of app's images whose deploy keep() refuses; an image loses its last tag
// and goes with it. Returns the tags removed.
QStringList untagImages(const Services &s, const QString &app,
                        const std::function<bool(const QString &deployId)> &keep);
QString containerName(const QString &app, const QString &deployId);

} // namespace pando::core
