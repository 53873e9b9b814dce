#pragma once
// Package audit writes the append-only, hash-chained event log: who did what to which object,
// when, from where, and how it ended. record() returns once the line is committed, so an
// action that must be audited reports success only after its line is durable.
//
// Threading: record() may be called from any thread.

#include "adapters/api/error.h"
#include "core/common/clock.h"
#include "core/state/database.h"

#include <QJsonObject>
#include <QString>

namespace pando::core {

// Who is acting: a person, a token, or the automation acting for one.
struct Actor {
    QString name = QStringLiteral("system");   // "token:admin", "system:reconciler"
    QString source = QStringLiteral("engine"); // remote address, or "engine"
    QString requestId;

    static Actor system(const QString &component)
    {
        return Actor{QStringLiteral("system:") + component, QStringLiteral("engine"), {}};
    }
};

class AuditLog {
public:
    AuditLog(Database &db, Clock &clock) : m_db(db), m_clock(clock) {}
    // outcome: "success", "failure", "denied".
    Status record(const Actor &actor, const QString &action, const QString &object, const QString &outcome,
                  const QJsonObject &detail = {});

private:
    Database &m_db;
    Clock &m_clock;
};

} // namespace pando::core
