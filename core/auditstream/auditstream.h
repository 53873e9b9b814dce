#pragma once
// Package auditstream pushes the audit log to every configured audit sink as it is written:
// at least once, in sequence order, from a durable cursor per sink (table audit_sink_cursors),
// in batches. A sink that is down or slow loses nothing: its worker waits with a growing delay
// and delivers the backlog when the sink answers again; lag() and status() show how far behind
// it is and why.
//
// Threading: one worker thread per sink once start() ran. notify(), status(), lag() and
// pumpOnce() may be called from any thread; a sink's deliver() is never entered twice at once.

#include "adapters/api/auditsink.h"
#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "core/common/clock.h"
#include "core/pipelines/retry/sleeper.h"
#include "core/state/database.h"

#include <QMap>
#include <QMutex>
#include <QString>
#include <QThread>
#include <QWaitCondition>
#include <memory>

namespace pando::core {

struct AuditStreamOptions {
    qint64 pollMs = 1000;            // how often a worker looks for new lines when nobody notify()s
    qint64 retryDelayMs = 500;       // the wait after the first failed delivery
    qint64 maxRetryDelayMs = 60'000; // doubled after each further failure, up to this
    Sleeper *sleeper = nullptr;      // the waits between retries; null: SystemSleeper
};

struct AuditSinkStatus {
    QString sink;
    qint64 cursor = 0;    // the last seq delivered (or passed over because the filters refused it)
    qint64 newest = 0;    // the newest seq in the log
    qint64 lag = 0;       // newest - cursor
    QString lastError;    // empty once a delivery succeeded
    qint64 updatedMs = 0; // when the cursor or the error last changed
    int failures = 0;     // consecutive failed deliveries since this process started
};

class AuditStream {
public:
    AuditStream(Database &db, Clock &clock, AuditStreamOptions options = {});
    ~AuditStream(); // stops the workers
    AuditStream(const AuditStream &) = delete;
    AuditStream &operator=(const AuditStream &) = delete;

    // Before start(). Two sinks with one name would share a cursor: Conflict.
    Status addSink(std::shared_ptr<adapters::AuditSink> sink);
    void start();
    // Cancels deliveries in flight and waits for the workers; a batch cut short is sent again.
    void stop();
    // New lines were written: wakes the workers now rather than at the next poll.
    void notify();

    // One step for one sink on the calling thread, without waiting: reads the next batch after
    // the cursor, delivers what the sink's filters admit, moves the cursor. Returns how many
    // lines the cursor moved past (0: nothing new), or the delivery's error (also kept as the
    // sink's last error).
    Result<int> pumpOnce(const QString &sink, const CancelToken &cancel = {});
    Result<AuditSinkStatus> status(const QString &sink);
    Result<qint64> lag(const QString &sink);

private:
    struct Entry {
        std::shared_ptr<adapters::AuditSink> sink;
        QMutex deliverMutex;
        std::unique_ptr<QThread> worker;
        int failures = 0; // under m_mutex
    };
    void run(Entry *entry, const CancelToken &cancel);
    Entry *entry(const QString &sink);

    Database &m_db;
    Clock &m_clock;
    AuditStreamOptions m_options;
    QMutex m_mutex;
    QWaitCondition m_wake;
    quint64 m_generation = 0; // bumped by notify(), under m_mutex
    QMap<QString, std::shared_ptr<Entry>> m_sinks;
    CancelToken m_cancel;
    bool m_running = false;
};

} // namespace pando::core
