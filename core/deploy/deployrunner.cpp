#include "deployrunner.h"

#include "core/deploy/healthprobe.h"
#include "core/detection/detection.h"
#include "core/spec/appspec.h"
#include "core/state/repositories.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonObject>
#include <QThread>

namespace pando::core {

namespace {

// Records one step: started on construction, ended by succeed()/failWith(); a step left open
// when the runner returns early is recorded as failed.
class StepRecorder {
public:
    StepRecorder(Services &s, DeployRecord &deploy, int seq, const QString &name) : m_s(s), m_deploy(deploy)
    {
        m_step.deployId = deploy.id;
        m_step.seq = seq;
        m_step.name = name;
        m_step.status = QStringLiteral("running");
        m_step.startedMs = m_s.clock.nowMs();
        if (auto added = DeployRepository(m_s.db).addStep(m_step); !added)
            qWarning("deploy %s: recording step %s failed: %s", qPrintable(deploy.id), qPrintable(name),
                     qPrintable(added.error().text()));
        publish();
    }
    ~StepRecorder()
    {
        if (m_step.status == QLatin1String("running"))
            end(QStringLiteral("failed"), QStringLiteral("interrupted"));
    }
    void succeed(const QString &detail = {}) { end(QStringLiteral("succeeded"), detail); }
    Error failWith(const Error &error)
    {
        end(QStringLiteral("failed"), error.text());
        m_deploy.failedStep = m_step.name;
        m_deploy.error = error.text();
        if (!error.hint.isEmpty())
            m_deploy.error += QStringLiteral(" (hint: %1)").arg(error.hint);
        return error;
    }

private:
    void end(const QString &status, const QString &detail)
    {
        m_step.status = status;
        m_step.detail = detail.left(2000);
        m_step.finishedMs = m_s.clock.nowMs();
        if (auto updated = DeployRepository(m_s.db).updateStep(m_step); !updated)
            qWarning("deploy %s: recording step %s failed: %s", qPrintable(m_deploy.id), qPrintable(m_step.name),
                     qPrintable(updated.error().text()));
        publish();
    }
    void publish()
    {
        m_s.publish(QStringLiteral("deploy.step"), m_deploy.app, m_deploy.id,
                    QJsonObject{{QStringLiteral("seq"), m_step.seq},
                                {QStringLiteral("name"), m_step.name},
                                {QStringLiteral("status"), m_step.status},
                                {QStringLiteral("detail"), m_step.detail},
                                {QStringLiteral("started_ms"), m_step.startedMs},
                                {QStringLiteral("finished_ms"), m_step.finishedMs}});
    }

    Services &m_s;
    DeployRecord &m_deploy;
    StepRecord m_step;
};

QString workRoot(const Services &s, const QString &app)
{
    return s.dataDir + QStringLiteral("/work/") + app;
}

} // namespace

Status DeployRunner::run(const QString &deployId, const CancelToken &cancel)
{
    DeployRepository deploys(m_s.db);
    AppRepository apps(m_s.db);
    auto found = deploys.find(deployId);
    if (!found)
        return std::unexpected(found.error());
    DeployRecord deploy = *found;
    if (deploy.status != QLatin1String("queued"))
        return {}; // cancelled while queued, or settled already
    auto appRow = apps.find(deploy.app);
    if (!appRow)
        return std::unexpected(appRow.error());
    const QString previous = appRow->currentDeploy;

    deploy.status = QStringLiteral("running");
    deploy.startedMs = m_s.clock.nowMs();
    if (auto saved = deploys.update(deploy); !saved)
        return saved;
    m_s.publish(QStringLiteral("deploy.started"), deploy.app, deploy.id);

    int seq = 0;
    QString checkoutDir;
    // Ends the deploy as failed (or cancelled), removing what this deploy created.
    auto finishFailed = [&](const Error &error) -> Status {
        deploy.status = error.code == ErrorCode::Cancelled ? QStringLiteral("cancelled") : QStringLiteral("failed");
        if (deploy.error.isEmpty())
            deploy.error = error.text();
        deploy.finishedMs = m_s.clock.nowMs();
        discard(deploy.app, deploy.id);
        if (auto saved = deploys.update(deploy); !saved)
            qWarning("deploy %s: saving the failure failed: %s", qPrintable(deploy.id),
                     qPrintable(saved.error().text()));
        m_s.publish(QStringLiteral("deploy.failed"), deploy.app, deploy.id,
                    QJsonObject{{QStringLiteral("step"), deploy.failedStep}, {QStringLiteral("error"), deploy.error}});
        m_s.audit.record(Actor::system(QStringLiteral("deploy")), QStringLiteral("deploy.finish"),
                         QStringLiteral("deploy/") + deploy.id, QStringLiteral("failure"),
                         QJsonObject{{QStringLiteral("app"), deploy.app},
                                     {QStringLiteral("step"), deploy.failedStep},
                                     {QStringLiteral("error"), deploy.error}});
        return std::unexpected(error);
    };
    auto cancelled = [&] {
        return Error{ErrorCode::Cancelled, QStringLiteral("the deploy was cancelled")};
    };

    auto spec = parseAppSpec(appRow->specYaml.toUtf8());
    if (!spec) {
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("fetch"));
        return finishFailed(step.failWith(spec.error()));
    }
    const QString ref = deploy.ref.isEmpty() ? spec->source.ref : deploy.ref;
    // The commit resolved when the deploy was asked for; a branch that moved since does not
    // change what this deploy builds.
    const QString target = deploy.commit.isEmpty() ? ref : deploy.commit;

    // fetch
    {
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("fetch"));
        QDir().mkpath(workRoot(m_s, deploy.app));
        auto checkout =
            m_s.source.checkout(spec->source.repo, target, workRoot(m_s, deploy.app), cancel, [](const QString &) {});
        if (!checkout)
            return finishFailed(step.failWith(checkout.error()));
        checkoutDir = checkout->directory;
        deploy.commit = checkout->commit;
        deploys.update(deploy);
        step.succeed(QStringLiteral("%1 at %2").arg(ref, checkout->commit.left(12)));
    }
    // The tree is only needed until the image is built.
    struct RemoveTree {
        QString dir;
        ~RemoveTree()
        {
            if (!dir.isEmpty())
                QDir(dir).removeRecursively();
        }
    } removeTree{checkoutDir};
    if (cancel.isCancelled())
        return finishFailed(cancelled());

    // detect
    Detection detection;
    {
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("detect"));
        auto detected = detect(*spec, checkoutDir);
        if (!detected)
            return finishFailed(step.failWith(detected.error()));
        detection = *detected;
        step.succeed(QStringLiteral("%1 (%2)").arg(detection.dockerfile, detection.builder));
    }

    // plan
    Plan plan;
    {
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("plan"));
        auto planned = makePlan(*spec, m_s.policy, m_s.runtime.capabilities(), checkoutDir);
        if (!planned)
            return finishFailed(step.failWith(planned.error()));
        plan = *planned;
        step.succeed(plan.notes.join(QStringLiteral("; ")));
    }
    if (cancel.isCancelled())
        return finishFailed(cancelled());

    // build
    {
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("build"));
        adapters::BuildRequest request;
        request.contextDir = plan.contextDir;
        request.dockerfile = plan.dockerfile;
        request.tag = imageTag(deploy.app, deploy.id);
        request.labels = m_s.labels();
        request.buildArgs = spec->build.args;
        QString lastLine;
        auto image = m_s.runtime.build(request, cancel, [&lastLine](const QString &line) {
            if (!line.trimmed().isEmpty())
                lastLine = line.trimmed();
        });
        if (!image)
            return finishFailed(step.failWith(image.error()));
        deploy.imageId = *image;
        deploys.update(deploy);
        step.succeed(image->left(19));
    }
    if (cancel.isCancelled())
        return finishFailed(cancelled());

    // start
    adapters::ContainerInfo container;
    {
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("start"));
        adapters::ContainerSpec cs = plan.container;
        cs.name = containerName(deploy.app, deploy.id);
        cs.image = deploy.imageId;
        cs.labels.insert(m_s.labels(deploy.app, deploy.id));
        auto id = m_s.runtime.run(cs);
        if (!id)
            return finishFailed(step.failWith(id.error()));
        deploy.containerId = *id;
        deploys.update(deploy);
        auto info = m_s.runtime.inspect(*id);
        if (!info)
            return finishFailed(step.failWith(info.error()));
        container = *info;
        // A container that already exited has no address; the health step says why it exited.
        if (container.address.isEmpty() && container.state == QLatin1String("running"))
            return finishFailed(
                step.failWith(Error{ErrorCode::Failed, QStringLiteral("the container has no address")}));
        step.succeed(QStringLiteral("%1 at %2:%3").arg(id->left(12), container.address).arg(plan.container.port));
    }

    // health
    {
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("health"));
        const QString containerId = deploy.containerId;
        auto alive = [this, containerId]() -> Status {
            auto info = m_s.runtime.inspect(containerId);
            if (info && info->state != QLatin1String("running") && info->state != QLatin1String("created"))
                return fail(
                    ErrorCode::Failed,
                    QStringLiteral("the container stopped (%1, exit code %2)").arg(info->state).arg(info->exitCode), {},
                    QStringLiteral("see its output with `pando logs` or in the deploy's build step"));
            return {};
        };
        auto probed = probeUntilHealthy(container.address, plan.container.port, plan.healthPath,
                                        plan.healthTimeoutSeconds * 1000, plan.healthIntervalMs, cancel, alive);
        if (!probed) {
            Error error = probed.error();
            // The app's last words usually say why it did not come up.
            QStringList lines;
            m_s.runtime.logs(containerId, 5, false, cancel, [&lines](const adapters::LogLine &l) { lines << l.text; });
            if (!lines.isEmpty())
                error.message += QStringLiteral("; last output: ") + lines.join(QStringLiteral(" | "));
            return finishFailed(step.failWith(error));
        }
        step.succeed(QStringLiteral("GET %1 → %2 after %3 probe(s)")
                         .arg(plan.healthPath)
                         .arg(probed->status)
                         .arg(probed->attempts));
    }
    if (cancel.isCancelled())
        return finishFailed(cancelled());

    // switch: from here on the new version serves.
    const auto appLock = m_s.appLocks.lockFor(deploy.app);
    QMutexLocker switchLock(appLock.get());
    {
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("switch"));
        auto route = m_s.router.ensure(deploy.app, appRow->routePort);
        if (!route)
            return finishFailed(step.failWith(route.error()));
        if (route->port != appRow->routePort)
            apps.setRoutePort(deploy.app, route->port, m_s.clock.nowMs());
        if (auto switched = m_s.router.setBackend(deploy.app, container.address, plan.container.port); !switched)
            return finishFailed(step.failWith(switched.error()));
        if (auto saved = apps.setCurrentDeploy(deploy.app, deploy.id, m_s.clock.nowMs()); !saved) {
            // Put the old backend back so what serves matches what is recorded.
            if (!previous.isEmpty()) {
                auto old = deploys.find(previous);
                if (old && !old->containerId.isEmpty())
                    if (auto info = m_s.runtime.inspect(old->containerId))
                        m_s.router.setBackend(deploy.app, info->address, plan.container.port);
            }
            return finishFailed(step.failWith(saved.error()));
        }
        deploy.status = QStringLiteral("succeeded");
        deploy.finishedMs = m_s.clock.nowMs();
        deploys.update(deploy);
        step.succeed(route->url.toString());
        m_s.publish(QStringLiteral("deploy.succeeded"), deploy.app, deploy.id,
                    QJsonObject{{QStringLiteral("url"), route->url.toString()}});
        m_s.audit.record(Actor::system(QStringLiteral("deploy")), QStringLiteral("deploy.finish"),
                         QStringLiteral("deploy/") + deploy.id, QStringLiteral("success"),
                         QJsonObject{{QStringLiteral("app"), deploy.app}, {QStringLiteral("commit"), deploy.commit}});
    }

    // retire: the old version finishes what it is serving, then goes.
    {
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("retire"));
        if (m_s.retireGraceMs > 0 && !previous.isEmpty())
            QThread::msleep(quint64(m_s.retireGraceMs));
        retireOld(deploy.app, deploy.id);
        step.succeed(previous.isEmpty() ? QStringLiteral("nothing to retire") : QStringLiteral("retired ") + previous);
    }
    return {};
}

void DeployRunner::retireOld(const QString &app, const QString &keepDeploy)
{
    auto containers = m_s.runtime.containers(m_s.labels(app));
    if (containers) {
        for (const adapters::ContainerInfo &c : *containers) {
            if (c.labels.value(QLatin1String(adapters::LabelDeploy)) == keepDeploy)
                continue;
            m_s.runtime.stop(c.id, 10);
            if (auto removed = m_s.runtime.remove(c.id); !removed)
                qWarning("retire %s: removing container %s failed: %s", qPrintable(app), qPrintable(c.id),
                         qPrintable(removed.error().text()));
        }
    }
    // Keep the serving image and the newest one before it.
    auto history = DeployRepository(m_s.db).listForApp(app, 50);
    QSet<QString> keep{keepDeploy};
    if (history) {
        for (const DeployRecord &d : std::as_const(*history)) {
            if (d.id != keepDeploy && d.status == QLatin1String("succeeded") && !d.imageId.isEmpty()) {
                keep.insert(d.id);
                break;
            }
        }
    }
    untagImages(m_s, app, [&keep](const QString &deployId) { return keep.contains(deployId); });
}

void DeployRunner::discard(const QString &app, const QString &deployId)
{
    auto containers = m_s.runtime.containers(m_s.labels(app, deployId));
    if (containers)
        for (const adapters::ContainerInfo &c : *containers)
            m_s.runtime.remove(c.id);
    m_s.runtime.removeImage(imageTag(app, deployId));
}

Status DeployRunner::settleInterrupted(const QString &deployId)
{
    DeployRepository deploys(m_s.db);
    auto found = deploys.find(deployId);
    if (!found)
        return std::unexpected(found.error());
    DeployRecord deploy = *found;
    auto app = AppRepository(m_s.db).find(deploy.app);
    const bool switched = app && app->currentDeploy == deploy.id;
    deploy.finishedMs = m_s.clock.nowMs();
    if (switched) {
        deploy.status = QStringLiteral("succeeded");
        retireOld(deploy.app, deploy.id);
    } else {
        deploy.status = QStringLiteral("failed");
        deploy.error = QStringLiteral("interrupted: Pando stopped while this deploy was running");
        discard(deploy.app, deploy.id);
        // Steps left running were cut off.
        if (auto steps = deploys.steps(deploy.id)) {
            for (StepRecord step : *steps) {
                if (step.status != QLatin1String("running"))
                    continue;
                deploy.failedStep = step.name;
                step.status = QStringLiteral("failed");
                step.detail = QStringLiteral("interrupted");
                step.finishedMs = deploy.finishedMs;
                deploys.updateStep(step);
            }
        }
    }
    QDir(workRoot(m_s, deploy.app)).removeRecursively();
    if (auto saved = deploys.update(deploy); !saved)
        return saved;
    m_s.publish(switched ? QStringLiteral("deploy.succeeded") : QStringLiteral("deploy.failed"), deploy.app, deploy.id,
                QJsonObject{{QStringLiteral("error"), deploy.error}});
    return m_s.audit.record(
        Actor::system(QStringLiteral("recovery")), QStringLiteral("deploy.settle"),
        QStringLiteral("deploy/") + deploy.id, switched ? QStringLiteral("success") : QStringLiteral("failure"),
        QJsonObject{{QStringLiteral("app"), deploy.app}, {QStringLiteral("status"), deploy.status}});
}

} // namespace pando::core
