#pragma once
// The engine's insides, shared by the files that implement Engine (engine.cpp: start, apps,
// logs and accessors; enginedeploys.cpp: deploys and their approvals; enginegrants.cpp: grants,
// ownership and decisions). Not for use elsewhere.

#include "core/engine/engine.h"

#include "core/accounts/accountrepository.h"
#include "core/accounts/accountservice.h"
#include "core/accounts/loginthrottle.h"
#include "core/authz/grantservice.h"
#include "core/common/periodic.h"
#include "core/deploy/deploylogfeed.h"
#include "core/deploy/deployrunner.h"
#include "core/deploy/servicestep.h"
#include "core/disklimit/disklimiter.h"
#include "core/engine/tokens.h"
#include "core/health/healthmonitor.h"
#include "core/observe/observer.h"
#include "core/pipelines/service/pipelineservice.h"
#include "core/reconciler/reconciler.h"
#include "core/state/repositories.h"
#include "core/work/workpool.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QSet>
#include <QThreadPool>
#include <limits>

namespace pando::core {

// Work pool job kinds.
inline const QString JobDeploy = QStringLiteral("deploy");
inline const QString JobRemove = QStringLiteral("remove");

inline QString newDeployId()
{
    return QStringLiteral("d%1").arg(QRandomGenerator::system()->generate64() & 0xffffffffffffULL, 12, 16,
                                     QLatin1Char('0'));
}

// A moment as the API writes it (ISO 8601, UTC, milliseconds); empty for none (0).
inline QString isoTime(qint64 ms)
{
    return ms > 0 ? QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs) : QString();
}

inline QString payloadValue(const JobRecord &job, const QString &key)
{
    return QJsonDocument::fromJson(job.payload.toUtf8()).object().value(key).toString();
}

struct Engine::Private {
    EngineOptions options;
    std::shared_ptr<adapters::Runtime> runtime;
    std::shared_ptr<adapters::Router> router;
    std::shared_ptr<adapters::SourceProvider> source;
    Clock &clock;
    Database db;
    EventBus events;
    AuditLog audit;
    ApprovalService approvals;
    authz::GrantService grants;
    AppLocks appLocks;
    DeployLogFeed logFeed;
    Services services;
    DeployRunner runner;
    WorkPool pool;
    Reconciler reconciler;
    disklimit::DiskLimiter diskLimiter;
    health::HealthMonitor health;
    Observer observer;
    std::unique_ptr<LogHub> logs;
    std::unique_ptr<pipelines::PipelineService> pipelines;
    std::unique_ptr<accounts::AccountService> accounts;
    std::optional<pipelines::SealBox> seal;                           // app secrets; set by start()
    std::shared_ptr<adapters::ServiceProvisioner> serviceProvisioner; // null: no services
    std::unique_ptr<AppServices> appServices;                         // set by start() with the seal
    // GitHub App connections' tokens (core/sourceconn); null without EngineOptions::forgeAppTokens.
    std::unique_ptr<sourceconn::InstallationTokens> installationTokens;
    // OAuth connections' authorizations and renewals; null without EngineOptions::forgeOAuth.
    std::unique_ptr<sourceconn::OAuthGrants> oauthGrants;
    QByteArray tokenKey;
    std::unique_ptr<assertion::AssertionService> assertions; // set by start()
    // Deploy on push (engineautodeploy.cpp): failed webhook signatures per network, the thread
    // that polls, and the threads that queue the deploys deliveries asked for.
    accounts::LoginThrottle hookThrottle{clock, accounts::ThrottlePolicy{std::numeric_limits<int>::max()},
                                         accounts::ThrottlePolicy{20, 1000, 5 * 60 * 1000, 10 * 60 * 1000}};
    Periodic poller;
    Periodic logSweeper; // compresses and removes deploys' output (enginelogs.cpp)
    QThreadPool hookPool;
    QMutex previewMutex; // one pull request delivery at a time makes or removes previews
    // Commit statuses of deploys, and the comment on a preview's pull request
    // (enginestatuses.cpp): one thread, reports in order; cancelled at shutdown.
    QThreadPool statusPool;
    CancelToken statusCancel;
    void watchCommitStatuses();
    // What the status thread reports through: the forge API of token connection `connection` and
    // the repository repoUrl names on it. nullopt when the connection has no API to report to
    // (none, gone, a deploy key, a generic git host); an error when it has one that cannot be used.
    struct ForgeTarget {
        std::unique_ptr<adapters::ForgeApi> api;
        adapters::RepoAddress repo;
    };
    std::optional<Result<ForgeTarget>> reportTarget(const QString &connection, const QString &repoUrl);
    void reportCommitStatus(const Event &event);
    // The comment on the pull request of the preview event's deploy is about: what the deploy does.
    void reportOnPreview(const Event &event);
    // Queues the edit that tells preview's pull request that the preview went, and why.
    void tellPullRequestItWent(const autodeploy::PreviewRecord &preview, const QString &why);
    // Says state on preview's pull request through its app's token connection: its comment
    // edited, or posted when there is none yet (or it was deleted on the forge). A refusal is an
    // audit line forge.comment.
    void tellPullRequest(const autodeploy::PreviewRecord &preview, const QString &state, bool gone);
    mutable QMutex sinkMutex; // guards sinkReporter
    AuditSinkReporter sinkReporter;

    QMutex mutex;                      // guards the two sets below
    QSet<QString> removing;            // apps whose teardown is queued or running
    QHash<QString, qint64> deployJobs; // deploy id → job id while it runs

    Private(EngineOptions o, std::shared_ptr<adapters::Runtime> rt, std::shared_ptr<adapters::Router> ro,
            std::shared_ptr<adapters::SourceProvider> so, Clock &c)
        : options(std::move(o)), runtime(std::move(rt)), router(std::move(ro)), source(std::move(so)), clock(c),
          db(options.database), audit(db, clock), approvals(db, audit, &events, clock),
          grants(db, audit, clock), services{db,
                                             *runtime,
                                             *router,
                                             *source,
                                             clock,
                                             events,
                                             audit,
                                             options.policy,
                                             options.dataDir,
                                             options.installId,
                                             options.retireGraceMs,
                                             appLocks,
                                             &approvals,
                                             &options.approvalPolicy,
                                             options.approvalTtlMs},
          runner(services), pool(db, clock, options.workers), reconciler(services), diskLimiter(services),
          health(services), observer(*runtime, services.labels(), clock)
    {
        services.logFeed = &logFeed;
        if (options.forgeAppTokens) {
            installationTokens = std::make_unique<sourceconn::InstallationTokens>(options.forgeAppTokens, clock);
            services.installationTokens = installationTokens.get();
        }
        if (options.forgeOAuth) {
            oauthGrants = std::make_unique<sourceconn::OAuthGrants>(options.forgeOAuth, clock);
            services.oauthGrants = oauthGrants.get();
        }
    }

    // An app to create (Engine::createApp, a preview): its spec and text, whose means read it, and
    // rows that exist with it or not at all.
    struct NewApp {
        AppSpec spec;
        QByteArray text;
        bool trusted = false;
        QString connection;
        QString writer;                            // AppRecord::specWriter
        std::function<Status()> alsoInTransaction; // more rows, in the app's transaction
        QJsonObject auditDetail;                   // of its app.create line
    };
    // Its addresses planned, its source read, its stable port taken, its row with the creator's
    // owner grant (and alsoInTransaction's) in one commit, audited and announced.
    Result<AppView> createApp(const NewApp &made, const Actor &actor);
    Status runDeployJob(const JobRecord &job, const CancelToken &cancel);
    Status enqueueDeploy(const DeployRecord &deploy);
    // Carries a settled deploy approval to the deploy it held: queued again when approved,
    // ended otherwise. Nothing to do when the deploy no longer waits.
    Status applyDecision(const ApprovalRecord &approval);
    Status runRemoveJob(const JobRecord &job);
    // Specgate (core/policy) for the actor's role on a change of the app's spec.
    Status specGate(const Actor &actor, const AppRecord &current, const AppSpec &next);
    AppStatus status(const AppRecord &app, const std::optional<DeployRecord> &last);
    Result<AppView> view(const AppRecord &record);
    // Finishes a seal key rotation a dead process left, loads the key (enginesecrets.cpp).
    Status openSecrets();
    // The app secret store over the open seal; Unavailable before start() opened it.
    Result<secrets::AppSecretStore> appSecretStore();
    // Every secret of app `from` set on app `to` too (a preview's; enginesecrets.cpp).
    Status copyAppSecrets(const QString &from, const QString &to);
    // Makes appServices once the seal is open (engineservices.cpp).
    void openServices();
    // The app's services after its containers went: kept or deleted as the job says.
    Status removeServicesOf(const JobRecord &job);
    // The slot's service when it runs: NotFound without it, Conflict while it does not run.
    Result<ServiceView> runningService(const QString &app, const QString &slot);
    // The app's volumes on the runtime (enginevolumes.cpp): those of its spec, and those kept
    // after it was removed with its data.
    Result<QList<adapters::VolumeInfo>> appVolumes(const QString &app);
    // Removes the app's volumes when the removal job says to delete its data.
    Status removeVolumesOf(const JobRecord &job);
    // A backup written by write into a 0600 file of the data directory ("KIND-backup-….partial"),
    // which the caller then owns; removed again when write fails.
    Result<ServiceBackupFile> backupToFile(const QString &kind, const QString &fileName,
                                           const std::function<Result<qint64>(QIODevice &out)> &write);
    // One of the app's volumes as the runtime has it, with where the serving version mounts it
    // (enginevolumes.cpp). NotFound when the spec has no such volume or no deploy made it yet.
    struct AppVolume {
        adapters::VolumeInfo volume;
        AppSpec::Run::Volume mount;
        DeployRecord serving; // the serving version's; an empty id when none serves
    };
    Result<AppVolume> findAppVolume(const QString &app, const QString &volume);
    // As findAppVolume, and Conflict without a serving version (a restore runs it again).
    Result<AppVolume> findRestorableVolume(const QString &app, const QString &volume);
    // Whether the container keeps running for a moment after a start (enginelifecycle.cpp).
    Status stillRunning(const QString &containerId, const QString &app);
    // Volumes kept under the app's name go back only to an administrator's app of that name.
    Status checkKeptVolumes(const QString &app, const Actor &actor);
    // Refuses ServiceData::Ask when the app has services or volumes to decide on.
    Status checkServiceData(const QString &app, Engine::ServiceData data);
    QString currentContainer(const QString &app);
    // The object a grant names must exist: a grant on nothing would pass to the next object of
    // that name (enginegrants.cpp).
    Status checkGrantObject(authz::ObjectKind kind, const QString &name);
    // The user a grant names, by username (NotFound naming it, where "user").
    Result<accounts::User> grantee(const QString &username);
    // What core/disklimit did about the app's serving deploy, for its status (enginecapacity.cpp).
    QString diskStatusReason(const AppRecord &app);
    // Why an app a person stopped is stopped ("stopped by alice, 2026-12-05 10:42 UTC"); empty
    // when it is not held so (enginelifecycle.cpp).
    static QString stoppedReason(const AppRecord &app);
    // Starts the app's serving container again, or (restart) stops and starts it; either ends
    // what held it stopped.
    Result<AppView> runAgain(const QString &name, const Actor &actor, bool restart);
    // The repository's address as the git source takes it (at source.repo); an image source
    // passes: its registry is asked when a deploy builds (enginesources.cpp).
    Status checkSourceUrl(const AppSpec &spec) const;
    // The spec's source checked and its ref resolved with the means of whoever wrote the spec
    // (trusted: an administrator; core/policy/sourceaccess.h; enginesources.cpp). An untrusted
    // fetch that fails answers policy::unreadableSource(), no sooner than its floor.
    // connection: the source connection it reads through (chooseConnection), or empty. An image
    // source resolves to no commit.
    Result<QString> resolveSource(const AppSpec &spec, bool trusted, const QString &connection,
                                  const QString &refWhere);
    // The source connection store over the open seal; Unavailable before start() opened it.
    Result<sourceconn::ConnectionStore> connectionStore();
    // The same for administrators (and the install's own authority) alone: Forbidden otherwise.
    Result<sourceconn::ConnectionStore> administeredConnections(const Actor &actor);
    // administeredConnections() where OAuth connections can be authorized: Unavailable without
    // EngineOptions::forgeOAuth.
    Result<sourceconn::ConnectionStore> oauthConnections(const Actor &actor);
    // Whether actor may read sources through the connection: administrators (and the install's
    // own authority) any, others with a "user" grant on it (engineconnections.cpp).
    Result<bool> mayUseConnection(const Actor &actor, const QString &name);
    // The forge API of token connection `name` (EngineOptions::forgeApis): Invalid for a deploy key
    // or a generic git host, which have none; Unavailable when the install has no forge APIs.
    Result<std::unique_ptr<adapters::ForgeApi>> forgeApi(const QString &name);
    // What a forge API call that failed tells the caller. The forge refusing the connection's
    // token is not the caller's own sign-in failing: Unauthorized and Forbidden would read as that
    // (401, 403), so they come back as Failed, with the adapter's hint on what the token lacks. A
    // GitHub App token the forge refused is dropped (noteRefusal, core/deploy/services.h).
    Error forgeRefusal(const QString &connection, Error e);
    // Which connection reads spec's source when actor writes it: source.connection when it names
    // one (it must exist, cover the repository and be actor's to use), else the one covering it
    // most closely that actor may use; empty when none does.
    Result<QString> chooseConnection(const AppSpec &spec, const Actor &actor);
    // Kept service data under the app's name that actor may not take (engineservices.cpp):
    // only its former owners and administrators make an app of that name again.
    Status checkKeptServiceData(const QString &app, const Actor &actor);
    // The webhook store over the open seal; Unavailable before start() opened it.
    Result<autodeploy::HookStore> hookStore();
    // Opens the assertion keys in the data directory (engineassertion.cpp).
    Status openAssertions();
};

} // namespace pando::core
