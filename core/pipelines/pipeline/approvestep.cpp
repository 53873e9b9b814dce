// The approve step: asks the approval service for sign-off and waits for the decision.
#include "core/pipelines/pipeline/execution.h"

namespace pando::core::pipelines::detail {

namespace {

// How often a waiting approve step checks the run's cancel token, and how often it looks the
// request up even without an event (a missed event, or a bus that is not the service's).
constexpr int ApprovalCancelCheckMs = 200;
constexpr qint64 ApprovalSafetyPollMs = 5000;
constexpr int ApprovalLookupFailures = 12; // lookups failing in a row before the step errors

// Who asked for a run's approvals: whoever triggered the run ("system:trigger" for triggers).
Actor requesterOf(const RunRecord &run)
{
    return Actor{run.actor.isEmpty() ? QStringLiteral("system:pipelines") : run.actor, QStringLiteral("engine"), {}};
}

// "2h", "1h30m", "45s", "250ms": what a person reads in "no decision within 2h".
QString humanDuration(qint64 ms)
{
    if (ms < 1000)
        return QStringLiteral("%1ms").arg(ms);
    qint64 seconds = ms / 1000;
    QString out;
    for (const auto &[unit, size] : {std::pair{'d', qint64(86400)}, std::pair{'h', qint64(3600)},
                                     std::pair{'m', qint64(60)}, std::pair{'s', qint64(1)}}) {
        if (seconds >= size) {
            out += QString::number(seconds / size) + QLatin1Char(unit);
            seconds %= size;
        }
    }
    return out;
}

QJsonValue maskJson(const Redactor &redactor, const QJsonValue &value)
{
    if (value.isString())
        return maskText(redactor, value.toString());
    if (value.isObject()) {
        QJsonObject out;
        const QJsonObject in = value.toObject();
        for (auto it = in.begin(); it != in.end(); ++it)
            out.insert(maskText(redactor, it.key()), maskJson(redactor, it.value()));
        return out;
    }
    if (value.isArray()) {
        QJsonArray out;
        for (const QJsonValue item : value.toArray())
            out.append(maskJson(redactor, item));
        return out;
    }
    return value;
}

// Wakes a waiting approve step when the bus says its request changed. Shared with the
// connection, so a late delivery on the publisher's thread never touches a finished step.
struct ApprovalWaiter {
    QMutex mutex;
    QWaitCondition changed;
    bool signalled = false;
};

} // namespace

// The pipeline runner acting for the requester: it may withdraw the request (the requester may
// reject their own), which the bare system actor could not when the step names approvers.
Actor automationFor(const RunRecord &run)
{
    return Actor{requesterOf(run).name + QStringLiteral("/system:pipelines"), QStringLiteral("engine"), {}};
}

QJsonObject Execution::approvalPlan(const Step &step, const QString &message) const
{
    QJsonObject inputs;
    {
        QMutexLocker lock(&m_mutex);
        inputs = m_versions;
    }
    // Versions chosen when the run was queued, for resources no get has fetched yet.
    for (auto it = m_inputs.begin(); it != m_inputs.end(); ++it)
        if (!inputs.contains(it.key()))
            inputs.insert(it.key(), it.value());
    return QJsonObject{
        {QStringLiteral("pipeline"), m_run.pipeline},
        {QStringLiteral("job"), m_run.job},
        {QStringLiteral("run"), m_run.id},
        {QStringLiteral("number"), m_run.number},
        {QStringLiteral("step"), step.name},
        {QStringLiteral("step_path"), step.path},
        {QStringLiteral("message"), message},
        {QStringLiteral("approvers"), QJsonArray::fromStringList(step.approve.approvers)},
        {QStringLiteral("timeout_ms"), double(step.approve.timeoutMs)},
        // A version may carry what a secret resolved to (a tag named after it): masked like output.
        {QStringLiteral("inputs"), maskJson(m_log.redactor(), inputs)},
    };
}

Outcome Execution::runApprove(const Step &step, RunStepRecord &rec, const CancelToken &cancel)
{
    ApprovalService *approvals = m_deps.approvals;
    if (!approvals) {
        return errored(
            rec,
            Error{ErrorCode::Unavailable,
                  QStringLiteral("approve step %1 needs the approval service, and this runner has none").arg(step.name),
                  step.path, QStringLiteral("run the pipeline in pandod, where approvals are wired in")});
    }
    // After an abort, hooks run on a fresh token; an approve step among them must not hold the
    // abort up waiting for a person.
    if (cancel.isCancelled() || m_runCancel.isCancelled())
        return finish(rec, Outcome::Aborted, QStringLiteral("not asked: the run was aborted"));

    // The file's ((vars)) are resolved already; a ((secret)) in the message is masked here, so
    // approvers (and the approvals table) never see its value.
    const QString message =
        maskText(m_log.redactor(), step.approve.message.isEmpty() ? QStringLiteral("Continue past %1?").arg(step.name)
                                                                  : step.approve.message);
    const QString summary =
        QStringLiteral("%1 (pipeline %2, job %3, run #%4)").arg(message, m_run.pipeline, m_run.job).arg(m_run.number);
    const QString object = QStringLiteral("run/%1/step/%2").arg(m_run.id, step.name);
    auto requested =
        approvals->request(QString(approval::KindPipelineStep), object, requesterOf(m_run), summary,
                           QString::fromUtf8(QJsonDocument(approvalPlan(step, message)).toJson(QJsonDocument::Compact)),
                           step.approve.timeoutMs, step.approve.approvers);
    if (!requested)
        return errored(rec, requested.error());
    const QString id = requested->id;

    auto waiter = std::make_shared<ApprovalWaiter>();
    const QMetaObject::Connection connection =
        QObject::connect(&m_deps.events, &EventBus::published, [waiter, id](const Event &event) {
            if (!isApprovalEvent(event.type) || event.data.value(QStringLiteral("id")).toString() != id)
                return;
            QMutexLocker lock(&waiter->mutex);
            waiter->signalled = true;
            waiter->changed.wakeAll();
        });
    const auto disconnect = qScopeGuard([&connection] { QObject::disconnect(connection); });

    m_log.note(step.path, QStringLiteral("asked for approval %1: %2").arg(id, message));
    m_log.note(step.path,
               QStringLiteral("who may approve: %1; open for %2")
                   .arg(step.approve.approvers.isEmpty()
                            ? QStringLiteral("any person but %1").arg(approval::personOf(requested->requester))
                            : step.approve.approvers.join(QStringLiteral(", ")),
                        humanDuration(step.approve.timeoutMs)));
    m_log.note(step.path, QStringLiteral("approve with: %1").arg(approvestep::approveCommand(id)));
    rec.hash = id;
    rec.status = RunStepStatus::Waiting;
    rec.error = QStringLiteral("waiting for approval %1: %2").arg(id, approvestep::approveCommand(id));
    // Written with the notes above in one batch: a follower sees how to settle it with the state.
    m_log.step(rec);

    // Wait for an event about the request (or the safety poll), then read the row: the row,
    // not the event, decides.
    ApprovalRecord settled;
    bool lookNow = true; // it may have been settled before the connection was made
    int lookupFailures = 0;
    QElapsedTimer sinceLook;
    sinceLook.start();
    for (;;) {
        if (cancel.isCancelled() || m_runCancel.isCancelled()) {
            const QString reason = m_runCancel.isCancelled()
                                       ? QStringLiteral("the run was aborted")
                                       : QStringLiteral("the step was cancelled (an enclosing timeout ran out or a "
                                                        "fail_fast sibling failed)");
            auto withdrawn = approvals->reject(id, Approver{automationFor(m_run)}, reason);
            if (!withdrawn) {
                m_log.note(step.path,
                           QStringLiteral("approval %1 was not withdrawn: %2").arg(id, withdrawn.error().text()));
            }
            return finish(rec, Outcome::Aborted, QString(approvestep::WithdrawnPrefix) + reason);
        }
        if (!lookNow && sinceLook.elapsed() < ApprovalSafetyPollMs) {
            QMutexLocker lock(&waiter->mutex);
            if (!waiter->signalled)
                waiter->changed.wait(&waiter->mutex, QDeadlineTimer(ApprovalCancelCheckMs));
            lookNow = waiter->signalled;
            waiter->signalled = false;
            continue;
        }
        lookNow = false;
        sinceLook.restart();
        auto found = approvals->find(id);
        if (!found) {
            if (++lookupFailures >= ApprovalLookupFailures)
                return errored(rec, found.error());
            continue;
        }
        const std::optional<ApprovalRecord> &maybe = *found;
        if (!maybe)
            return errored(rec, Error{ErrorCode::NotFound, QStringLiteral("approval %1 is gone").arg(id), step.path});
        lookupFailures = 0;
        const ApprovalRecord &record = *maybe;
        if (record.status == approval::Pending) {
            // Past its time but not swept yet (the engine sweeps periodically): settle it now.
            if (record.expiresMs != 0 && record.expiresMs <= m_deps.clock.nowMs()) {
                discardResult(approvals->expire(), "the lookup that follows sees what the sweep settled");
                lookNow = true;
            }
            continue;
        }
        settled = record;
        break;
    }

    const QString reason = settled.reason.isEmpty() ? QString() : QStringLiteral(": ") + settled.reason;
    if (settled.status == approval::Approved) {
        // Used once: a second run of this step (attempts of an enclosing do) asks again.
        auto used = approvals->consume(id, automationFor(m_run));
        if (!used)
            return errored(rec, used.error());
        return finish(rec, Outcome::Succeeded, QString(approvestep::ApprovedPrefix) + settled.decidedBy + reason);
    }
    if (settled.status == approval::Rejected)
        return finish(rec, Outcome::Failed, QString(approvestep::RejectedPrefix) + settled.decidedBy + reason);
    if (settled.status == approval::Expired)
        return finish(rec, Outcome::Failed,
                      QString(approvestep::ExpiredPrefix) + humanDuration(step.approve.timeoutMs));
    return errored(rec, Error{ErrorCode::Conflict,
                              QStringLiteral("approval %1 is %2, which this step did not do").arg(id, settled.status),
                              step.path});
}

} // namespace pando::core::pipelines::detail
