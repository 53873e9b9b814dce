#pragma once
// The durable half of auditstream: each sink's cursor (the last seq it has been given) and last
// error in table audit_sink_cursors, and the audit lines after a cursor.
//
// Threading: like the repositories, usable from any thread (each has its own connection).

#include "adapters/api/error.h"
#include "core/state/database.h"
#include "core/state/records.h"

#include <QList>
#include <QString>

namespace pando::core {

struct SinkCursor {
    qint64 lastSeq = 0;
    qint64 updatedMs = 0;
    QString lastError;
};

class SinkCursorStore {
public:
    explicit SinkCursorStore(Database &db) : m_db(db) {}
    // A sink never seen yet is at 0.
    Result<SinkCursor> cursor(const QString &sink);
    // Moves the cursor forward (never back) and clears the last error.
    Status advance(const QString &sink, qint64 seq, qint64 nowMs);
    // Keeps why the last delivery failed; the cursor stays where it is.
    Status setError(const QString &sink, const QString &error, qint64 nowMs);
    // Up to limit lines with seq > after, in seq order.
    Result<QList<AuditRecord>> linesAfter(qint64 after, int limit);
    // The newest seq in the log (0 when it is empty).
    Result<qint64> newestSeq();

private:
    Database &m_db;
};

} // namespace pando::core
