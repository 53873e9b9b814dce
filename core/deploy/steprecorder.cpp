#include "steprecorder.h"

#include "core/state/repositories.h"

#include <QJsonObject>

namespace pando::core {

namespace {

void publishStep(const Services &s, const DeployRecord &deploy, const StepRecord &step)
{
    s.publish(EventType::DeployStep, deploy.app, deploy.id,
              QJsonObject{{QStringLiteral("seq"), step.seq},
                          {QStringLiteral("name"), step.name},
                          {QStringLiteral("status"), toString(step.status)},
                          {QStringLiteral("detail"), step.detail},
                          {QStringLiteral("started_ms"), step.startedMs},
                          {QStringLiteral("finished_ms"), step.finishedMs}});
}

void warnUnrecorded(const DeployRecord &deploy, const StepRecord &step, const Error &error)
{
    // The deploy goes on: a step row is what people read, not what the deploy depends on.
    qWarning("deploy %s: recording step %s failed: %s", qPrintable(deploy.id), qPrintable(step.name),
             qPrintable(error.text()));
}

} // namespace

StepRecorder::StepRecorder(Services &s, DeployRecord &deploy, int seq, const QString &name, bool quiet)
    : m_s(s), m_deploy(deploy), m_quiet(quiet)
{
    m_step.deployId = deploy.id;
    m_step.seq = seq;
    m_step.name = name;
    m_step.status = DeployStepStatus::Running;
    m_step.startedMs = m_s.clock.nowMs();
    if (!m_quiet)
        add();
}

StepRecorder::~StepRecorder()
{
    if (m_step.status == DeployStepStatus::Running)
        end(DeployStepStatus::Failed, QStringLiteral("interrupted"));
}

void StepRecorder::succeed(const QString &detail)
{
    end(DeployStepStatus::Succeeded, detail);
}

void StepRecorder::waitFor(const QString &detail)
{
    end(DeployStepStatus::Waiting, detail);
}

Error StepRecorder::failWith(const Error &error)
{
    end(DeployStepStatus::Failed, error.text());
    m_deploy.failedStep = m_step.name;
    m_deploy.error = error.text();
    if (!error.hint.isEmpty())
        m_deploy.error += QStringLiteral(" (hint: %1)").arg(error.hint);
    return error;
}

void StepRecorder::add()
{
    if (auto added = DeployRepository(m_s.db).addStep(m_step); !added)
        warnUnrecorded(m_deploy, m_step, added.error());
    publishStep(m_s, m_deploy, m_step);
}

void StepRecorder::end(DeployStepStatus status, const QString &detail)
{
    if (m_quiet) {
        if (status == DeployStepStatus::Succeeded) {
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
        warnUnrecorded(m_deploy, m_step, updated.error());
    publishStep(m_s, m_deploy, m_step);
}

void finishWaitingSteps(Services &s, const DeployRecord &deploy, DeployStepStatus status, const QString &detail)
{
    DeployRepository deploys(s.db);
    auto steps = deploys.steps(deploy.id);
    if (!steps)
        return;
    for (StepRecord step : std::as_const(*steps)) {
        if (step.status != DeployStepStatus::Waiting)
            continue;
        step.status = status;
        step.detail = detail.left(2000);
        step.finishedMs = s.clock.nowMs();
        if (auto updated = deploys.updateStep(step); !updated)
            warnUnrecorded(deploy, step, updated.error());
        publishStep(s, deploy, step);
    }
}

} // namespace pando::core
