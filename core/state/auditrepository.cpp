#include "repositories.h"

#include "sql.h"

#include <QCryptographicHash>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

const QString kAuditColumns =
    u"seq, time_ms, actor, action, object, outcome, detail, request_id, source, prev_hash, hash"_s;

AuditRecord auditFrom(const QSqlQuery &q)
{
    AuditRecord line;
    line.seq = q.value(0).toLongLong();
    line.timeMs = q.value(1).toLongLong();
    line.actor = q.value(2).toString();
    line.action = q.value(3).toString();
    line.object = q.value(4).toString();
    line.outcome = q.value(5).toString();
    line.detail = q.value(6).toString();
    line.requestId = q.value(7).toString();
    line.source = q.value(8).toString();
    line.prevHash = q.value(9).toString();
    line.hash = q.value(10).toString();
    return line;
}

void addField(QCryptographicHash &hash, const QByteArray &bytes)
{
    // Length-prefixed, so no choice of field contents can make two different lines encode alike.
    hash.addData(QByteArray::number(bytes.size()));
    hash.addData(QByteArrayView(":"));
    hash.addData(bytes);
    hash.addData(QByteArrayView(","));
}

} // namespace

QString AuditRepository::hashOf(const AuditRecord &line)
{
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(QByteArrayView("pando-audit-v1\n"));
    addField(hash, QByteArray::number(line.seq));
    addField(hash, QByteArray::number(line.timeMs));
    for (const QString *field : {&line.actor, &line.action, &line.object, &line.outcome, &line.detail, &line.requestId,
                                 &line.source, &line.prevHash})
        addField(hash, field->toUtf8());
    return QString::fromLatin1(hash.result().toHex());
}

Result<AuditRecord> AuditRepository::append(AuditRecord line)
{
    auto appended = appendBatch({std::move(line)});
    if (!appended)
        return std::unexpected(appended.error());
    return appended->first();
}

Result<QList<AuditRecord>> AuditRepository::appendBatch(QList<AuditRecord> lines)
{
    if (lines.isEmpty())
        return lines;
    const QString what =
        u"append %1 audit line(s), first %2 %3"_s.arg(lines.size()).arg(lines.first().action, lines.first().object);
    // seq is the primary key: two appenders that read the same last line cannot both insert, and
    // the loser (Conflict) reads again and chains onto the winner.
    return detail::retryOnConflict([&]() -> Result<QList<AuditRecord>> {
        auto tx = detail::Transaction::begin(m_db, what);
        if (!tx)
            return std::unexpected(tx.error());
        qint64 seq = 0;
        QString prevHash;
        {
            auto q = tx->run(u"SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1"_s, {}, what);
            if (!q)
                return std::unexpected(q.error());
            if (q->next()) {
                seq = q->value(0).toLongLong();
                prevHash = q->value(1).toString();
            }
        }
        QList<AuditRecord> written = lines;
        for (AuditRecord &line : written) {
            line.seq = ++seq;
            line.prevHash = prevHash;
            line.hash = hashOf(line);
            prevHash = line.hash;
            auto insert = tx->run(
                u"INSERT INTO audit_log ("_s + kAuditColumns + u") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"_s,
                {line.seq, line.timeMs, detail::text(line.actor), detail::text(line.action), detail::text(line.object),
                 detail::text(line.outcome), detail::text(line.detail), detail::text(line.requestId),
                 detail::text(line.source), detail::text(line.prevHash), detail::text(line.hash)},
                what);
            if (!insert)
                return std::unexpected(insert.error());
        }
        if (auto ok = tx->commit(); !ok)
            return std::unexpected(ok.error());
        return written;
    });
}

Result<AuditRepository::Head> AuditRepository::head()
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(), u"SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1"_s, {},
                         u"read the last audit line"_s);
    if (!q)
        return std::unexpected(q.error());
    Head head;
    if (q->next()) {
        head.seq = q->value(0).toLongLong();
        head.hash = q->value(1).toString();
    }
    return head;
}

Result<QList<AuditRecord>> AuditRepository::appendAfter(const Head &after, QList<AuditRecord> lines)
{
    if (lines.isEmpty())
        return lines;
    if (lines.size() > kMaxAppendAfter)
        return fail(ErrorCode::Internal,
                    u"%1 audit lines in one statement, more than %2"_s.arg(lines.size()).arg(kMaxAppendAfter),
                    u"database: append audit lines"_s);
    const QString what = u"append %1 audit line(s) after seq %2, first %3 %4"_s.arg(lines.size())
                             .arg(after.seq)
                             .arg(lines.first().action, lines.first().object);
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    // One multi-row INSERT is one (autocommit) transaction on both drivers: every line or none.
    // seq is the primary key, so a line at after.seq + 1 written by anyone else since makes
    // the whole statement fail with Conflict instead of forking the chain.
    QString sql = u"INSERT INTO audit_log ("_s + kAuditColumns + u") VALUES "_s;
    QVariantList values;
    values.reserve(lines.size() * 11);
    qint64 seq = after.seq;
    QString prevHash = after.hash;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        AuditRecord &line = lines[i];
        line.seq = ++seq;
        line.prevHash = prevHash;
        line.hash = hashOf(line);
        prevHash = line.hash;
        sql += i == 0 ? u"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"_s : u", (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"_s;
        values << line.seq << line.timeMs << detail::text(line.actor) << detail::text(line.action)
               << detail::text(line.object) << detail::text(line.outcome) << detail::text(line.detail)
               << detail::text(line.requestId) << detail::text(line.source) << detail::text(line.prevHash)
               << detail::text(line.hash);
    }
    auto insert = detail::run(*db, m_db.isPostgres(), sql, values, what);
    if (!insert)
        return std::unexpected(insert.error());
    return lines;
}

Result<QList<AuditRecord>> AuditRepository::list(const Filter &filter)
{
    if (filter.limit <= 0)
        return fail(ErrorCode::Invalid, u"limit must be positive, got "_s + QString::number(filter.limit), u"limit"_s);
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    // Only fixed condition text is joined in; every value is bound.
    QStringList where;
    QVariantList values;
    const auto match = [&](const QString &column, const QString &value) {
        if (!value.isEmpty()) {
            where.append(column + u" = ?"_s);
            values.append(value);
        }
    };
    match(u"actor"_s, filter.actor);
    match(u"action"_s, filter.action);
    match(u"object"_s, filter.object);
    if (filter.sinceMs > 0) {
        where.append(u"time_ms >= ?"_s);
        values.append(filter.sinceMs);
    }
    if (filter.untilMs > 0) {
        where.append(u"time_ms < ?"_s);
        values.append(filter.untilMs);
    }
    values.append(filter.limit);
    QString sql = u"SELECT "_s + kAuditColumns + u" FROM audit_log"_s;
    if (!where.isEmpty())
        sql += u" WHERE "_s + where.join(u" AND "_s);
    sql += u" ORDER BY seq DESC LIMIT ?"_s;
    auto q = detail::run(*db, m_db.isPostgres(), sql, values, u"list audit lines"_s);
    if (!q)
        return std::unexpected(q.error());
    QList<AuditRecord> lines;
    while (q->next())
        lines.append(auditFrom(*q));
    return lines;
}

Result<std::optional<qint64>> AuditRepository::verify()
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    // Page through in seq order so a long log is never held in memory at once.
    constexpr int kPage = 1000;
    qint64 expectedSeq = 1;
    QString prevHash = u""_s;
    for (;;) {
        auto q = detail::run(*db, m_db.isPostgres(),
                             u"SELECT "_s + kAuditColumns + u" FROM audit_log WHERE seq >= ? ORDER BY seq LIMIT ?"_s,
                             {expectedSeq, kPage}, u"verify the audit chain"_s);
        if (!q)
            return std::unexpected(q.error());
        int rows = 0;
        while (q->next()) {
            ++rows;
            const AuditRecord line = auditFrom(*q);
            // A gap names the first missing seq; a bad link or hash names the line itself.
            if (line.seq != expectedSeq)
                return std::optional<qint64>(expectedSeq);
            if (line.prevHash != prevHash || line.hash != hashOf(line))
                return std::optional<qint64>(line.seq);
            prevHash = line.hash;
            ++expectedSeq;
        }
        if (rows < kPage)
            return std::optional<qint64>{};
    }
}

} // namespace pando::core
