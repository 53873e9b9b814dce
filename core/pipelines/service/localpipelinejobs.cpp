// LocalPipelineService's jobs and runs: listing and pausing jobs, a person's trigger, the runs and
// their events, and what queues runs by itself (the trigger loop's checks, and a run that
// succeeded letting the jobs downstream of it go).
#include "localpipelineservice.h"

#include "core/pipelines/config/canonical.h"
#include "core/state/pipelinerepositories.h"

#include <QJsonDocument>

namespace pando::core::pipelines {

namespace {

// Every get step of a plan, hooks and nested steps included.
void collectGets(const Step &step, QList<const Step *> &out)
{
    if (step.kind == StepKind::Get)
        out.append(&step);
    for (const Step &child : step.steps)
        collectGets(child, out);
    for (const StepPtr &hook :
         {step.hooks.onSuccess, step.hooks.onFailure, step.hooks.onError, step.hooks.onAbort, step.hooks.ensure})
        if (hook)
            collectGets(*hook, out);
}

QList<const Step *> getsOf(const Job &job)
{
    QList<const Step *> gets;
    for (const Step &step : job.plan)
        collectGets(step, gets);
    return gets;
}

// A job as `fly jobs` lists it: its pause, its last finished run and its next one.
Result<JobView> jobViewOf(Database &db, const QString &pipeline, const Job &job,
                          const QMap<QString, JobPauseRecord> &paused)
{
    JobView view{job.name, std::nullopt, !job.disableManualTrigger, std::nullopt, std::nullopt};
    if (const auto pause = paused.constFind(job.name); pause != paused.cend())
        view.pause = *pause;
    // Newest first: the first finished one is the last run, the oldest unfinished one the next.
    auto recent = RunRepository(db).list(pipeline, job.name, 100);
    if (!recent)
        return std::unexpected(recent.error());
    for (const RunRecord &run : std::as_const(*recent)) {
        const bool finished = run.status != RunStatus::Queued && run.status != RunStatus::Running;
        if (finished && !view.lastRun)
            view.lastRun = run;
        else if (!finished)
            view.nextRun = run;
    }
    return view;
}

std::unexpected<Error> noJob(const QString &pipeline, const QString &job)
{
    return fail(ErrorCode::NotFound, QStringLiteral("pipeline %1 has no job named %2").arg(pipeline, job),
                QStringLiteral("job"));
}

} // namespace

Result<QList<JobView>> LocalPipelineService::jobs(const QString &pipelineName)
{
    auto loaded = stored(pipelineName);
    if (!loaded)
        return std::unexpected(loaded.error());
    auto paused = PipelineRepository(m_deps.db).pausedJobs(pipelineName);
    if (!paused)
        return std::unexpected(paused.error());
    QList<JobView> views;
    for (const Job &job : std::as_const(loaded->pipeline.jobs)) {
        auto view = jobViewOf(m_deps.db, pipelineName, job, *paused);
        if (!view)
            return std::unexpected(view.error());
        views.append(*view);
    }
    return views;
}

Result<JobView> LocalPipelineService::setJobPaused(const QString &pipelineName, const QString &job, bool paused,
                                                   const Actor &actor)
{
    auto loaded = stored(pipelineName);
    if (!loaded)
        return std::unexpected(loaded.error());
    const Pipeline &pipeline = loaded->pipeline;
    if (!pipeline.job(job))
        return noJob(pipelineName, job);
    auto before = PipelineRepository(m_deps.db).pausedJobs(pipelineName);
    if (!before)
        return std::unexpected(before.error());
    const std::optional<JobPauseRecord> was =
        before->contains(job) ? std::optional(before->value(job)) : std::optional<JobPauseRecord>();
    // As for a pipeline: no worker starts a run of the job before the audit line says who
    // unpaused it, and a change that cannot be audited is taken back.
    const auto hold = m_scheduler->holdClaims();
    PipelineRepository pipelines(m_deps.db);
    if (auto done = pipelines.setJobPaused(pipelineName, job, paused, QStringLiteral("paused by ") + actor.name,
                                           m_deps.clock.nowMs());
        !done)
        return std::unexpected(done.error());
    const QString object = QStringLiteral("pipeline/%1/job/%2").arg(pipelineName, job);
    if (auto audited = m_audit.record(actor, paused ? QStringLiteral("job.pause") : QStringLiteral("job.unpause"),
                                      object, QStringLiteral("success"));
        !audited) {
        if (auto undone = pipelines.setJobPaused(pipelineName, job, was.has_value(), was ? was->reason : QString(),
                                                 was ? was->pausedMs : 0);
            !undone)
            return std::unexpected(
                unaudited(QStringLiteral("job %1/%2 was %3")
                              .arg(pipelineName, job, paused ? QStringLiteral("paused") : QStringLiteral("unpaused")),
                          audited.error()));
        return std::unexpected(audited.error());
    }
    if (!paused && was && !loaded->record.paused) {
        // What was found while it was paused starts it now, as a check finding it would have.
        const Job *unpaused = pipeline.job(job);
        for (const Step *get : getsOf(*unpaused)) {
            if (!get->get.trigger)
                continue;
            // Each queues a job once per version it has not run with, so asking twice is harmless.
            if (get->get.passed.isEmpty())
                queueTriggered(loaded->record, pipeline, get->get.resource, {});
            for (const QString &upstream : get->get.passed)
                queueTriggered(loaded->record, pipeline, get->get.resource, upstream);
        }
        m_scheduler->wake();
    }
    auto pausedNow = pipelines.pausedJobs(pipelineName);
    if (!pausedNow)
        return std::unexpected(pausedNow.error());
    return jobViewOf(m_deps.db, pipelineName, *pipeline.job(job), *pausedNow);
}

Result<TriggerResult> LocalPipelineService::triggerJob(const QString &pipelineName, const QString &job,
                                                       const Actor &actor, const TriggerOptions &options)
{
    auto loaded = stored(pipelineName);
    if (!loaded)
        return std::unexpected(loaded.error());
    const PipelineRecord &row = loaded->record;
    const Job *found = loaded->pipeline.job(job);
    if (!found)
        return noJob(pipelineName, job);
    if (found->disableManualTrigger)
        return fail(ErrorCode::Conflict,
                    QStringLiteral("job %1 of pipeline %2 is not started by hand (disable_manual_trigger)")
                        .arg(job, pipelineName),
                    found->path + QStringLiteral(".disable_manual_trigger"),
                    QStringLiteral("its resources' new versions start it; to start it by hand, take "
                                   "disable_manual_trigger out of the job and set the pipeline again"));
    // A paused pipeline starts no run: queueing one would leave it waiting with nobody told why.
    if (row.paused)
        return fail(
            ErrorCode::Conflict,
            QStringLiteral("pipeline %1 is paused (%2); it starts no runs")
                .arg(pipelineName, row.pausedReason.isEmpty() ? QStringLiteral("no reason given") : row.pausedReason),
            QStringLiteral("pipeline"),
            QStringLiteral("unpause it, then trigger again: pando pipelines unpause %1").arg(pipelineName));
    // Nor does a paused job (in Concourse its build would wait; here the person is told now).
    auto pausedJobs = PipelineRepository(m_deps.db).pausedJobs(pipelineName);
    if (!pausedJobs)
        return std::unexpected(pausedJobs.error());
    if (const auto pause = pausedJobs->constFind(job); pause != pausedJobs->cend())
        return fail(ErrorCode::Conflict,
                    QStringLiteral("job %1 of pipeline %2 is paused (%3); it starts no runs")
                        .arg(job, pipelineName, pause->reason),
                    QStringLiteral("job"),
                    QStringLiteral("unpause it, then trigger again: pando jobs unpause %1/%2").arg(pipelineName, job));
    // Versions are chosen when the run starts (latest, or what passed the jobs named in passed:).
    // No worker takes the run before its audit line is written or it is aborted.
    const auto hold = m_scheduler->holdClaims();
    auto run = m_scheduler->enqueue(pipelineName, job, QStringLiteral("manual"), actor.name, QStringLiteral("{}"),
                                    row.configVersion, options.force);
    if (!run)
        return std::unexpected(run.error());
    QJsonObject detail{{QStringLiteral("pipeline"), pipelineName}, {QStringLiteral("job"), job}};
    if (options.force)
        detail.insert(QStringLiteral("force"), true);
    if (auto audited = m_audit.record(actor, QStringLiteral("job.trigger"), QStringLiteral("run/") + run->id,
                                      QStringLiteral("success"), detail);
        !audited) {
        // Taken back: a run nobody can account for does not start.
        if (auto aborted = m_scheduler->abort(run->id, actor.name); !aborted)
            return std::unexpected(unaudited(QStringLiteral("run %1 was queued").arg(run->id), audited.error()));
        return std::unexpected(audited.error());
    }
    return TriggerResult{*run};
}

Result<QList<RunRecord>> LocalPipelineService::runs(const QString &pipeline, const QString &job, int limit)
{
    std::optional<PipelineRecord> row;
    if (!pipeline.isEmpty()) {
        auto found = PipelineRepository(m_deps.db).find(pipeline);
        if (!found)
            return std::unexpected(found.error());
        row = *found;
    }
    auto runs = RunRepository(m_deps.db).list(pipeline, job, qBound(1, limit, 1000));
    // No runs of a job the pipeline does not have is not "no runs yet": the name is wrong. A job
    // removed from the config keeps its runs, so only a name with neither is refused.
    if (runs && runs->isEmpty() && row && !job.isEmpty()) {
        auto parsed = parseStored(*row, false);
        if (parsed && !parsed->job(job))
            return fail(ErrorCode::NotFound, QStringLiteral("pipeline %1 has no job named %2").arg(pipeline, job),
                        QStringLiteral("job"),
                        QStringLiteral("see its jobs with: pando pipelines show %1").arg(pipeline));
    }
    return runs;
}

Result<RunTree> LocalPipelineService::runTree(const QString &runId)
{
    RunRepository runs(m_deps.db);
    auto run = runs.find(runId);
    if (!run)
        return std::unexpected(run.error());
    auto steps = runs.steps(runId);
    if (!steps)
        return std::unexpected(steps.error());
    return foldRun(*run, *steps);
}

Result<QList<RunEventRecord>> LocalPipelineService::runEvents(const QString &runId, qint64 afterSeq, int limit)
{
    RunRepository runs(m_deps.db);
    if (auto run = runs.find(runId); !run)
        return std::unexpected(run.error());
    return runs.events(runId, afterSeq, qBound(1, limit, 10000));
}

Status LocalPipelineService::abortRun(const QString &runId, const Actor &actor)
{
    if (auto done = m_scheduler->abort(runId, actor.name); !done)
        return done;
    auto audited =
        m_audit.record(actor, QStringLiteral("run.abort"), QStringLiteral("run/") + runId, QStringLiteral("success"));
    if (!audited)
        return std::unexpected(unaudited(QStringLiteral("run %1 was aborted").arg(runId), audited.error()));
    return audited;
}

QList<RunRecord> LocalPipelineService::queueTriggered(const PipelineRecord &record, const Pipeline &pipeline,
                                                      const QString &resource, const QString &afterJob)
{
    QList<RunRecord> queued;
    RunRepository runs(m_deps.db);
    ResourceVersionRepository versions(m_deps.db);
    // A paused job is queued nothing; unpaused, it catches up (setJobPaused).
    auto paused = PipelineRepository(m_deps.db).pausedJobs(record.name);
    if (!paused)
        return queued;
    for (const Job &job : pipeline.jobs) {
        if (paused->contains(job.name))
            continue;
        for (const Step *get : getsOf(job)) {
            if (!get->get.trigger || get->get.resource != resource)
                continue;
            // A version change triggers jobs without passed:; a run of job A triggers jobs whose
            // get passed: includes A.
            if (afterJob.isEmpty() != get->get.passed.isEmpty())
                continue;
            if (!afterJob.isEmpty() && !get->get.passed.contains(afterJob))
                continue;
            QString version;
            auto pin = versions.pinned(record.name, resource);
            if (!pin)
                continue;
            if (*pin) {
                // Pinned: the pinned version, whatever the check found (the job's run decides
                // whether it has passed: what its gets ask for).
                version = (*pin)->versionJson;
            } else if (get->get.passed.isEmpty()) {
                auto latest = versions.latest(record.name, resource);
                if (!latest || !*latest)
                    continue;
                version = (*latest)->versionJson;
            } else {
                std::optional<QSet<QString>> common;
                for (const QString &passedJob : get->get.passed) {
                    auto passed = runs.passedVersions(record.name, passedJob, resource, 100);
                    const QSet<QString> set =
                        passed ? QSet<QString>(passed->cbegin(), passed->cend()) : QSet<QString>();
                    common = common ? common->intersect(set) : set;
                }
                auto known = versions.list(record.name, resource, 1000);
                if (!known || !common)
                    continue;
                for (const ResourceVersionRecord &v : std::as_const(*known))
                    if (common->contains(v.versionJson)) {
                        version = v.versionJson;
                        break;
                    }
                if (version.isEmpty())
                    continue;
            }
            // Not again for a version the job already ran (or has queued) with.
            bool seen = false;
            if (auto history = runs.list(record.name, job.name, 50)) {
                for (const RunRecord &r : std::as_const(*history)) {
                    const QJsonObject inputs = QJsonDocument::fromJson(r.inputsJson.toUtf8()).object();
                    if (QString::fromUtf8(canonicalJson(inputs.value(resource))) == version) {
                        seen = true;
                        break;
                    }
                }
            }
            if (seen)
                continue;
            const QJsonObject inputs{{resource, QJsonDocument::fromJson(version.toUtf8()).object()}};
            const QString trigger =
                afterJob.isEmpty() ? QStringLiteral("resource:") + resource : QStringLiteral("passed:") + afterJob;
            auto run = m_scheduler->enqueue(record.name, job.name, trigger, QStringLiteral("system:trigger"),
                                            QString::fromUtf8(QJsonDocument(inputs).toJson(QJsonDocument::Compact)),
                                            record.configVersion);
            if (run)
                queued.append(*run);
            break; // one run per job per change
        }
    }
    return queued;
}

Status LocalPipelineService::checkAndTrigger(const PipelineRecord &record, const Pipeline &pipeline,
                                             const QString &resource, const adapters::Version &from,
                                             QList<RunRecord> *queued)
{
    auto fresh = JobRunner::checkResource(m_deps, record.name, record.configYaml.toUtf8(), record.varsYaml.toUtf8(),
                                          resource, CancelToken(), from);
    if (!fresh)
        return std::unexpected(fresh.error());
    if (!fresh->isEmpty())
        queued->append(queueTriggered(record, pipeline, resource, {}));
    return {};
}

Result<QList<RunRecord>> LocalPipelineService::triggerOnce()
{
    QHash<QString, adapters::Version> asked;
    {
        QMutexLocker lock(&m_mutex);
        asked = std::exchange(m_checkNow, {});
    }
    auto rows = PipelineRepository(m_deps.db).list();
    if (!rows)
        return std::unexpected(rows.error());
    QList<RunRecord> queued;
    ResourceVersionRepository versions(m_deps.db);
    for (const PipelineRecord &record : std::as_const(*rows)) {
        auto pipeline = parseStored(record, false);
        if (!pipeline)
            continue;
        if (record.paused) {
            // A check asked for now (Check now, a webhook) still finds versions; a paused
            // pipeline only queues no runs.
            for (const Resource &resource : std::as_const(pipeline->resources))
                if (const auto from = asked.constFind(record.name + QLatin1Char('/') + resource.name);
                    from != asked.cend())
                    if (auto found =
                            JobRunner::checkResource(m_deps, record.name, record.configYaml.toUtf8(),
                                                     record.varsYaml.toUtf8(), resource.name, CancelToken(), *from);
                        !found)
                        qWarning("pipelines: checking %s/%s failed: %s", qPrintable(record.name),
                                 qPrintable(resource.name), qPrintable(found.error().text()));
            continue;
        }
        // Resources that some job gets with trigger: true are checked every check_every.
        QSet<QString> triggering;
        for (const Job &job : std::as_const(pipeline->jobs))
            for (const Step *get : getsOf(job))
                if (get->get.trigger)
                    triggering.insert(get->get.resource);
        for (const Resource &resource : std::as_const(pipeline->resources)) {
            const auto from = asked.constFind(record.name + QLatin1Char('/') + resource.name);
            const bool askedNow = from != asked.cend();
            if (!askedNow && (!triggering.contains(resource.name) || resource.checkEveryMs <= 0))
                continue;
            auto last = versions.lastCheck(record.name, resource.name);
            if (!askedNow && last && last->first > 0 && m_deps.clock.nowMs() - last->first < resource.checkEveryMs)
                continue;
            if (auto checked =
                    checkAndTrigger(record, *pipeline, resource.name, askedNow ? *from : adapters::Version{}, &queued);
                !checked)
                qWarning("pipelines: checking %s/%s failed: %s", qPrintable(record.name), qPrintable(resource.name),
                         qPrintable(checked.error().text()));
        }
    }
    return queued;
}

void LocalPipelineService::triggerLoop()
{
    QMutexLocker lock(&m_mutex);
    while (!m_stopping) {
        lock.unlock();
        if (auto triggered = triggerOnce(); !triggered)
            qWarning("pipelines: checking triggers failed: %s", qPrintable(triggered.error().text()));
        // A long-running install sweeps old artifact images daily, not only when it starts.
        if (m_deps.clock.nowMs() - m_lastImageSweepMs > qint64{24} * 60 * 60 * 1000)
            sweepArtifactImages();
        lock.relock();
        if (m_stopping)
            break;
        if (m_checkNow.isEmpty())
            m_wake.wait(&m_mutex, quint64(m_options.triggerIntervalMs));
    }
}

void LocalPipelineService::onEvent(const Event &event)
{
    // A run that succeeded lets the jobs downstream of it (passed:) go.
    if (event.type != EventType::RunFinished ||
        parseRunStatus(event.data.value(QStringLiteral("status")).toString()) != RunStatus::Succeeded)
        return;
    const QString pipelineName = event.data.value(QStringLiteral("pipeline")).toString();
    const QString job = event.data.value(QStringLiteral("job")).toString();
    // A job's successful run sets every pipeline it still wants: what an earlier run set and this
    // one did not goes to the archive, as in Concourse.
    archiveUnset(pipelineName, job, event.data.value(QStringLiteral("number")).toInt());
    auto record = PipelineRepository(m_deps.db).find(pipelineName);
    if (!record || record->paused)
        return;
    auto pipeline = parseStored(*record, false);
    if (!pipeline)
        return;
    const Job *finished = pipeline->job(job);
    if (!finished)
        return;
    // What it got and what it put: both have passed it (RunRepository::passedVersions).
    QSet<QString> resources;
    forEachStepOf(*finished, [&resources](const Step &step) {
        if (step.kind == StepKind::Get)
            resources.insert(step.get.resource);
        else if (step.kind == StepKind::Put)
            resources.insert(step.put.resource);
    });
    for (const QString &resource : std::as_const(resources))
        queueTriggered(*record, *pipeline, resource, job);
}

} // namespace pando::core::pipelines
