#include "engine.h"

#include "core/accounts/accountrepository.h"
#include "core/accounts/accountservice.h"
#include "core/deploy/deployrunner.h"
#include "core/engine/tokens.h"
#include "core/observe/observer.h"
#include "core/pipelines/service/pipelineservice.h"
#include "core/reconciler/reconciler.h"
#include "core/state/repositories.h"
#include "core/work/workpool.h"

#include <QDir>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QSet>
#include <QTimer>

namespace pando::core {

namespace {
const QString JobDeploy = QStringLiteral("deploy");
const QString JobRemove = QStringLiteral("remove");

QString newDeployId()
{
    return QStringLiteral("d%1").arg(QRandomGenerator::system()->generate64() & 0xffffffffffffULL, 12, 16,
                                     QLatin1Char('0'));
}

QString payloadValue(const JobRecord &job, const QString &key)
{
    return QJsonDocument::fromJson(job.payload.toUtf8()).object().value(key).toString();
}
} // namespace

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
    AppLocks appLocks;
    Services services;
    DeployRunner runner;
    WorkPool pool;
    Reconciler reconciler;
    Observer observer;
    std::unique_ptr<LogHub> logs;
    std::unique_ptr<pipelines::PipelineService> pipelines;
    std::unique_ptr<accounts::AccountService> accounts;
    QByteArray tokenKey;
    mutable QMutex sinkMutex; // guards sinkReporter
    AuditSinkReporter sinkReporter;

    QMutex mutex;                      // guards the two sets below
    QSet<QString> removing;            // apps whose teardown is queued or running
    QHash<QString, qint64> deployJobs; // deploy id → job id while it runs

    Private(EngineOptions o, std::shared_ptr<adapters::Runtime> rt, std::shared_ptr<adapters::Router> ro,
            std::shared_ptr<adapters::SourceProvider> so, Clock &c)
        : options(std::move(o)), runtime(std::move(rt)), router(std::move(ro)), source(std::move(so)), clock(c),
          db(options.database), audit(db, clock),
          approvals(db, audit, &events, clock), services{db,
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
          runner(services), pool(db, clock, options.workers), reconciler(services),
          observer(*runtime, services.labels(), clock)
    {}

    Status runDeployJob(const JobRecord &job, const CancelToken &cancel);
    Status enqueueDeploy(const DeployRecord &deploy);
    // Carries a settled deploy approval to the deploy it held: queued again when approved,
    // ended otherwise. Nothing to do when the deploy no longer waits.
    Status applyDecision(const ApprovalRecord &approval);
    Status runRemoveJob(const JobRecord &job);
    QString status(const AppRecord &app, const std::optional<DeployRecord> &last);
    Result<AppView> view(const AppRecord &record);
    QString currentContainer(const QString &app);
};

Engine::Engine(EngineOptions options, std::shared_ptr<adapters::Runtime> runtime,
               std::shared_ptr<adapters::Router> router, std::shared_ptr<adapters::SourceProvider> source, Clock &clock,
               QObject *parent)
    : QObject(parent),
      d(std::make_unique<Private>(std::move(options), std::move(runtime), std::move(router), std::move(source), clock))
{
    qRegisterMetaType<pando::core::Event>();
    qRegisterMetaType<pando::adapters::LogLine>();
    d->logs = std::make_unique<LogHub>(d->runtime, [this](const QString &app) { return d->currentContainer(app); });
    d->pool.setHandler(
        JobDeploy, [this](const JobRecord &job, const CancelToken &cancel) { return d->runDeployJob(job, cancel); });
    d->pool.setHandler(JobRemove, [this](const JobRecord &job, const CancelToken &) { return d->runRemoveJob(job); });
}

Engine::~Engine()
{
    shutdown();
}

Status Engine::start()
{
    if (!QDir().mkpath(d->options.dataDir))
        return fail(ErrorCode::Internal, QStringLiteral("cannot create the data directory %1").arg(d->options.dataDir));
    if (auto opened = d->db.open(); !opened)
        return opened;
    auto key = detail::loadOrCreateKey(d->options.dataDir + QStringLiteral("/token.key"));
    if (!key)
        return std::unexpected(key.error());
    d->tokenKey = *key;

    // Work a previous process left running goes back to the queue; its handler settles it.
    JobRepository jobs(d->db);
    auto abandoned = jobs.requeueAbandoned(d->pool.owner(), d->clock.nowMs());
    if (!abandoned)
        return std::unexpected(abandoned.error());
    for (const JobRecord &job : std::as_const(*abandoned)) {
        if (job.kind == JobRemove)
            d->removing.insert(job.key);
    }

    // Routes come back on the ports apps were given; the reconciler points them at containers.
    if (auto apps = AppRepository(d->db).list()) {
        for (const AppRecord &app : std::as_const(*apps)) {
            if (app.routePort <= 0)
                continue;
            if (auto route = d->router->ensure(app.name, app.routePort); !route)
                qWarning("engine: restoring the route of %s on port %d failed: %s", qPrintable(app.name), app.routePort,
                         qPrintable(route.error().text()));
        }
    }
    if (auto changes = d->reconciler.pass(); !changes)
        qWarning("engine: first reconciler pass: %s", qPrintable(changes.error().text()));
    // A decision the previous process recorded but did not act on (it stopped in between).
    if (auto held = DeployRepository(d->db).awaitingApproval()) {
        for (const DeployRecord &deploy : std::as_const(*held)) {
            auto approval = d->approvals.find(deploy.approvalId);
            if (approval && approval->has_value() && (*approval)->status != approval::Pending)
                if (auto applied = d->applyDecision(**approval); !applied)
                    qWarning("engine: resuming deploy %s: %s", qPrintable(deploy.id),
                             qPrintable(applied.error().text()));
        }
    }
    if (d->options.approvalSweepMs > 0) {
        auto *sweep = new QTimer(this);
        connect(sweep, &QTimer::timeout, this, [this] {
            if (auto expired = expireApprovals(); !expired)
                qWarning("engine: expiring approvals: %s", qPrintable(expired.error().text()));
        });
        sweep->start(d->options.approvalSweepMs);
    }
    d->pool.start();
    if (d->options.reconcileIntervalMs > 0)
        d->reconciler.start(d->options.reconcileIntervalMs);
    return {};
}

void Engine::shutdown()
{
    d->pipelines.reset();
    d->reconciler.stop();
    d->pool.shutdown();
}

Result<std::optional<QString>> Engine::bootstrapAdminToken()
{
    // Once the first administrator exists the initial token has been spent (and its row may be
    // gone): never make another.
    auto users = accounts::AccountRepository(d->db).countUsers();
    if (!users)
        return std::unexpected(users.error());
    if (*users > 0)
        return std::optional<QString>{};
    TokenRepository tokens(d->db);
    auto count = tokens.count();
    if (!count)
        return std::unexpected(count.error());
    if (*count > 0)
        return std::optional<QString>{};
    const QString secret = detail::newTokenSecret();
    // The file first: a token in the database that nobody can read would lock the install.
    const QString path = d->options.dataDir + QStringLiteral("/initial-admin-token");
    if (auto written = detail::writePrivateFile(path, secret.toUtf8() + '\n'); !written)
        return std::unexpected(written.error());
    TokenRecord token;
    token.id = QStringLiteral("t%1").arg(QRandomGenerator::system()->generate64(), 16, 16, QLatin1Char('0'));
    token.name = QStringLiteral("initial-admin");
    token.digest = detail::tokenDigest(d->tokenKey, secret);
    token.role = QStringLiteral("admin");
    token.createdMs = d->clock.nowMs();
    if (auto created = tokens.create(token); !created)
        return std::unexpected(created.error());
    d->audit.record(Actor::system(QStringLiteral("bootstrap")), QStringLiteral("token.create"),
                    QStringLiteral("token/") + token.id, QStringLiteral("success"),
                    QJsonObject{{QStringLiteral("name"), token.name}, {QStringLiteral("role"), token.role}});
    return std::optional<QString>{secret};
}

Result<TokenRecord> Engine::authenticate(const QString &bearerToken)
{
    if (!bearerToken.startsWith(QLatin1String("pando_")) || bearerToken.size() > 256)
        return fail(ErrorCode::Unauthorized, QStringLiteral("invalid token"));
    auto token = TokenRepository(d->db).findByDigest(detail::tokenDigest(d->tokenKey, bearerToken));
    if (!token) {
        if (token.error().code == ErrorCode::NotFound)
            return fail(ErrorCode::Unauthorized, QStringLiteral("invalid token"));
        return std::unexpected(token.error());
    }
    return token;
}

Result<AppView> Engine::createApp(const QByteArray &specText, const Actor &actor)
{
    auto spec = parseAppSpec(specText);
    if (!spec)
        return std::unexpected(spec.error());
    if (auto url = d->source->checkUrl(spec->source.repo); !url) {
        Error e = url.error();
        e.where = QStringLiteral("source.repo");
        return std::unexpected(e);
    }
    const HostPolicy &policy = d->options.policy;
    if (spec->route.port != 0 && (spec->route.port < policy.minRoutePort || spec->route.port > policy.maxRoutePort ||
                                  policy.deniedRoutePorts.contains(spec->route.port)))
        return fail(ErrorCode::Invalid,
                    QStringLiteral("port %1 is not allowed by host policy (allowed: %2-%3)")
                        .arg(spec->route.port)
                        .arg(policy.minRoutePort)
                        .arg(policy.maxRoutePort),
                    QStringLiteral("route.port"));

    // The repository must answer and the ref exist before anything is created.
    if (auto commit = d->source->resolve(spec->source.repo, spec->source.ref); !commit) {
        Error e = commit.error();
        e.where = e.code == ErrorCode::NotFound ? QStringLiteral("source.ref") : QStringLiteral("source.repo");
        return std::unexpected(e);
    }

    AppRepository apps(d->db);
    const auto lock = d->appLocks.lockFor(spec->name);
    QMutexLocker locker(lock.get());
    if (auto existing = apps.find(spec->name); existing)
        return fail(ErrorCode::Conflict, QStringLiteral("an app named \"%1\" already exists").arg(spec->name),
                    QStringLiteral("name"),
                    QStringLiteral("pick another name, or `pando apps rm %1` first").arg(spec->name));
    else if (existing.error().code != ErrorCode::NotFound)
        return std::unexpected(existing.error());

    // Reserving the stable port now is what makes a taken port an error before anything exists.
    auto route = d->router->ensure(spec->name, spec->route.port);
    if (!route) {
        Error e = route.error();
        e.where = QStringLiteral("route.port");
        return std::unexpected(e);
    }
    AppRecord record;
    record.name = spec->name;
    record.specYaml = QString::fromUtf8(specText);
    record.routePort = route->port;
    record.createdMs = record.updatedMs = d->clock.nowMs();
    if (auto created = apps.create(record); !created) {
        d->router->remove(spec->name);
        return std::unexpected(created.error());
    }
    if (auto audited =
            d->audit.record(actor, QStringLiteral("app.create"), QStringLiteral("app/") + record.name,
                            QStringLiteral("success"), QJsonObject{{QStringLiteral("repo"), spec->source.repo}});
        !audited) {
        apps.remove(record.name);
        d->router->remove(record.name);
        return std::unexpected(audited.error());
    }
    d->services.publish(QStringLiteral("app.created"), record.name, {});
    return d->view(record);
}

Result<QList<AppView>> Engine::apps()
{
    auto rows = AppRepository(d->db).list();
    if (!rows)
        return std::unexpected(rows.error());
    QList<AppView> views;
    for (const AppRecord &row : std::as_const(*rows)) {
        auto v = d->view(row);
        if (!v)
            return std::unexpected(v.error());
        views.append(*v);
    }
    return views;
}

Result<AppView> Engine::app(const QString &name)
{
    auto row = AppRepository(d->db).find(name);
    if (!row)
        return std::unexpected(row.error());
    return d->view(*row);
}

Result<AppView> Engine::Private::view(const AppRecord &record)
{
    AppView v;
    v.record = record;
    auto spec = parseAppSpec(record.specYaml.toUtf8());
    if (spec)
        v.spec = *spec;
    else
        v.spec.name = record.name;
    if (auto route = router->route(record.name))
        v.url = route->url.toString();
    else if (record.routePort > 0)
        v.url = QStringLiteral("http://127.0.0.1:%1/").arg(record.routePort);
    auto last = DeployRepository(db).listForApp(record.name, 1);
    if (!last)
        return std::unexpected(last.error());
    if (!last->isEmpty())
        v.lastDeploy = last->first();
    v.status = status(record, v.lastDeploy);
    return v;
}

QString Engine::Private::status(const AppRecord &app, const std::optional<DeployRecord> &last)
{
    {
        QMutexLocker lock(&mutex);
        if (removing.contains(app.name))
            return QStringLiteral("removing");
    }
    if (last && (last->status == QLatin1String("queued") || last->status == QLatin1String("running")))
        return QStringLiteral("deploying");
    if (last && last->status == QLatin1String("awaiting-approval") && app.currentDeploy.isEmpty())
        return QStringLiteral("awaiting-approval");
    if (app.currentDeploy.isEmpty())
        return last && last->status == QLatin1String("failed") ? QStringLiteral("failed") : QStringLiteral("new");
    auto containers = observer.containers(app.updatedMs);
    if (!containers)
        return QStringLiteral("unknown");
    for (const adapters::ContainerInfo &c : std::as_const(*containers)) {
        if (c.labels.value(QLatin1String(adapters::LabelDeploy)) == app.currentDeploy)
            return c.state == QLatin1String("running") ? QStringLiteral("running") : QStringLiteral("stopped");
    }
    return QStringLiteral("stopped");
}

Result<AppView> Engine::updateApp(const QString &name, const QByteArray &specText, const Actor &actor)
{
    auto spec = parseAppSpec(specText);
    if (!spec)
        return std::unexpected(spec.error());
    if (spec->name != name)
        return fail(ErrorCode::Invalid, QStringLiteral("the spec names app \"%1\", not \"%2\"").arg(spec->name, name),
                    QStringLiteral("name"), QStringLiteral("an app cannot be renamed; create a new one"));
    if (auto url = d->source->checkUrl(spec->source.repo); !url) {
        Error e = url.error();
        e.where = QStringLiteral("source.repo");
        return std::unexpected(e);
    }
    if (auto commit = d->source->resolve(spec->source.repo, spec->source.ref); !commit) {
        Error e = commit.error();
        e.where = e.code == ErrorCode::NotFound ? QStringLiteral("source.ref") : QStringLiteral("source.repo");
        return std::unexpected(e);
    }
    AppRepository apps(d->db);
    const auto lock = d->appLocks.lockFor(name);
    QMutexLocker locker(lock.get());
    {
        QMutexLocker removing(&d->mutex);
        if (d->removing.contains(name))
            return fail(ErrorCode::Conflict, QStringLiteral("app \"%1\" is being removed").arg(name));
    }
    auto row = apps.find(name);
    if (!row)
        return std::unexpected(row.error());
    if (spec->route.port != 0 && spec->route.port != row->routePort)
        return fail(ErrorCode::Invalid,
                    QStringLiteral("the app is reached on port %1; route.port cannot move to %2")
                        .arg(row->routePort)
                        .arg(spec->route.port),
                    QStringLiteral("route.port"),
                    QStringLiteral("leave route.port out or set it to %1").arg(row->routePort));
    auto previous = parseAppSpec(row->specYaml.toUtf8());
    if (auto saved = apps.setSpec(name, QString::fromUtf8(specText), d->clock.nowMs()); !saved)
        return std::unexpected(saved.error());
    QJsonObject detail{{QStringLiteral("repo"), spec->source.repo}};
    if (previous && previous->source.repo != spec->source.repo)
        detail.insert(QStringLiteral("previous_repo"), previous->source.repo);
    if (auto audited = d->audit.record(actor, QStringLiteral("app.update"), QStringLiteral("app/") + name,
                                       QStringLiteral("success"), detail);
        !audited) {
        apps.setSpec(name, row->specYaml, d->clock.nowMs());
        return std::unexpected(audited.error());
    }
    d->services.publish(QStringLiteral("app.updated"), name, {});
    auto updated = apps.find(name);
    if (!updated)
        return std::unexpected(updated.error());
    return d->view(*updated);
}

Status Engine::removeApp(const QString &name, const Actor &actor)
{
    auto row = AppRepository(d->db).find(name);
    if (!row)
        return std::unexpected(row.error());
    {
        QMutexLocker lock(&d->mutex);
        if (d->removing.contains(name))
            return {};
        d->removing.insert(name);
    }
    auto job = d->pool.enqueue(
        JobRemove, name,
        QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("app"), name}}).toJson(QJsonDocument::Compact)));
    if (!job) {
        QMutexLocker lock(&d->mutex);
        d->removing.remove(name);
        return std::unexpected(job.error());
    }
    return d->audit.record(actor, QStringLiteral("app.remove"), QStringLiteral("app/") + name,
                           QStringLiteral("success"), QJsonObject{{QStringLiteral("stage"), QStringLiteral("queued")}});
}

Status Engine::Private::runRemoveJob(const JobRecord &job)
{
    const QString name = job.key;
    const auto lock = appLocks.lockFor(name);
    QMutexLocker locker(lock.get());
    QStringList problems;
    if (auto containers = runtime->containers(services.labels(name))) {
        for (const adapters::ContainerInfo &c : std::as_const(*containers)) {
            runtime->stop(c.id, 10);
            if (auto removed = runtime->remove(c.id); !removed)
                problems << removed.error().text();
        }
    } else {
        problems << containers.error().text();
    }
    untagImages(services, name, [](const QString &) { return false; });
    if (!problems.isEmpty()) {
        // Keep the app so the user sees it and can retry; the row is the record of what is left.
        QMutexLocker l(&mutex);
        removing.remove(name);
        audit.record(Actor::system(QStringLiteral("remove")), QStringLiteral("app.remove"),
                     QStringLiteral("app/") + name, QStringLiteral("failure"),
                     QJsonObject{{QStringLiteral("error"), problems.join(QStringLiteral("; "))}});
        return fail(ErrorCode::Failed, problems.join(QStringLiteral("; ")));
    }
    router->remove(name);
    QDir(options.dataDir + QStringLiteral("/work/") + name).removeRecursively();
    auto removed = AppRepository(db).remove(name);
    {
        QMutexLocker l(&mutex);
        removing.remove(name);
    }
    observer.invalidate();
    if (!removed && removed.error().code != ErrorCode::NotFound)
        return removed;
    audit.record(Actor::system(QStringLiteral("remove")), QStringLiteral("app.remove"), QStringLiteral("app/") + name,
                 QStringLiteral("success"), QJsonObject{{QStringLiteral("stage"), QStringLiteral("done")}});
    services.publish(QStringLiteral("app.removed"), name, {});
    return {};
}

Result<DeployRecord> Engine::deploy(const QString &app, const QString &ref, const Actor &actor)
{
    auto row = AppRepository(d->db).find(app);
    if (!row)
        return std::unexpected(row.error());
    {
        QMutexLocker lock(&d->mutex);
        if (d->removing.contains(app))
            return fail(ErrorCode::Conflict, QStringLiteral("app \"%1\" is being removed").arg(app));
    }
    auto spec = parseAppSpec(row->specYaml.toUtf8());
    if (!spec)
        return std::unexpected(spec.error());
    if (!ref.isEmpty()) {
        // The same rules as source.ref in a spec.
        spec->source.ref = ref;
        if (auto valid = validateAppSpec(*spec); !valid) {
            Error e = valid.error();
            e.where = QStringLiteral("ref");
            return std::unexpected(e);
        }
    }
    // A ref that does not exist is the caller's mistake, answered now rather than as a
    // failed deploy; the deploy then builds exactly the commit resolved here.
    auto commit = d->source->resolve(spec->source.repo, spec->source.ref);
    if (!commit) {
        Error e = commit.error();
        e.where = QStringLiteral("ref");
        return std::unexpected(e);
    }
    DeployRecord deploy;
    deploy.id = newDeployId();
    deploy.app = app;
    deploy.ref = spec->source.ref;
    deploy.commit = *commit;
    deploy.status = QStringLiteral("queued");
    deploy.actor = actor.name;
    deploy.specYaml = row->specYaml;
    deploy.createdMs = d->clock.nowMs();
    DeployRepository deploys(d->db);
    if (auto created = deploys.create(deploy); !created)
        return std::unexpected(created.error());
    // Audited and announced before a worker can take it, so that its own lines and events (a
    // fast failure) come after these, in the audit log and on the event stream.
    if (auto audited = d->audit.record(actor, QStringLiteral("deploy.start"), QStringLiteral("deploy/") + deploy.id,
                                       QStringLiteral("success"),
                                       QJsonObject{{QStringLiteral("app"), app}, {QStringLiteral("ref"), ref}});
        !audited) {
        DeployRecord abandoned = deploy;
        abandoned.status = QStringLiteral("failed");
        abandoned.error = audited.error().text();
        abandoned.finishedMs = d->clock.nowMs();
        (void)deploys.update(abandoned);
        return std::unexpected(audited.error());
    }
    d->services.publish(QStringLiteral("deploy.queued"), app, deploy.id);
    if (auto queued = d->enqueueDeploy(deploy); !queued) {
        d->services.publish(QStringLiteral("deploy.failed"), app, deploy.id,
                            QJsonObject{{QStringLiteral("step"), QString()},
                                        {QStringLiteral("error"), queued.error().text()}});
        return std::unexpected(queued.error());
    }
    // An older deploy still waiting for sign-off would, approved later, put an older version
    // back over this one: it is superseded, and its request withdrawn.
    if (auto held = deploys.awaitingApproval()) {
        const QString why = QStringLiteral("superseded by deploy %1").arg(deploy.id);
        for (const DeployRecord &old : std::as_const(*held)) {
            // The new deploy may already wait itself: a worker can reach its plan boundary first.
            if (old.app != app || old.id == deploy.id)
                continue;
            auto withdrawn =
                d->approvals.reject(old.approvalId, Approver{Actor::system(QStringLiteral("deploy"))}, why);
            if (!withdrawn && withdrawn.error().code != ErrorCode::Conflict)
                qWarning("engine: withdrawing approval %s: %s", qPrintable(old.approvalId),
                         qPrintable(withdrawn.error().text()));
            if (auto ended = d->runner.endHeld(old.id, QStringLiteral("cancelled"), why); !ended)
                qWarning("engine: superseding deploy %s: %s", qPrintable(old.id), qPrintable(ended.error().text()));
        }
    }
    return deploy;
}

Status Engine::Private::runDeployJob(const JobRecord &job, const CancelToken &cancel)
{
    const QString deployId = payloadValue(job, QStringLiteral("deploy"));
    auto deploy = DeployRepository(db).find(deployId);
    if (!deploy)
        return std::unexpected(deploy.error());
    // A deploy already running when its job is claimed again was cut off by a dead process.
    if (deploy->status == QLatin1String("running"))
        return runner.settleInterrupted(deployId);
    {
        QMutexLocker lock(&mutex);
        deployJobs.insert(deployId, job.id);
    }
    Status result = runner.run(deployId, cancel);
    observer.invalidate();
    {
        QMutexLocker lock(&mutex);
        deployJobs.remove(deployId);
    }
    if (result)
        logs->restart(deploy->app);
    return result;
}

Result<QList<DeployRecord>> Engine::deploys(const QString &app, int limit)
{
    if (auto row = AppRepository(d->db).find(app); !row)
        return std::unexpected(row.error());
    return DeployRepository(d->db).listForApp(app, qBound(1, limit, 1000));
}

Result<DeployView> Engine::deployView(const QString &id)
{
    DeployRepository deploys(d->db);
    auto record = deploys.find(id);
    if (!record)
        return std::unexpected(record.error());
    auto steps = deploys.steps(id);
    if (!steps)
        return std::unexpected(steps.error());
    return DeployView{*record, *steps};
}

Status Engine::Private::enqueueDeploy(const DeployRecord &deploy)
{
    auto job = pool.enqueue(
        JobDeploy, deploy.app,
        QString::fromUtf8(
            QJsonDocument(QJsonObject{{QStringLiteral("deploy"), deploy.id}}).toJson(QJsonDocument::Compact)));
    if (job)
        return {};
    DeployRecord failed = deploy;
    failed.status = QStringLiteral("failed");
    failed.error = job.error().text();
    failed.finishedMs = clock.nowMs();
    DeployRepository(db).update(failed);
    return std::unexpected(job.error());
}

Status Engine::Private::applyDecision(const ApprovalRecord &approval)
{
    const QString prefix = QStringLiteral("deploy/");
    if (approval.kind != approval::KindDeploy || !approval.object.startsWith(prefix))
        return {};
    DeployRepository deploys(db);
    auto deploy = deploys.find(approval.object.mid(prefix.size()));
    if (!deploy)
        return std::unexpected(deploy.error());
    if (deploy->status != QLatin1String("awaiting-approval") || deploy->approvalId != approval.id)
        return {};
    if (approval.status == approval::Approved) {
        deploy->status = QStringLiteral("queued");
        if (auto saved = deploys.update(*deploy); !saved)
            return saved;
        services.publish(QStringLiteral("deploy.queued"), deploy->app, deploy->id,
                         QJsonObject{{QStringLiteral("approval"), approval.id}});
        return enqueueDeploy(*deploy);
    }
    QString why;
    if (approval.status == approval::Expired)
        why = QStringLiteral("approval %1 expired: nobody decided in time").arg(approval.id);
    else
        why = QStringLiteral("approval %1 was rejected by %2%3")
                  .arg(approval.id, approval.decidedBy,
                       approval.reason.isEmpty() ? QString() : QStringLiteral(": ") + approval.reason);
    return runner.endHeld(deploy->id, QStringLiteral("rejected"), why);
}

Result<ApprovalRecord> Engine::decideApproval(const QString &id, const Approver &approver, bool approve,
                                              const QString &reason)
{
    auto settled = approve ? d->approvals.approve(id, approver, reason) : d->approvals.reject(id, approver, reason);
    if (!settled)
        return settled;
    if (auto applied = d->applyDecision(*settled); !applied)
        return std::unexpected(applied.error());
    return settled;
}

Result<QList<ApprovalRecord>> Engine::expireApprovals()
{
    auto expired = d->approvals.expire();
    if (!expired)
        return expired;
    for (const ApprovalRecord &approval : std::as_const(*expired))
        if (auto applied = d->applyDecision(approval); !applied)
            qWarning("engine: ending the deploy approval %s held: %s", qPrintable(approval.id),
                     qPrintable(applied.error().text()));
    return expired;
}

Status Engine::cancelDeploy(const QString &id, const Actor &actor)
{
    DeployRepository deploys(d->db);
    auto record = deploys.find(id);
    if (!record)
        return std::unexpected(record.error());
    if (record->status == QLatin1String("awaiting-approval")) {
        // Withdraw the request so nobody approves a deploy that no longer wants to run.
        auto withdrawn =
            d->approvals.reject(record->approvalId, Approver{actor}, QStringLiteral("the deploy was cancelled"));
        if (!withdrawn && withdrawn.error().code != ErrorCode::Conflict)
            return std::unexpected(withdrawn.error());
        if (auto ended =
                d->runner.endHeld(id, QStringLiteral("cancelled"),
                                  QStringLiteral("cancelled by %1 while waiting for approval").arg(actor.name));
            !ended)
            return ended;
    } else if (record->status == QLatin1String("queued")) {
        record->status = QStringLiteral("cancelled");
        record->finishedMs = d->clock.nowMs();
        if (auto saved = deploys.update(*record); !saved)
            return saved;
    } else if (record->status == QLatin1String("running")) {
        QMutexLocker lock(&d->mutex);
        const qint64 jobId = d->deployJobs.value(id, 0);
        if (jobId == 0 || !d->pool.cancel(jobId))
            return fail(ErrorCode::Conflict, QStringLiteral("deploy %1 is not running in this process").arg(id));
    } else {
        return fail(ErrorCode::Conflict, QStringLiteral("deploy %1 has already %2").arg(id, record->status));
    }
    return d->audit.record(actor, QStringLiteral("deploy.cancel"), QStringLiteral("deploy/") + id,
                           QStringLiteral("success"));
}

QString Engine::Private::currentContainer(const QString &app)
{
    auto row = AppRepository(db).find(app);
    if (!row || row->currentDeploy.isEmpty())
        return {};
    auto containers = runtime->containers(services.labels(app, row->currentDeploy));
    if (!containers || containers->isEmpty())
        return {};
    return containers->first().id;
}

Result<QList<adapters::LogLine>> Engine::logTail(const QString &app, int lines)
{
    if (auto row = AppRepository(d->db).find(app); !row)
        return std::unexpected(row.error());
    const QString container = d->currentContainer(app);
    QList<adapters::LogLine> out;
    if (container.isEmpty())
        return out;
    auto streamed = d->runtime->logs(container, qBound(1, lines, 10000), false, CancelToken(),
                                     [&out](const adapters::LogLine &line) { out.append(line); });
    if (!streamed)
        return std::unexpected(streamed.error());
    return out;
}

LogHub *Engine::logs() const
{
    return d->logs.get();
}

pipelines::PipelineService *Engine::pipelines() const
{
    return d->pipelines.get();
}

void Engine::setPipelines(std::unique_ptr<pipelines::PipelineService> service)
{
    d->pipelines = std::move(service);
}

accounts::AccountService *Engine::accounts() const
{
    return d->accounts.get();
}

void Engine::setAccounts(std::unique_ptr<accounts::AccountService> service)
{
    d->accounts = std::move(service);
}

EventBus *Engine::events() const
{
    return &d->events;
}

ApprovalService &Engine::approvals()
{
    return d->approvals;
}

Database &Engine::database()
{
    return d->db;
}

adapters::Runtime &Engine::runtime()
{
    return *d->runtime;
}

AuditLog &Engine::audit()
{
    return d->audit;
}

Clock &Engine::clock()
{
    return d->clock;
}

const EngineOptions &Engine::options() const
{
    return d->options;
}

void Engine::setAuditSinkReporter(AuditSinkReporter reporter)
{
    QMutexLocker lock(&d->sinkMutex);
    d->sinkReporter = std::move(reporter);
}

Result<QList<AuditSinkReport>> Engine::auditSinks() const
{
    AuditSinkReporter reporter;
    {
        QMutexLocker lock(&d->sinkMutex);
        reporter = d->sinkReporter;
    }
    // Called outside the lock: the reporter reads the database.
    if (!reporter)
        return QList<AuditSinkReport>{};
    return reporter();
}

Result<QList<AuditRecord>> Engine::auditLines(const AuditRepository::Filter &filter)
{
    return AuditRepository(d->db).list(filter);
}

Result<std::optional<qint64>> Engine::verifyAudit()
{
    return AuditRepository(d->db).verify();
}

Result<QStringList> Engine::reconcileOnce()
{
    auto changes = d->reconciler.pass();
    d->observer.invalidate();
    return changes;
}

} // namespace pando::core
