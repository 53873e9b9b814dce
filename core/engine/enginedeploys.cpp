// Engine: deploys (queued, run by the work pool, listed, cancelled) and the approvals that hold
// them at their plan boundary.
#include "core/engine/engineprivate.h"

namespace pando::core {

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
    if (!ref.isEmpty() && spec->source.isImage())
        return fail(ErrorCode::Invalid,
                    QStringLiteral("app \"%1\" deploys the image %2, which has no ref").arg(app, spec->source.image),
                    QStringLiteral("ref"),
                    QStringLiteral("deploy without a ref, or change source.image (pando apps update) to another tag"));
    if (!ref.isEmpty()) {
        // The same rules as source.ref in a spec. A one-off ref (a commit a push named) follows
        // nothing, so what auto-deploy asks of a followed ref does not apply to it.
        spec->source.ref = ref;
        spec->source.autodeploy = {};
        if (auto valid = validateAppSpec(*spec); !valid) {
            Error e = valid.error();
            e.where = QStringLiteral("ref");
            return std::unexpected(e);
        }
    }
    // A ref that does not exist is the caller's mistake, answered now rather than as a
    // failed deploy; the deploy then builds exactly the commit resolved here.
    auto commit = d->resolveSource(*spec, row->sourceTrusted, row->sourceConnection, QStringLiteral("ref"));
    if (!commit)
        return std::unexpected(commit.error());
    DeployRecord deploy;
    deploy.id = newDeployId();
    deploy.app = app;
    deploy.ref = spec->source.isImage() ? spec->source.image : spec->source.ref; // what it deploys, as asked
    deploy.commit = *commit;
    deploy.status = DeployStatus::Queued;
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
        abandoned.status = DeployStatus::Failed;
        abandoned.error = audited.error().text();
        abandoned.finishedMs = d->clock.nowMs();
        (void)deploys.update(abandoned);
        return std::unexpected(audited.error());
    }
    d->services.publish(EventType::DeployQueued, app, deploy.id);
    if (auto queued = d->enqueueDeploy(deploy); !queued) {
        d->services.publish(
            EventType::DeployFailed, app, deploy.id,
            QJsonObject{{QStringLiteral("step"), QString()}, {QStringLiteral("error"), queued.error().text()}});
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
            if (auto ended = d->runner.endHeld(old.id, DeployStatus::Cancelled, why); !ended)
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
    // A deploy already running (or succeeded, and retiring) when its job is claimed again was cut
    // off by a dead process.
    if (deploy->status == DeployStatus::Running || deploy->status == DeployStatus::Succeeded)
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

namespace {

// The newest deploy of history (newest first) before the serving one that succeeded with another
// commit; null when there is none. Pointers, not optionals: clang-tidy's optional-access analysis
// took more than 20 minutes on this function written with them.
const DeployRecord *earlierVersion(const QList<DeployRecord> &history, const DeployRecord *serving)
{
    bool before = serving == nullptr;
    for (const DeployRecord &deploy : history) {
        if (serving && deploy.id == serving->id) {
            before = true;
            continue;
        }
        if (before && deploy.status == DeployStatus::Succeeded && !deploy.commit.isEmpty() &&
            (!serving || deploy.commit != serving->commit))
            return &deploy;
    }
    return nullptr;
}

// Whether deploy `to` of app may be gone back to.
Status checkRollbackTarget(const DeployRecord &found, const QString &app, const QString &to,
                           const DeployRecord *serving)
{
    if (found.app != app)
        return fail(ErrorCode::Invalid,
                    QStringLiteral("deploy %1 is of app \"%2\", not \"%3\"").arg(to, found.app, app),
                    QStringLiteral("to"));
    if (found.status != DeployStatus::Succeeded || found.commit.isEmpty())
        return fail(ErrorCode::Invalid,
                    QStringLiteral("deploy %1 %2: only a version that served can be gone back to")
                        .arg(to, toString(found.status)),
                    QStringLiteral("to"),
                    QStringLiteral("pando deploys list %1 shows the deploys that succeeded").arg(app));
    if (serving && serving->commit == found.commit)
        return fail(ErrorCode::Conflict,
                    QStringLiteral("commit %1 of deploy %2 is what %3 serves now").arg(found.commit.left(12), to, app));
    return {};
}

} // namespace

Result<DeployRecord> Engine::rollback(const QString &app, const QString &to, const Actor &actor)
{
    auto row = AppRepository(d->db).find(app);
    if (!row)
        return std::unexpected(row.error());
    DeployRepository deploys(d->db);
    Result<DeployRecord> current = std::unexpected(Error{ErrorCode::NotFound, QStringLiteral("nothing serves")});
    if (!row->currentDeploy.isEmpty())
        current = deploys.find(row->currentDeploy);
    const DeployRecord *serving = current ? &*current : nullptr;
    if (!to.isEmpty()) {
        auto found = deploys.find(to);
        if (!found)
            return std::unexpected(found.error());
        if (auto allowed = checkRollbackTarget(*found, app, to, serving); !allowed)
            return std::unexpected(allowed.error());
        return deploy(app, found->commit, actor);
    }
    auto history = deploys.listForApp(app, 1000);
    if (!history)
        return std::unexpected(history.error());
    const DeployRecord *earlier = earlierVersion(*history, serving);
    if (!earlier)
        return fail(ErrorCode::Conflict,
                    QStringLiteral("%1 has no earlier version to go back to (no deploy before the serving one "
                                   "succeeded with another commit)")
                        .arg(app));
    return deploy(app, earlier->commit, actor);
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
    failed.status = DeployStatus::Failed;
    failed.error = job.error().text();
    failed.finishedMs = clock.nowMs();
    if (auto saved = DeployRepository(db).update(failed); !saved)
        qWarning("deploy %s: saving it as failed failed: %s", qPrintable(failed.id), qPrintable(saved.error().text()));
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
    if (deploy->status != DeployStatus::AwaitingApproval || deploy->approvalId != approval.id)
        return {};
    if (approval.status == approval::Approved) {
        deploy->status = DeployStatus::Queued;
        if (auto saved = deploys.update(*deploy); !saved)
            return saved;
        services.publish(EventType::DeployQueued, deploy->app, deploy->id,
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
    return runner.endHeld(deploy->id, DeployStatus::Rejected, why);
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
    if (record->status == DeployStatus::AwaitingApproval) {
        // Withdraw the request so nobody approves a deploy that no longer wants to run.
        auto withdrawn =
            d->approvals.reject(record->approvalId, Approver{actor}, QStringLiteral("the deploy was cancelled"));
        if (!withdrawn && withdrawn.error().code != ErrorCode::Conflict)
            return std::unexpected(withdrawn.error());
        if (auto ended =
                d->runner.endHeld(id, DeployStatus::Cancelled,
                                  QStringLiteral("cancelled by %1 while waiting for approval").arg(actor.name));
            !ended)
            return ended;
    } else if (record->status == DeployStatus::Queued) {
        record->status = DeployStatus::Cancelled;
        record->finishedMs = d->clock.nowMs();
        if (auto saved = deploys.update(*record); !saved)
            return saved;
        // Announced as a running deploy's cancellation is: those following it see it end.
        d->services.publish(EventType::DeployFailed, record->app, id,
                            QJsonObject{{QStringLiteral("error"), QStringLiteral("the deploy was cancelled")}});
    } else if (record->status == DeployStatus::Running) {
        QMutexLocker lock(&d->mutex);
        const qint64 jobId = d->deployJobs.value(id, 0);
        if (jobId == 0 || !d->pool.cancel(jobId))
            return fail(ErrorCode::Conflict, QStringLiteral("deploy %1 is not running in this process").arg(id));
    } else {
        return fail(ErrorCode::Conflict, QStringLiteral("deploy %1 has already %2").arg(id, toString(record->status)));
    }
    // Cancelled whatever becomes of the line (a running job cannot be taken back): say so.
    if (auto audited = d->audit.record(actor, QStringLiteral("deploy.cancel"), QStringLiteral("deploy/") + id,
                                       QStringLiteral("success"));
        !audited)
        return std::unexpected(unaudited(QStringLiteral("deploy %1 was cancelled").arg(id), audited.error()));
    return {};
}

} // namespace pando::core
