#include "auditlog.h"

#include "core/state/repositories.h"

#include <QDeadlineTimer>
#include <QHostAddress>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QThread>
#include <algorithm>
#include <chrono>

namespace pando::core {

Error unaudited(const QString &done, const Error &audit)
{
    return Error{ErrorCode::Internal,
                 QStringLiteral("%1, but its audit line could not be written: %2").arg(done, audit.text()),
                 QStringLiteral("audit"),
                 QStringLiteral("it was done: do not repeat it. The audit log's database refused the line: check its "
                                "disk space and permissions")};
}

Status AuditLog::record(const Actor &actor, const QString &action, const QString &object, const QString &outcome,
                        const QJsonObject &detail)
{
    AuditRecord line;
    line.timeMs = m_clock.nowMs();
    line.actor = actor.name;
    line.action = action;
    line.object = object;
    line.outcome = outcome;
    line.detail =
        detail.isEmpty() ? QString() : QString::fromUtf8(QJsonDocument(detail).toJson(QJsonDocument::Compact));
    line.requestId = actor.requestId;
    line.source = actor.source;
    if (!m_enabled)
        return {};

    auto mine = std::make_shared<Pending>();
    mine->line = std::move(line);
    std::unique_lock lock(m_mutex);
    m_queue.append(mine);
    // Wait while another caller commits; it may take this line with it.
    m_committed.wait(lock, [&mine, this] { return !m_committing || mine->done; });
    if (mine->done)
        return mine->result;
    // This caller commits what is waiting, oldest first, until its own line is in.
    m_committing = true;
    bool wrote = false;
    while (!mine->done) {
        const qsizetype take = qMin<qsizetype>(m_queue.size(), AuditRepository::kMaxAppendAfter);
        const QList<std::shared_ptr<Pending>> batch = m_queue.first(take);
        m_queue.remove(0, take);
        lock.unlock();
        QList<AuditRecord> lines;
        lines.reserve(batch.size());
        for (const auto &p : batch)
            lines.append(p->line);
        const Status written = commit(lines);
        lock.lock();
        for (const auto &p : batch) {
            p->done = true;
            p->result = written;
        }
        m_committed.notify_all(); // the callers in this batch
        wrote = wrote || written;
    }
    m_committing = false;
    m_committed.notify_all(); // the next caller whose line is still waiting commits
    const std::function<void()> hook = wrote ? m_hook : nullptr;
    Status result = mine->result;
    lock.unlock();
    if (hook)
        hook();
    return result;
}

Status AuditLog::commit(const QList<AuditRecord> &lines)
{
    AuditRepository repository(m_db);
    // Another writer on the same database (a second process) can win every race while it writes
    // in a loop: after each lost race this one waits a random moment, so it gets a turn, and it
    // gives up only after a few seconds of losing.
    const QDeadlineTimer patience(std::chrono::seconds(5));
    for (int attempt = 1;; ++attempt) {
        if (!m_head) {
            auto head = repository.head();
            if (!head) {
                qWarning("audit: reading the last line failed: %s", qPrintable(head.error().text()));
                return std::unexpected(head.error());
            }
            m_head = *head;
        }
        auto appended = repository.appendAfter(*m_head, lines);
        if (appended) {
            m_head = AuditRepository::Head{appended->last().seq, appended->last().hash};
            return {};
        }
        // Conflict: another writer appended since; read where the log ends now and link on.
        m_head.reset();
        if (appended.error().code != ErrorCode::Conflict || patience.hasExpired()) {
            qWarning("audit: writing %lld line(s) failed after %d attempt(s): %s", qlonglong(lines.size()), attempt,
                     qPrintable(appended.error().text()));
            return std::unexpected(appended.error());
        }
        const auto pauseUs = static_cast<unsigned long>(QRandomGenerator::global()->bounded(100, 200));
        QThread::usleep(pauseUs * static_cast<unsigned long>(std::min(attempt, 20)));
    }
}

QString AuditLog::sourceNetwork(const QString &source)
{
    QHostAddress address;
    if (!address.setAddress(source))
        return source.left(100);
    bool v4 = false;
    const quint32 ip4 = address.toIPv4Address(&v4);
    if (v4)
        return QHostAddress(ip4 & 0xffffff00u).toString() + QStringLiteral("/24");
    Q_IPV6ADDR ip6 = address.toIPv6Address();
    for (int i = 8; i < 16; ++i)
        ip6[i] = 0;
    return QHostAddress(ip6).toString() + QStringLiteral("/64");
}

QList<AuditLog::RefusalLine> AuditLog::takeExpiredRefusalsLocked(qint64 now, bool force)
{
    QList<RefusalLine> lines;
    for (auto it = m_refusals.begin(); it != m_refusals.end();) {
        if (!force && it->windowStartMs + RefusalWindowMs > now) {
            ++it;
            continue;
        }
        if (it->suppressed > 0)
            lines.append(RefusalLine{it->action, it->object,
                                     QJsonObject{{QStringLiteral("reason"), QStringLiteral("repeated")},
                                                 {QStringLiteral("count"), it->suppressed},
                                                 {QStringLiteral("network"), it->network},
                                                 {QStringLiteral("fromMs"), it->windowStartMs},
                                                 {QStringLiteral("toMs"), it->lastMs}}});
        it = m_refusals.erase(it);
    }
    if (m_refusalWindowStartMs >= 0 && (force || m_refusalWindowStartMs + RefusalWindowMs <= now)) {
        if (m_refusalsSuppressed > 0)
            lines.append(RefusalLine{QStringLiteral("audit.refusals_suppressed"), QStringLiteral("audit"),
                                     QJsonObject{{QStringLiteral("count"), m_refusalsSuppressed},
                                                 {QStringLiteral("fromMs"), m_refusalWindowStartMs},
                                                 {QStringLiteral("toMs"), now}}});
        m_refusalWindowStartMs = -1;
        m_refusalLines = 0;
        m_refusalsSuppressed = 0;
    }
    return lines;
}

Status AuditLog::recordUnauthenticated(const Actor &actor, const QString &action, const QString &object,
                                       const QJsonObject &detail)
{
    const qint64 now = m_clock.nowMs();
    const QString network = sourceNetwork(actor.source);
    bool writeThis = false;
    QList<RefusalLine> summaries;
    {
        QMutexLocker lock(&m_refusalMutex);
        summaries = takeExpiredRefusalsLocked(now, false);
        if (m_refusalWindowStartMs < 0)
            m_refusalWindowStartMs = now;
        const QString key = action + QLatin1Char(' ') + network + QLatin1Char(' ') + object;
        if (auto it = m_refusals.find(key); it != m_refusals.end()) {
            ++it->suppressed;
            it->lastMs = now;
        } else if (m_refusalLines >= MaxRefusalLinesPerWindow) {
            ++m_refusalsSuppressed;
        } else {
            ++m_refusalLines;
            m_refusals.insert(key, RefusalCount{action, object, network, now, 0, now});
            writeThis = true;
        }
    }
    const Actor summaryActor{QStringLiteral("system:audit"), actor.source, {}};
    for (const RefusalLine &line : std::as_const(summaries))
        if (Status ok = record(summaryActor, line.action, line.object, QStringLiteral("denied"), line.detail); !ok)
            return ok;
    if (writeThis)
        return record(actor, action, object, QStringLiteral("denied"), detail);
    return {};
}

Status AuditLog::flushRefusals(bool force)
{
    QList<RefusalLine> summaries;
    {
        QMutexLocker lock(&m_refusalMutex);
        summaries = takeExpiredRefusalsLocked(m_clock.nowMs(), force);
    }
    for (const RefusalLine &line : std::as_const(summaries))
        if (Status ok = record(Actor{QStringLiteral("system:audit"), QStringLiteral("engine"), {}}, line.action,
                               line.object, QStringLiteral("denied"), line.detail);
            !ok)
            return ok;
    return {};
}

} // namespace pando::core
