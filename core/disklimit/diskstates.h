#pragma once
// What core/disklimit did about an app over its disk limit, kept in the state store (table
// app_disk_states, one row per app): the serving deploy it was about, stopped or warned, the
// figures and when. A row about another deploy than the serving one is stale: a new deploy
// starts with a clean slate.
//
// Threading: as the repositories in core/state: any thread, one connection per thread.

#include "adapters/api/error.h"
#include "core/state/database.h"

#include <QString>
#include <optional>

namespace pando::core::disklimit {

inline const QString ActionStopped = QStringLiteral("stopped");
inline const QString ActionWarned = QStringLiteral("warned");

struct DiskState {
    QString app;
    QString deployId;
    QString action; // ActionStopped or ActionWarned
    qint64 usedBytes = 0;
    qint64 limitBytes = 0;
    qint64 sinceMs = 0;
    // For people (the app's status reason): "stopped: wrote 23Mi, over its disk limit of 20Mi".
    QString reason() const;
};

class DiskStates {
public:
    explicit DiskStates(Database &db) : m_db(db) {}
    Result<std::optional<DiskState>> find(const QString &app);
    Status put(const DiskState &state);
    Status clear(const QString &app);

private:
    Database &m_db;
};

// Whether deployId's container of app is held stopped for its disk: the reconciler leaves it be.
bool isHeldStopped(Database &db, const QString &app, const QString &deployId);

} // namespace pando::core::disklimit
