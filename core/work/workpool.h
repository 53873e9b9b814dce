#pragma once
// Package work runs work held in the database on a bounded number of threads. A job is a row
// in the jobs table: enqueued by whoever asks, claimed by one worker, finished once. Jobs that
// share a key never run at once (deploys of one app); a process that dies leaves its jobs
// 'running', and the next process settles them through the kind's recovery handler.
//
// Threading: enqueue(), cancel() and shutdown() may be called from any thread; handlers run on
// the pool's threads and must check their CancelToken in their I/O loops.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "core/common/clock.h"
#include "core/state/repositories.h"

#include <QHash>
#include <QString>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include <QThread>

namespace pando::core {

class WorkPool {
public:
    using Handler = std::function<Status(const JobRecord &job, const CancelToken &cancel)>;

    WorkPool(Database &db, Clock &clock, int threads);
    ~WorkPool();
    WorkPool(const WorkPool &) = delete;
    WorkPool &operator=(const WorkPool &) = delete;

    // Register before start(). One handler per kind.
    void setHandler(const QString &kind, Handler handler);
    // Starts the threads. Jobs already queued in the database are picked up.
    void start();
    // Cancels running jobs, waits for the threads to return. Queued jobs stay queued.
    void shutdown();

    Result<qint64> enqueue(const QString &kind, const QString &key, const QString &payload);
    // Sets the cancel token of a running job; false when the job is not running here.
    bool cancel(qint64 jobId);
    // This process's identity in the jobs table's owner column.
    QString owner() const { return m_owner; }

private:
    void runWorker();

    Database &m_db;
    Clock &m_clock;
    int m_threadCount;
    QString m_owner;
    QHash<QString, Handler> m_handlers;
    // std::mutex and std::condition_variable rather than Qt's: ThreadSanitizer sees these (Debian's
    // Qt is not built with it, and a QWaitCondition's wait relocks inside libQt6Core).
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping = false;
    int m_pendingWakeups = 0;
    QHash<qint64, CancelToken> m_running;
    std::vector<std::unique_ptr<QThread>> m_threads;
};

} // namespace pando::core
