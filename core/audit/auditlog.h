#pragma once
// Package audit writes the append-only, hash-chained event log: who did what to which object,
// when, from where, and how it ended. record() returns once the line is committed, so an
// action that must be audited reports success only after its line is durable.
//
// Threading: record() may be called from any thread.

#include "adapters/api/error.h"
#include "core/common/clock.h"
#include "core/state/database.h"
#include "core/state/records.h"
#include "core/state/repositories.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QMutex>
#include <QString>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

namespace pando::core {

namespace accounts {
enum class Role; // core/accounts/accounts.h; opaque here, so the audit package needs nothing of accounts
}

// Who is acting: a person, a token, or the automation acting for one.
struct Actor {
    QString name = QStringLiteral("system");   // "token:admin", "system:reconciler"
    QString source = QStringLiteral("engine"); // remote address, or "engine"
    QString requestId;
    // Who stands behind the action, for the engine's rules that depend on it (the owner grant
    // on what they create, specgate on what they change): filled from the signed-in principal
    // (accounts::Principal::actor()). Empty for the engine's own components and the desktop's
    // local owner, who act with the install's own authority; the API always fills the role.
    QString userId;                     // empty: nobody (the system, the initial token)
    std::optional<accounts::Role> role; // nullopt: the install's own authority

    static Actor system(const QString &component)
    {
        return Actor{QStringLiteral("system:") + component, QStringLiteral("engine"), {}};
    }
};

// What an action answers when it was done, cannot be taken back, and its audit line could not be
// written: an error, since Pando reports no success it did not audit, whose message says what was
// done, so that nobody believes it failed and does it again. An action that can be taken back is
// undone instead and answers the audit's own error (nothing half-done); one that has not started
// is refused with it.
Error unaudited(const QString &done, const Error &audit);

class AuditLog {
public:
    AuditLog(Database &db, Clock &clock) : m_db(db), m_clock(clock) {}
    // outcome: "success", "failure", "denied". Returns once the line is committed. Callers on
    // several threads at once share commits: one of them writes every line waiting (up to 64
    // per statement) in one statement, which is one transaction (group commit), and each returns
    // when its own line is committed.
    Status record(const Actor &actor, const QString &action, const QString &object, const QString &outcome,
                  const QJsonObject &detail = {});
    // A refusal of someone nobody authenticated (a failed login or pairing): the first of each
    // action on each object from each source network (IPv4 /24, IPv6 /64) in a window of
    // RefusalWindowMs is written as it comes; the rest of that window are counted and written as
    // one line (same action and object, detail reason "repeated", count, network, fromMs, toMs)
    // once the window is over and another refusal or flushRefusals() comes. At most
    // MaxRefusalLinesPerWindow first lines are written per window across all sources; past it
    // they are counted into one "audit.refusals_suppressed" line. A line per attempt let anyone
    // fill the disk; now the trail grows by at most about that many lines a minute.
    static constexpr qint64 RefusalWindowMs = 60'000;
    static constexpr int MaxRefusalLinesPerWindow = 30;
    Status recordUnauthenticated(const Actor &actor, const QString &action, const QString &object,
                                 const QJsonObject &detail = {});
    // Writes the counts of windows that are over (all of them with force, at shutdown).
    Status flushRefusals(bool force = false);
    // The network a refusal is counted under: "10.1.2.0/24", "2001:db8::/64", or the source.
    static QString sourceNetwork(const QString &source);
    // Off only to measure what auditing costs (tests/bench/bench_audit); an install always audits.
    void setEnabled(bool enabled) { m_enabled = enabled; }
    // Called (on the committing thread) after lines were committed: the audit stream's cue.
    void setCommittedHook(std::function<void()> hook)
    {
        const std::lock_guard lock(m_mutex);
        m_hook = std::move(hook);
    }

private:
    // Writes lines after the last one known (m_head), reading the log's end only when that is
    // not known or another writer got there first. Called by one caller at a time.
    Status commit(const QList<AuditRecord> &lines);

    struct Pending {
        AuditRecord line;
        bool done = false;
        Status result;
    };

    Database &m_db;
    Clock &m_clock;
    std::atomic_bool m_enabled = true;
    // The standard library's, not QMutex and QWaitCondition: a QWaitCondition relocks inside
    // libQt6Core, which ThreadSanitizer cannot see (Debian's Qt is not built with it).
    std::mutex m_mutex;
    std::condition_variable m_committed;
    QList<std::shared_ptr<Pending>> m_queue; // lines waiting for the next commit
    bool m_committing = false;               // a caller is writing a batch now
    std::function<void()> m_hook;
    std::optional<AuditRepository::Head> m_head; // the last line written; only the committing caller uses it

    struct RefusalLine {
        QString action;
        QString object;
        QJsonObject detail;
    };
    // Under m_refusalMutex: what has to be written now of the windows that are over.
    QList<RefusalLine> takeExpiredRefusalsLocked(qint64 now, bool force);
    struct RefusalCount {
        QString action;
        QString object;
        QString network;
        qint64 windowStartMs = 0;
        qint64 suppressed = 0;
        qint64 lastMs = 0;
    };
    QMutex m_refusalMutex;
    QHash<QString, RefusalCount> m_refusals; // action, network and object
    qint64 m_refusalWindowStartMs = -1;
    int m_refusalLines = 0;          // first lines written in the current window
    qint64 m_refusalsSuppressed = 0; // past MaxRefusalLinesPerWindow in it
};

} // namespace pando::core
