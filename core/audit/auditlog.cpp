#include "auditlog.h"

#include "core/state/repositories.h"

#include <QJsonDocument>

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
    QMutexLocker lock(&m_mutex);
    m_queue.append(mine);
    // Wait while another caller commits; it may take this line with it.
    while (m_committing && !mine->done)
        m_committed.wait(&m_mutex);
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
        const Status written = commit(std::move(lines));
        lock.relock();
        for (const auto &p : batch) {
            p->done = true;
            p->result = written;
        }
        m_committed.wakeAll(); // the callers in this batch
        wrote = wrote || written;
    }
    m_committing = false;
    m_committed.wakeAll(); // the next caller whose line is still waiting commits
    const std::function<void()> hook = wrote ? m_hook : nullptr;
    const Status result = mine->result;
    lock.unlock();
    if (hook)
        hook();
    return result;
}

Status AuditLog::commit(QList<AuditRecord> lines)
{
    AuditRepository repository(m_db);
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
        if (appended.error().code != ErrorCode::Conflict || attempt >= 100) {
            qWarning("audit: writing %lld line(s) failed: %s", qlonglong(lines.size()),
                     qPrintable(appended.error().text()));
            return std::unexpected(appended.error());
        }
    }
}

} // namespace pando::core
