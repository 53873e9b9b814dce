#include "cursorstore.h"

#include "core/state/sql.h"

using namespace Qt::StringLiterals;

namespace pando::core {

Result<SinkCursor> SinkCursorStore::cursor(const QString &sink)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(),
                         u"SELECT last_seq, updated_ms, last_error FROM audit_sink_cursors WHERE sink = ?"_s, {sink},
                         u"read the cursor of audit sink "_s + sink);
    if (!q)
        return std::unexpected(q.error());
    SinkCursor cursor;
    if (q->next()) {
        cursor.lastSeq = q->value(0).toLongLong();
        cursor.updatedMs = q->value(1).toLongLong();
        cursor.lastError = q->value(2).toString();
    }
    return cursor;
}

Status SinkCursorStore::advance(const QString &sink, qint64 seq, qint64 nowMs)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    // CASE rather than GREATEST/MAX(a, b): the same text runs on SQLite and PostgreSQL.
    auto q = detail::run(*db, m_db.isPostgres(),
                         u"INSERT INTO audit_sink_cursors (sink, last_seq, updated_ms, last_error) VALUES (?, ?, ?, '')"
                         " ON CONFLICT (sink) DO UPDATE SET"
                         " last_seq = CASE WHEN excluded.last_seq > audit_sink_cursors.last_seq"
                         " THEN excluded.last_seq ELSE audit_sink_cursors.last_seq END,"
                         " updated_ms = excluded.updated_ms, last_error = ''"_s,
                         {sink, seq, nowMs}, u"move the cursor of audit sink "_s + sink);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Status SinkCursorStore::setError(const QString &sink, const QString &error, qint64 nowMs)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(),
                         u"INSERT INTO audit_sink_cursors (sink, last_seq, updated_ms, last_error) VALUES (?, 0, ?, ?)"
                         " ON CONFLICT (sink) DO UPDATE SET updated_ms = excluded.updated_ms,"
                         " last_error = excluded.last_error"_s,
                         {sink, nowMs, detail::text(error)}, u"keep the last error of audit sink "_s + sink);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Result<QList<AuditRecord>> SinkCursorStore::linesAfter(qint64 after, int limit)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(),
                         u"SELECT seq, time_ms, actor, action, object, outcome, detail, request_id, source, prev_hash,"
                         " hash FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?"_s,
                         {after, limit}, u"read the audit lines after "_s + QString::number(after));
    if (!q)
        return std::unexpected(q.error());
    QList<AuditRecord> lines;
    while (q->next()) {
        AuditRecord line;
        line.seq = q->value(0).toLongLong();
        line.timeMs = q->value(1).toLongLong();
        line.actor = q->value(2).toString();
        line.action = q->value(3).toString();
        line.object = q->value(4).toString();
        line.outcome = q->value(5).toString();
        line.detail = q->value(6).toString();
        line.requestId = q->value(7).toString();
        line.source = q->value(8).toString();
        line.prevHash = q->value(9).toString();
        line.hash = q->value(10).toString();
        lines.append(line);
    }
    return lines;
}

Result<qint64> SinkCursorStore::newestSeq()
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(), u"SELECT COALESCE(MAX(seq), 0) FROM audit_log"_s, {},
                         u"read the newest audit seq"_s);
    if (!q)
        return std::unexpected(q.error());
    return q->next() ? q->value(0).toLongLong() : 0;
}

} // namespace pando::core
