#include "reconciler.h"

#include "core/deploy/appaddresses.h"
#include "core/deploy/buildcache.h"
#include "core/deploy/secretinjection.h"
#include "core/deploy/servicestep.h"
#include "core/disklimit/diskstates.h"
#include "core/planner/planner.h"
#include "core/policy/domainpolicy.h"
#include "core/spec/appspec.h"
#include "core/state/repositories.h"

#include <QHash>
#include <QJsonObject>
#include <QSet>
#include <QThread>

namespace pando::core {

namespace {

bool restartsAfterExit(AppSpec::Run::Restart policy, const adapters::ContainerInfo &c)
{
    switch (policy) {
    case AppSpec::Run::Restart::Never:
        return false;
    case AppSpec::Run::Restart::OnFailure:
        // A container that was made but never ran (created) has not exited cleanly either.
        return c.exitCode != 0 || c.state == QLatin1String("created");
    case AppSpec::Run::Restart::Always:
        break;
    }
    return true;
}

} // namespace

Reconciler::~Reconciler()
{
    stop();
}

void Reconciler::start(int intervalMs)
{
    m_periodic.start(intervalMs, QStringLiteral("pando-reconciler"), [this] {
        if (auto changes = pass(); !changes)
            qWarning("reconciler: %s", qPrintable(changes.error().text()));
    });
}

void Reconciler::stop()
{
    m_periodic.stop();
}

Result<QStringList> Reconciler::pass()
{
    QMutexLocker passLock(&m_passMutex);
    // An edge in its own process that stopped is started again before routes are compared.
    if (auto edge = m_s.router.check(); !edge)
        qWarning("reconciler: the edge: %s", qPrintable(edge.error().text()));
    auto appRows = AppRepository(m_s.db).list();
    if (!appRows)
        return std::unexpected(appRows.error());
    auto containers = m_s.runtime.containers(m_s.labels());
    if (!containers)
        return std::unexpected(containers.error());

    auto images = m_s.runtime.images(m_s.labels());
    if (!images)
        return std::unexpected(images.error());

    QMap<QString, Listed> byApp;
    for (const AppRecord &a : std::as_const(*appRows))
        byApp[a.name];
    for (const adapters::ContainerInfo &c : std::as_const(*containers)) {
        // Only app containers are the reconciler's; pipeline task containers (no app label) belong
        // to their run, and the pipeline runner cleans up after its own.
        // Service containers (core/services) are neither: their app's deploys and removal own them.
        const QString app = c.labels.value(QLatin1String(adapters::LabelApp));
        if (!app.isEmpty() && !isServiceContainer(c))
            byApp[app].containers.append(c);
    }
    for (const adapters::ImageInfo &i : std::as_const(*images))
        for (const QString &tag : i.tags)
            if (const QString app = appOfTag(tag); !app.isEmpty())
                byApp[app].imageTags.append(tag);

    QStringList changes;
    for (auto it = byApp.cbegin(); it != byApp.cend(); ++it) {
        // What was listed above may be stale by now: decide on a fresh read under the app's lock.
        const auto appLock = m_s.appLocks.lockFor(it.key());
        QMutexLocker lock(appLock.get());
        reconcileApp(it.key(), it.value(), changes);
    }
    // What removed apps' builds left and their removal could not take (an image another build
    // reused): tried again each pass.
    if (const int dropped = dropBuildCache(m_s, {}); dropped > 0)
        changes << QStringLiteral("removed %1 build cache image(s) of removed apps").arg(dropped);
    return changes;
}

Result<QStringList> Reconciler::passOf(const QString &app)
{
    auto containers = m_s.runtime.containers(m_s.labels(app));
    if (!containers)
        return std::unexpected(containers.error());
    Listed listed;
    for (const adapters::ContainerInfo &c : std::as_const(*containers))
        if (!isServiceContainer(c))
            listed.containers.append(c);
    QStringList changes;
    reconcileApp(app, listed, changes);
    return changes;
}

void Reconciler::reconcileApp(const QString &name, const Listed &listed, QStringList &changes)
{
    // What could not be recorded or routed is told with the pass's changes; the next pass
    // repairs the route, and the action itself is done either way.
    auto note = [&changes](const QString &what, const Status &done) {
        if (!done)
            changes << QStringLiteral("%1 failed: %2").arg(what, done.error().text());
    };
    DeployRepository deploys(m_s.db);
    auto app = AppRepository(m_s.db).find(name);
    if (!app && app.error().code != ErrorCode::NotFound)
        return;
    const QString current = app ? app->currentDeploy : QString();

    // Remove what nobody owns: an app that is gone, or a deploy that neither serves nor runs.
    for (const adapters::ContainerInfo &c : listed.containers) {
        const QString deployId = c.labels.value(QLatin1String(adapters::LabelDeploy));
        if (app && !deployId.isEmpty() && deployId == current)
            continue;
        if (app && !deployId.isEmpty()) {
            auto d = deploys.find(deployId);
            if (d && (d->status == DeployStatus::Queued || d->status == DeployStatus::Running))
                continue;
        }
        if (!m_s.runtime.remove(c.id))
            continue;
        changes << QStringLiteral("removed container %1 (%2)").arg(c.name, name);
        m_s.publish(
            EventType::ContainerRemoved, name, deployId,
            QJsonObject{{QStringLiteral("container"), c.id}, {QStringLiteral("reason"), QStringLiteral("unowned")}});
        note(QStringLiteral("auditing the removal of %1").arg(c.name),
             m_s.audit.record(
                 Actor::system(QStringLiteral("reconciler")), QStringLiteral("container.remove"),
                 QStringLiteral("container/") + c.name, QStringLiteral("success"),
                 QJsonObject{{QStringLiteral("app"), name}, {QStringLiteral("reason"), QStringLiteral("unowned")}}));
    }
    // An image outlives its deploy only while the deploy serves or is the one to go back to;
    // what a failed deploy or a gone app left (a build that finished after its deploy was
    // cut off, say) goes.
    for (const QString &tag : listed.imageTags) {
        const QString deployId = deployOfTag(name, tag);
        if (app) {
            auto d = deploys.find(deployId);
            if (d && d->status != DeployStatus::Failed && d->status != DeployStatus::Cancelled)
                continue;
            if (!d && d.error().code != ErrorCode::NotFound)
                continue;
        }
        // Only this install's: a tag of the same name may be another's.
        if (auto gone = m_s.runtime.removeOwnImage(tag, m_s.labels()); gone && *gone)
            changes << QStringLiteral("removed image %1").arg(tag);
    }
    if (!app || current.isEmpty())
        return;
    // Stopped for writing past its disk limit (core/disklimit): it stays stopped until a new
    // deploy or an explicit start.
    if (disklimit::isHeldStopped(m_s.db, name, current))
        return;
    // Stopped at a person's word (`pando apps stop`): likewise until a start or a new deploy.
    if (app->isHeldStopped())
        return;

    // Bring back what should run.
    auto spec = parseAppSpec(app->specYaml.toUtf8());
    auto deploy = deploys.find(current);
    if (!spec || !deploy)
        return;
    auto found = m_s.runtime.containers(m_s.labels(name, current));
    if (!found)
        return;
    QString address;
    if (!found->isEmpty() && found->first().state == QLatin1String("running")) {
        address = found->first().address;
    } else if (!found->isEmpty()) {
        const adapters::ContainerInfo &c = found->first();
        // run.restart: never leaves an exited container be; on-failure only one that failed.
        if (!restartsAfterExit(spec->run.restart, c))
            return;
        if (auto started = m_s.runtime.start(c.id); !started) {
            changes << QStringLiteral("restarting %1 failed: %2").arg(name, started.error().text());
            return;
        }
        auto info = m_s.runtime.inspect(c.id);
        if (!info)
            return;
        address = info->address;
        changes << QStringLiteral("restarted %1 (was %2, exit code %3)").arg(name, c.state).arg(c.exitCode);
        m_s.publish(EventType::AppRestarted, name, current, QJsonObject{{QStringLiteral("exit_code"), c.exitCode}});
        note(QStringLiteral("auditing the restart of %1").arg(name),
             m_s.audit.record(
                 Actor::system(QStringLiteral("reconciler")), QStringLiteral("app.restart"),
                 QStringLiteral("app/") + name, QStringLiteral("success"),
                 QJsonObject{{QStringLiteral("exit_code"), c.exitCode}, {QStringLiteral("state"), c.state}}));
    } else {
        // The container is gone altogether: run the deployed image again.
        if (deploy->imageId.isEmpty())
            return;
        // As the deploy made it (its spec, volumes and limits), with the secrets and services
        // as they are now: the container had them when it was made.
        auto served = parseAppSpec(deploy->specYaml.toUtf8());
        if (!served)
            served = spec;
        const auto notRecreated = [&](const Error &error) {
            changes << QStringLiteral("recreating %1 failed: %2").arg(name, error.text());
        };
        auto caps = m_s.runtime.capabilitiesOf(served->runtime);
        if (!caps)
            return notRecreated(caps.error());
        auto planned = planContainer(*served, m_s.policy, *caps, listeningPort(deploy->port, *served));
        if (!planned)
            return notRecreated(planned.error());
        adapters::ContainerSpec cs = std::move(*planned);
        cs.name = containerName(name, current);
        cs.image = deploy->imageId;
        cs.labels.insert(m_s.labels(name, current));
        auto secrets = SecretInjection::prepare(m_s, name, *served);
        if (!secrets)
            return notRecreated(secrets.error());
        secrets->applyTo(cs);
        // Its services, started again if they stopped too.
        auto provisioned = provisionServices(m_s, name, *served, CancelToken());
        if (!provisioned)
            return notRecreated(provisioned.error());
        applyServices(*provisioned, cs);
        auto id = m_s.runtime.run(cs);
        secrets->scrub(cs);
        scrubServices(*provisioned, cs);
        if (!id)
            return notRecreated(id.error());
        DeployRecord updated = *deploy;
        updated.containerId = *id;
        note(QStringLiteral("recording %1's new container").arg(name), deploys.update(updated));
        auto info = m_s.runtime.inspect(*id);
        if (!info)
            return;
        address = info->address;
        // A service whose data was lost too is made again, loaded from its kept seed or empty.
        changes << (provisioned->made.isEmpty() ? QStringLiteral("recreated %1").arg(name)
                                                : QStringLiteral("recreated %1 and its services %2")
                                                      .arg(name, provisioned->made.join(QStringLiteral("; "))));
        m_s.publish(EventType::AppRestarted, name, current, QJsonObject{{QStringLiteral("recreated"), true}});
        note(QStringLiteral("auditing the recreation of %1").arg(name),
             m_s.audit.record(Actor::system(QStringLiteral("reconciler")), QStringLiteral("app.recreate"),
                              QStringLiteral("app/") + name, QStringLiteral("success")));
    }
    // The address may change when a container starts again; the route follows it.
    auto route = m_s.router.route(name);
    const int port = listeningPort(deploy->port, *spec);
    if (!route || route->backendHost != address || route->backendPort != port) {
        if (!route && !m_s.router.ensure(name, app->routePort))
            return;
        note(QStringLiteral("routing %1 to its container").arg(name), m_s.router.setBackend(name, address, port));
    }
    // The addresses follow the serving version's spec under the install's domain policy (an
    // administrator may have changed it; an edge started afresh has none).
    if (!m_s.router.servesAddresses())
        return;
    auto served = parseAppSpec(deploy->specYaml.toUtf8());
    auto domains = policy::readDomainPolicy(m_s.db);
    if (!served || !domains)
        return;
    auto wanted = policy::appAddresses(*served, *domains);
    if (!wanted)
        return;
    const adapters::AddressChange change = addressChange(*served, *wanted);
    if (auto now = m_s.router.route(name); now && (now->addresses != change.addresses || now->signIn != change.signIn))
        note(QStringLiteral("serving %1 at its addresses").arg(name), m_s.router.setAddresses(name, change));
}

} // namespace pando::core
