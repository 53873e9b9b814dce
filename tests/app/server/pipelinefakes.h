#pragma once
// An in-memory PipelineService for the API and CLI tests: pipelines, runs, events and secrets in
// maps, runs that play a short script on a thread of their own and tell followers through the
// engine's event bus exactly as the real runner does ("run.event", "run.finished"). Tests can also
// drive a run step by step.

#include "core/events/eventbus.h"
#include "core/pipelines/config/pipelineconfig.h"
#include "core/pipelines/runview/runview.h"
#include "core/pipelines/service/pipelineservice.h"
#include "tests/support/vocabtesting.h"

#include <QDateTime>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>
#include <QMutex>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QThread>
#include <QThreadPool>
#include <atomic>

namespace pando::test {

class FakePipelineService : public core::pipelines::PipelineService {
public:
    explicit FakePipelineService(core::EventBus &events) : m_events(events) {}
    ~FakePipelineService() override
    {
        m_stopping = true;
        m_pool.waitForDone();
    }

    // Triggered runs play their script by themselves unless this is off.
    void setAutoPlay(bool on) { m_autoPlay = on; }
    void setWebhookToken(const QString &pipeline, const QString &resource, const QString &token)
    {
        QMutexLocker lock(&m_mutex);
        m_webhookTokens.insert(pipeline + QLatin1Char('/') + resource, token);
    }
    int webhookChecks() const { return m_webhookChecks.loadRelaxed(); }
    QJsonObject checkedFrom() const
    {
        QMutexLocker lock(&m_mutex);
        return m_checkedFrom;
    }
    QString secretValue(const QString &scope, const QString &name)
    {
        QMutexLocker lock(&m_mutex);
        return m_secrets.value(scope + QLatin1Char('/') + name);
    }

    // Driving a run by hand. Each stores the event first and then publishes it, as the runner does.
    void step(const QString &runId, const QString &stepId, const QString &parentId, const QString &name,
              const QString &kind, core::RunStepStatus status, int exitCode = -1, bool publish = true)
    {
        core::RunStepRecord s;
        {
            QMutexLocker lock(&m_mutex);
            QList<core::RunStepRecord> &steps = m_steps[runId];
            qsizetype at = -1;
            for (qsizetype i = 0; i < steps.size(); ++i)
                if (steps[i].stepId == stepId)
                    at = i;
            if (at < 0) {
                core::RunStepRecord fresh;
                fresh.runId = runId;
                fresh.stepId = stepId;
                fresh.parentId = parentId;
                fresh.seq = int(steps.size());
                fresh.name = name;
                fresh.kind = kind;
                fresh.attempt = kind == QLatin1String("task") ? 1 : 0;
                steps.append(fresh);
                at = steps.size() - 1;
            }
            core::RunStepRecord &record = steps[at];
            const qint64 now = QDateTime::currentMSecsSinceEpoch();
            if (status == core::RunStepStatus::Running)
                record.startedMs = now;
            else if (status != core::RunStepStatus::Pending) {
                if (record.startedMs == 0)
                    record.startedMs = now;
                record.finishedMs = now + 5;
            }
            record.status = status;
            record.exitCode = exitCode;
            s = record;
        }
        QJsonObject data = core::pipelines::toJson(s);
        data.insert(QStringLiteral("parent"), s.parentId);
        append(runId, stepId, QStringLiteral("step"), data, publish);
    }
    void output(const QString &runId, const QString &stepId, const QString &text, bool publish = true)
    {
        append(runId, stepId, QStringLiteral("output"),
               QJsonObject{{QStringLiteral("stream"), QStringLiteral("stdout")}, {QStringLiteral("text"), text}},
               publish);
    }
    void setRunning(const QString &runId)
    {
        QMutexLocker lock(&m_mutex);
        m_runs[runId].status = core::RunStatus::Running;
        m_runs[runId].startedMs = QDateTime::currentMSecsSinceEpoch();
    }
    void finish(const QString &runId, core::RunStatus status, const QString &error = {})
    {
        core::RunRecord run;
        {
            QMutexLocker lock(&m_mutex);
            core::RunRecord &r = m_runs[runId];
            if (r.startedMs == 0)
                r.startedMs = QDateTime::currentMSecsSinceEpoch();
            r.status = status;
            r.error = error;
            r.finishedMs = QDateTime::currentMSecsSinceEpoch() + 10;
            run = r;
        }
        m_events.publish(core::Event{core::EventType::RunFinished,
                                     {},
                                     {},
                                     QJsonObject{{QStringLiteral("pipeline"), run.pipeline},
                                                 {QStringLiteral("job"), run.job},
                                                 {QStringLiteral("run"), run.id},
                                                 {QStringLiteral("number"), run.number},
                                                 {QStringLiteral("status"), core::toString(status)},
                                                 {QStringLiteral("error"), error}},
                                     QDateTime::currentMSecsSinceEpoch()});
    }

    // The contract.
    using core::pipelines::PipelineService::setPipeline;
    Result<core::pipelines::SetPipelineResult> setPipeline(const QString &name, const QByteArray &configYaml,
                                                           const QByteArray &varsYaml,
                                                           const core::pipelines::SetPipelineOptions &options,
                                                           const core::Actor &actor) override
    {
        if (!configYaml.contains("jobs:"))
            return fail(ErrorCode::Invalid, QStringLiteral("a pipeline needs at least one job"),
                        QStringLiteral("jobs"));
        QMutexLocker lock(&m_mutex);
        core::pipelines::SetPipelineResult result;
        const bool exists = m_pipelines.contains(name);
        core::pipelines::PipelineView view = m_pipelines.value(name);
        const QString old = view.record.configYaml;
        const QString now = QString::fromUtf8(configYaml);
        result.created = !exists;
        result.changed = !exists || old != now;
        // Which top-level keys a pipeline does not read, and which vars have no value, is the
        // parser's to say.
        core::pipelines::InterpolationSources sources;
        sources.allowUndefined = true;
        if (!varsYaml.trimmed().isEmpty())
            if (auto vars = core::pipelines::readVarsFile(varsYaml))
                sources.vars = *vars;
        if (const auto parsed = core::pipelines::parsePipeline(configYaml, sources)) {
            result.ignoredKeys = parsed->ignoredKeys;
            result.undefinedVars = parsed->undefinedVars;
            for (const auto &source : parsed->varSources)
                result.varSources.append({source.name, source.type});
        }
        if (result.changed) {
            result.diff << QStringLiteral("--- %1 (stored)").arg(name) << QStringLiteral("+++ %1 (new)").arg(name);
            for (const QString &line : old.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
                if (!now.split(QLatin1Char('\n')).contains(line))
                    result.diff << QStringLiteral("-") + line;
            for (const QString &line : now.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
                if (!old.split(QLatin1Char('\n')).contains(line))
                    result.diff << QStringLiteral("+") + line;
        }
        view.record.name = name;
        if (!exists && options.startPaused) { // as the real service, which says why
            view.record.paused = true;
            view.record.pausedReason = QStringLiteral("set by %1; new pipelines start paused").arg(actor.name);
        }
        view.record.configYaml = now;
        view.record.varsYaml = QString::fromUtf8(varsYaml);
        if (result.changed)
            view.record.configVersion += 1;
        view.jobs.clear();
        static const QRegularExpression jobName(QStringLiteral("^\\s*-\\s*name:\\s*(\\S+)"),
                                                QRegularExpression::MultilineOption);
        for (auto it = jobName.globalMatch(now, std::max<qsizetype>(0, now.indexOf(QLatin1String("jobs:"))));
             it.hasNext();)
            view.jobs << it.next().captured(1);
        view.config = QJsonObject{{QStringLiteral("jobs"), QJsonArray::fromStringList(view.jobs)}};
        result.pipeline = view;
        if (!options.dryRun)
            m_pipelines.insert(name, view);
        return result;
    }
    using core::pipelines::PipelineService::pipelines;
    Result<QList<core::pipelines::PipelineView>> pipelines(bool includeArchived) override
    {
        QMutexLocker lock(&m_mutex);
        QList<core::pipelines::PipelineView> list;
        for (const core::pipelines::PipelineView &view : std::as_const(m_pipelines))
            if (includeArchived || view.record.archivedMs == 0)
                list << view;
        return list;
    }
    Status archivePipeline(const QString &name, const core::Actor &actor) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_pipelines.contains(name))
            return noPipeline(name);
        core::PipelineRecord &record = m_pipelines[name].record;
        record.archivedMs = 1;
        record.paused = true;
        record.pausedReason = QStringLiteral("archived by ") + actor.name;
        return {};
    }
    Result<core::pipelines::PipelineView> pipeline(const QString &name) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_pipelines.contains(name))
            return noPipeline(name);
        return m_pipelines.value(name);
    }
    Status pause(const QString &name, const core::Actor &actor) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_pipelines.contains(name))
            return noPipeline(name);
        m_pipelines[name].record.paused = true;
        m_pipelines[name].record.pausedReason = QStringLiteral("by ") + actor.name;
        return {};
    }
    Status unpause(const QString &name, const core::Actor &) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_pipelines.contains(name))
            return noPipeline(name);
        m_pipelines[name].record.paused = false;
        m_pipelines[name].record.pausedReason.clear();
        return {};
    }
    Status removePipeline(const QString &name, const core::Actor &) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_pipelines.remove(name))
            return noPipeline(name);
        return {};
    }
    Result<core::pipelines::PipelineView> renamePipeline(const QString &from, const QString &to,
                                                         const core::Actor &) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_pipelines.contains(from))
            return noPipeline(from);
        if (m_pipelines.contains(to))
            return fail(ErrorCode::Conflict, QStringLiteral("a pipeline named %1 exists").arg(to),
                        QStringLiteral("name"));
        auto view = m_pipelines.take(from);
        view.record.name = to;
        m_pipelines.insert(to, view);
        return view;
    }
    Result<QList<core::pipelines::JobView>> jobs(const QString &pipeline) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_pipelines.contains(pipeline))
            return noPipeline(pipeline);
        return jobViews(pipeline);
    }
    Result<core::pipelines::JobView> setJobPaused(const QString &pipeline, const QString &job, bool paused,
                                                  const core::Actor &actor) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_pipelines.contains(pipeline))
            return noPipeline(pipeline);
        if (!m_pipelines.value(pipeline).jobs.contains(job))
            return noJob(pipeline, job);
        auto &pausedJobs = m_pipelines[pipeline].pausedJobs;
        if (!paused)
            pausedJobs.remove(job);
        else if (!pausedJobs.contains(job))
            pausedJobs.insert(job, {QStringLiteral("paused by ") + actor.name, QDateTime::currentMSecsSinceEpoch()});
        for (const core::pipelines::JobView &view : jobViews(pipeline))
            if (view.name == job)
                return view;
        return noJob(pipeline, job);
    }
    using core::pipelines::PipelineService::triggerJob;
    Result<core::pipelines::TriggerResult> triggerJob(const QString &pipeline, const QString &job,
                                                      const core::Actor &actor,
                                                      const core::pipelines::TriggerOptions &options) override
    {
        core::RunRecord run;
        {
            QMutexLocker lock(&m_mutex);
            if (!m_pipelines.contains(pipeline))
                return noPipeline(pipeline);
            if (!m_pipelines.value(pipeline).jobs.contains(job))
                return noJob(pipeline, job);
            // As the real service: a paused pipeline or job takes no trigger.
            if (m_pipelines.value(pipeline).record.paused)
                return fail(ErrorCode::Conflict, QStringLiteral("pipeline %1 is paused").arg(pipeline),
                            QStringLiteral("pipeline"));
            if (const auto &paused = m_pipelines.value(pipeline).pausedJobs; paused.contains(job))
                return fail(
                    ErrorCode::Conflict,
                    QStringLiteral("job %1 of pipeline %2 is paused (%3); it starts no runs")
                        .arg(job, pipeline, paused.value(job).reason),
                    QStringLiteral("job"),
                    QStringLiteral("unpause it, then trigger again: pando jobs unpause %1/%2").arg(pipeline, job));
            run.id = QStringLiteral("r%1").arg(QRandomGenerator::global()->generate64() & 0xffffffffffffULL, 12, 16,
                                               QLatin1Char('0'));
            run.pipeline = pipeline;
            run.job = job;
            run.number = ++m_numbers[pipeline + QLatin1Char('/') + job];
            run.status = core::RunStatus::Queued;
            run.trigger = QStringLiteral("manual");
            run.actor = actor.name;
            run.inputsJson = QStringLiteral("{}");
            run.force = options.force;
            run.createdMs = QDateTime::currentMSecsSinceEpoch() + m_runs.size(); // distinct, for order
            m_runs.insert(run.id, run);
        }
        if (m_autoPlay)
            m_pool.start([this, run] { play(run); });
        return core::pipelines::TriggerResult{run};
    }
    Result<QList<core::RunRecord>> runs(const QString &pipeline, const QString &job, int limit) override
    {
        QMutexLocker lock(&m_mutex);
        QList<core::RunRecord> list;
        for (const core::RunRecord &run : std::as_const(m_runs))
            if ((pipeline.isEmpty() || run.pipeline == pipeline) && (job.isEmpty() || run.job == job))
                list << run;
        std::sort(list.begin(), list.end(),
                  [](const core::RunRecord &a, const core::RunRecord &b) { return a.createdMs > b.createdMs; });
        return list.mid(0, limit);
    }
    // How long runTree takes, as a busy store would: a client can go away meanwhile.
    std::atomic<int> runTreeDelayMs = 0;
    Result<core::pipelines::RunTree> runTree(const QString &runId) override
    {
        if (const int delay = runTreeDelayMs.load(); delay > 0)
            QThread::msleep(ulong(delay));
        QMutexLocker lock(&m_mutex);
        if (!m_runs.contains(runId))
            return noRun(runId);
        return core::pipelines::foldRun(m_runs.value(runId), m_steps.value(runId));
    }
    Result<QList<core::RunEventRecord>> runEvents(const QString &runId, qint64 afterSeq, int limit) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_runs.contains(runId))
            return noRun(runId);
        QList<core::RunEventRecord> list;
        for (const core::RunEventRecord &e : m_runEvents.value(runId))
            if (e.seq > afterSeq && list.size() < limit)
                list << e;
        return list;
    }
    Status abortRun(const QString &runId, const core::Actor &) override
    {
        {
            QMutexLocker lock(&m_mutex);
            if (!m_runs.contains(runId))
                return noRun(runId);
            const core::RunStatus status = m_runs.value(runId).status;
            if (status != core::RunStatus::Queued && status != core::RunStatus::Running)
                return fail(ErrorCode::Conflict,
                            QStringLiteral("run %1 has already %2").arg(runId, core::toString(status)));
            m_aborted.insert(runId, true);
        }
        if (!m_autoPlay)
            finish(runId, core::RunStatus::Aborted);
        return {};
    }
    Status webhook(const QString &pipeline, const QString &resource, const QString &token, const QString &) override
    {
        QMutexLocker lock(&m_mutex);
        const QString key = pipeline + QLatin1Char('/') + resource;
        if (!m_webhookTokens.contains(key))
            return fail(ErrorCode::NotFound, QStringLiteral("no resource %1 with a webhook token").arg(key));
        if (m_webhookTokens.value(key) != token)
            return fail(ErrorCode::Unauthorized, QStringLiteral("the webhook token is wrong"));
        m_webhookChecks.ref();
        return {};
    }
    // The fake's resources are those given a webhook token (setWebhookToken); no check finds a
    // version of them, so there is nothing to pin.
    Result<QList<core::pipelines::ResourceView>> resources(const QString &pipeline) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_pipelines.contains(pipeline))
            return noPipeline(pipeline);
        QList<core::pipelines::ResourceView> list;
        for (auto it = m_webhookTokens.cbegin(); it != m_webhookTokens.cend(); ++it)
            if (it.key().startsWith(pipeline + QLatin1Char('/'))) {
                core::pipelines::ResourceView view;
                view.name = it.key().mid(pipeline.size() + 1);
                view.type = QStringLiteral("git");
                view.webhook = true;
                list << view;
            }
        return list;
    }
    Result<QList<core::pipelines::ResourceVersionView>> resourceVersions(const QString &pipeline,
                                                                         const QString &resource, int) override
    {
        if (auto known = knownResource(pipeline, resource); !known)
            return std::unexpected(known.error());
        return QList<core::pipelines::ResourceVersionView>{};
    }
    Result<core::pipelines::ResourceView> pinResource(const QString &pipeline, const QString &resource,
                                                      const QJsonObject &, const core::Actor &) override
    {
        if (auto known = knownResource(pipeline, resource); !known)
            return std::unexpected(known.error());
        return fail(ErrorCode::NotFound, QStringLiteral("no version of %1 matches").arg(resource),
                    QStringLiteral("version"));
    }
    Status unpinResource(const QString &pipeline, const QString &resource, const core::Actor &) override
    {
        if (auto known = knownResource(pipeline, resource); !known)
            return known;
        return fail(ErrorCode::NotFound, QStringLiteral("resource %1 is not pinned").arg(resource),
                    QStringLiteral("resource"));
    }
    Status checkResource(const QString &pipeline, const QString &resource, const QJsonObject &from,
                         const core::Actor &) override
    {
        if (auto known = knownResource(pipeline, resource); !known)
            return known;
        for (auto it = from.begin(); it != from.end(); ++it)
            if (!it.value().isString())
                return fail(ErrorCode::Invalid,
                            QStringLiteral("the version field \"%1\" is not a string").arg(it.key()),
                            QStringLiteral("from"));
        {
            QMutexLocker lock(&m_mutex);
            m_checkedFrom = from;
        }
        m_webhookChecks.ref();
        return {};
    }
    Result<bool> hostExecution() override
    {
        QMutexLocker lock(&m_mutex);
        return m_hostExecution;
    }
    Status setHostExecution(bool enabled, const core::Actor &) override
    {
        QMutexLocker lock(&m_mutex);
        m_hostExecution = enabled;
        return {};
    }
    Status setPipelineHostExecution(const QString &name, bool allowed, const core::Actor &) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_pipelines.contains(name))
            return noPipeline(name);
        m_pipelines[name].record.hostExecution = allowed;
        return {};
    }
    Status setSecret(const QString &scope, const QString &name, const QString &value, const core::Actor &) override
    {
        QMutexLocker lock(&m_mutex);
        if (!scope.isEmpty() && !m_pipelines.contains(scope))
            return noPipeline(scope);
        m_secrets.insert(scope + QLatin1Char('/') + name, value);
        return {};
    }
    Result<QStringList> secretNames(const QString &scope) override
    {
        QMutexLocker lock(&m_mutex);
        QStringList names;
        for (auto it = m_secrets.cbegin(); it != m_secrets.cend(); ++it)
            if (it.key().section(QLatin1Char('/'), 0, 0) == scope)
                names << it.key().section(QLatin1Char('/'), 1);
        return names;
    }
    Status removeSecret(const QString &scope, const QString &name, const core::Actor &) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_secrets.remove(scope + QLatin1Char('/') + name))
            return fail(ErrorCode::NotFound, QStringLiteral("no secret %1").arg(name));
        return {};
    }
    Result<core::SecretAccess> secretAccess(const QString &name) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_secrets.contains(QLatin1Char('/') + name))
            return fail(ErrorCode::NotFound, QStringLiteral("no install-wide secret %1").arg(name));
        return m_access.value(name);
    }
    Status setSecretAccess(const QString &name, const core::SecretAccess &access, const core::Actor &) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_secrets.contains(QLatin1Char('/') + name))
            return fail(ErrorCode::NotFound, QStringLiteral("no install-wide secret %1").arg(name));
        m_access.insert(name, access);
        return {};
    }

private:
    static std::unexpected<Error> noPipeline(const QString &name)
    {
        return fail(ErrorCode::NotFound, QStringLiteral("no pipeline \"%1\"").arg(name));
    }
    Status knownResource(const QString &pipeline, const QString &resource)
    {
        QMutexLocker lock(&m_mutex);
        if (!m_pipelines.contains(pipeline))
            return noPipeline(pipeline);
        if (!m_webhookTokens.contains(pipeline + QLatin1Char('/') + resource))
            return fail(ErrorCode::NotFound,
                        QStringLiteral("pipeline \"%1\" has no resource \"%2\"").arg(pipeline, resource),
                        QStringLiteral("resource"));
        return {};
    }
    static std::unexpected<Error> noJob(const QString &pipeline, const QString &job)
    {
        return fail(ErrorCode::NotFound, QStringLiteral("pipeline %1 has no job \"%2\"").arg(pipeline, job),
                    QStringLiteral("job"));
    }
    // As the real service reads them (the mutex held): newest finished run last, oldest
    // unfinished next.
    QList<core::pipelines::JobView> jobViews(const QString &pipeline) const
    {
        const core::pipelines::PipelineView view = m_pipelines.value(pipeline);
        QList<core::pipelines::JobView> views;
        for (const QString &job : view.jobs) {
            core::pipelines::JobView jobView{job, std::nullopt, true, std::nullopt, std::nullopt};
            if (view.pausedJobs.contains(job))
                jobView.pause = view.pausedJobs.value(job);
            for (const core::RunRecord &run : m_runs) {
                if (run.pipeline != pipeline || run.job != job)
                    continue;
                const bool finished = run.status != core::RunStatus::Queued && run.status != core::RunStatus::Running;
                auto &slot = finished ? jobView.lastRun : jobView.nextRun;
                if (!slot || (finished ? run.createdMs > slot->createdMs : run.createdMs < slot->createdMs))
                    slot = run;
            }
            views.append(jobView);
        }
        return views;
    }
    static std::unexpected<Error> noRun(const QString &id)
    {
        return fail(ErrorCode::NotFound, QStringLiteral("no run \"%1\"").arg(id));
    }

    void append(const QString &runId, const QString &stepId, const QString &type, const QJsonObject &data, bool publish)
    {
        core::RunEventRecord e;
        {
            QMutexLocker lock(&m_mutex);
            QList<core::RunEventRecord> &events = m_runEvents[runId];
            e = core::RunEventRecord{runId,
                                     events.size() + 1,
                                     QDateTime::currentMSecsSinceEpoch(),
                                     stepId,
                                     type,
                                     QString::fromUtf8(QJsonDocument(data).toJson(QJsonDocument::Compact))};
            events.append(e);
        }
        if (publish)
            m_events.publish(core::Event{core::EventType::RunEvent,
                                         {},
                                         {},
                                         QJsonObject{{QStringLiteral("run"), runId},
                                                     {QStringLiteral("seq"), e.seq},
                                                     {QStringLiteral("step"), stepId},
                                                     {QStringLiteral("type"), type},
                                                     {QStringLiteral("data"), data}},
                                         e.timeMs});
    }

    bool aborted(const QString &runId)
    {
        QMutexLocker lock(&m_mutex);
        return m_stopping || m_aborted.value(runId);
    }

    // The script: get repo, then in_parallel of task unit (prints two lines) and a cached task
    // lint. A job named "*fail*" fails at unit with exit 1, "*error*" errors, and "*slow*" waits
    // long enough to be aborted.
    void play(const core::RunRecord &run)
    {
        const auto pause = [this, &run](int ms) {
            for (int waited = 0; waited < ms; waited += 10) {
                if (aborted(run.id))
                    return false;
                QThread::msleep(10);
            }
            return !aborted(run.id);
        };
        const QString id = run.id;
        const bool fails = run.job.contains(QLatin1String("fail"));
        const bool errors = run.job.contains(QLatin1String("error"));
        const bool slow = run.job.contains(QLatin1String("slow"));
        if (!pause(150))
            return finish(id, core::RunStatus::Aborted);
        setRunning(id);
        step(id, QStringLiteral("plan[0].get:repo"), {}, QStringLiteral("repo"), QStringLiteral("get"),
             core::RunStepStatus::Running);
        output(id, QStringLiteral("plan[0].get:repo"), QStringLiteral("fetching repo@abc123"));
        step(id, QStringLiteral("plan[0].get:repo"), {}, QStringLiteral("repo"), QStringLiteral("get"),
             core::RunStepStatus::Succeeded);
        if (!pause(slow ? 5000 : 50))
            return finish(id, core::RunStatus::Aborted);
        const QString par = QStringLiteral("plan[1].in_parallel");
        const QString unit = QStringLiteral("plan[1].in_parallel[0].task:unit");
        const QString lint = QStringLiteral("plan[1].in_parallel[1].task:lint");
        step(id, par, {}, {}, QStringLiteral("in_parallel"), core::RunStepStatus::Running);
        step(id, unit, par, QStringLiteral("unit"), QStringLiteral("task"), core::RunStepStatus::Running);
        step(id, lint, par, QStringLiteral("lint"), QStringLiteral("task"), core::RunStepStatus::Cached);
        output(id, unit, QStringLiteral("running 12 tests"));
        if (!pause(50))
            return finish(id, core::RunStatus::Aborted);
        if (errors) {
            step(id, unit, par, QStringLiteral("unit"), QStringLiteral("task"), core::RunStepStatus::Errored);
            step(id, par, {}, {}, QStringLiteral("in_parallel"), core::RunStepStatus::Errored);
            return finish(id, core::RunStatus::Errored, QStringLiteral("the venue went away"));
        }
        output(id, unit, fails ? QStringLiteral("1 test failed") : QStringLiteral("all tests passed"));
        const core::RunStepStatus end = fails ? core::RunStepStatus::Failed : core::RunStepStatus::Succeeded;
        step(id, unit, par, QStringLiteral("unit"), QStringLiteral("task"), end, fails ? 1 : 0);
        step(id, par, {}, {}, QStringLiteral("in_parallel"), end);
        finish(id, fails ? core::RunStatus::Failed : core::RunStatus::Succeeded,
               fails ? QStringLiteral("task unit exited with 1") : QString());
    }

    core::EventBus &m_events;
    mutable QMutex m_mutex;
    QThreadPool m_pool;
    std::atomic_bool m_stopping = false;
    std::atomic_bool m_autoPlay = true;
    bool m_hostExecution = false;
    QAtomicInt m_webhookChecks;
    QJsonObject m_checkedFrom; // the version the last check-now asked to check from
    QMap<QString, core::pipelines::PipelineView> m_pipelines;
    QMap<QString, core::RunRecord> m_runs;
    QHash<QString, QList<core::RunStepRecord>> m_steps;
    QHash<QString, QList<core::RunEventRecord>> m_runEvents;
    QHash<QString, bool> m_aborted;
    QHash<QString, int> m_numbers;
    QMap<QString, QString> m_secrets;           // "scope/name" → value
    QMap<QString, core::SecretAccess> m_access; // install-wide secret → who reads it
    QMap<QString, QString> m_webhookTokens;
};

} // namespace pando::test
