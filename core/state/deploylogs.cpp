// A deploy's output in the store: rows of deploy_step_logs while the deploy runs (written in
// batches by core/deploy's StepLog), then, once it ended, one compressed row per step in
// deploy_log_archives; after the install's retention the data goes and the row says when.
// Build output is repetitive text: zlib keeps a fifth of it or less (tests/core/state: 3000 lines
// of pip install output, 164 KB of text, in 31 KB).

#include "repositories.h"

#include "sql.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlQuery>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

// The statuses of a deploy that ended (isFinished), for SQL.
QString finishedStatuses()
{
    QStringList words;
    for (DeployStatus status :
         {DeployStatus::Succeeded, DeployStatus::Failed, DeployStatus::Cancelled, DeployStatus::Rejected}) {
        Q_ASSERT(isFinished(status));
        words << u"'"_s + toString(status) + u"'"_s;
    }
    return words.join(u", "_s);
}

QByteArray packLines(const QList<StepLogLine> &lines)
{
    QJsonArray array;
    for (const StepLogLine &line : lines)
        array.append(QJsonArray{line.line, line.timeMs, line.stderrStream ? 1 : 0, line.text});
    return QJsonDocument(array).toJson(QJsonDocument::Compact);
}

Result<QList<StepLogLine>> unpackLines(const QByteArray &data, int seq, const QString &deployId)
{
    const QByteArray raw = qUncompress(data);
    QJsonParseError parsed;
    const QJsonDocument document = QJsonDocument::fromJson(raw, &parsed);
    if (raw.isEmpty() || parsed.error != QJsonParseError::NoError || !document.isArray())
        return fail(ErrorCode::Internal, u"the kept output of step %1 cannot be read"_s.arg(seq),
                    u"deploy "_s + deployId);
    QList<StepLogLine> lines;
    for (const QJsonValue value : document.array()) {
        const QJsonArray fields = value.toArray();
        lines.append({seq, fields.at(0).toInt(), qint64(fields.at(1).toDouble()), fields.at(2).toInt() != 0,
                      fields.at(3).toString()});
    }
    return lines;
}

} // namespace

Status DeployRepository::appendStepLog(const QString &deployId, const QList<StepLogLine> &lines)
{
    if (lines.isEmpty())
        return {};
    const QString what = u"keep the output of deploy "_s + deployId;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    for (const StepLogLine &l : lines) {
        auto q = tx->run(
            u"INSERT INTO deploy_step_logs (deploy_id, seq, line, time_ms, stderr, text)"
            " VALUES (?, ?, ?, ?, ?, ?)"_s,
            {detail::text(deployId), l.seq, l.line, l.timeMs, l.stderrStream ? 1 : 0, detail::text(l.text)}, what);
        if (!q)
            return std::unexpected(q.error());
    }
    return tx->commit();
}

Result<QList<StepLogLine>> DeployRepository::stepLog(const QString &deployId, int seq, int afterLine, int limit)
{
    const bool oneStep = seq >= 0;
    const QString what = u"read the output of deploy "_s + deployId;
    auto q = detail::run(m_db,
                         u"SELECT seq, line, time_ms, stderr, text FROM deploy_step_logs WHERE deploy_id = ?"_s +
                             (oneStep ? u" AND seq = ? AND line > ?"_s : QString()) + u" ORDER BY seq, line LIMIT ?"_s,
                         oneStep ? QVariantList{detail::text(deployId), seq, afterLine, limit}
                                 : QVariantList{detail::text(deployId), limit},
                         what);
    if (!q)
        return std::unexpected(q.error());
    QList<StepLogLine> lines;
    while (q->next())
        lines.append({q->value(0).toInt(), q->value(1).toInt(), q->value(2).toLongLong(), q->value(3).toInt() != 0,
                      q->value(4).toString()});
    if (!lines.isEmpty())
        return lines;
    // A deploy that ended keeps its output compressed, a step to a row.
    auto kept =
        detail::run(m_db,
                    u"SELECT seq, data FROM deploy_log_archives WHERE deploy_id = ? AND data IS NOT NULL"_s +
                        (oneStep ? u" AND seq = ?"_s : QString()) + u" ORDER BY seq"_s,
                    oneStep ? QVariantList{detail::text(deployId), seq} : QVariantList{detail::text(deployId)}, what);
    if (!kept)
        return std::unexpected(kept.error());
    while (kept->next() && lines.size() < limit) {
        auto step = unpackLines(kept->value(1).toByteArray(), kept->value(0).toInt(), deployId);
        if (!step)
            return std::unexpected(step.error());
        for (const StepLogLine &line : std::as_const(*step)) {
            if (oneStep && line.line <= afterLine)
                continue;
            if (lines.size() >= limit)
                break;
            lines.append(line);
        }
    }
    return lines;
}

Result<QStringList> DeployRepository::outputToArchive(qint64 finishedBeforeMs, int limit)
{
    auto q = detail::run(m_db,
                         u"SELECT d.id FROM deploys d WHERE d.finished_ms > 0 AND d.finished_ms < ?"
                         " AND d.status IN ("_s +
                             finishedStatuses() +
                             u") AND EXISTS (SELECT 1 FROM deploy_step_logs l WHERE l.deploy_id = d.id)"
                             " ORDER BY d.finished_ms LIMIT ?"_s,
                         {finishedBeforeMs, limit}, u"find the output of finished deploys"_s);
    if (!q)
        return std::unexpected(q.error());
    QStringList ids;
    while (q->next())
        ids << q->value(0).toString();
    return ids;
}

Status DeployRepository::archiveStepLogs(const QString &deployId)
{
    const QString what = u"compress the output of deploy "_s + deployId;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto q = tx->run(u"SELECT seq, line, time_ms, stderr, text FROM deploy_step_logs WHERE deploy_id = ?"
                     " ORDER BY seq, line"_s,
                     {detail::text(deployId)}, what);
    if (!q)
        return std::unexpected(q.error());
    QMap<int, QList<StepLogLine>> steps;
    while (q->next())
        steps[q->value(0).toInt()].append({q->value(0).toInt(), q->value(1).toInt(), q->value(2).toLongLong(),
                                           q->value(3).toInt() != 0, q->value(4).toString()});
    for (auto it = steps.cbegin(); it != steps.cend(); ++it) {
        // A step archived before (lines written after an earlier archive) gets its lines together.
        auto earlier = tx->run(u"SELECT data FROM deploy_log_archives WHERE deploy_id = ? AND seq = ?"
                               " AND data IS NOT NULL"_s,
                               {detail::text(deployId), it.key()}, what);
        if (!earlier)
            return std::unexpected(earlier.error());
        QList<StepLogLine> lines = it.value();
        if (earlier->next()) {
            auto before = unpackLines(earlier->value(0).toByteArray(), it.key(), deployId);
            if (!before)
                return std::unexpected(before.error());
            lines = *before + lines;
        }
        qint64 textBytes = 0;
        for (const StepLogLine &line : std::as_const(lines))
            textBytes += line.text.toUtf8().size();
        auto removed = tx->run(u"DELETE FROM deploy_log_archives WHERE deploy_id = ? AND seq = ?"_s,
                               {detail::text(deployId), it.key()}, what);
        if (!removed)
            return std::unexpected(removed.error());
        auto stored = tx->run(
            u"INSERT INTO deploy_log_archives (deploy_id, seq, lines, raw_bytes, data)"
            " VALUES (?, ?, ?, ?, ?)"_s,
            {detail::text(deployId), it.key(), qint64(lines.size()), textBytes, qCompress(packLines(lines), 9)}, what);
        if (!stored)
            return std::unexpected(stored.error());
    }
    auto cleared = tx->run(u"DELETE FROM deploy_step_logs WHERE deploy_id = ?"_s, {detail::text(deployId)}, what);
    if (!cleared)
        return std::unexpected(cleared.error());
    return tx->commit();
}

Result<int> DeployRepository::pruneStepLogs(qint64 finishedBeforeMs, qint64 nowMs)
{
    const QString what = u"remove the output of deploys that ended before %1"_s.arg(finishedBeforeMs);
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    // The output of the version an app serves stays while it serves.
    const QString old =
        u"SELECT d.id FROM deploys d WHERE d.finished_ms > 0 AND d.finished_ms < ? AND d.status IN ("_s +
        finishedStatuses() + u") AND d.id NOT IN (SELECT current_deploy FROM apps)"_s;
    auto counted = tx->run(u"SELECT COUNT(DISTINCT deploy_id) FROM deploy_log_archives WHERE pruned_ms = 0"
                           " AND deploy_id IN ("_s +
                               old + u")"_s,
                           {finishedBeforeMs}, what);
    if (!counted)
        return std::unexpected(counted.error());
    const int count = counted->next() ? counted->value(0).toInt() : 0;
    auto pruned = tx->run(u"UPDATE deploy_log_archives SET data = NULL, pruned_ms = ? WHERE pruned_ms = 0"
                          " AND deploy_id IN ("_s +
                              old + u")"_s,
                          {nowMs, finishedBeforeMs}, what);
    if (!pruned)
        return std::unexpected(pruned.error());
    // Rows not archived yet (a sweep that has not come by) go too.
    auto rows =
        tx->run(u"DELETE FROM deploy_step_logs WHERE deploy_id IN ("_s + old + u")"_s, {finishedBeforeMs}, what);
    if (!rows)
        return std::unexpected(rows.error());
    if (auto committed = tx->commit(); !committed)
        return std::unexpected(committed.error());
    return count;
}

Result<qint64> DeployRepository::stepLogRemovedMs(const QString &deployId)
{
    auto q = detail::run(m_db, u"SELECT MAX(pruned_ms) FROM deploy_log_archives WHERE deploy_id = ?"_s,
                         {detail::text(deployId)}, u"read the output of deploy "_s + deployId);
    if (!q)
        return std::unexpected(q.error());
    return q->next() ? q->value(0).toLongLong() : 0;
}

Result<DeployRepository::OutputSize> DeployRepository::outputSize(const QString &deployId)
{
    const QString what = u"measure the output of deploy "_s + deployId;
    OutputSize size;
    auto rows = detail::run(m_db,
                            u"SELECT COUNT(*), COALESCE(SUM(LENGTH(text)), 0) FROM deploy_step_logs"
                            " WHERE deploy_id = ?"_s,
                            {detail::text(deployId)}, what);
    if (!rows)
        return std::unexpected(rows.error());
    if (rows->next()) {
        size.lines = rows->value(0).toLongLong();
        size.rawBytes = rows->value(1).toLongLong();
        size.storedBytes = size.rawBytes;
    }
    auto kept = detail::run(m_db,
                            u"SELECT COALESCE(SUM(lines), 0), COALESCE(SUM(raw_bytes), 0),"
                            " COALESCE(SUM(LENGTH(data)), 0) FROM deploy_log_archives WHERE deploy_id = ?"_s,
                            {detail::text(deployId)}, what);
    if (!kept)
        return std::unexpected(kept.error());
    if (kept->next()) {
        size.lines += kept->value(0).toLongLong();
        size.rawBytes += kept->value(1).toLongLong();
        size.storedBytes += kept->value(2).toLongLong();
    }
    return size;
}

} // namespace pando::core
