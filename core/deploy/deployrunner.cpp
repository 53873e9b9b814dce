#include "deployrunner.h"

#include "core/capacity/capacity.h"
#include "core/deploy/healthprobe.h"
#include "core/deploy/imagereuse.h"
#include "core/deploy/secretinjection.h"
#include "core/deploy/servicestep.h"
#include "core/detection/detection.h"
#include "core/spec/appspec.h"
#include "core/state/repositories.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QThread>

namespace pando::core {

namespace {

// Records one step: started on construction, ended by succeed()/failWith(); a step left open
// when the runner returns early is recorded as failed.
class StepRecorder {
public:
    // A quiet step is recorded only if it fails: a deploy resumed after its approval runs
    // fetch, detect and plan again (same commit, same spec) without listing them twice.
    StepRecorder(Services &s, DeployRecord &deploy, int seq, const QString &name, bool quiet = false)
        : m_s(s), m_deploy(deploy), m_quiet(quiet)
    {
        m_step.deployId = deploy.id;
        m_step.seq = seq;
        m_step.name = name;
        m_step.status = QStringLiteral("running");
        m_step.startedMs = m_s.clock.nowMs();
        if (!m_quiet)
            add();
    }
    ~StepRecorder()
    {
        if (m_step.status == QLatin1String("running"))
            end(QStringLiteral("failed"), QStringLiteral("interrupted"));
    }
    void succeed(const QString &detail = {}) { end(QStringLiteral("succeeded"), detail); }
    // The step stays open past the runner's return: the deploy waits for a person.
    void waitFor(const QString &detail) { end(QStringLiteral("waiting"), detail); }
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
    void add()
    {
        if (auto added = DeployRepository(m_s.db).addStep(m_step); !added)
            qWarning("deploy %s: recording step %s failed: %s", qPrintable(m_deploy.id), qPrintable(m_step.name),
                     qPrintable(added.error().text()));
        publish();
    }
    void end(const QString &status, const QString &detail)
    {
        if (m_quiet) {
            if (status == QLatin1String("succeeded")) {
                m_step.status = status;
                return;
            }
            m_quiet = false;
            add();
        }
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
    bool m_quiet = false;
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

    // A deploy queued again after its approval carries on after the steps it recorded.
    const bool resumed = !deploy.approvalId.isEmpty();
    deploy.status = QStringLiteral("running");
    if (deploy.startedMs == 0)
        deploy.startedMs = m_s.clock.nowMs();
    if (auto saved = deploys.update(deploy); !saved)
        return saved;
    m_s.publish(QStringLiteral("deploy.started"), deploy.app, deploy.id);

    int seq = 0;
    if (resumed) {
        auto steps = deploys.steps(deploy.id);
        if (!steps)
            return std::unexpected(steps.error());
        seq = int(steps->size());
    }
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

    // The spec as it was when the deploy was asked for: editing the app meanwhile (while this
    // deploy waits for approval, say) does not change what it runs.
    auto spec = parseAppSpec((deploy.specYaml.isEmpty() ? appRow->specYaml : deploy.specYaml).toUtf8());
    if (!spec) {
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("fetch"), resumed);
        return finishFailed(step.failWith(spec.error()));
    }
    const QString ref = deploy.ref.isEmpty() ? spec->source.ref : deploy.ref;
    // The commit resolved when the deploy was asked for; a branch that moved since does not
    // change what this deploy builds.
    const QString target = deploy.commit.isEmpty() ? ref : deploy.commit;

    // fetch
    {
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("fetch"), resumed);
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
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("detect"), resumed);
        auto detected = detect(*spec, checkoutDir);
        if (!detected)
            return finishFailed(step.failWith(detected.error()));
        detection = *detected;
        step.succeed(QStringLiteral("%1 (%2)").arg(detection.dockerfile, detection.builder));
    }

    // plan
    Plan plan;
    SecretInjection secrets; // opened here, wiped once the container exists
    {
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("plan"), resumed);
        // The spec's runtime, or the install's default one.
        auto caps = m_s.runtime.capabilitiesOf(spec->runtime);
        if (!caps)
            return finishFailed(step.failWith(caps.error()));
        if (const QString name = containerName(deploy.app, deploy.id);
            caps->maxNameLength > 0 && name.size() > caps->maxNameLength)
            return finishFailed(step.failWith(
                Error{ErrorCode::Invalid,
                      QStringLiteral("the %1 runtime takes names of at most %2 characters, and this app's are %3 (%4)")
                          .arg(caps->kind)
                          .arg(caps->maxNameLength)
                          .arg(name.size())
                          .arg(name),
                      QStringLiteral("name"),
                      QStringLiteral("use an app name of at most %1 characters")
                          .arg(caps->maxNameLength - (name.size() - deploy.app.size()))}));
        auto planned = makePlan(*spec, m_s.policy, *caps, checkoutDir);
        if (!planned)
            return finishFailed(step.failWith(planned.error()));
        // Room on the runtime beside what other apps committed (core/capacity).
        auto room = capacity::checkRoom(m_s.db, m_s.runtime, m_s.policy, deploy.app, *spec, *caps, planned->container);
        if (!room)
            return finishFailed(step.failWith(room.error()));
        if (!room->isEmpty())
            planned->notes << *room;
        plan = *planned;
        auto injected = SecretInjection::prepare(m_s, deploy.app, *spec);
        if (!injected)
            return finishFailed(step.failWith(injected.error()));
        secrets = std::move(*injected);
        if (auto servicesOk = checkServicesPlan(m_s, *spec); !servicesOk)
            return finishFailed(step.failWith(servicesOk.error()));
        qint64 servingSince = 0;
        if (!previous.isEmpty())
            if (auto serving = deploys.find(previous))
                servingSince = serving->startedMs;
        if (const QString said = secrets.describe(servingSince); !said.isEmpty())
            plan.notes << said; // names only
        step.succeed(plan.notes.join(QStringLiteral("; ")));
    }
    if (cancel.isCancelled())
        return finishFailed(cancelled());

    // approval: the host policy may hold the deploy here, with the plan shown to approvers.
    if (resumed) {
        // The approval is used once: a second run of this job (a crash right here, say) finds
        // it used and fails rather than deploying twice on one sign-off.
        auto used =
            m_s.approvals != nullptr
                ? m_s.approvals->consume(deploy.approvalId)
                : Result<ApprovalRecord>(fail(ErrorCode::Internal, QStringLiteral("approvals are not available")));
        if (!used) {
            deploy.failedStep = QStringLiteral("approval");
            deploy.error = used.error().text();
            finishWaitingStep(deploy, QStringLiteral("failed"), used.error().text());
            return finishFailed(used.error());
        }
        finishWaitingStep(deploy, QStringLiteral("succeeded"),
                          QStringLiteral("%1 approved by %2%3")
                              .arg(used->id, used->decidedBy,
                                   used->reason.isEmpty() ? QString() : QStringLiteral(": ") + used->reason));
    } else if (auto held = holdForApproval(deploy, *spec, plan, previous, seq); !held) {
        return finishFailed(held.error());
    } else if (*held) {
        return {};
    }

    // build
    {
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("build"));
        if (const auto reused = reuseImage(m_s, deploy, *spec)) {
            deploy.imageId = reused->imageId;
            deploys.update(deploy);
            step.succeed(QStringLiteral("%1, built by %2 from the same commit")
                             .arg(reused->imageId.left(19), reused->fromDeploy));
        } else {
            adapters::BuildRequest request;
            request.contextDir = plan.contextDir;
            request.dockerfile = plan.dockerfile;
            request.runtime = spec->runtime;
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
    }
    if (cancel.isCancelled())
        return finishFailed(cancelled());

    // services: the app's backing services run and accept connections before it starts.
    ProvisionedServices provisioned;
    if (!spec->services.isEmpty()) {
        StepRecorder step(m_s, deploy, seq++, QStringLiteral("services"));
        auto ready = provisionServices(m_s, deploy.app, *spec, cancel);
        if (!ready)
            return finishFailed(step.failWith(ready.error()));
        provisioned = std::move(*ready);
        step.succeed(provisioned.summary.join(QStringLiteral("; ")));
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
        secrets.applyTo(cs);
        applyServices(provisioned, cs);
        auto id = m_s.runtime.run(cs);
        secrets.scrub(cs);
        scrubServices(provisioned, cs);
        secrets.wipe();
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

namespace {

// What approvers see: what will run and what changed since the version serving now. Values of
// environment variables and build arguments stay out: they may be secrets.
QJsonObject planForApprovers(const DeployRecord &deploy, const AppSpec &spec, const Plan &plan, const AppSpec *current,
                             const DeployRecord *serving, const policy::Decision &decision)
{
    QJsonObject o{{QStringLiteral("app"), deploy.app},
                  {QStringLiteral("deploy"), deploy.id},
                  {QStringLiteral("ref"), deploy.ref},
                  {QStringLiteral("commit"), deploy.commit},
                  {QStringLiteral("repo"), spec.source.repo},
                  {QStringLiteral("dockerfile"), plan.dockerfile},
                  {QStringLiteral("port"), plan.container.port},
                  {QStringLiteral("memory_bytes"), plan.container.memoryBytes},
                  {QStringLiteral("cpus"), plan.container.cpus},
                  {QStringLiteral("egress"), egressName(spec.network.egress)},
                  {QStringLiteral("env"), QJsonArray::fromStringList(plan.container.env.keys())},
                  {QStringLiteral("reasons"), QJsonArray::fromStringList(decision.reasons)}};
    if (!plan.container.command.isEmpty())
        o.insert(QStringLiteral("command"), QJsonArray::fromStringList(plan.container.command));
    if (!plan.notes.isEmpty())
        o.insert(QStringLiteral("notes"), QJsonArray::fromStringList(plan.notes));
    if (serving != nullptr) {
        QJsonObject was{{QStringLiteral("deploy"), serving->id}, {QStringLiteral("commit"), serving->commit}};
        if (current != nullptr) {
            was.insert(QStringLiteral("repo"), current->source.repo);
            was.insert(QStringLiteral("memory_bytes"), current->run.memoryBytes);
            was.insert(QStringLiteral("cpus"), current->run.cpus);
            was.insert(QStringLiteral("egress"), egressName(current->network.egress));
        }
        o.insert(QStringLiteral("serving"), was);
    }
    return o;
}

} // namespace

Result<bool> DeployRunner::holdForApproval(DeployRecord &deploy, const AppSpec &spec, const Plan &plan,
                                           const QString &previous, int &seq)
{
    if (m_s.approvals == nullptr || m_s.approvalPolicy == nullptr || m_s.approvalPolicy->isEmpty())
        return false;
    // What serves now is what the change rules compare against.
    std::optional<DeployRecord> serving;
    std::optional<AppSpec> current;
    if (!previous.isEmpty()) {
        if (auto found = DeployRepository(m_s.db).find(previous)) {
            serving = *found;
            if (!found->specYaml.isEmpty())
                if (auto parsed = parseAppSpec(found->specYaml.toUtf8()))
                    current = *parsed;
        }
    }
    const policy::Decision decision = m_s.approvalPolicy->decide(current ? &*current : nullptr, spec, deploy.app);
    if (!decision.needsApproval)
        return false;

    StepRecorder step(m_s, deploy, seq++, QStringLiteral("approval"));
    const QJsonObject shown =
        planForApprovers(deploy, spec, plan, current ? &*current : nullptr, serving ? &*serving : nullptr, decision);
    const QString summary =
        QStringLiteral("deploy %1 of %2 at %3: %4")
            .arg(deploy.id, deploy.app, deploy.commit.left(12), decision.reasons.join(QStringLiteral("; ")));
    auto requested = m_s.approvals->request(
        QString(approval::KindDeploy), QStringLiteral("deploy/") + deploy.id, Actor{deploy.actor, {}, {}}, summary,
        QString::fromUtf8(QJsonDocument(shown).toJson(QJsonDocument::Compact)), m_s.approvalTtlMs);
    if (!requested)
        return std::unexpected(step.failWith(requested.error()));
    deploy.approvalId = requested->id;
    deploy.status = QStringLiteral("awaiting-approval");
    if (auto saved = DeployRepository(m_s.db).update(deploy); !saved)
        return std::unexpected(step.failWith(saved.error()));
    step.waitFor(QStringLiteral("waiting for approval %1 (%2); approve with `pando approvals approve %1`")
                     .arg(requested->id, decision.reasons.join(QStringLiteral("; "))));
    m_s.publish(QStringLiteral("deploy.awaiting-approval"), deploy.app, deploy.id,
                QJsonObject{{QStringLiteral("approval"), requested->id},
                            {QStringLiteral("reasons"), QJsonArray::fromStringList(decision.reasons)}});
    return true;
}

void DeployRunner::finishWaitingStep(const DeployRecord &deploy, const QString &status, const QString &detail)
{
    DeployRepository deploys(m_s.db);
    auto steps = deploys.steps(deploy.id);
    if (!steps)
        return;
    for (StepRecord step : std::as_const(*steps)) {
        if (step.status != QLatin1String("waiting"))
            continue;
        step.status = status;
        step.detail = detail.left(2000);
        step.finishedMs = m_s.clock.nowMs();
        if (auto updated = deploys.updateStep(step); !updated)
            qWarning("deploy %s: recording step %s failed: %s", qPrintable(deploy.id), qPrintable(step.name),
                     qPrintable(updated.error().text()));
        m_s.publish(QStringLiteral("deploy.step"), deploy.app, deploy.id,
                    QJsonObject{{QStringLiteral("seq"), step.seq},
                                {QStringLiteral("name"), step.name},
                                {QStringLiteral("status"), step.status},
                                {QStringLiteral("detail"), step.detail},
                                {QStringLiteral("started_ms"), step.startedMs},
                                {QStringLiteral("finished_ms"), step.finishedMs}});
    }
}

Status DeployRunner::endHeld(const QString &deployId, const QString &status, const QString &why)
{
    DeployRepository deploys(m_s.db);
    auto found = deploys.find(deployId);
    if (!found)
        return std::unexpected(found.error());
    DeployRecord deploy = *found;
    if (deploy.status != QLatin1String("awaiting-approval"))
        return fail(ErrorCode::Conflict,
                    QStringLiteral("deploy %1 is %2, not waiting for approval").arg(deployId, deploy.status));
    deploy.status = status;
    deploy.failedStep = QStringLiteral("approval");
    deploy.error = why;
    deploy.finishedMs = m_s.clock.nowMs();
    finishWaitingStep(deploy, QStringLiteral("failed"), why);
    if (auto saved = deploys.update(deploy); !saved)
        return saved;
    m_s.publish(QStringLiteral("deploy.failed"), deploy.app, deploy.id,
                QJsonObject{{QStringLiteral("step"), deploy.failedStep},
                            {QStringLiteral("status"), deploy.status},
                            {QStringLiteral("error"), deploy.error}});
    return m_s.audit.record(Actor::system(QStringLiteral("deploy")), QStringLiteral("deploy.finish"),
                            QStringLiteral("deploy/") + deploy.id, QStringLiteral("failure"),
                            QJsonObject{{QStringLiteral("app"), deploy.app},
                                        {QStringLiteral("step"), deploy.failedStep},
                                        {QStringLiteral("error"), deploy.error}});
}

void DeployRunner::retireOld(const QString &app, const QString &keepDeploy)
{
    auto containers = m_s.runtime.containers(m_s.labels(app));
    if (containers) {
        for (const adapters::ContainerInfo &c : *containers) {
            if (c.labels.value(QLatin1String(adapters::LabelDeploy)) == keepDeploy || isServiceContainer(c))
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
