#pragma once
// The pipeline service of an install: the state store, the scheduler that runs what is
// queued, the trigger loop that checks resources and queues the jobs new versions affect, and
// the sealed secret store. What pandod and the desktop's in-process session install.
//
// Threading: as PipelineService. start() and stop() from the thread that owns the service.

#include "core/accounts/loginthrottle.h"
#include "core/pipelines/config/pipelineconfig.h"
#include "core/pipelines/pipeline/jobrunner.h"
#include "core/pipelines/sealbox/sealbox.h"
#include "core/pipelines/service/pipelineservice.h"

#include <QMutex>
#include <QObject>
#include <QThread>
#include <QWaitCondition>
#include <atomic>
#include <memory>

namespace pando::core::pipelines {

struct LocalPipelineOptions {
    SchedulerOptions scheduler;
    int triggerIntervalMs = 1000; // how often the trigger loop looks for resources due a check
};

class LocalPipelineService final : public QObject, public PipelineService {
    Q_OBJECT
public:
    // deps.secret is filled in by the service (from its sealed store); sealKey seals secrets.
    // keepAlive owns what deps refer to (adapters, stores); it is released after everything else.
    LocalPipelineService(JobRunnerDeps deps, AuditLog &audit, const SealKey &sealKey, LocalPipelineOptions options = {},
                         std::shared_ptr<void> keepAlive = {});
    ~LocalPipelineService() override;

    Status start();
    void stop();
    // One pass of the trigger loop now (tests); returns the runs it queued.
    Result<QList<RunRecord>> triggerOnce();

    using PipelineService::setPipeline;
    Result<SetPipelineResult> setPipeline(const QString &name, const QByteArray &configYaml, const QByteArray &varsYaml,
                                          const SetPipelineOptions &options, const Actor &actor) override;
    using PipelineService::pipelines;
    Result<QList<PipelineView>> pipelines(bool includeArchived) override;
    Status archivePipeline(const QString &name, const Actor &actor) override;
    Result<PipelineView> pipeline(const QString &name) override;
    Status pause(const QString &name, const Actor &actor) override;
    Status unpause(const QString &name, const Actor &actor) override;
    Status removePipeline(const QString &name, const Actor &actor) override;
    Result<PipelineView> renamePipeline(const QString &from, const QString &to, const Actor &actor) override;
    Result<QList<JobView>> jobs(const QString &pipeline) override;
    Result<JobView> setJobPaused(const QString &pipeline, const QString &job, bool paused, const Actor &actor) override;
    using PipelineService::triggerJob;
    Result<TriggerResult> triggerJob(const QString &pipeline, const QString &job, const Actor &actor,
                                     const TriggerOptions &options) override;
    Result<QList<RunRecord>> runs(const QString &pipeline, const QString &job, int limit) override;
    Result<RunTree> runTree(const QString &runId) override;
    Result<QList<RunEventRecord>> runEvents(const QString &runId, qint64 afterSeq, int limit) override;
    Status abortRun(const QString &runId, const Actor &actor) override;
    Status webhook(const QString &pipeline, const QString &resource, const QString &token,
                   const QString &peer) override;
    Result<QList<ResourceView>> resources(const QString &pipeline) override;
    Result<QList<ResourceVersionView>> resourceVersions(const QString &pipeline, const QString &resource,
                                                        int limit) override;
    Result<ResourceView> pinResource(const QString &pipeline, const QString &resource, const QJsonObject &version,
                                     const Actor &actor) override;
    Status unpinResource(const QString &pipeline, const QString &resource, const Actor &actor) override;
    Status checkResource(const QString &pipeline, const QString &resource, const QJsonObject &from,
                         const Actor &actor) override;
    Result<bool> hostExecution() override;
    Status setHostExecution(bool enabled, const Actor &actor) override;
    Status setPipelineHostExecution(const QString &name, bool allowed, const Actor &actor) override;
    Status setSecret(const QString &scope, const QString &name, const QString &value, const Actor &actor) override;
    Result<QStringList> secretNames(const QString &scope) override;
    Status removeSecret(const QString &scope, const QString &name, const Actor &actor) override;
    Result<SecretAccess> secretAccess(const QString &name) override;
    Status setSecretAccess(const QString &name, const SecretAccess &access, const Actor &actor) override;

private:
    // The pipeline's own secret of that name, else the install's when the pipeline may read it.
    std::optional<QString> secretValue(const QString &pipeline, const QString &name);
    // Why the pipeline may not use the secret: an install-wide one not granted to it (the
    // error says how to grant it); nullopt otherwise (none by that name is not refused here).
    std::optional<Error> secretRefusal(const QString &pipeline, const QString &name);
    // A set_pipeline step of a run of pipeline `by` (JobRunnerDeps::setPipeline): its own
    // pipeline, one it created, or a new one no secret waits for.
    Result<QString> setFromRun(const QString &by, const QString &name, const QByteArray &configYaml,
                               const QByteArray &varsYaml, const QString &runId);
    Result<SetPipelineResult> setPipelineAs(const QString &name, const QByteArray &configYaml,
                                            const QByteArray &varsYaml, const SetPipelineOptions &options,
                                            const Actor &actor, const QString &setBy);
    // Install-wide secrets stored before access lists (migration 12) get the pipelines whose
    // config uses them now, so nothing that ran stops; audited. Called by start().
    void scopeUnscopedSecrets();
    // A pipeline set by a Pando that did not keep its jobs' settings gets them, once.
    void recordJobSettings();
    // A privileged task where this install or this pipeline may not have one, refused with why.
    Status refusePrivileged(const QString &name, const Pipeline &pipeline);
    // localpipelinesettings.cpp: what PipelineRepository::set keeps beside the text.
    static QMap<QString, JobSettings> jobSettingsOf(const Pipeline &pipeline);
    static QMap<QString, QString> resourceOldNamesOf(const Pipeline &pipeline); // new name → old
    // Refuses an archived pipeline (archivedError), which has no config to parse.
    Result<Pipeline> parseStored(const PipelineRecord &record, bool resolveSecrets);
    static Error archivedError(const PipelineRecord &record);
    // Archiving (archivePipeline, and what a set_pipeline step stopped setting): pauses it,
    // aborts its runs, empties its config, audits, and archives what it had set in turn.
    Status archive(const QString &name, const QString &reason, const Actor &actor);
    void archiveQuietly(const QString &name, const QString &reason); // logs a failure
    // The pipelines parent's set_pipeline steps set that are not archived.
    QList<PipelineRecord> setByJobsOf(const QString &parent);
    // After parent is set: archives what a job the config no longer has set (moving the link of
    // a job renamed with old_name). After a run of job succeeded: what an earlier run set.
    void archiveOrphans(const QString &parent, const Pipeline &config);
    void archiveUnset(const QString &parent, const QString &job, int runNumber);
    void abortRunsOf(const QString &name, const Actor &actor);
    // The pipeline's row and its config (secrets as placeholders), for what reads its jobs.
    struct Stored {
        PipelineRecord record;
        Pipeline pipeline;
    };
    Result<Stored> stored(const QString &name);
    // Whether secrets are kept for a pipeline of this name (its own, or the install's granted to
    // it) while none exists: they wait for whoever an operator meant.
    Result<bool> secretsWaitFor(const QString &name);
    // The pipeline as a webhook needs it: without unsealing any secret.
    Result<Pipeline> parseForWebhook(const PipelineRecord &record);
    Result<PipelineView> view(const PipelineRecord &record);
    // The stored pipeline parsed as a webhook parses it, and its resource; NotFound naming it.
    Result<std::pair<Pipeline, Resource>> storedResource(const QString &pipeline, const QString &resource);
    // As storedResource, but Conflict for one the config pins (version:), which the API cannot change.
    Result<std::pair<Pipeline, Resource>> pinnableResource(const QString &pipeline, const QString &resource);
    Result<ResourceView> resourceView(const QString &pipeline, const Resource &resource);
    // Queues the jobs that a new version of resource, or a run that just succeeded, lets go.
    QList<RunRecord> queueTriggered(const PipelineRecord &record, const Pipeline &pipeline, const QString &resource,
                                    const QString &afterJob);
    Status checkAndTrigger(const PipelineRecord &record, const Pipeline &pipeline, const QString &resource,
                           const adapters::Version &from, QList<RunRecord> *queued);
    void triggerLoop();
    // Removes artifact images (a task's image: from an artifact) made over a week ago and unused;
    // at start and then daily from the trigger loop.
    void sweepArtifactImages();
    std::atomic<qint64> m_lastImageSweepMs{0};
    void onEvent(const Event &event);

    std::shared_ptr<void> m_keepAlive; // first: destroyed last
    JobRunnerDeps m_deps;
    AuditLog &m_audit;
    SealBox m_seal;
    LocalPipelineOptions m_options;
    std::unique_ptr<JobRunner> m_runner;
    std::unique_ptr<Scheduler> m_scheduler;
    QMutex m_mutex;
    QWaitCondition m_wake;
    bool m_stopping = false;
    // "pipeline/resource" asked for now (a webhook, check-now) → the version to check from (empty:
    // the newest recorded).
    QHash<QString, adapters::Version> m_checkNow;
    // Failed webhook calls per address: a few are free, then each waits longer (as logins do).
    accounts::LoginThrottle m_webhookThrottle;
    std::unique_ptr<QThread> m_triggerThread;
};

} // namespace pando::core::pipelines
