#include "repositories.h"

#include "sql.h"

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

const QString kJobColumns = u"id, kind, job_key, payload, state, owner, attempts, error, created_ms, updated_ms"_s;

JobRecord jobFrom(const QSqlQuery &q)
{
    JobRecord job;
    job.id = q.value(0).toLongLong();
    job.kind = q.value(1).toString();
    job.key = q.value(2).toString();
    job.payload = q.value(3).toString();
    job.state = q.value(4).toString();
    job.owner = q.value(5).toString();
    job.attempts = q.value(6).toInt();
    job.error = q.value(7).toString();
    job.createdMs = q.value(8).toLongLong();
    job.updatedMs = q.value(9).toLongLong();
    return job;
}

// On PostgreSQL claimers serialise on a table lock that conflicts with itself (but not with
// readers), so "no running job holds this key" is still true when the UPDATE commits. SQLite's
// BEGIN IMMEDIATE already gives one writer at a time.
Status lockJobsForClaim(detail::Transaction &tx, const QString &what)
{
    if (!tx.isPostgres())
        return {};
    auto q = tx.run(u"LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE"_s, {}, what);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

} // namespace

Result<qint64> JobRepository::enqueue(const QString &kind, const QString &key, const QString &payload, qint64 nowMs)
{
    const QString what = u"enqueue "_s + kind + u" job for "_s + key;
    // Ids come from MAX(id)+1 so the same SQL works on both drivers; two PostgreSQL writers may
    // pick the same id, and the loser's duplicate key (Conflict) sends it round again.
    return detail::retryOnConflict([&]() -> Result<qint64> {
        auto tx = detail::Transaction::begin(m_db, what);
        if (!tx)
            return std::unexpected(tx.error());
        qint64 id = 0;
        {
            auto q = tx->run(u"SELECT COALESCE(MAX(id), 0) + 1 FROM jobs"_s, {}, what);
            if (!q)
                return std::unexpected(q.error());
            id = q->next() ? q->value(0).toLongLong() : 1;
        }
        auto insert =
            tx->run(u"INSERT INTO jobs ("_s + kJobColumns + u") VALUES (?, ?, ?, ?, 'queued', '', 0, '', ?, ?)"_s,
                    {id, detail::text(kind), detail::text(key), detail::text(payload), nowMs, nowMs}, what);
        if (!insert)
            return std::unexpected(insert.error());
        if (auto ok = tx->commit(); !ok)
            return std::unexpected(ok.error());
        return id;
    });
}

Result<std::optional<JobRecord>> JobRepository::claimNext(const QString &owner, qint64 nowMs)
{
    const QString what = u"claim a job for "_s + owner;
    for (int attempt = 0; attempt < 100; ++attempt) {
        auto tx = detail::Transaction::begin(m_db, what);
        if (!tx)
            return std::unexpected(tx.error());
        if (auto ok = lockJobsForClaim(*tx, what); !ok)
            return std::unexpected(ok.error());
        std::optional<JobRecord> job;
        {
            auto q = tx->run(u"SELECT "_s + kJobColumns +
                                 u" FROM jobs j WHERE j.state = 'queued' AND NOT EXISTS"
                                 " (SELECT 1 FROM jobs r WHERE r.job_key = j.job_key AND r.state = 'running')"
                                 " ORDER BY j.created_ms, j.id LIMIT 1"_s,
                             {}, what);
            if (!q)
                return std::unexpected(q.error());
            if (q->next())
                job = jobFrom(*q);
        }
        if (!job) {
            if (auto ok = tx->commit(); !ok)
                return std::unexpected(ok.error());
            return std::optional<JobRecord>{};
        }
        auto update =
            tx->run(u"UPDATE jobs SET state = 'running', owner = ?, updated_ms = ? WHERE id = ? AND state = 'queued'"_s,
                    {detail::text(owner), nowMs, job->id}, what);
        if (!update)
            return std::unexpected(update.error());
        if (update->numRowsAffected() != 1)
            continue; // another claimer took it first; the transaction rolls back
        if (auto ok = tx->commit(); !ok) {
            if (ok.error().code == ErrorCode::Conflict)
                continue;
            return std::unexpected(ok.error());
        }
        job->state = u"running"_s;
        job->owner = owner;
        job->updatedMs = nowMs;
        return job;
    }
    return fail(ErrorCode::Unavailable, u"gave up claiming a job after 100 lost races"_s, u"jobs"_s);
}

Status JobRepository::finish(qint64 id, bool ok, const QString &error, qint64 nowMs)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(), u"UPDATE jobs SET state = ?, error = ?, updated_ms = ? WHERE id = ?"_s,
                         {ok ? u"done"_s : u"failed"_s, detail::text(error), nowMs, id},
                         u"finish job "_s + QString::number(id));
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"no job with id "_s + QString::number(id), u"jobs"_s);
    return {};
}

Result<QList<JobRecord>> JobRepository::requeueAbandoned(const QString &currentOwner, qint64 nowMs)
{
    const QString what = u"requeue jobs abandoned by owners other than "_s + currentOwner;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    if (auto ok = lockJobsForClaim(*tx, what); !ok)
        return std::unexpected(ok.error());
    QList<JobRecord> jobs;
    {
        auto q =
            tx->run(u"SELECT "_s + kJobColumns + u" FROM jobs WHERE state = 'running' AND owner <> ? ORDER BY id"_s,
                    {detail::text(currentOwner)}, what);
        if (!q)
            return std::unexpected(q.error());
        while (q->next())
            jobs.append(jobFrom(*q));
    }
    if (jobs.isEmpty()) {
        if (auto ok = tx->commit(); !ok)
            return std::unexpected(ok.error());
        return jobs;
    }
    auto update = tx->run(u"UPDATE jobs SET state = 'queued', owner = '', attempts = attempts + 1, updated_ms = ?"
                          " WHERE state = 'running' AND owner <> ?"_s,
                          {nowMs, detail::text(currentOwner)}, what);
    if (!update)
        return std::unexpected(update.error());
    if (auto ok = tx->commit(); !ok)
        return std::unexpected(ok.error());
    for (JobRecord &job : jobs) {
        job.state = u"queued"_s;
        job.owner.clear();
        job.attempts += 1;
        job.updatedMs = nowMs;
    }
    return jobs;
}

Result<JobRecord> JobRepository::find(qint64 id)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(), u"SELECT "_s + kJobColumns + u" FROM jobs WHERE id = ?"_s, {id},
                         u"find job "_s + QString::number(id));
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"no job with id "_s + QString::number(id), u"jobs"_s);
    JobRecord job = jobFrom(*q);
    q->finish();
    return job;
}

} // namespace pando::core
