#pragma once
// The inside of JobRunner, shared by the files that run its kinds of step: Execution is one run
// of one job (the parsed pipeline, the run's log, the artifacts made so far). Not API.

#include "core/pipelines/config/canonical.h"
#include "core/pipelines/config/pipelineconfig.h"
#include "core/pipelines/merkle/merkle.h"
#include "core/pipelines/pipeline/jobrunner.h"
#include "core/pipelines/pipeline/linkedcancel.h"
#include "core/pipelines/pipeline/resourcetypes.h"
#include "core/pipelines/pipeline/runlog.h"
#include "core/pipelines/resource/versions.h"
#include "core/pipelines/runview/runview.h"
#include "core/pipelines/treedigest/treedigest.h"
#include "core/state/pipelinerepositories.h"

#include <QCryptographicHash>
#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMutex>
#include <QScopeGuard>
#include <QThread>
#include <QWaitCondition>
#include <thread>

namespace pando::core::pipelines::detail {

// A version as canonical JSON, the way the store keys versions.
QString versionJson(const adapters::Version &version);
// type's check of resource, stopped (a Timeout error at its check_timeout) past the resource's
// check_timeout.
Result<QList<adapters::Version>> checkWithin(adapters::ResourceType &type, const Resource &resource,
                                             const adapters::Version &from, const CancelToken &cancel,
                                             const adapters::LogSink &log);
// The pipeline runner acting for whoever triggered the run: it may withdraw that person's
// approval requests (the requester may reject their own).
Actor automationFor(const RunRecord &run);

// One run of one job: the parsed pipeline, the run's log and the artifacts made so far.
class Execution {
public:
    Execution(JobRunnerDeps &deps, const RunRecord &run, const Pipeline &pipeline, QStringList secretValues,
              RunLog &log, const CancelToken &runCancel, const HostPolicy &hostPolicy)
        : m_deps(deps), m_run(run), m_pipeline(pipeline), m_secretValues(std::move(secretValues)), m_log(log),
          m_types(pipeline, deps.containers, deps.host, deps.builtinType, hostPolicy), m_hostPolicy(hostPolicy),
          m_runCancel(runCancel)
    {
        m_inputs = QJsonDocument::fromJson(run.inputsJson.toUtf8()).object();
    }

    Outcome runPlan(const std::vector<Step> &plan, const QString &parentId, const CancelToken &cancel);
    Outcome runHooks(const Hooks &hooks, Outcome outcome, const QString &parentId, const CancelToken &cancel);
    QString firstError() const
    {
        QMutexLocker lock(&m_mutex);
        return m_firstError;
    }
    // A step errored on the infrastructure (isInfrastructureError), not on what the pipeline says.
    bool infrastructureErrored() const
    {
        QMutexLocker lock(&m_mutex);
        return m_infrastructureError;
    }

private:
    Outcome runStep(const Step &step, const QString &parentId, const CancelToken &cancel);
    Outcome runOnce(const Step &step, const QString &parentId, const CancelToken &cancel, int attempt, bool *timedOut);
    Outcome runParallel(const Step &step, const CancelToken &cancel);
    // across: (acrossstep.cpp) the step once per combination of its vars' values.
    Outcome runAcross(const Step &step, const QString &parentId, const CancelToken &cancel);
    Outcome runGet(const Step &step, RunStepRecord &rec, const LinkedCancel &link);
    Outcome runTask(const Step &step, RunStepRecord &rec, const LinkedCancel &link, qint64 timeoutMs);
    // The pieces of a task step (taskstep.cpp): a file: task's config read from its artifact
    // (nullopt for a task with its own), whether the task may run where it asks to, what its
    // cache key is made of and its workspace, outputs restored from a run of the same content,
    // the runner's spec, and the outputs kept as artifacts (answering what the cache keeps).
    Result<std::optional<TaskConfig>> readTaskFile(const Step &step) const;
    // A file of an artifact the plan made ("artifact/path"), at most 1 MiB, that stays inside the
    // artifact; `what` names it in errors ("task file", "load_var file").
    Result<QByteArray> readArtifactFile(const QString &file, const QString &what, const QString &stepPath) const;
    // load_var (loadvarstep.cpp): reads the file into the run's local vars.
    Outcome runLoadVar(const Step &step, RunStepRecord &rec);
    // set_pipeline (setpipelinestep.cpp): sets a pipeline from a file of an artifact.
    Outcome runSetPipeline(const Step &step, RunStepRecord &rec);
    // The step read again from what was written, with the run's local vars as they are now.
    Result<Step> withLocalVars(const Step &step) const;
    Status checkTaskVenue(const Step &step, const ResolvedTask &task, bool fromFile) const;
    // The image a task's `image:` artifact holds, made into one on the engine (once per content).
    Result<QString> artifactImage(const Step &step, const QString &artifact, const CancelToken &cancel);
    Result<StepLayout> taskContent(const Step &step, const ResolvedTask &task, adapters::TaskRunner &runner,
                                   StepContent &content);
    bool restoreTaskOutputs(const Step &step, RunStepRecord &rec, const ResolvedTask &task, const CancelToken &cancel);
    Result<adapters::TaskSpec> taskSpec(const Step &step, const ResolvedTask &task, const StepDirs &dirs,
                                        qint64 timeoutMs) const;
    Result<QJsonObject> keepTaskOutputs(const ResolvedTask &task, const StepDirs &dirs, const StepLayout &layout,
                                        const CancelToken &cancel);
    Outcome runPut(const Step &step, RunStepRecord &rec, const LinkedCancel &link);
    Outcome runApprove(const Step &step, RunStepRecord &rec, const CancelToken &cancel);
    // What approvers see besides the message: where the run is and the versions it got so far.
    QJsonObject approvalPlan(const Step &step, const QString &message) const;
    Outcome fetch(const Step &step, const QString &artifact, const adapters::Version &version,
                  const QJsonObject &params, RunStepRecord &rec, const LinkedCancel &link, bool useCache);
    // Why a step's I/O was cut short: the run's abort, or the step's own timeout.
    static Interruption why(const LinkedCancel &link)
    {
        return Interruption{link.token().isCancelled() && !link.timedOut(), link.timedOut()};
    }

    RunStepRecord begin(const Step &step, const QString &parentId, int attempt);
    Outcome finish(RunStepRecord &rec, Outcome outcome, const QString &error = {});
    Outcome errored(RunStepRecord &rec, const Error &error);
    // finish() for a step that ended on error: the breaker learns whose error it was.
    Outcome finishOnError(RunStepRecord &rec, Outcome outcome, const Error &error);
    // Canonical bytes of a config with each secret's value replaced by its keyed digest.
    QByteArray hashable(const QJsonObject &config) const;
    QString secretsMarker() const;
    // Who shares a get's cache entries (StepContent::scope).
    QString getScope(const Resource &resource) const;
    Result<adapters::Version> chooseVersion(const Step &step, const Resource &resource,
                                            const std::shared_ptr<adapters::ResourceType> &type,
                                            const CancelToken &cancel);
    void setArtifact(const QString &name, const QString &digest)
    {
        QMutexLocker lock(&m_mutex);
        m_digests.insert(name, digest);
    }
    std::optional<QString> artifactDigest(const QString &name) const
    {
        QMutexLocker lock(&m_mutex);
        if (!m_digests.contains(name))
            return std::nullopt;
        return m_digests.value(name);
    }
    // An image's digest is looked up once per run: every task of the run on it hashes the same.
    Result<QString> imageDigest(adapters::TaskRunner &runner, const QString &image)
    {
        {
            QMutexLocker lock(&m_mutex);
            if (auto known = m_imageDigests.constFind(image); known != m_imageDigests.constEnd())
                return *known;
        }
        auto digest = runner.imageDigest(image);
        if (digest) {
            QMutexLocker lock(&m_mutex);
            m_imageDigests.insert(image, *digest);
        }
        return digest;
    }
    // A step's scratch directory goes when the step ends.
    void removeStepDir(const QString &stepKey)
    {
        discardResult(m_deps.workspace.removeStep(m_run.id, stepKey),
                      "what stays goes with the run's directory at the run's end");
    }
    // A cache entry whose blob is gone; one that stays is replaced when the step's outputs are
    // cached again.
    void forgetCached(const QString &hash)
    {
        discardResult(StepCacheRepository(m_deps.db).remove(hash), "the next put of this hash replaces it");
    }
    // Outputs of a step that succeeded, by content, so that the same step is not run again.
    void cacheOutputs(const Step &step, const RunStepRecord &rec, const QJsonObject &outputs)
    {
        const StepCacheRecord entry{rec.hash, QString::fromUtf8(QJsonDocument(outputs).toJson(QJsonDocument::Compact)),
                                    m_run.id, step.path, m_log.nowMs()};
        if (auto cached = StepCacheRepository(m_deps.db).put(entry); !cached)
            m_log.note(step.path, QStringLiteral("caching the step's outputs failed (it runs again next time): ") +
                                      cached.error().text());
    }
    // What a get or put of resource is told of this run (adapters::BuildMetadata).
    adapters::BuildMetadata buildMetadata(const Resource &resource) const;
    adapters::LogSink sinkFor(const QString &stepId)
    {
        return [this, stepId](const QString &line) {
            m_log.note(stepId, line);
        };
    }

    JobRunnerDeps &m_deps;
    const RunRecord &m_run;
    const Pipeline &m_pipeline;
    QStringList m_secretValues;
    RunLog &m_log;
    ResourceTypes m_types;
    HostPolicy m_hostPolicy;
    QJsonObject m_inputs;
    mutable QMutex m_mutex;
    QHash<QString, QString> m_digests; // artifact → tree digest
    QHash<QString, QString> m_imageDigests;
    QJsonObject m_versions; // resource → the version a get of this run chose
    QString m_firstError;
    bool m_infrastructureError = false;
    core::detail::DocNode m_locals;  // load_var's values by name (a mapping), for ((.:name))
    QStringList m_maskedLocalValues; // the values of those not revealed, masked as secrets are
    CancelToken m_runCancel;         // the run's own token (hooks after an abort run on a fresh one)
};

} // namespace pando::core::pipelines::detail
