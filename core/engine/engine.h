#pragma once
// The engine: what pandod, the embedded server and the desktop's in-process session drive.
// It owns the state store, the durable work queue and its worker pool, the deploy pipeline,
// the reconciler and the live log hub, and talks to the outside only through adapters.
//
// Threading: the query and command methods are thread-safe and return quickly (they touch
// the database only); long work (deploys, removals) runs as durable jobs on the worker pool
// and reports progress on events(). start() and shutdown() are called from the thread that
// created the engine.

#include "adapters/api/forge.h"
#include "adapters/api/routing.h"
#include "adapters/api/runtime.h"
#include "adapters/api/source.h"
#include "core/accounts/accounts.h"
#include "core/approval/approvalservice.h"
#include "core/assertion/assertion.h"
#include "core/audit/auditlog.h"
#include "core/authz/grantservice.h"
#include "core/autodeploy/forgehook.h"
#include "core/autodeploy/hookstore.h"
#include "core/autodeploy/previews.h"
#include "core/capacity/capacity.h"
#include "core/common/clock.h"
#include "core/events/eventbus.h"
#include "core/logstream/loghub.h"
#include "core/planner/planner.h"
#include "core/policy/domainpolicy.h"
#include "core/policy/policy.h"
#include "core/policy/sourceaccess.h"
#include "core/secrets/appsecrets.h"
#include "core/services/appservices.h"
#include "core/sourceconn/sourceconn.h"
#include "core/spec/appspec.h"
#include "core/spec/specedit.h"
#include "core/state/database.h"
#include "core/state/records.h"
#include "core/state/repositories.h"

#include <QJsonObject>
#include <QObject>
#include <QTemporaryFile>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

namespace pando::core {

class DeployLogFeed;

namespace pipelines {
class PipelineService;
struct SetPipelineResult;
struct PipelineView;
struct SetPipelineOptions;
} // namespace pipelines
namespace accounts {
class AccountService;
}

// One place the edge serves an app at (docs/edge.md), with its certificate's state when asked for.
struct AddressView {
    QString url;
    QString tls;        // "auto", "internal", "off"
    bool moved = false; // the app moved away: it redirects to where it is now
    std::optional<adapters::CertificateState> certificate;
    QJsonObject toJson() const;
};

struct AppView {
    AppRecord record;
    AppSpec spec;
    QString url;                  // where the app is reached; empty before the first route
    QList<AddressView> addresses; // on the edge's shared ports, as it serves them now
    AppStatus status = AppStatus::New;
    QString statusReason; // why, when Pando stopped or warned it (its disk limit) or it is unhealthy; else empty
    std::optional<DeployRecord> lastDeploy;
    QJsonObject toJson() const;
};

// An app's deploy on push or by polling (source.autodeploy; engineautodeploy.cpp,
// docs/autodeploy.md): what it follows, its webhook and what forges delivered to it.
struct HookView {
    QString app;
    AppSpec::Source::AutoDeploy autodeploy;
    QString branch; // the branch it follows (source.ref), when it follows no tags
    autodeploy::HookInfo hook;
    autodeploy::PollState poll;
    QList<autodeploy::Delivery> deliveries; // newest first
    QJsonObject toJson() const;
};
QJsonObject toJson(const autodeploy::Delivery &delivery);

// A pull request's preview (enginepreviews.cpp, docs/autodeploy.md): its record, when it goes if
// nothing is pushed to it, and its app as it is now (nullopt while it is being made or removed).
struct PreviewView {
    autodeploy::PreviewRecord record;
    qint64 expiresMs = 0;
    std::optional<AppView> app;
    QJsonObject toJson() const;
};

struct DeployView {
    DeployRecord record;
    QList<StepRecord> steps;
    QJsonObject toJson() const;
};

QJsonObject toJson(const DeployRecord &deploy);
QJsonObject toJson(const StepRecord &step);
QJsonObject toJson(const adapters::LogLine &line);
QJsonObject toJson(const StepLogLine &line);
QJsonObject toJson(const AuditRecord &line);

// One audit sink's delivery state (GET /api/v1/audit/sinks, `pando audit sinks`).
struct AuditSinkReport {
    QString name;
    QString kind;              // "syslog", "https"
    qint64 cursor = 0;         // the last seq delivered (or passed over by the sink's filters)
    qint64 newest = 0;         // the newest seq in the log
    qint64 lag = 0;            // lines behind: newest - cursor
    QString lastError;         // why the last delivery failed; empty once one succeeded
    qint64 lastDeliveryMs = 0; // the last delivery the destination took; 0: none since start
    qint64 updatedMs = 0;      // when the cursor or the error last changed (durable)
    int failures = 0;          // consecutive failed deliveries since start
};
using AuditSinkReporter = std::function<Result<QList<AuditSinkReport>>()>;

struct EngineOptions {
    QString dataDir; // the source cache, key files, the SQLite file
    DatabaseConfig database;
    HostPolicy policy;
    policy::Policy approvalPolicy;                // which deploys need sign-off (empty: none)
    qint64 approvalTtlMs = 24LL * 60 * 60 * 1000; // how long a deploy waits for it
    int approvalSweepMs = 1000;                   // how often expired requests are settled
    int workers = 2;                              // deploys of different apps in parallel
    int reconcileIntervalMs = 5000;
    int diskCheckIntervalMs = 30000; // how often apps are held to their disk limits; 0: never
    // How often the health monitor (core/health) looks which serving apps are due for a probe
    // (each app is probed every health.every); 0: serving apps are not probed.
    int healthTickMs = 250;
    // How often apps with source.autodeploy: poll are looked at (each is asked every
    // autodeploy.every); 0: never (pollOnce() still works).
    int autodeployTickMs = 5000;
    // How often finished deploys' output is compressed and output past the install's retention
    // (settings deploy_log_days) removed; 0: never (sweepDeployLogs() still works).
    int logSweepMs = 60'000;
    int retireGraceMs = 300; // how long the old version keeps serving after the switch
    // Identity assertions the edge passes to apps (core/assertion, docs/edge.md): their iss (empty:
    // "pando:<installId>") and how often the signing key is replaced.
    QString assertionIssuer;
    int assertionKeyDays = 7;
    // Labels everything this install makes on a runtime; the reconciler and teardown touch only
    // objects that carry it. Required: app/wiring's Install gives each data directory its own.
    QString installId;
    // Opens a forge's REST API (adapters/api/forge.h) for a token connection's account: commit
    // statuses of deploys, the repositories and branches a connection sees. Empty: there is none
    // (statuses are not reported, listings are refused). app/wiring's Install gives the REST one.
    std::function<std::unique_ptr<adapters::ForgeApi>(const adapters::ForgeAccount &account)> forgeApis;
    // Mints a GitHub App installation's access token (adapters::mintInstallationToken) for the
    // fetches and forge API calls of GitHub App connections. Empty: such connections cannot be
    // used. app/wiring's Install gives the REST one.
    sourceconn::InstallationTokens::Mint forgeAppTokens;
    // The forges' OAuth endpoints (adapters::makeForgeOAuth) that authorize OAuth connections and
    // renew their access. Null: such connections can be neither added nor used. app/wiring's
    // Install gives the REST one.
    std::shared_ptr<const adapters::ForgeOAuth> forgeOAuth;
};

struct EngineParts;

// The file the initial admin token is written to in the data directory.
inline const QString InitialTokenFileName = QStringLiteral("initial-admin-token");

// A service's or a volume's backup as a file (Engine::backupServiceToFile, backupVolumeToFile).
struct ServiceBackupFile {
    QString path;     // in the data directory, 0600; the caller removes it once sent
    QString fileName; // what the user's copy is called (Engine::backupFileName)
    qint64 bytes = 0;
};

class Engine : public QObject {
    Q_OBJECT
public:
    Engine(EngineOptions options, std::shared_ptr<adapters::Runtime> runtime, std::shared_ptr<adapters::Router> router,
           std::shared_ptr<adapters::SourceProvider> source, Clock &clock = SystemClock::instance(),
           QObject *parent = nullptr);
    ~Engine() override;

    // Opens the database (running migrations), settles work a previous process left running,
    // restores routes, and starts the workers and the reconciler.
    Status start();
    // Stops taking work, cancels running jobs and waits for the workers.
    void shutdown();

    // On a fresh install, creates the initial admin token, writes it to
    // <dataDir>/InitialTokenFileName (0600) and returns its secret once; nullopt when the install
    // already has tokens or users (the first administrator exists). Not audited, not made.
    Result<std::optional<QString>> bootstrapAdminToken();
    Result<TokenRecord> authenticate(const QString &bearerToken);

    // Creates the app; a creator who is a user (actor.userId) owns it from the same commit, so
    // the app and its owner grant exist together or not at all.
    Result<AppView> createApp(const QByteArray &specText, const Actor &actor);
    // Replaces the app's spec; the next deploy runs it (deploys already asked for keep theirs).
    // The name must stay and the stable port may not move. Specgate (core/policy) holds
    // actor.role to the approval policy: Forbidden when it may not stage the change. Errors
    // otherwise as createApp().
    Result<AppView> updateApp(const QString &name, const QByteArray &specText, const Actor &actor);
    // run.env as a new revision of the app's spec (engineenv.cpp): the variables edit names set
    // or unset, the rest of the text as written (core/spec/specedit.h), under updateApp()'s
    // rules and audit (app.update, with the variables' names). Conflict when the spec changed
    // while it was edited; nothing is written when nothing changes.
    struct EnvUpdate {
        AppView app;
        QList<EnvChange> changes; // empty: the spec already said so
    };
    Result<EnvUpdate> changeAppEnv(const QString &name, const EnvEdit &edit, const Actor &actor);
    // What the app's next container finds in its environment and where each variable comes from;
    // the values of run.env's and Pando's, only the names of secrets' and services'.
    struct EnvVariable {
        enum class From { Spec, Pando, Service, Secret };
        QString name;
        std::optional<QString> value; // nullopt: a secret's or a service's (never shown)
        From from = From::Spec;
        QString detail; // "run.port", the service's slot, a secret's clash with run.env
        QJsonObject toJson() const;
    };
    Result<QList<EnvVariable>> appEnvironment(const QString &name);
    Result<QList<AppView>> apps();
    // One app, with its addresses' certificate states (the list leaves those out).
    Result<AppView> app(const QString &name);
    // Marks the app as removing and queues its teardown (containers, images, route, rows). Its
    // grants go with its row once the teardown succeeded; a failed one keeps both for a retry.
    Status removeApp(const QString &name, const Actor &actor);
    // As removeApp(), saying what becomes of its services' data (engineservices.cpp). Ask
    // refuses (Invalid, naming the flags) when the app has services or kept service data.
    enum class ServiceData { Ask, Keep, Delete };
    Status removeApp(const QString &name, const Actor &actor, ServiceData data);

    // The app's backing services (core/services; every app's when app is empty). The services
    // adapter is set before start(); without one, specs with services are refused at plan time.
    void setServiceProvisioner(std::shared_ptr<adapters::ServiceProvisioner> provisioner);
    Result<QList<ServiceView>> services(const QString &app);
    // Dumps a slot's data to out; progress gets the bytes written so far. NotFound without the
    // slot, Conflict while its service does not run. Audited: a dump whose line could not be
    // written fails with the audit's error (drop what was written).
    Result<qint64> backupService(const QString &app, const QString &slot, QIODevice &out, const CancelToken &cancel,
                                 const std::function<void(qint64 bytes)> &progress, const Actor &actor);
    // As backupService(), into a new file in the data directory (a dump may not fit in memory);
    // files a killed process left there for a day are removed first.
    Result<ServiceBackupFile> backupServiceToFile(const QString &app, const QString &slot, const CancelToken &cancel,
                                                  const Actor &actor);
    // An archive of one of the app's volumes (run.volumes) as a file, as the runtime makes it
    // (adapters::Runtime::exportVolume: a tar of its files on Docker, Incus's volume backup
    // tarball on Incus). NotFound when the spec has no such volume or no deploy made it yet;
    // audited (volume.backup), and not handed out unaudited.
    Result<ServiceBackupFile> backupVolumeToFile(const QString &app, const QString &volume, const CancelToken &cancel,
                                                 const Actor &actor);
    // Replaces the files of one of the app's volumes with those of archivePath (a backup
    // backupVolumeToFile wrote, of a volume on the same kind of runtime). The archive is read
    // through first (Invalid naming the entry that would land outside the volume, or a file that
    // is no such archive: nothing is touched). Then the app's containers go, the volume is made
    // again from the archive and the serving version runs again (an app a person stopped stays
    // stopped). The files from before are kept for the time of the restore and put back when it
    // fails. Conflict while a deploy of the app is under way or it has no deployed version;
    // NotFound as backupVolumeToFile. Audited (volume.restore).
    // A new private (0600) file in the data directory for an archive a client sends to restore
    // ("restore-backup-….partial"): on disk, as an archive may not fit in memory. Removed with
    // the object; one a killed process left goes with a later backup.
    Result<std::unique_ptr<QTemporaryFile>> uploadFile();
    // Whether restoreVolumeFromFile could restore the volume now, as it would refuse it
    // (NotFound, Conflict): asked before a client sends an archive.
    Status checkVolumeRestore(const QString &app, const QString &volume);
    Result<AppView> restoreVolumeFromFile(const QString &app, const QString &volume, const QString &archivePath,
                                          const CancelToken &cancel, const Actor &actor);
    // Removes a slot's container, and with deleteData its volume and credentials. Conflict while
    // the app's spec declares the slot (the next deploy would provision it again), NotFound
    // without it. Audited: removed but not audited is an error saying it was removed.
    Status removeService(const QString &app, const QString &slot, bool deleteData, const Actor &actor);
    // The file name a backup of the slot taken now goes by: "<app>-<slot>-<UTC yyyyMMdd-HHmmss>.<ext>",
    // the extension by the service's kind (rdb for redis, sql otherwise).
    QString backupFileName(const QString &app, const QString &slot, const QString &kind) const;

    // What apps whose spec a member writes may use of the install (core/policy/sourceaccess.h):
    // file:// repositories, the ssh-agent, internal hosts, the stable ports they may pick.
    // Changing them is for administrators (the API's settings.write); each change is audited as
    // settings.apps with the names changed.
    Result<policy::AppAccess> appAccess();
    Status setAppAccess(const policy::AppAccess &settings, const Actor &actor);
    // Which names the edge serves apps at (core/policy/domainpolicy.h): the base domain, the
    // names allowed, wildcards. For administrators; audited as settings.domains. Apps already
    // served keep their addresses until their next deploy or reconciler pass re-reads them.
    Result<policy::DomainPolicy> domainPolicy();
    Status setDomainPolicy(const policy::DomainPolicy &policy, const Actor &actor);

    // Source connections (core/sourceconn; engineconnections.cpp): forges and the credentials
    // that read private repositories. Administrators add, test, remove and grant them (Forbidden
    // for anyone else); members see and use only those they hold a "user" grant on (NotFound for
    // the others). Every change and test is audited; no credential is ever returned.
    Result<QList<sourceconn::Connection>> connections(const Actor &actor);
    Result<sourceconn::Connection> connection(const QString &name, const Actor &actor);
    // The apps reading their source through it (for administrators and its users).
    Result<QStringList> connectionApps(const QString &name);
    Result<sourceconn::Connection> addConnection(const sourceconn::ConnectionInput &input, const Actor &actor);
    // Conflict, naming them, while apps read their source through it. Its grants go with it.
    Status removeConnection(const QString &name, const Actor &actor);
    // An OAuth connection is added in two steps, by an administrator: begin…() checks the input
    // (input.auth OAuth, input.secret the client secret) and redirectUri (a loopback address the
    // caller listens on, sourceconn::checkRedirectUri) and returns the forge's page to open; the
    // forge then sends the browser to redirectUri with a code and the state, which
    // complete…() (by the same actor, within sourceconn::OAuthGrants::PendingTtlMs) exchanges
    // for the tokens, storing the connection. reauthorize…() begins the same for an OAuth
    // connection there is, whose tokens the forge no longer renews. Unavailable when the install
    // has no EngineOptions::forgeOAuth. The connection.add and connection.authorize audit lines
    // say who and when; no code, state or token is in them.
    struct OAuthAuthorization {
        QString authorizeUrl;
        QString state;
        qint64 expiresMs = 0;
    };
    Result<OAuthAuthorization> beginConnectionAuthorization(const sourceconn::ConnectionInput &input,
                                                            const QString &redirectUri, const Actor &actor);
    Result<OAuthAuthorization> reauthorizeConnection(const QString &name, const QString &redirectUri,
                                                     const Actor &actor);
    Result<sourceconn::Connection> completeConnectionAuthorization(const QString &state, const QString &code,
                                                                   const Actor &actor);
    // Reads repo (at ref; empty: its default branch) through the connection as a deploy would and
    // returns the commit; Invalid when the connection does not cover repo, Failed saying why when
    // the forge refused. Either way the outcome is recorded on the connection.
    Result<QString> testConnection(const QString &name, const QString &repo, const QString &ref, const Actor &actor);
    // Reads image through a registry connection as a pull would (without pulling) and returns its
    // digest; with no image, asks the registry whether it takes the login ("login accepted").
    // Invalid when it is a forge's connection or does not cover image; Failed (NotFound for an
    // image the registry lacks) saying why otherwise. The outcome is recorded on the connection.
    Result<QString> testRegistryConnection(const QString &name, const QString &image, const Actor &actor);
    // What the connection's forge API shows its token (token connections to GitHub, GitLab, Gitea,
    // Bitbucket and Azure DevOps; Invalid with a hint for a deploy key or a generic host,
    // Unavailable when the install has no forge APIs): the repositories it can see, and the
    // branches of one (repo as people write its address; Invalid at "repo" when the connection
    // does not cover it). For whoever may use the connection (NotFound for anyone else, as
    // connection() answers). Read-only, not audited; the token is in no answer and no error.
    Result<QList<adapters::ForgeRepository>> connectionRepositories(const QString &name, const Actor &actor);
    Result<QList<adapters::ForgeBranch>> connectionBranches(const QString &name, const QString &repo,
                                                            const Actor &actor);

    // Queues a deploy of the app at ref (empty: the spec's ref).
    Result<DeployRecord> deploy(const QString &app, const QString &ref, const Actor &actor);
    Result<QList<DeployRecord>> deploys(const QString &app, int limit);
    Result<DeployView> deployView(const QString &id);
    // A deploy's step output (core/deploy/steplog.h): step seq's lines after afterLine, or every
    // step's (seq -1), at most limit (1 to 5000). NotFound for an unknown deploy, and for output
    // removed after the install's retention (saying when and why).
    Result<QList<StepLogLine>> deployLog(const QString &id, int seq, int afterLine, int limit);
    // Compresses the output of deploys that ended and removes output past the retention but for
    // the deploys apps serve (enginelogs.cpp); what it did, for the daemon's log.
    struct LogSweep {
        int archived = 0;
        int removed = 0;
    };
    Result<LogSweep> sweepDeployLogs();
    Status cancelDeploy(const QString &id, const Actor &actor);
    // Deploys an earlier version again: the commit of deploy `to`, or when `to` is empty of the
    // newest deploy that succeeded before the serving one with another commit. Its image is used
    // again (core/deploy/imagereuse.h) and the switch is the deploy's, without downtime. Errors:
    // NotFound for an unknown app or deploy; Invalid for a deploy of another app or one that did
    // not succeed; Conflict when there is no earlier version, or `to` is what serves.
    Result<DeployRecord> rollback(const QString &app, const QString &to, const Actor &actor);

    // Deploy on push (core/autodeploy; engineautodeploy.cpp). The app's webhook, what it follows
    // and its newest deliveries; NotFound without the app.
    Result<HookView> appHook(const QString &app, int deliveries);
    // Replaces the app's webhook secret with `chosen`, or with a new random one when chosen is
    // empty, and returns the new secret (never shown again). Audited as app.hook.secret.
    Result<QByteArray> setHookSecret(const QString &app, QByteArrayView chosen, const Actor &actor);
    // Registers the app's webhook on its forge through the app's source connection (a token
    // connection with an API): the address is baseUrl + /api/v1/hooks/APP, signed with a new
    // random secret that replaces the app's once the forge took it (the hook for the same
    // address is updated, not added twice). Invalid naming the field for an app read through no
    // such connection ("source.connection") or an address a forge cannot reach ("url": not
    // http(s), or a loopback host); the forge's refusal as the adapter says it. Audited as
    // app.hook.register.
    Result<adapters::ForgeWebhook> registerAppHook(const QString &app, const QString &baseUrl, const Actor &actor);
    // A forge's delivery to the app's webhook, verified the forge's way against the app's secret
    // (Unauthorized, the same for an unknown app, one without a secret and a wrong signature;
    // TooLarge past autodeploy::MaxHookPayloadBytes; Invalid naming the field of a body that does
    // not read; Conflict for a delivery id already taken). A verified delivery is recorded and
    // audited (app.hook) and answered at once: a push to what the app follows, with auto-deploy
    // on push, is "accepted" and deploys the pushed commit (through approval where the host
    // policy asks for it) on the hook's own thread; so is a pull request the app previews
    // (previews() below: "deployed" or "removed" once acted on); anything else is "ignored",
    // saying why.
    Result<autodeploy::Delivery> receiveHook(const QString &app, const autodeploy::HookRequest &request,
                                             const Actor &source);
    // Preview deployments (enginepreviews.cpp): a pull request to an app whose spec has
    // preview: true gets an app of its own (APP-pr-N, see core/autodeploy/previews.h), made by
    // receiveHook() on its first delivery, deployed again at each push, removed with everything
    // it made when the request closes. The app's previews, newest pull request first; NotFound
    // without the app.
    Result<QList<PreviewView>> previews(const QString &app);
    // Removes the preview of pull request `number` now, as closing the request does: its deploys
    // cancelled, its app and its data removed (audited as app.remove). NotFound without it.
    Status removePreview(const QString &app, int number, const Actor &actor);
    // Removes the previews nothing was pushed to for their app's preview.ttl (the poller's tick
    // calls it); returns what it did.
    Result<QStringList> expirePreviews();
    // One look at every app with autodeploy: poll that is due (with app: at that app now,
    // whenever it was last asked); returns what it did.
    Result<QStringList> pollOnce(const QString &app = {});

    // The app's secrets (core/secrets): values go in and reach its containers at deploy time;
    // they never come back out. Each change is audited by name. Errors: NotFound naming the app
    // or secret, Invalid for a bad name or value (never showing the value).
    Result<secrets::AppSecretInfo> setAppSecret(const QString &app, const QString &name, QByteArrayView value,
                                                const Actor &actor);
    Result<QList<secrets::AppSecretInfo>> appSecrets(const QString &app);
    Status removeAppSecret(const QString &app, const QString &name, const Actor &actor);

    // Where a tunnel to the app (GET /api/v1/apps/{name}/tunnel) connects on loopback: its route's
    // stable port (enginetunnel.cpp). NotFound for an unknown app; Conflict, saying which, when it
    // has no route yet or its route leads to no container (never deployed, or stopped).
    Result<quint16> tunnelPort(const QString &app);
    // As tunnelPort(), and audits the opening as app.tunnel with who opened it; a tunnel whose
    // line could not be written does not open (the audit's error).
    Result<quint16> openTunnel(const QString &app, const Actor &actor);

    // The last n lines of the app's current container.
    Result<QList<adapters::LogLine>> logTail(const QString &app, int lines);
    // Runs a command in the container of the version the app serves (`pando apps exec`,
    // engineexec.cpp), attached as adapters::Runtime::exec says, until it exits or cancel is set;
    // its exit code. Audited (app.exec: the command's first word and how many arguments follow,
    // never the arguments, which may hold secrets). Conflict when no version serves or its
    // container does not run; Invalid for an empty command.
    Result<int> exec(const QString &app, const adapters::ExecRequest &request, const Actor &actor,
                     const CancelToken &cancel,
                     const std::function<void(std::shared_ptr<adapters::ExecInput> input)> &opened,
                     const std::function<void(int stream, QByteArrayView data)> &onOutput);
    LogHub *logs() const;
    // Each line deploy steps print, as they print it (core/deploy/deploylogfeed.h).
    DeployLogFeed *deployLogFeed() const;
    EventBus *events() const;
    // The pipeline runner (nullptr until one is installed). The engine owns it and shuts it
    // down before itself.
    pipelines::PipelineService *pipelines() const;
    void setPipelines(std::unique_ptr<pipelines::PipelineService> service);
    // The runner's setPipeline()/removePipeline() with ownership (enginegrants.cpp): a user who
    // first sets a pipeline owns it (undone with the pipeline when the grant fails), and a
    // removed pipeline's grants go with it. Unavailable without a runner.
    Result<pipelines::SetPipelineResult> setPipeline(const QString &name, const QByteArray &configYaml,
                                                     const QByteArray &varsYaml,
                                                     const pipelines::SetPipelineOptions &options, const Actor &actor);
    Result<pipelines::SetPipelineResult> setPipeline(const QString &name, const QByteArray &configYaml,
                                                     const QByteArray &varsYaml, bool dryRun, const Actor &actor);
    Status removePipeline(const QString &name, const Actor &actor);
    // The runner's renamePipeline() for someone who may change the pipeline (the route's check):
    // the new name is a new pipeline, so it also takes the right to set one (pipelines.write on
    // no particular pipeline: members may not). Forbidden (where "name") with the reason, audited
    // as a refusal, otherwise.
    Result<pipelines::PipelineView> renamePipeline(const accounts::Principal &principal, const QString &from,
                                                   const QString &to, const Actor &actor);

    // Grants on apps and pipelines (core/authz's GrantService; enginegrants.cpp). The object
    // must exist (NotFound; Unavailable for a pipeline without a runner) and the user too
    // (NotFound, where "user"; Unavailable without accounts). Changes are audited.
    Result<QList<authz::GrantView>> grants(authz::ObjectKind kind, const QString &object);
    Result<authz::GrantChange> addGrant(authz::ObjectKind kind, const QString &object, const QString &username,
                                        const QString &role, const Actor &actor);
    Status removeGrant(authz::ObjectKind kind, const QString &object, const QString &username, const QString &role,
                       const Actor &actor);
    // Decides a request (role matrix, grants, scopes, the app limit) and audits a refusal as
    // "denied" with the reason; route names the request in that line when object is none.
    Result<authz::Decision> authorize(const accounts::Principal &principal, std::string_view permission,
                                      const authz::ObjectRef &object, const Actor &actor, const QString &route);
    void setAuthzOptions(const authz::AuthzOptions &options);
    // What the principal's lists and streams may show (authz::Visibility): members and viewers
    // see only the apps and pipelines they hold a grant on.
    Result<authz::Visibility> visibility(const accounts::Principal &principal);
    // The app or pipeline an event is about (an approval's through its deploy or run); kind
    // None for events about neither (a token revoked).
    authz::ObjectRef subjectOf(const Event &event);
    // The app or pipeline an approval's object ("deploy/<id>", "run/<id>") holds back; an
    // empty name when it is gone.
    authz::ObjectRef approvalSubject(const QString &approvalObject);
    // The newest `limit` approvals (of the status, when given) the principal may see: those of
    // the apps and pipelines it reads, looked for past the ones it may not see.
    Result<QList<ApprovalRecord>> approvalsVisibleTo(const accounts::Principal &principal, const QString &status,
                                                     int limit);
    // Users, sessions and API tokens (nullptr until installed; app/wiring's installAccounts
    // builds it with an identity adapter). The engine owns it.
    accounts::AccountService *accounts() const;
    void setAccounts(std::unique_ptr<accounts::AccountService> service);
    // Sign-off for deploys and pipeline steps. Settle requests through decideApproval(), which
    // also resumes or ends the deploy a request held back.
    ApprovalService &approvals();
    // Approves or rejects; a deploy held at its plan boundary is queued again when approved and
    // ends as rejected otherwise. Errors as ApprovalService::approve()/reject().
    Result<ApprovalRecord> decideApproval(const QString &id, const Approver &approver, bool approve,
                                          const QString &reason);
    // Settles every request past its expiry now (the engine also does so every approvalSweepMs),
    // ending the deploys they held. Returns those it settled.
    Result<QList<ApprovalRecord>> expireApprovals();
    const EngineOptions &options() const;
    // The audit sinks' state, from the reporter app/wiring installs when it starts sinks (none
    // installed: an empty list). Both may be called from any thread.
    void setAuditSinkReporter(AuditSinkReporter reporter);
    Result<QList<AuditSinkReport>> auditSinks() const;

    // The audit log, newest first, narrowed by filter; and the first line whose hash or link to
    // the line before it does not match (nullopt: the chain holds).
    Result<QList<AuditRecord>> auditLines(const AuditRepository::Filter &filter);
    Result<std::optional<qint64>> verifyAudit();

    // One reconciler pass now (tests and `pando` diagnostics); returns what it changed.
    Result<QStringList> reconcileOnce();

    // Each runtime's room beside what apps and services committed on it (core/capacity;
    // enginecapacity.cpp). Asks the runtimes: not for a GUI thread.
    Result<QList<capacity::RuntimeCapacity>> capacity();
    // What serves the apps' routes and whether it does (docs/edge.md). May ask the edge's
    // admin API: not for a GUI thread.
    adapters::RouterStatus edge();
    // The certificates the edge holds or tried to get for the hosts of the apps visibility sees
    // (a member learns nothing of other apps' names); reads the edge's files and log.
    QList<adapters::CertificateState> edgeCertificates(const authz::Visibility &visibility);
    // The install CA's root (PEM), which serves tls: internal; empty before the edge made it.
    QByteArray edgeInstallCa();
    // One disk limit check now (core/disklimit; the engine also checks every
    // diskCheckIntervalMs); returns what it did.
    Result<QStringList> checkDiskLimits();
    // Starts the app's serving container again, also after Pando stopped it for its disk limit
    // (which it then measures afresh). Audited. NotFound without the app, Conflict while it has
    // no serving deploy.
    Result<AppView> startApp(const QString &name, const Actor &actor);
    // Stops the app's serving container (SIGTERM, then SIGKILL after 10 s) and holds it stopped:
    // the reconciler leaves it until startApp, restartApp or a new deploy. Audited. NotFound
    // without the app, Conflict while it has no serving deploy.
    Result<AppView> stopApp(const QString &name, const Actor &actor);
    // Stops and starts the serving container (a stopped one is started), ending any hold, and
    // answers only once it keeps running. Audited, as startApp.
    Result<AppView> restartApp(const QString &name, const Actor &actor);

    // Identity assertions for the edge (core/assertion; engineassertion.cpp). The edge asks once
    // per request to an app that wants them, passing on the request's credential (a bearer
    // token or the pando_session cookie's value) and any X-Pando-Assertion header it came with.
    // Unauthorized without a valid credential; Forbidden for a principal that may not read the
    // app (authz: apps.read on it; the refusal is audited) or is no person (the initial token);
    // NotFound without the app; Invalid for a request that brought its own assertion (forged
    // or replayed: only the edge sets it). Otherwise a new assertion of the user for the app.
    Result<assertion::MintedAssertion> edgeAssertion(const QString &credential, const QString &app,
                                                     const QByteArray &incomingAssertion, const Actor &source);
    // The JWKS document apps verify assertions with (GET /.well-known/jwks.json): public keys only.
    Result<QJsonObject> assertionKeys();
    // Replaces the signing key now (the old one stays published until its assertions expired);
    // returns the new kid. Audited as assertion.rotate.
    Result<QString> rotateAssertionKey(const Actor &actor);

private:
    // updateApp(), with the text the change was made from (basis: Conflict when the stored spec
    // is another by now) and more for the audit line's detail.
    Result<AppView> reviseSpec(const QString &name, const QByteArray &specText, const Actor &actor,
                               const std::optional<QString> &basis, const QJsonObject &auditDetail);
    // What a pull request's delivery asks of the app's previews (enginepreviews.cpp): made or
    // deployed again at its head (the deploy's id), or removed (empty).
    Result<QString> actOnPullRequest(const AppRecord &parent, const AppSpec &spec, const autodeploy::HookEvent &event,
                                     const Actor &actor);
    // Removes preview and its deploys; its pull request's comment then says it went, and why.
    Status takeDownPreview(const autodeploy::PreviewRecord &preview, const Actor &actor, const QString &why);
    // The composition root's door to the state store, audit log and clock (enginewiring.h).
    friend EngineParts wiringParts(Engine &engine);
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace pando::core
