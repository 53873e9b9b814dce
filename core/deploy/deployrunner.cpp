#include "deployrunner.h"

#include "core/deploy/deploysteps.h"
#include "core/deploy/steplog.h"
#include "core/deploy/steprecorder.h"
#include "core/state/repositories.h"

#include <QDir>
#include <QJsonObject>
#include <optional>
#include <utility>

namespace pando::core {

namespace {

Error cancelled()
{
    return Error{ErrorCode::Cancelled, QStringLiteral("the deploy was cancelled")};
}

} // namespace

Status DeployRunner::run(const QString &deployId, const CancelToken &cancel)
{
    auto started = begin(deployId, cancel);
    if (!started)
        return std::unexpected(started.error());
    if (!*started)
        return {}; // cancelled while queued, or settled already
    DeployRun &run = **started;

    // The deploy succeeds when its new version serves, announced once the step after the switch
    // (retire) is recorded as running: whoever reads a succeeded deploy sees every step it has
    // left to end.
    std::optional<QString> servesAt;
    const auto announce = [this, &run, &servesAt] {
        if (servesAt)
            finishSucceeded(run, *std::exchange(servesAt, std::nullopt));
    };
    for (const DeployStep &step : DeploySteps) {
        if (step.applies != nullptr && !step.applies(run)) {
            if (step.checkCancelAfter && cancel.isCancelled())
                return finishFailed(run, cancelled());
            continue;
        }
        if (step.locksApp && !run.appLock.owns_lock()) {
            run.appMutex = m_s.appLocks.lockFor(run.deploy.app);
            run.appLock = std::unique_lock<QMutex>(*run.appMutex);
        }
        if (step.recording == Recording::BySelf) {
            auto ended = step.run(run);
            if (!ended)
                return finishFailed(run, ended.error());
            if (ended->hold)
                return {};
        } else {
            StepRecorder recorder(m_s, run.deploy, run.seq, QString(step.name),
                                  step.recording == Recording::QuietOnResume && run.resumed);
            announce();
            StepLog log(m_s.db, m_s.clock, m_s.logFeed, run.deploy.id, run.seq++);
            run.log = &log;
            auto ended = step.run(run);
            run.log = nullptr;
            log.close();
            if (!ended)
                return finishFailed(run, recorder.failWith(ended.error()));
            recorder.succeed(ended->detail);
            if (ended->live)
                servesAt = ended->detail;
        }
        if (step.checkCancelAfter && cancel.isCancelled())
            return finishFailed(run, cancelled());
    }
    announce();
    return {};
}

Result<std::unique_ptr<DeployRun>> DeployRunner::begin(const QString &deployId, const CancelToken &cancel)
{
    DeployRepository deploys(m_s.db);
    auto found = deploys.find(deployId);
    if (!found)
        return std::unexpected(found.error());
    if (found->status != DeployStatus::Queued)
        return nullptr;
    auto app = AppRepository(m_s.db).find(found->app);
    if (!app)
        return std::unexpected(app.error());
    auto run = std::make_unique<DeployRun>(m_s, *found, *app, cancel);
    DeployRecord &deploy = run->deploy;
    deploy.status = DeployStatus::Running;
    if (deploy.startedMs == 0)
        deploy.startedMs = m_s.clock.nowMs();
    if (auto saved = deploys.update(deploy); !saved)
        return std::unexpected(saved.error());
    m_s.publish(EventType::DeployStarted, deploy.app, deploy.id);
    // A deploy queued again after its approval carries on after the steps it recorded.
    if (run->resumed) {
        auto steps = deploys.steps(deploy.id);
        if (!steps)
            return std::unexpected(steps.error());
        run->seq = int(steps->size());
    }
    return run;
}

Status DeployRunner::finishFailed(DeployRun &run, const Error &error)
{
    DeployRecord &deploy = run.deploy;
    deploy.status = error.code == ErrorCode::Cancelled ? DeployStatus::Cancelled : DeployStatus::Failed;
    if (deploy.error.isEmpty())
        deploy.error = error.text();
    deploy.finishedMs = m_s.clock.nowMs();
    removeDeployObjects(m_s, deploy.app, deploy.id);
    // The record and the event carry it when the line could not be written.
    if (auto audited = m_s.audit.record(Actor::system(QStringLiteral("deploy")), QStringLiteral("deploy.finish"),
                                        QStringLiteral("deploy/") + deploy.id, QStringLiteral("failure"),
                                        QJsonObject{{QStringLiteral("app"), deploy.app},
                                                    {QStringLiteral("step"), deploy.failedStep},
                                                    {QStringLiteral("error"), deploy.error}});
        !audited)
        deploy.error += QStringLiteral("; and its audit line could not be written: ") + audited.error().text();
    if (auto saved = DeployRepository(m_s.db).update(deploy); !saved)
        qWarning("deploy %s: saving the failure failed: %s", qPrintable(deploy.id), qPrintable(saved.error().text()));
    m_s.publish(EventType::DeployFailed, deploy.app, deploy.id,
                QJsonObject{{QStringLiteral("step"), deploy.failedStep}, {QStringLiteral("error"), deploy.error}});
    return std::unexpected(error);
}

void DeployRunner::finishSucceeded(DeployRun &run, const QString &url)
{
    DeployRecord &deploy = run.deploy;
    deploy.status = DeployStatus::Succeeded;
    deploy.finishedMs = m_s.clock.nowMs();
    // The new version serves whatever becomes of the line; the deploy's record and event say
    // when it could not be written, so that nobody takes the deploy for an audited one.
    QJsonObject announced{{QStringLiteral("url"), url}};
    if (auto audited = m_s.audit.record(
            Actor::system(QStringLiteral("deploy")), QStringLiteral("deploy.finish"),
            QStringLiteral("deploy/") + deploy.id, QStringLiteral("success"),
            QJsonObject{{QStringLiteral("app"), deploy.app}, {QStringLiteral("commit"), deploy.commit}});
        !audited) {
        deploy.error = unaudited(QStringLiteral("the deploy succeeded"), audited.error()).text();
        announced.insert(QStringLiteral("audit_error"), audited.error().text());
    }
    run.save();
    m_s.publish(EventType::DeploySucceeded, deploy.app, deploy.id, announced);
}

Status DeployRunner::endHeld(const QString &deployId, DeployStatus status, const QString &why)
{
    DeployRepository deploys(m_s.db);
    auto found = deploys.find(deployId);
    if (!found)
        return std::unexpected(found.error());
    DeployRecord deploy = *found;
    if (deploy.status != DeployStatus::AwaitingApproval)
        return fail(ErrorCode::Conflict,
                    QStringLiteral("deploy %1 is %2, not waiting for approval").arg(deployId, toString(deploy.status)));
    deploy.status = status;
    deploy.failedStep = QStringLiteral("approval");
    deploy.error = why;
    deploy.finishedMs = m_s.clock.nowMs();
    finishWaitingSteps(m_s, deploy, DeployStepStatus::Failed, why);
    if (auto saved = deploys.update(deploy); !saved)
        return saved;
    m_s.publish(EventType::DeployFailed, deploy.app, deploy.id,
                QJsonObject{{QStringLiteral("step"), deploy.failedStep},
                            {QStringLiteral("status"), toString(deploy.status)},
                            {QStringLiteral("error"), deploy.error}});
    return m_s.audit.record(Actor::system(QStringLiteral("deploy")), QStringLiteral("deploy.finish"),
                            QStringLiteral("deploy/") + deploy.id, QStringLiteral("failure"),
                            QJsonObject{{QStringLiteral("app"), deploy.app},
                                        {QStringLiteral("step"), deploy.failedStep},
                                        {QStringLiteral("error"), deploy.error}});
}

Status DeployRunner::settleInterrupted(const QString &deployId)
{
    DeployRepository deploys(m_s.db);
    auto found = deploys.find(deployId);
    if (!found)
        return std::unexpected(found.error());
    DeployRecord deploy = *found;
    auto app = AppRepository(m_s.db).find(deploy.app);
    const bool current = app && app->currentDeploy == deploy.id;
    // One that succeeded was cut off in its retire: announced already, it is only finished.
    const bool announced = deploy.status == DeployStatus::Succeeded;
    const bool switched = announced || current;
    const qint64 now = m_s.clock.nowMs();
    if (!announced)
        deploy.finishedMs = now;
    if (current)
        retireOldVersions(m_s, deploy.app, deploy.id);
    if (!switched) {
        deploy.status = DeployStatus::Failed;
        deploy.error = QStringLiteral("interrupted: Pando stopped while this deploy was running");
        removeDeployObjects(m_s, deploy.app, deploy.id);
    }
    // Steps left running were cut off; after the switch only the retire was, done just now.
    if (auto steps = deploys.steps(deploy.id)) {
        for (StepRecord step : *steps) {
            if (step.status != DeployStepStatus::Running)
                continue;
            if (!switched)
                deploy.failedStep = step.name;
            step.status = switched ? DeployStepStatus::Succeeded : DeployStepStatus::Failed;
            step.detail =
                switched ? QStringLiteral("finished when Pando started again") : QStringLiteral("interrupted");
            step.finishedMs = now;
            if (auto updated = deploys.updateStep(step); !updated)
                qWarning("deploy %s: recording step %s as interrupted failed: %s", qPrintable(deploy.id),
                         qPrintable(step.name), qPrintable(updated.error().text()));
        }
    }
    if (announced)
        return {};
    QDir(m_s.workRoot(deploy.app)).removeRecursively();
    if (switched)
        deploy.status = DeployStatus::Succeeded;
    if (auto saved = deploys.update(deploy); !saved)
        return saved;
    m_s.publish(switched ? EventType::DeploySucceeded : EventType::DeployFailed, deploy.app, deploy.id,
                QJsonObject{{QStringLiteral("error"), deploy.error}});
    return m_s.audit.record(
        Actor::system(QStringLiteral("recovery")), QStringLiteral("deploy.settle"),
        QStringLiteral("deploy/") + deploy.id, switched ? QStringLiteral("success") : QStringLiteral("failure"),
        QJsonObject{{QStringLiteral("app"), deploy.app}, {QStringLiteral("status"), toString(deploy.status)}});
}

} // namespace pando::core
