#pragma once
// Package scheduler drains each pipeline's durable run queue (the runs table) in this process:
// a bounded set of worker threads, each pipeline's max-runs limit, pause and unpause, abort, a
// circuit breaker that pauses a pipeline after repeated infrastructure errors, and a grace
// period on shutdown before running runs are aborted. Queued runs survive any restart; a run a
// dead process left running is settled as errored (interrupted) on the next start, never run a
// second time.
//
// Threading: every public method may be called from any thread. The executor runs on the
// scheduler's worker threads, one run per thread at a time.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "core/common/clock.h"
#include "core/events/eventbus.h"
#include "core/pipelines/outcome/outcome.h"
#include "core/state/database.h"
#include "core/state/pipelinerecords.h"

#include <QHash>
#include <QThread>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

namespace pando::core::pipelines {

// What runs one run to its end. The returned error (with Errored) is the run's error text.
class RunExecutor {
public:
    virtual ~RunExecutor() = default;
    struct Result {
        Outcome outcome = Outcome::Succeeded;
        QString error;
        // An errored run whose error was the infrastructure's (isInfrastructureError): only
        // these count towards the circuit breaker.
        bool infrastructure = false;
    };
    virtual Result execute(const RunRecord &run, const CancelToken &cancel) = 0;
    // A run a dead process left running, just before it is settled as errored: release what it
    // still holds outside the run (a pending approval it waited on). Best effort.
    virtual void releaseAbandoned(const RunRecord &run) { Q_UNUSED(run); }
};

struct SchedulerOptions {
    int workers = 2;             // runs of all pipelines at once in this process
    int breakerThreshold = 3;    // runs in a row that errored on the infrastructure that pause a pipeline (0: never)
    int shutdownGraceMs = 10000; // running runs get this long to finish on shutdown
    int idlePollMs = 1000;       // how often idle workers look (another process may queue)
};

class Scheduler {
public:
    Scheduler(Database &db, Clock &clock, EventBus &events, RunExecutor &executor, SchedulerOptions options = {});
    ~Scheduler();
    Scheduler(const Scheduler &) = delete;
    Scheduler &operator=(const Scheduler &) = delete;

    // Settles runs a dead process left running, then starts the workers.
    Status start();
    // Stops claiming; running runs get the grace period, then are aborted. Queued runs stay.
    void shutdown();

    // While the returned lock is held no worker claims a run: whoever queues a run that must not
    // start until something else is done (its audit line written) holds it across both, and can
    // then still abort the run before it started.
    [[nodiscard]] std::unique_lock<std::mutex> holdClaims() { return std::unique_lock(m_claimGate); }

    // Queues a run of pipeline/job (the caller checked that the job exists); wakes a worker.
    // force: every step of it runs, nothing unchanged is restored (RunRecord::force).
    Result<RunRecord> enqueue(const QString &pipeline, const QString &job, const QString &trigger, const QString &actor,
                              const QString &inputsJson, int configVersion, bool force = false);
    // A queued run is marked aborted; a running one here has its cancel token set.
    Status abort(const QString &runId, const QString &actor);
    Status pause(const QString &pipeline, const QString &reason);
    Status unpause(const QString &pipeline);
    // Looks for work now (after an unpause or a change of max-runs made elsewhere).
    void wake();

    QString owner() const { return m_owner; }
    int runningCount() const;

private:
    void workerLoop();
    bool runOne();
    void settle(const RunRecord &run, const RunExecutor::Result &result);
    // build_log_retention: a failure is logged, never the run's.
    void removeOldLogs(const QString &pipeline, const QString &job, const JobSettings &settings);
    void publish(EventType type, const RunRecord &run, const QJsonObject &data = {});

    Database &m_db;
    Clock &m_clock;
    EventBus &m_events;
    RunExecutor &m_executor;
    SchedulerOptions m_options;
    QString m_owner;

    // The standard library's locks rather than Qt's: ThreadSanitizer sees them (Debian's Qt is not
    // built with it, and a QWaitCondition relocks inside libQt6Core).
    mutable std::mutex m_mutex;
    std::mutex m_claimGate; // taken before m_mutex, never while holding it
    std::condition_variable m_wake;
    std::condition_variable m_idle; // a run ended (shutdown waits on it)
    bool m_stopping = false;
    int m_pendingWakeups = 0;
    int m_nextPipeline = 0;                // round-robin start among pipelines
    QHash<QString, CancelToken> m_running; // run id → its token
    std::vector<std::unique_ptr<QThread>> m_threads;
};

} // namespace pando::core::pipelines
