#include "auditlog.h"

#include "core/state/repositories.h"

#include <QJsonDocument>

namespace pando::core {

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
    // This caller commits everything waiting, its own line included.
    m_committing = true;
    const QList<std::shared_ptr<Pending>> batch = std::exchange(m_queue, {});
    lock.unlock();
    QList<AuditRecord> lines;
    for (const auto &p : batch)
        lines.append(p->line);
    auto appended = AuditRepository(m_db).appendBatch(lines);
    lock.relock();
    for (const auto &p : batch) {
        p->done = true;
        p->result = appended ? Status{} : Status{std::unexpected(appended.error())};
    }
    m_committing = false;
    m_committed.wakeAll();
    const std::function<void()> hook = m_hook;
    lock.unlock();
    if (appended && hook)
        hook();
    if (!appended)
        qWarning("audit: writing %lld line(s) failed: %s", qlonglong(batch.size()),
                 qPrintable(appended.error().text()));
    return mine->result;
}

} // namespace pando::core
