#pragma once
// The rows the pipeline runner keeps. Times are milliseconds since the epoch (UTC); JSON
// columns hold compact JSON text.

#include "core/vocab/vocab.h"

#include <QMap>
#include <QString>
#include <QStringList>
#include <QtGlobal>

namespace pando::core {

// What the run queue and the log reaper need of one job, written when the pipeline is set (the
// config itself is parsed only where its secrets may be resolved).
struct JobSettings {
    int maxInFlight = 0;       // runs of the job at once (0: unlimited)
    QStringList serialGroups;  // a run waits while a run of any job sharing one of these runs
    int keepLogsOfRuns = 0;    // build_log_retention.builds (0: no count limit)
    int keepLogsForDays = 0;   // build_log_retention.days (0: no age limit)
    int keepSucceededLogs = 0; // build_log_retention.minimum_succeeded_builds
    QString oldName;           // old_name: runs of that job are renamed to this one's when set
    bool keepsEveryLog() const { return keepLogsOfRuns == 0 && keepLogsForDays == 0; }
    bool operator==(const JobSettings &) const = default;
};

// A job someone paused (Concourse's pause-job): its queued runs wait and none is queued for it.
struct JobPauseRecord {
    QString reason; // "paused by alice"
    qint64 pausedMs = 0;
};

struct PipelineRecord {
    QString name;          // primary key
    QString configYaml;    // as the user set it, ((vars)) not interpolated: secrets never land here
    QString varsYaml;      // the vars file given with it, if any
    int configVersion = 0; // 1, 2, ... one more on every set
    // The config before the last set that changed it (version configVersion - 1); empty before.
    QString previousConfigYaml;
    bool paused = false;
    QString pausedReason;       // "by token:admin", "circuit breaker: 3 errored runs in a row"
    int maxRuns = 1;            // runs of this pipeline at once
    int consecutiveErrors = 0;  // errored runs in a row, for the circuit breaker
    bool hostExecution = false; // an administrator allowed its tasks on the host (docs/pipelines.md)
    QString setBy;              // the pipeline whose set_pipeline step created it; empty when a person did
    // The job of setBy whose set_pipeline step set it last, and that run's number (empty, 0: none
    // has since this was recorded): a later successful run of that job that does not set it
    // archives it, as does the job leaving setBy's config.
    QString setByJob;
    int setByRun = 0;
    // When it was archived (0: it is not): paused for good, its config, vars and jobs' settings
    // gone, its runs, versions and secrets kept; setting it again brings it back.
    qint64 archivedMs = 0;
    // Job name → its settings. A job not listed (the pipeline was set by a Pando before these
    // were kept, or the job left the config with runs still queued) runs one run at a time.
    QMap<QString, JobSettings> jobs;
    qint64 createdMs = 0;
    qint64 updatedMs = 0;
};

// Run status: see RunStatus (core/vocab).
struct RunRecord {
    QString id; // "r" + 12 hex digits
    QString pipeline;
    QString job;
    int number = 0; // 1, 2, ... per pipeline and job
    RunStatus status = RunStatus::Queued;
    QString trigger; // "manual", "resource:<name>", "webhook:<name>", "passed:<job>"
    QString actor;
    QString inputsJson;      // {"resource": {version}} chosen when the run was queued
    int configVersion = 0;   // the pipeline config the run executes
    QString owner;           // the process running it
    QString error;           // why it errored, for people
    qint64 logRemovedMs = 0; // its job's build_log_retention removed its log then (0: kept)
    bool force = false;      // every step runs: nothing unchanged is restored (jobs trigger --force)
    qint64 createdMs = 0;
    qint64 startedMs = 0;
    qint64 finishedMs = 0;
    // Read, not stored: a step of the run waits for approval (what lists and views show as its
    // state; the run itself is still running).
    bool waiting = false;
};

// Step status: see RunStepStatus (core/vocab). A cached step's outputs are restored and its
// command not run.
struct RunStepRecord {
    QString runId;
    QString stepId;   // the step's path in the plan ("plan[1].in_parallel[0].task:unit")
    QString parentId; // "" for top-level steps
    int seq = 0;      // order among all of the run's steps, as they were planned
    QString name;     // "unit", "repo"
    QString kind;     // get, put, task, in_parallel, do, try, on_success, ...
    RunStepStatus status = RunStepStatus::Pending;
    QString hash;    // the step's content address, when it has one; an approve step's approval id
    int attempt = 0; // 1-based attempt when the step has attempts
    int exitCode = -1;
    QString error;
    qint64 startedMs = 0;
    qint64 finishedMs = 0;
};

// One thing that happened in a run, in order: step state changes and output lines (masked).
struct RunEventRecord {
    QString runId;
    qint64 seq = 0; // 1, 2, ... per run
    qint64 timeMs = 0;
    QString stepId;
    QString type; // "step", "output", "run"
    QString dataJson;
};

// A step that succeeded, by content address: what its outputs were, so an unchanged step is
// skipped and its outputs restored.
struct StepCacheRecord {
    QString hash;        // primary key
    QString outputsJson; // {"output name": "blob id"}
    QString runId;       // the run that produced it
    QString stepId;
    qint64 createdMs = 0;
};

struct ResourceVersionRecord {
    QString pipeline;
    QString resource;
    qint64 seq = 0;      // 1, 2, ... per resource, in the order checks found them
    QString versionJson; // {"ref": "abc"}, keys sorted
    QString metadataJson;
    qint64 foundMs = 0;
};

// A version pinned through the API: every get of the resource uses it until it is unpinned.
struct ResourcePinRecord {
    QString pipeline;
    QString resource;
    QString versionJson; // the whole version as found, keys sorted
    QString actor;       // who pinned it
    qint64 pinnedMs = 0;
};

struct SecretRecord {
    QString scope; // "" for the install, or a pipeline name
    QString name;
    QString sealed; // the sealbox envelope; never the value
    qint64 createdMs = 0;
    qint64 updatedMs = 0;
};

// Which pipelines may read an install-wide secret: every one (all), or those listed. A new
// secret is readable by none until an operator or administrator says which.
struct SecretAccess {
    bool all = false;
    QStringList pipelines; // sorted; ignored when all
    bool allows(const QString &pipeline) const { return all || pipelines.contains(pipeline); }
};

} // namespace pando::core
