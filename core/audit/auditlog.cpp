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
    auto appended = AuditRepository(m_db).append(line);
    if (!appended) {
        qWarning("audit: writing %s on %s failed: %s", qPrintable(action), qPrintable(object),
                 qPrintable(appended.error().text()));
        return std::unexpected(appended.error());
    }
    return {};
}

} // namespace pando::core
