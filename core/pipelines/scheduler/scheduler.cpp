#include "scheduler.h"

#include "core/state/pipelinerepositories.h"

#include <QCoreApplication>
#include <QRandomGenerator>
#include <chrono>

namespace pando::core::pipelines {

Scheduler::Scheduler(Database &db, Clock &clock, EventBus &events, RunExecutor &executor, SchedulerOptions options)
    : m_db(db), m_clock(clock), m_events(events), m_executor(executor), m_options(options),
      m_owner(QStringLiteral("s%1-%2")
                  .arg(QCoreApplication::applicationPid())
                  .arg(QRandomGenerator::global()->generate64(), 16, 16, QLatin1Char('0')))
{}

Scheduler::~Scheduler()
{
    shutdown();
}

Status Scheduler::start()
{
    RunRepository runs(m_db);
    auto abandoned = runs.abandoned(m_owner);
    if (!abandoned)
        return std::unexpected(abandoned.error());
    for (const RunRecord &run : std::as_const(*abandoned)) {
        // Its steps may have had effects (a put); running it again unasked could repeat them.
        RunExecutor::Result interrupted{Outcome::Errored,
                                        QStringLiteral("interrupted: Pando stopped while this run was running")};
        m_executor.releaseAbandoned(run);
        settle(run, interrupted);
    }
    // Logs that aged past a job's build_log_retention.days while nothing ran.
    if (auto pipelines = PipelineRepository(m_db).list()) {
        for (const PipelineRecord &pipeline : std::as_const(*pipelines))
            for (auto job = pipeline.jobs.begin(); job != pipeline.jobs.end(); ++job)
                removeOldLogs(pipeline.name, job.key(), *job);
    }
    const std::lock_guard lock(m_mutex);
    m_stopping = false;
    for (int i = 0; i < qMax(1, m_options.workers); ++i) {
        auto thread = std::unique_ptr<QThread>(QThread::create([this] { workerLoop(); }));
        thread->setObjectName(QStringLiteral("pando-runs-%1").arg(i));
        thread->start();
        m_threads.push_back(std::move(thread));
    }
    return {};
}

void Scheduler::shutdown()
{
    {
        std::unique_lock lock(m_mutex);
        if (m_threads.empty())
            return;
        m_stopping = true;
        m_wake.notify_all();
        // The grace period: running runs may finish on their own.
        m_idle.wait_for(lock, std::chrono::milliseconds(m_options.shutdownGraceMs),
                        [this] { return m_running.isEmpty(); });
        for (const CancelToken &token : std::as_const(m_running))
            token.cancel();
    }
    for (const auto &thread : m_threads)
        thread->wait();
    m_threads.clear();
}

int Scheduler::runningCount() const
{
    const std::lock_guard lock(m_mutex);
    return int(m_running.size());
}

Result<RunRecord> Scheduler::enqueue(const QString &pipeline, const QString &job, const QString &trigger,
                                     const QString &actor, const QString &inputsJson, int configVersion, bool force)
{
    RunRecord run;
    run.force = force;
    run.pipeline = pipeline;
    run.job = job;
    run.trigger = trigger;
    run.actor = actor;
    run.inputsJson = inputsJson;
    run.configVersion = configVersion;
    run.createdMs = m_clock.nowMs();
    auto queued = RunRepository(m_db).enqueue(run);
    if (queued) {
        publish(EventType::RunQueued, *queued);
        wake();
    }
    return queued;
}

Status Scheduler::abort(const QString &runId, const QString &actor)
{
    RunRepository runs(m_db);
    auto run = runs.find(runId);
    if (!run)
        return std::unexpected(run.error());
    if (run->status == RunStatus::Queued) {
        if (auto done = runs.finish(runId, RunStatus::Aborted, QStringLiteral("aborted by ") + actor, m_clock.nowMs());
            !done)
            return done;
        publish(EventType::RunFinished, *run, QJsonObject{{QStringLiteral("status"), toString(RunStatus::Aborted)}});
        return {};
    }
    if (run->status != RunStatus::Running)
        return fail(ErrorCode::Conflict, QStringLiteral("run %1 has already %2").arg(runId, toString(run->status)));
    const std::lock_guard lock(m_mutex);
    auto token = m_running.constFind(runId);
    if (token == m_running.constEnd())
        return fail(ErrorCode::Conflict, QStringLiteral("run %1 is running in another process").arg(runId));
    token->cancel();
    return {};
}

Status Scheduler::pause(const QString &pipeline, const QString &reason)
{
    return PipelineRepository(m_db).setPaused(pipeline, true, reason, m_clock.nowMs());
}

Status Scheduler::unpause(const QString &pipeline)
{
    auto done = PipelineRepository(m_db).setPaused(pipeline, false, {}, m_clock.nowMs());
    if (done)
        wake();
    return done;
}

void Scheduler::wake()
{
    const std::lock_guard lock(m_mutex);
    m_pendingWakeups += qMax(1, m_options.workers);
    m_wake.notify_all();
}

void Scheduler::workerLoop()
{
    for (;;) {
        {
            const std::lock_guard lock(m_mutex);
            if (m_stopping)
                return;
        }
        if (runOne())
            continue;
        std::unique_lock lock(m_mutex);
        if (m_stopping)
            return;
        if (m_pendingWakeups > 0) {
            --m_pendingWakeups;
            continue;
        }
        m_wake.wait_for(lock, std::chrono::milliseconds(m_options.idlePollMs));
    }
}

bool Scheduler::runOne()
{
    auto pipelines = PipelineRepository(m_db).list();
    if (!pipelines || pipelines->isEmpty())
        return false;
    int start = 0;
    {
        const std::lock_guard lock(m_mutex);
        start = m_nextPipeline++ % int(pipelines->size());
    }
    RunRepository runs(m_db);
    for (int i = 0; i < pipelines->size(); ++i) {
        const PipelineRecord &pipeline = pipelines->at((start + i) % pipelines->size());
        if (pipeline.paused)
            continue;
        RunRecord run;
        CancelToken token;
        {
            // Claimed and known as running in one step, so that a holder of the gate sees a run
            // either still queued or cancellable.
            const std::lock_guard gate(m_claimGate);
            auto claimed = runs.claimNext(pipeline.name, pipeline.maxRuns, m_owner, m_clock.nowMs());
            if (!claimed) {
                qWarning("scheduler: claiming a run of %s failed: %s", qPrintable(pipeline.name),
                         qPrintable(claimed.error().text()));
                continue;
            }
            const std::optional<RunRecord> &next = *claimed;
            if (!next)
                continue;
            run = *next;
            const std::lock_guard lock(m_mutex);
            m_running.insert(run.id, token);
            if (m_stopping)
                token.cancel();
        }
        publish(EventType::RunStarted, run);
        const RunExecutor::Result result = m_executor.execute(run, token);
        settle(run, result);
        const std::lock_guard lock(m_mutex);
        m_running.remove(run.id);
        m_idle.notify_all();
        // A finished run may let the next of its job start.
        m_wake.notify_all();
        return true;
    }
    return false;
}

void Scheduler::removeOldLogs(const QString &pipeline, const QString &job, const JobSettings &settings)
{
    auto removed = RunRepository(m_db).removeOldLogs(pipeline, job, settings, m_clock.nowMs());
    if (!removed)
        qWarning("scheduler: removing old logs of %s/%s failed: %s", qPrintable(pipeline), qPrintable(job),
                 qPrintable(removed.error().text()));
}

void Scheduler::settle(const RunRecord &run, const RunExecutor::Result &result)
{
    const RunStatus status = runStatusOf(result.outcome);
    if (auto done = RunRepository(m_db).finish(run.id, status, result.error, m_clock.nowMs()); !done)
        qWarning("scheduler: recording the end of run %s failed: %s", qPrintable(run.id),
                 qPrintable(done.error().text()));
    publish(EventType::RunFinished, run,
            QJsonObject{{QStringLiteral("status"), toString(status)}, {QStringLiteral("error"), result.error}});
    if (auto pipeline = PipelineRepository(m_db).find(run.pipeline); pipeline && pipeline->jobs.contains(run.job))
        removeOldLogs(run.pipeline, run.job, pipeline->jobs.value(run.job));
    if (result.outcome == Outcome::Aborted)
        return; // someone's decision, not the infrastructure's health
    PipelineRepository pipelines(m_db);
    // What the pipeline says (a broken task file, a missing image) is its author's to fix and
    // pauses nothing: whoever can push one would otherwise pause the pipeline for everyone.
    auto errors = pipelines.recordRunOutcome(run.pipeline, result.outcome == Outcome::Errored && result.infrastructure,
                                             m_clock.nowMs());
    if (errors && m_options.breakerThreshold > 0 && *errors >= m_options.breakerThreshold) {
        const QString reason =
            QStringLiteral("circuit breaker: %1 runs in a row errored on the infrastructure; last: %2")
                .arg(*errors)
                .arg(result.error);
        if (pipelines.setPaused(run.pipeline, true, reason, m_clock.nowMs()))
            m_events.publish(
                Event{EventType::PipelinePaused,
                      {},
                      {},
                      QJsonObject{{QStringLiteral("pipeline"), run.pipeline}, {QStringLiteral("reason"), reason}},
                      m_clock.nowMs()});
    }
}

void Scheduler::publish(EventType type, const RunRecord &run, const QJsonObject &data)
{
    QJsonObject payload = data;
    payload.insert(QStringLiteral("pipeline"), run.pipeline);
    payload.insert(QStringLiteral("job"), run.job);
    payload.insert(QStringLiteral("run"), run.id);
    payload.insert(QStringLiteral("number"), run.number);
    m_events.publish(Event{type, {}, {}, payload, m_clock.nowMs()});
}

} // namespace pando::core::pipelines
