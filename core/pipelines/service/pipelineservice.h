#pragma once
// The pipeline runner's face to the API, the CLI and the desktop: set, show, pause and remove
// pipelines; trigger jobs; list, show, follow and abort runs; receive webhooks. It validates
// what it is given, keeps only un-interpolated text in the store (secrets never land there),
// audits every change, and hands runs to the scheduler.
//
// Threading: every method may be called from any thread and returns quickly (database work);
// runs execute on the scheduler's threads.

#include "adapters/api/error.h"
#include "core/audit/auditlog.h"
#include "core/pipelines/runview/runview.h"
#include "core/state/pipelinerecords.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <optional>

namespace pando::core::pipelines {

struct PipelineView {
    PipelineRecord record;
    QJsonObject config; // the parsed pipeline (secrets as ((placeholders))), as JSON
    QStringList jobs;   // job names in file order
    // For one pipeline (not in lists): the YAML as set, and a unified diff from the config before
    // the last change to it (empty when there was none).
    bool detailed = false;
    QStringList configDiff;
    QMap<QString, JobPauseRecord> pausedJobs; // job → its pause, for each job someone paused
    // record fields + "config" + "jobs" + "paused_jobs" (+ "config_yaml", "config_diff")
    QJsonObject toJson() const;
};

// A job as `pando jobs list` and the Jobs view show it (Concourse's `fly jobs`): whether someone
// paused it, whether a person may trigger it, its newest finished run, and the run that comes
// next (its oldest running or queued one).
struct JobView {
    QString name;
    std::optional<JobPauseRecord> pause; // set while it is paused
    bool manualTrigger = true;           // false: disable_manual_trigger
    std::optional<RunRecord> lastRun;
    std::optional<RunRecord> nextRun;
    QJsonObject toJson() const;
};

// A resource of a pipeline as the Resources view and `pando resources list` show it.
struct ResourceView {
    QString name;
    QString type;
    qint64 checkedMs = 0; // the last check (0: never)
    QString checkError;   // why the last check failed; empty when it did not
    bool webhook = false; // has a webhook_token
    // The version every get uses instead of the newest: from the config's `version:`, or pinned
    // through the API (by whom, when). Empty when none is.
    QJsonObject pinned;
    bool pinnedInConfig = false;
    QString pinnedBy;
    qint64 pinnedMs = 0;
    QJsonObject toJson() const;
};

struct ResourceVersionView {
    ResourceVersionRecord record;
    bool pinned = false; // the version gets use now
    QJsonObject toJson() const;
};

struct SetPipelineResult {
    PipelineView pipeline; // after the set (or as it would be, for a dry run)
    QStringList diff;      // unified diff against the stored config; empty when unchanged
    bool created = false;
    bool changed = false;
    QStringList ignoredKeys;   // Pipeline::ignoredKeys
    QStringList undefinedVars; // Pipeline::undefinedVars: no value yet; runs that read them error until set
    QList<QPair<QString, QString>> varSources; // name → type of each var source, in file order
    QJsonObject toJson() const;
};

// How a pipeline is set. dryRun: the diff only, nothing changes. startPaused: a pipeline this
// creates starts paused, as `fly set-pipeline` makes them (the API's default; `--unpaused` turns
// it off); one that exists keeps its state either way.
struct SetPipelineOptions {
    bool dryRun = false;
    bool startPaused = false;
};

// How a run is started by hand. force: every step runs, nothing unchanged is restored
// (`pando jobs trigger --force`).
struct TriggerOptions {
    bool force = false;
};

struct TriggerResult {
    RunRecord run;
    QJsonObject toJson() const;
};

class PipelineService {
public:
    virtual ~PipelineService() = default;

    // Parses and validates (vars from varsYaml; secrets must exist but stay placeholders),
    // then stores the raw text unless dryRun. Errors name the path in the file.
    virtual Result<SetPipelineResult> setPipeline(const QString &name, const QByteArray &configYaml,
                                                  const QByteArray &varsYaml, const SetPipelineOptions &options,
                                                  const Actor &actor) = 0;
    Result<SetPipelineResult> setPipeline(const QString &name, const QByteArray &configYaml, const QByteArray &varsYaml,
                                          bool dryRun, const Actor &actor)
    {
        return setPipeline(name, configYaml, varsYaml, SetPipelineOptions{.dryRun = dryRun}, actor);
    }
    // Every pipeline, by name; archived ones only with includeArchived.
    virtual Result<QList<PipelineView>> pipelines(bool includeArchived) = 0;
    Result<QList<PipelineView>> pipelines() { return pipelines(false); }
    virtual Result<PipelineView> pipeline(const QString &name) = 0;
    virtual Status pause(const QString &name, const Actor &actor) = 0;
    virtual Status unpause(const QString &name, const Actor &actor) = 0;
    // Removes the pipeline, its runs and its scoped secrets; running runs are aborted first.
    // What its set_pipeline steps set is archived.
    virtual Status removePipeline(const QString &name, const Actor &actor) = 0;
    // Archives the pipeline, as fly archive-pipeline: paused for good (unpause, triggers, checks,
    // webhooks and pins refused, saying so), its queued and running runs aborted, its config,
    // vars and jobs' settings dropped (so no secret written in them stays), its runs, versions,
    // secrets and grants kept, hidden from lists unless asked for. Setting it again brings it
    // back (paused as a new one would be). What its set_pipeline steps set is archived with it;
    // a set_pipeline child is archived by itself when its job's next successful run does not set
    // it, or when the job leaves the parent's config. Conflict when it is archived already.
    // Audited (pipeline.archive).
    virtual Status archivePipeline(const QString &name, const Actor &actor) = 0;
    // Renames the pipeline, as fly rename-pipeline: its runs, versions, pins, paused jobs,
    // secrets, access to the install's secrets and the grants on it go with it. Conflict while a
    // run of it is running (queued ones move with it), when `to` exists, or when secrets or
    // grants wait for a pipeline named `to`. Audited (pipeline.rename). Webhook addresses name
    // the pipeline: forges need the new one.
    virtual Result<PipelineView> renamePipeline(const QString &from, const QString &to, const Actor &actor) = 0;

    // The pipeline's jobs in file order, each with its state.
    virtual Result<QList<JobView>> jobs(const QString &pipeline) = 0;
    // Pauses or unpauses one job (Concourse's pause-job): a paused job's queued runs wait, no run
    // is queued for it and a trigger is refused saying so; unpaused, it is queued for the newest
    // versions it has not run with, as if they had just been found. Audited; NotFound for a job
    // the config does not have.
    virtual Result<JobView> setJobPaused(const QString &pipeline, const QString &job, bool paused,
                                         const Actor &actor) = 0;

    // Queues a run of the job with the latest versions that satisfy its gets' passed: rules.
    virtual Result<TriggerResult> triggerJob(const QString &pipeline, const QString &job, const Actor &actor,
                                             const TriggerOptions &options) = 0;
    Result<TriggerResult> triggerJob(const QString &pipeline, const QString &job, const Actor &actor)
    {
        return triggerJob(pipeline, job, actor, TriggerOptions{});
    }
    // Newest first. pipeline empty: all; job empty: all of the pipeline's.
    virtual Result<QList<RunRecord>> runs(const QString &pipeline, const QString &job, int limit) = 0;
    virtual Result<RunTree> runTree(const QString &runId) = 0;
    // Events after afterSeq (output lines are already masked).
    virtual Result<QList<RunEventRecord>> runEvents(const QString &runId, qint64 afterSeq, int limit) = 0;
    virtual Status abortRun(const QString &runId, const Actor &actor) = 0;

    // A webhook delivery for a resource from peer (the caller's address): checks the token in
    // constant time, then checks the resource now. One Unauthorized answer for an unknown
    // pipeline or resource, one without a webhook, and a wrong or short token, so the public
    // route tells nobody what exists; failures are throttled per address, and no secret is
    // unsealed before the cheap checks pass.
    virtual Status webhook(const QString &pipeline, const QString &resource, const QString &token,
                           const QString &peer) = 0;

    // Resources: each one's last check and pin; the versions checks found, newest first.
    virtual Result<QList<ResourceView>> resources(const QString &pipeline) = 0;
    virtual Result<QList<ResourceVersionView>> resourceVersions(const QString &pipeline, const QString &resource,
                                                                int limit) = 0;
    // Pins the newest known version that has every field of `version` (Concourse's
    // pin-resource): every get of the resource uses it, whatever checks find, until it is
    // unpinned. NotFound for a version no check found; Conflict when the config pins the
    // resource (`version:` in the file wins, as in Concourse). Audited.
    virtual Result<ResourceView> pinResource(const QString &pipeline, const QString &resource,
                                             const QJsonObject &version, const Actor &actor) = 0;
    virtual Status unpinResource(const QString &pipeline, const QString &resource, const Actor &actor) = 0;
    // Checks the resource for new versions now (the trigger loop does it shortly after this
    // returns), as a webhook would, for someone who may run the pipeline: from the newest version
    // recorded, or, as fly check-resource --from, from `from` (an object of strings, any version
    // the resource's check accepts, found before or not), so that older versions are found again.
    // The outcome is the resource's next check time and error (resources()).
    virtual Status checkResource(const QString &pipeline, const QString &resource, const QJsonObject &from,
                                 const Actor &actor) = 0;

    // Host execution (docs/pipelines.md, "Running tasks on the host"): the install's setting
    // (off by default) and an administrator's mark on a pipeline; a task or resource type runs
    // on the host only with both. Only administrators may change either (the API's
    // settings.write); each change is audited.
    virtual Result<bool> hostExecution() = 0;
    virtual Status setHostExecution(bool enabled, const Actor &actor) = 0;
    virtual Status setPipelineHostExecution(const QString &name, bool allowed, const Actor &actor) = 0;

    // Secrets, sealed at rest. scope "" is the install's; a pipeline name scopes to it.
    virtual Status setSecret(const QString &scope, const QString &name, const QString &value, const Actor &actor) = 0;
    virtual Result<QStringList> secretNames(const QString &scope) = 0;
    virtual Status removeSecret(const QString &scope, const QString &name, const Actor &actor) = 0;
    // Which pipelines may read an install-wide secret (scope ""): a new one is read by none
    // until an operator lists them or allows all; a pipeline that uses one it may not read is
    // refused at set and at run time, with the command that grants it. Changes are audited.
    virtual Result<SecretAccess> secretAccess(const QString &name) = 0;
    virtual Status setSecretAccess(const QString &name, const SecretAccess &access, const Actor &actor) = 0;
};

} // namespace pando::core::pipelines
