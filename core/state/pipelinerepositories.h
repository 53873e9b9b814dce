#pragma once
// The repositories of the pipeline runner over Database, same rules as repositories.h: one
// statement or transaction per call, Conflict for a duplicate key, NotFound for a missing row.

#include "database.h"
#include "pipelinerecords.h"

#include <QList>
#include <optional>

namespace pando::core {

namespace detail {
// PipelineRecord::jobs as the pipelines.job_settings column holds it (compact JSON), and back;
// text that is no JSON object reads as no job listed.
QString jobSettingsJson(const QMap<QString, JobSettings> &jobs);
QMap<QString, JobSettings> jobSettingsFrom(const QString &json);
} // namespace detail

class PipelineRepository {
public:
    explicit PipelineRepository(Database &db) : m_db(db) {}
    // What a set records besides the text. jobs: each job's settings. resourceOldNames: new name
    // → old name. setBy and pausedReason count for a pipeline the set creates only: the pipeline
    // whose set_pipeline step creates it, and why it starts paused (empty: it starts active).
    struct SetFields {
        QMap<QString, JobSettings> jobs;
        QMap<QString, QString> resourceOldNames;
        QString setBy;
        QString pausedReason;
    };
    // Creates the pipeline or replaces its config and its jobs' settings, bumping configVersion;
    // renames the runs of each job's oldName to it (unless it has runs already), and the
    // versions, check, pin and recorded inputs of each renamed resource (unless the new name has
    // versions already); returns the row. An archived pipeline comes back, paused with
    // pausedReason (running when it is empty).
    Result<PipelineRecord> set(const QString &name, const QString &configYaml, const QString &varsYaml, qint64 nowMs,
                               const SetFields &fields = {});
    Result<PipelineRecord> find(const QString &name);
    Result<QList<PipelineRecord>> list();
    Status setPaused(const QString &name, bool paused, const QString &reason, qint64 nowMs);
    // Archives the pipeline: paused with reason, its config, vars and jobs' settings emptied.
    // NotFound: no such pipeline, or it is archived already.
    Status archive(const QString &name, const QString &reason, qint64 nowMs);
    // Records the job (of its setBy pipeline) and run number whose set_pipeline step set it.
    Status setSetByJob(const QString &name, const QString &job, int runNumber);
    // Pauses or unpauses one job of the pipeline (whether the config has it is the caller's to
    // check). Pausing a paused job keeps its first reason. NotFound: no such pipeline.
    Status setJobPaused(const QString &pipeline, const QString &job, bool paused, const QString &reason, qint64 nowMs);
    // Each paused job of the pipeline (none for one that does not exist).
    Result<QMap<QString, JobPauseRecord>> pausedJobs(const QString &pipeline);
    Status setMaxRuns(const QString &name, int maxRuns, qint64 nowMs);
    // Replaces the jobs' settings alone (no new config version).
    Status setJobSettings(const QString &name, const QMap<QString, JobSettings> &jobs);
    // The administrator's mark that lets the pipeline's tasks run on the host.
    Status setHostExecution(const QString &name, bool allowed, qint64 nowMs);
    // Counts an errored run (or resets the count after a run that did not error); returns the count.
    Result<int> recordRunOutcome(const QString &name, bool errored, qint64 nowMs);
    // Removes the pipeline with its runs, steps, events, versions and secrets.
    Status remove(const QString &name);
    // Gives the pipeline `from` the name `to` with all it has, in one transaction: its runs (and
    // their steps, events, inputs and outputs), versions, checks, pins and paused jobs, its own
    // secrets and its access to the install's, the grants on it, and the pipelines its
    // set_pipeline step created. NotFound: no `from`. Conflict: `to` exists, or grants wait for a
    // pipeline of that name (meant for whoever sets it, not for this one).
    Status rename(const QString &from, const QString &to, qint64 nowMs);

private:
    Database &m_db;
};

// Install-wide settings an administrator changes (name → text value); a missing row is the
// setting's default, which the caller passes.
class InstallSettingRepository {
public:
    explicit InstallSettingRepository(Database &db) : m_db(db) {}
    Result<QString> value(const QString &name, const QString &fallback);
    Status set(const QString &name, const QString &value, const QString &actor, qint64 nowMs);

private:
    Database &m_db;
};

class RunRepository {
public:
    explicit RunRepository(Database &db) : m_db(db) {}
    // Queues a run, numbering it after the job's last; fills id, number and status.
    Result<RunRecord> enqueue(RunRecord run);
    Result<RunRecord> find(const QString &id);
    // Newest first; job empty: every job of the pipeline; pipeline empty: every run.
    Result<QList<RunRecord>> list(const QString &pipeline, const QString &job, int limit);
    // Atomically claims the oldest queued run of the pipeline that may start: the pipeline is not
    // paused, fewer than maxRuns (0: no limit) of its runs are running, and its job's
    // max_in_flight and serial groups (PipelineRecord::jobs) let it; nullopt when none may.
    Result<std::optional<RunRecord>> claimNext(const QString &pipeline, int maxRuns, const QString &owner,
                                               qint64 nowMs);
    // Runs left running by processes other than owner.
    Result<QList<RunRecord>> abandoned(const QString &owner);
    Result<QList<RunRecord>> withStatus(RunStatus status);
    Status finish(const QString &id, RunStatus status, const QString &error, qint64 nowMs);
    // Puts a running run back to queued (its steps and events are cleared).
    Status requeue(const QString &id);
    // build_log_retention: removes the output events of the job's finished runs past
    // settings' count or age, keeping the newest keepSucceededLogs succeeded ones, and marks
    // them (RunRecord::logRemovedMs); the runs and their steps stay. Returns how many it removed.
    Result<int> removeOldLogs(const QString &pipeline, const QString &job, const JobSettings &settings, qint64 nowMs);

    Status upsertStep(const RunStepRecord &step);
    Result<QList<RunStepRecord>> steps(const QString &runId);

    // Appends events in order, numbering them after the run's last; returns the last seq.
    Result<qint64> appendEvents(const QString &runId, const QList<RunEventRecord> &events);
    Result<QList<RunEventRecord>> events(const QString &runId, qint64 afterSeq, int limit);

    // The versions of `resource` used by succeeded runs of `job`, newest first.
    Result<QStringList> passedVersions(const QString &pipeline, const QString &job, const QString &resource, int limit);
    Status recordInput(const QString &runId, const QString &resource, const QString &versionJson);
    // A version the run's put made: it passes the run's job as an input does (passedVersions).
    Status recordOutput(const QString &runId, const QString &resource, const QString &versionJson);

private:
    Database &m_db;
};

class StepCacheRepository {
public:
    explicit StepCacheRepository(Database &db) : m_db(db) {}
    Result<std::optional<StepCacheRecord>> find(const QString &hash);
    // Records a step that succeeded; an existing row for the hash is kept.
    Status put(const StepCacheRecord &record);
    Status remove(const QString &hash);

private:
    Database &m_db;
};

class ResourceVersionRepository {
public:
    explicit ResourceVersionRepository(Database &db) : m_db(db) {}
    // Records versions not seen before, in the order a check returned them, and moves a version
    // seen before that the check returned after a new one behind it (a check from an older
    // version re-finds the newest last: it stays the newest); returns the rows that were new.
    Result<QList<ResourceVersionRecord>> add(const QString &pipeline, const QString &resource,
                                             const QList<QPair<QString, QString>> &versionsAndMetadata, qint64 nowMs);
    Result<std::optional<ResourceVersionRecord>> latest(const QString &pipeline, const QString &resource);
    Result<QList<ResourceVersionRecord>> list(const QString &pipeline, const QString &resource, int limit);
    Status recordCheck(const QString &pipeline, const QString &resource, qint64 nowMs, const QString &error);
    // When the resource was last checked (0: never), and the error of that check.
    Result<QPair<qint64, QString>> lastCheck(const QString &pipeline, const QString &resource);
    // The version pinned through the API; nullopt when none is. pin() replaces any earlier pin.
    Result<std::optional<ResourcePinRecord>> pinned(const QString &pipeline, const QString &resource);
    Status pin(const ResourcePinRecord &pin);
    // NotFound when the resource was not pinned.
    Status unpin(const QString &pipeline, const QString &resource);

private:
    Database &m_db;
};

class SecretRepository {
public:
    explicit SecretRepository(Database &db) : m_db(db) {}
    Status put(const SecretRecord &secret);
    Result<SecretRecord> find(const QString &scope, const QString &name);
    // Names only, never values.
    Result<QList<SecretRecord>> list(const QString &scope);
    Status remove(const QString &scope, const QString &name);

    // Install-wide secrets only (scope ""): which pipelines may read one. NotFound without it.
    Result<SecretAccess> access(const QString &name);
    // Replaces the list. A pipeline may be named before it is set (so that its first set can use
    // the secret); removing a pipeline takes it off every list.
    Status setAccess(const QString &name, const SecretAccess &access);
    // Install-wide secrets stored before access lists existed (migration 12), not yet given one.
    Result<QStringList> unscoped();

private:
    Database &m_db;
};

} // namespace pando::core
