#include "core/deploy/appaddresses.h"
#include "core/deploy/buildcache.h"
#include "core/engine/engineprivate.h"
#include "core/engine/enginewiring.h"
#include "core/policy/specgate.h"
#include "core/state/datadir.h"
#include "core/state/sql.h"

#include <QDir>
#include <QFile>
#include <QTimer>

namespace pando::core {

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
    // Without an id every install's objects would look like this one's to the reconciler.
    if (d->options.installId.isEmpty())
        return fail(ErrorCode::Invalid, QStringLiteral("the engine was given no install id"),
                    QStringLiteral("installId"),
                    QStringLiteral("open the engine through app/wiring's Install, which reads the data directory's"));
    // Password hashes, the audit log and run.env values live here: 0700, or refused.
    QStringList madePrivate;
    if (auto ok = makePrivateDirectory(d->options.dataDir, &madePrivate); !ok)
        return ok;
    for (const QString &path : std::as_const(madePrivate))
        qWarning("engine: %s was open to other users; it is private now (0700 directories, 0600 files)",
                 qPrintable(path));
    if (auto opened = d->db.open(); !opened)
        return opened;
    if (auto sealed = d->openSecrets(); !sealed)
        return sealed;
    d->openServices();
    auto key = detail::loadOrCreateKey(d->options.dataDir + QStringLiteral("/token.key"));
    if (!key)
        return std::unexpected(key.error());
    d->tokenKey = *key;
    if (auto keys = d->openAssertions(); !keys)
        return keys;

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
            auto found = d->approvals.find(deploy.approvalId);
            const std::optional<ApprovalRecord> decided = found ? *found : std::nullopt;
            if (decided && decided->status != approval::Pending)
                if (auto applied = d->applyDecision(*decided); !applied)
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
    // Refusals of people not signed in are counted per window (core/audit/auditlog.h); a window
    // that is over is written even when no refusal follows it.
    auto *refusals = new QTimer(this);
    connect(refusals, &QTimer::timeout, this, [this] {
        if (auto flushed = d->audit.flushRefusals(); !flushed)
            qWarning("engine: writing the counts of refusals: %s", qPrintable(flushed.error().text()));
    });
    refusals->start(int(AuditLog::RefusalWindowMs / 2));
    d->watchCommitStatuses();
    d->pool.start();
    if (d->options.reconcileIntervalMs > 0)
        d->reconciler.start(d->options.reconcileIntervalMs);
    if (d->options.diskCheckIntervalMs > 0)
        d->diskLimiter.start(d->options.diskCheckIntervalMs);
    if (d->options.healthTickMs > 0)
        d->health.start(d->options.healthTickMs);
    if (d->options.logSweepMs > 0)
        d->logSweeper.start(d->options.logSweepMs, QStringLiteral("pando-logsweep"), [this] {
            auto swept = sweepDeployLogs();
            if (!swept)
                qWarning("engine: compressing and removing deploy output: %s", qPrintable(swept.error().text()));
            else if (swept->removed > 0)
                qInfo("engine: removed the output of %d deploys past the install's retention", swept->removed);
        });
    if (d->options.autodeployTickMs > 0)
        d->poller.start(d->options.autodeployTickMs, QStringLiteral("pando-autodeploy"), [this] {
            if (auto polled = pollOnce(); !polled)
                qWarning("engine: polling for auto-deploy: %s", qPrintable(polled.error().text()));
            if (auto expired = expirePreviews(); !expired)
                qWarning("engine: removing expired previews: %s", qPrintable(expired.error().text()));
            else
                for (const QString &line : std::as_const(*expired))
                    qInfo("engine: %s", qPrintable(line));
        });
    return {};
}

void Engine::shutdown()
{
    d->pipelines.reset();
    d->poller.stop();
    d->logSweeper.stop();
    d->hookPool.waitForDone();
    d->statusCancel.cancel();
    d->statusPool.waitForDone();
    d->reconciler.stop();
    d->diskLimiter.stop();
    d->health.stop();
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
    const QString path = d->options.dataDir + u'/' + InitialTokenFileName;
    if (auto written = detail::writePrivateFile(path, secret.toUtf8() + '\n'); !written)
        return std::unexpected(written.error());
    TokenRecord token;
    token.id = QStringLiteral("t%1").arg(QRandomGenerator::system()->generate64(), 16, 16, QLatin1Char('0'));
    token.name = QStringLiteral("initial-admin");
    token.digest = detail::tokenDigest(d->tokenKey, secret);
    token.role = QStringLiteral("admin");
    token.createdMs = d->clock.nowMs();
    if (auto created = tokens.create(token); !created) {
        QFile::remove(path);
        return std::unexpected(created.error());
    }
    if (auto audited =
            d->audit.record(Actor::system(QStringLiteral("bootstrap")), QStringLiteral("token.create"),
                            QStringLiteral("token/") + token.id, QStringLiteral("success"),
                            QJsonObject{{QStringLiteral("name"), token.name}, {QStringLiteral("role"), token.role}});
        !audited) {
        // Not audited, not made: the next start makes one again once the log takes lines.
        discardResult(tokens.remove(token.id), "the audit error is the answer");
        QFile::remove(path);
        return std::unexpected(audited.error());
    }
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
    if (auto url = d->checkSourceUrl(*spec); !url)
        return std::unexpected(url.error());
    const bool trusted = policy::hasInstallAuthority(actor);
    auto access = policy::readAppAccess(d->db);
    if (!access)
        return std::unexpected(access.error());
    // Before the host policy's range: a member is told the range they may use.
    if (auto port = policy::checkMemberPort(spec->route.port, trusted, *access); !port)
        return std::unexpected(port.error());
    const HostPolicy &policy = d->options.policy;
    if (spec->route.port != 0 && (spec->route.port < policy.minRoutePort || spec->route.port > policy.maxRoutePort ||
                                  policy.deniedRoutePorts.contains(spec->route.port)))
        return fail(ErrorCode::Invalid,
                    QStringLiteral("port %1 is not allowed by host policy (allowed: %2-%3)")
                        .arg(spec->route.port)
                        .arg(policy.minRoutePort)
                        .arg(policy.maxRoutePort),
                    QStringLiteral("route.port"));

    auto connection = d->chooseConnection(*spec, actor);
    if (!connection)
        return std::unexpected(connection.error());
    Private::NewApp made;
    made.spec = *spec;
    made.text = specText;
    made.trusted = trusted;
    made.connection = *connection;
    made.writer = actor.userId;
    made.auditDetail = QJsonObject{{spec->source.isImage() ? QStringLiteral("image") : QStringLiteral("repo"),
                                    spec->source.isImage() ? spec->source.image : spec->source.repo},
                                   {QStringLiteral("connection"), *connection}};
    return d->createApp(made, actor);
}

Result<AppView> Engine::Private::createApp(const NewApp &made, const Actor &actor)
{
    const AppSpec &spec = made.spec;
    // The names the install may serve and no other app holds, before the source is read.
    if (auto addresses = planAddresses(db, *router, spec.name, spec); !addresses)
        return std::unexpected(addresses.error());

    // The repository must answer and the ref exist before anything is created.
    if (auto commit = resolveSource(spec, made.trusted, made.connection, QStringLiteral("source.ref")); !commit)
        return std::unexpected(commit.error());

    AppRepository apps(db);
    const auto lock = appLocks.lockFor(spec.name);
    QMutexLocker locker(lock.get());
    if (auto existing = apps.find(spec.name); existing)
        return fail(ErrorCode::Conflict, QStringLiteral("an app named \"%1\" already exists").arg(spec.name),
                    QStringLiteral("name"),
                    QStringLiteral("pick another name, or `pando apps rm %1` first").arg(spec.name));
    else if (existing.error().code != ErrorCode::NotFound)
        return std::unexpected(existing.error());
    if (auto kept = checkKeptServiceData(spec.name, actor); !kept)
        return std::unexpected(kept.error());
    if (auto kept = checkKeptVolumes(spec.name, actor); !kept)
        return std::unexpected(kept.error());

    // Reserving the stable port now is what makes a taken port an error before anything exists.
    auto route = router->ensure(spec.name, spec.route.port);
    if (!route) {
        // The router speaks of its own arguments ("0 for a free one"); the spec has no route.port 0.
        Error e = route.error();
        e.where = QStringLiteral("route.port");
        if (e.code == ErrorCode::Conflict && spec.route.port != 0)
            e.hint = QStringLiteral("pick another route.port, or leave route.port out and Pando picks a free one");
        return std::unexpected(e);
    }
    AppRecord record;
    record.name = spec.name;
    record.specYaml = QString::fromUtf8(made.text);
    record.routePort = route->port;
    record.createdMs = record.updatedMs = clock.nowMs();
    record.creatorId = actor.userId;
    record.sourceTrusted = made.trusted;
    record.sourceConnection = made.connection;
    record.specWriter = made.writer;
    // The row and its owner grant in one commit: an app that exists has its owner, so a member
    // never creates an app they then may not change or remove.
    if (auto created = [&]() -> Status {
            auto tx = detail::Transaction::begin(db, QStringLiteral("create app ") + record.name);
            if (!tx)
                return std::unexpected(tx.error());
            if (auto row = apps.create(record); !row)
                return row;
            if (auto owned = grants.grantOwner(authz::ObjectKind::App, record.name, actor); !owned)
                return owned;
            if (made.alsoInTransaction)
                if (auto also = made.alsoInTransaction(); !also)
                    return also;
            return tx->commit();
        }();
        !created) {
        discardResult(router->remove(spec.name), "the create's error is the one to report");
        return std::unexpected(created.error());
    }
    if (auto audited = audit.record(actor, QStringLiteral("app.create"), QStringLiteral("app/") + record.name,
                                    QStringLiteral("success"), made.auditDetail);
        !audited) {
        discardResult(grants.clear(authz::ObjectKind::App, record.name), "the audit's error is the one to report");
        discardResult(apps.remove(record.name), "the audit's error is the one to report");
        discardResult(router->remove(record.name), "the audit's error is the one to report");
        return std::unexpected(audited.error());
    }
    services.publish(EventType::AppCreated, record.name, {});
    return view(record);
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
    auto view = d->view(*row);
    if (!view || view->addresses.isEmpty())
        return view;
    const QList<adapters::CertificateState> certificates = d->router->certificates();
    for (AddressView &address : view->addresses)
        for (const adapters::CertificateState &certificate : certificates)
            if (QUrl(address.url).host() == certificate.host && address.tls != QLatin1String("off"))
                address.certificate = certificate;
    return view;
}

Result<AppView> Engine::Private::view(const AppRecord &read)
{
    // The last deploy, then the app: a deploy is recorded as succeeded only after the app names
    // it as current, so a row read before the switch and a deploy read after it would together
    // say "succeeded, not deployed". The app is read again when its row predates that deploy.
    auto last = DeployRepository(db).listForApp(read.name, 1);
    if (!last)
        return std::unexpected(last.error());
    AppRecord record = read;
    if (!last->isEmpty() && last->first().status == DeployStatus::Succeeded && record.currentDeploy != last->first().id)
        if (auto again = AppRepository(db).find(read.name))
            record = *again;
    AppView v;
    v.record = record;
    auto spec = parseAppSpec(record.specYaml.toUtf8());
    if (spec)
        v.spec = *spec;
    else
        v.spec.name = record.name;
    if (auto route = router->route(record.name)) {
        v.url = route->url.toString();
        const auto [http, https] = router->addressPorts();
        for (const adapters::Address &address : std::as_const(route->addresses))
            v.addresses.append({address.url(http, https).toString(), adapters::tlsModeName(address.tls), false, {}});
        for (const adapters::MovedAddress &moved : std::as_const(route->moved))
            v.addresses.append(
                {moved.from.url(http, https).toString(), adapters::tlsModeName(moved.from.tls), true, {}});
    } else if (record.routePort > 0)
        v.url = QStringLiteral("http://127.0.0.1:%1/").arg(record.routePort);
    if (!last->isEmpty())
        v.lastDeploy = last->first();
    v.status = status(record, v.lastDeploy);
    v.statusReason =
        v.status == AppStatus::Stopped && record.isHeldStopped() ? stoppedReason(record) : diskStatusReason(record);
    if (v.status == AppStatus::Unhealthy && v.statusReason.isEmpty())
        if (auto known = health.health(record.name, record.currentDeploy))
            v.statusReason = known->reason;
    return v;
}

AppStatus Engine::Private::status(const AppRecord &app, const std::optional<DeployRecord> &last)
{
    {
        QMutexLocker lock(&mutex);
        if (removing.contains(app.name))
            return AppStatus::Removing;
    }
    if (last && (last->status == DeployStatus::Queued || last->status == DeployStatus::Running))
        return AppStatus::Deploying;
    if (last && last->status == DeployStatus::AwaitingApproval && app.currentDeploy.isEmpty())
        return AppStatus::AwaitingApproval;
    if (app.currentDeploy.isEmpty())
        return last && last->status == DeployStatus::Failed ? AppStatus::Failed : AppStatus::New;
    auto containers = observer.containers(app.updatedMs);
    if (!containers)
        return AppStatus::Unknown;
    for (const adapters::ContainerInfo &c : std::as_const(*containers)) {
        if (c.labels.value(QLatin1String(adapters::LabelDeploy)) == app.currentDeploy) {
            if (c.state != QLatin1String("running"))
                return AppStatus::Stopped;
            // Its container runs, but does it answer? What the health monitor last found.
            const auto known = health.health(app.name, app.currentDeploy);
            return known && known->unhealthy ? AppStatus::Unhealthy : AppStatus::Running;
        }
    }
    return AppStatus::Stopped;
}

// Specgate for the actor: an actor without a role is the install's own authority (the engine's
// components, the desktop's local owner), which stages any change; the API always names one.
Status Engine::Private::specGate(const Actor &actor, const AppRecord &current, const AppSpec &next)
{
    // A stored spec that no longer parses is compared as the app's views show it: a name only.
    AppSpec previous;
    if (auto parsed = parseAppSpec(current.specYaml.toUtf8()))
        previous = *parsed;
    else
        previous.name = current.name;
    return policy::maySpecWrite(options.approvalPolicy, actor.role.value_or(accounts::Role::Admin), &previous, next,
                                current.name);
}

Result<AppView> Engine::updateApp(const QString &name, const QByteArray &specText, const Actor &actor)
{
    return reviseSpec(name, specText, actor, std::nullopt, {});
}

Result<AppView> Engine::reviseSpec(const QString &name, const QByteArray &specText, const Actor &actor,
                                   const std::optional<QString> &basis, const QJsonObject &auditDetail)
{
    // An unknown app first, then the spec, then whether the actor may stage it: the order the
    // API has always answered in.
    auto current = AppRepository(d->db).find(name);
    if (!current)
        return std::unexpected(current.error());
    auto spec = parseAppSpec(specText);
    if (!spec)
        return std::unexpected(spec.error());
    if (auto gate = d->specGate(actor, *current, *spec); !gate)
        return std::unexpected(gate.error());
    if (spec->name != name)
        return fail(ErrorCode::Invalid, QStringLiteral("the spec names app \"%1\", not \"%2\"").arg(spec->name, name),
                    QStringLiteral("name"), QStringLiteral("an app cannot be renamed; create a new one"));
    if (auto url = d->checkSourceUrl(*spec); !url)
        return std::unexpected(url.error());
    if (auto addresses = planAddresses(d->db, *d->router, name, *spec); !addresses)
        return std::unexpected(addresses.error());
    // The new spec's source is read with its writer's means: an administrator's edit makes the
    // app's source trusted, a member's makes it a member's (AppRecord::sourceTrusted).
    const bool trusted = policy::hasInstallAuthority(actor);
    auto connection = d->chooseConnection(*spec, actor);
    if (!connection)
        return std::unexpected(connection.error());
    if (auto commit = d->resolveSource(*spec, trusted, *connection, QStringLiteral("source.ref")); !commit)
        return std::unexpected(commit.error());
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
    if (basis && row->specYaml != *basis)
        return fail(ErrorCode::Conflict,
                    QStringLiteral("app \"%1\"'s spec changed while this change was made").arg(name), {},
                    QStringLiteral("look at the spec again (pando apps spec %1) and repeat the change").arg(name));
    if (spec->route.port != 0 && spec->route.port != row->routePort)
        return fail(ErrorCode::Invalid,
                    QStringLiteral("the app is reached on port %1; route.port cannot move to %2")
                        .arg(row->routePort)
                        .arg(spec->route.port),
                    QStringLiteral("route.port"),
                    QStringLiteral("leave route.port out or set it to %1").arg(row->routePort));
    // Again under the lock: the spec may have changed since the check above.
    if (auto gate = d->specGate(actor, *row, *spec); !gate)
        return std::unexpected(gate.error());
    auto previous = parseAppSpec(row->specYaml.toUtf8());
    if (auto saved = apps.setSpec(name, QString::fromUtf8(specText), d->clock.nowMs()); !saved)
        return std::unexpected(saved.error());
    if (auto marked = apps.setSourceReader(name, trusted, *connection, actor.userId, d->clock.nowMs()); !marked) {
        discardResult(apps.setSpec(name, row->specYaml, d->clock.nowMs()), "the mark's error is the one to report");
        return std::unexpected(marked.error());
    }
    QJsonObject detail = auditDetail;
    if (spec->source.isImage())
        detail.insert(QStringLiteral("image"), spec->source.image);
    else
        detail.insert(QStringLiteral("repo"), spec->source.repo);
    detail.insert(QStringLiteral("connection"), *connection);
    if (previous && previous->source.repo != spec->source.repo)
        detail.insert(QStringLiteral("previous_repo"), previous->source.repo);
    if (previous && previous->source.image != spec->source.image)
        detail.insert(QStringLiteral("previous_image"), previous->source.image);
    if (auto audited = d->audit.record(actor, QStringLiteral("app.update"), QStringLiteral("app/") + name,
                                       QStringLiteral("success"), detail);
        !audited) {
        discardResult(apps.setSpec(name, row->specYaml, d->clock.nowMs()), "the audit's error is the one to report");
        discardResult(
            apps.setSourceReader(name, row->sourceTrusted, row->sourceConnection, row->specWriter, d->clock.nowMs()),
            "the audit's error is the one to report");
        return std::unexpected(audited.error());
    }
    d->services.publish(EventType::AppUpdated, name, {});
    auto updated = apps.find(name);
    if (!updated)
        return std::unexpected(updated.error());
    return d->view(*updated);
}

Status Engine::removeApp(const QString &name, const Actor &actor)
{
    return removeApp(name, actor, ServiceData::Ask);
}

Status Engine::removeApp(const QString &name, const Actor &actor, ServiceData data)
{
    if (auto decided = d->checkServiceData(name, data); !decided)
        return decided;
    auto row = AppRepository(d->db).find(name);
    if (!row)
        return std::unexpected(row.error());
    {
        QMutexLocker lock(&d->mutex);
        if (d->removing.contains(name))
            return {};
        d->removing.insert(name);
    }
    // Audited before it is queued: once queued the teardown runs, and a removal nobody audited
    // must not start. A line that cannot be written refuses it with nothing done.
    if (auto audited = d->audit.record(actor, QStringLiteral("app.remove"), QStringLiteral("app/") + name,
                                       QStringLiteral("success"),
                                       QJsonObject{{QStringLiteral("stage"), QStringLiteral("queued")}});
        !audited) {
        QMutexLocker lock(&d->mutex);
        d->removing.remove(name);
        return audited;
    }
    // Its previews go with it (their own removals, their data deleted: nothing of a preview is kept).
    if (auto previews = autodeploy::PreviewStore(d->db).list(name); previews) {
        for (const autodeploy::PreviewRecord &preview : std::as_const(*previews))
            discardResult(takeDownPreview(preview, actor, QStringLiteral("the app it previews was removed")),
                          "a preview left behind is removed on its own later");
    }
    auto job = d->pool.enqueue(
        JobRemove, name,
        QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("app"), name},
                                                    {QStringLiteral("service_data"), data == ServiceData::Delete
                                                                                         ? QStringLiteral("delete")
                                                                                         : QStringLiteral("keep")}})
                              .toJson(QJsonDocument::Compact)));
    if (!job) {
        {
            QMutexLocker lock(&d->mutex);
            d->removing.remove(name);
        }
        discardResult(d->audit.record(actor, QStringLiteral("app.remove"), QStringLiteral("app/") + name,
                                      QStringLiteral("failure"),
                                      QJsonObject{{QStringLiteral("error"), job.error().text()}}),
                      "the queue's error is the answer; the line only corrects the one written before");
        return std::unexpected(job.error());
    }
    return {};
}

Status Engine::Private::runRemoveJob(const JobRecord &job)
{
    const QString name = job.key;
    const auto lock = appLocks.lockFor(name);
    QMutexLocker locker(lock.get());
    QStringList problems;
    if (auto containers = runtime->containers(services.labels(name))) {
        for (const adapters::ContainerInfo &c : std::as_const(*containers)) {
            if (isServiceContainer(c))
                continue; // removeServicesOf() below, as the job says
            discardResult(runtime->stop(c.id, 10), "remove() forces; its error is the one to tell");
            if (auto removed = runtime->remove(c.id); !removed)
                problems << removed.error().text();
        }
    } else {
        problems << containers.error().text();
    }
    untagImages(services, name, [](const QString &) { return false; });
    dropBuildCache(services, name);
    if (problems.isEmpty())
        if (auto gone = removeServicesOf(job); !gone)
            problems << gone.error().text();
    if (problems.isEmpty())
        if (auto gone = removeVolumesOf(job); !gone)
            problems << gone.error().text();
    if (!problems.isEmpty()) {
        // Keep the app so the user sees it and can retry; the row is the record of what is left.
        QMutexLocker l(&mutex);
        removing.remove(name);
        discardResult(audit.record(Actor::system(QStringLiteral("remove")), QStringLiteral("app.remove"),
                                   QStringLiteral("app/") + name, QStringLiteral("failure"),
                                   QJsonObject{{QStringLiteral("error"), problems.join(QStringLiteral("; "))}}),
                      "the removal's own error is the answer; a failing audit log must not replace it");
        return fail(ErrorCode::Failed, problems.join(QStringLiteral("; ")));
    }
    if (auto unrouted = router->remove(name); !unrouted)
        qWarning("remove %s: removing its route failed: %s", qPrintable(name), qPrintable(unrouted.error().text()));
    QDir(options.dataDir + QStringLiteral("/work/") + name).removeRecursively();
    // The row and its grants together, and only now that the teardown succeeded: a failed one
    // (above) keeps both, so the owner can see the app and retry. A new app of the same name
    // must not inherit who could act on this one.
    auto removed = [&]() -> Status {
        auto tx = detail::Transaction::begin(db, QStringLiteral("remove app ") + name);
        if (!tx)
            return std::unexpected(tx.error());
        if (auto row = AppRepository(db).remove(name); !row && row.error().code != ErrorCode::NotFound)
            return row;
        if (auto cleared = grants.clear(authz::ObjectKind::App, name); !cleared)
            return cleared;
        return tx->commit();
    }();
    {
        QMutexLocker l(&mutex);
        removing.remove(name);
    }
    observer.invalidate();
    if (!removed && removed.error().code != ErrorCode::NotFound)
        return removed;
    auto audited = audit.record(Actor::system(QStringLiteral("remove")), QStringLiteral("app.remove"),
                                QStringLiteral("app/") + name, QStringLiteral("success"),
                                QJsonObject{{QStringLiteral("stage"), QStringLiteral("done")}});
    // The app is gone whatever became of the line; whoever watches hears that, and of the line.
    services.publish(EventType::AppRemoved, name, {},
                     audited ? QJsonObject{} : QJsonObject{{QStringLiteral("audit_error"), audited.error().text()}});
    if (!audited)
        return std::unexpected(unaudited(QStringLiteral("app %1 was removed").arg(name), audited.error()));
    return {};
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

DeployLogFeed *Engine::deployLogFeed() const
{
    return &d->logFeed;
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
    if (!d->accounts)
        return;
    // Whoever ends a session, revokes a token or disables a user (the API, the desktop), the
    // WebSockets opened with those credentials hear of it on the bus.
    d->accounts->setRevokedHook([this](const accounts::Revoked &revoked) {
        QJsonObject data;
        if (!revoked.tokenId.isEmpty())
            data.insert(QStringLiteral("tokenId"), revoked.tokenId);
        if (!revoked.userId.isEmpty())
            data.insert(QStringLiteral("userId"), revoked.userId);
        d->events.publish(Event{EventType::TokenRevoked, {}, {}, data, d->clock.nowMs()});
    });
}

EventBus *Engine::events() const
{
    return &d->events;
}

ApprovalService &Engine::approvals()
{
    return d->approvals;
}

EngineParts wiringParts(Engine &engine)
{
    return EngineParts{engine.d->db, engine.d->audit, engine.d->clock};
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
