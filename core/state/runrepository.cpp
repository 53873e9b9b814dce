// Runs: the pipelines' durable queue, their step trees, their events and the inputs they used.
#include "pipelinerepositories.h"

#include "sql.h"

#include <QRandomGenerator>
#include <QSet>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

const QString kRunColumns = u"id, pipeline, job, number, status, trigger, actor, inputs_json, config_version, owner,"
                            " error, created_ms, started_ms, finished_ms, log_removed_ms, force_run"_s;
constexpr int kRunColumnCount = 16; // what runFrom reads; a query's own columns come after
const QString kRunStepColumns = u"run_id, step_id, parent_id, seq, name, kind, status, hash, attempt, exit_code, error,"
                                " started_ms, finished_ms"_s;

// Whether a run of job may start while runningOf (job → running runs) run. A job the settings
// do not list runs one run at a time.
bool mayStart(const QString &job, const QMap<QString, JobSettings> &jobs, const QHash<QString, int> &runningOf)
{
    const auto settings = jobs.constFind(job);
    if (settings == jobs.cend())
        return runningOf.value(job) == 0;
    if (settings->maxInFlight > 0 && runningOf.value(job) >= settings->maxInFlight)
        return false;
    for (const QString &group : settings->serialGroups) {
        for (auto other = jobs.begin(); other != jobs.end(); ++other)
            if (other->serialGroups.contains(group) && runningOf.value(other.key()) > 0)
                return false;
    }
    return true;
}

Result<RunRecord> runFrom(const QSqlQuery &q)
{
    RunRecord r;
    r.id = q.value(0).toString();
    r.pipeline = q.value(1).toString();
    r.job = q.value(2).toString();
    r.number = q.value(3).toInt();
    auto status = detail::word<RunStatus>(q.value(4), u"runs.status"_s, u"run "_s + r.id);
    if (!status)
        return std::unexpected(status.error());
    r.status = *status;
    r.trigger = q.value(5).toString();
    r.actor = q.value(6).toString();
    r.inputsJson = q.value(7).toString();
    r.configVersion = q.value(8).toInt();
    r.owner = q.value(9).toString();
    r.error = q.value(10).toString();
    r.createdMs = q.value(11).toLongLong();
    r.startedMs = q.value(12).toLongLong();
    r.finishedMs = q.value(13).toLongLong();
    r.logRemovedMs = q.value(14).toLongLong();
    r.force = q.value(15).toInt() != 0;
    return r;
}

Result<RunStepRecord> runStepFrom(const QSqlQuery &q)
{
    RunStepRecord s;
    s.runId = q.value(0).toString();
    s.stepId = q.value(1).toString();
    s.parentId = q.value(2).toString();
    s.seq = q.value(3).toInt();
    s.name = q.value(4).toString();
    s.kind = q.value(5).toString();
    auto status =
        detail::word<RunStepStatus>(q.value(6), u"run_steps.status"_s, u"step %1 of run %2"_s.arg(s.stepId, s.runId));
    if (!status)
        return std::unexpected(status.error());
    s.status = *status;
    s.hash = q.value(7).toString();
    s.attempt = q.value(8).toInt();
    s.exitCode = q.value(9).toInt();
    s.error = q.value(10).toString();
    s.startedMs = q.value(11).toLongLong();
    s.finishedMs = q.value(12).toLongLong();
    return s;
}

Result<QList<RunRecord>> selectRuns(Database &db, const QString &tail, const QVariantList &values, const QString &what)
{
    // Whether a step waits for approval comes along: the lists show such a run as waiting.
    QVariantList all{toString(RunStepStatus::Waiting)};
    all += values;
    auto q = detail::run(db,
                         u"SELECT "_s + kRunColumns +
                             u", EXISTS (SELECT 1 FROM run_steps s WHERE s.run_id = runs.id AND s.status = ?)"
                             " FROM runs "_s +
                             tail,
                         all, what);
    if (!q)
        return std::unexpected(q.error());
    QList<RunRecord> runs;
    while (q->next()) {
        auto run = runFrom(*q);
        if (!run)
            return std::unexpected(run.error());
        run->waiting = q->value(kRunColumnCount).toBool(); // the EXISTS column after kRunColumns
        runs.append(*run);
    }
    return runs;
}

QString newRunId()
{
    return u"r%1"_s.arg(QRandomGenerator::system()->generate64() & 0xffffffffffffULL, 12, 16, QLatin1Char('0'));
}

} // namespace

Result<RunRecord> RunRepository::enqueue(RunRecord run)
{
    const QString what = u"queue a run of "_s + run.pipeline + u'/' + run.job;
    return detail::retryOnConflict([&]() -> Result<RunRecord> {
        auto tx = detail::Transaction::begin(m_db, what);
        if (!tx)
            return std::unexpected(tx.error());
        auto last = tx->run(u"SELECT COALESCE(MAX(number), 0) FROM runs WHERE pipeline = ? AND job = ?"_s,
                            {detail::text(run.pipeline), detail::text(run.job)}, what);
        if (!last)
            return std::unexpected(last.error());
        RunRecord r = run;
        r.id = newRunId();
        r.number = (last->next() ? last->value(0).toInt() : 0) + 1;
        r.status = RunStatus::Queued;
        // The queue's order across jobs: runs start in the order they were queued.
        auto seq = tx->run(u"SELECT COALESCE(MAX(queue_seq), 0) + 1 FROM runs"_s, {}, what);
        if (!seq)
            return std::unexpected(seq.error());
        const qint64 queueSeq = seq->next() ? seq->value(0).toLongLong() : 1;
        auto q = tx->run(u"INSERT INTO runs ("_s + kRunColumns +
                             u", queue_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '', '', ?, 0, 0, 0, ?, ?)"_s,
                         {detail::text(r.id), detail::text(r.pipeline), detail::text(r.job), r.number,
                          toString(r.status), detail::text(r.trigger), detail::text(r.actor),
                          detail::text(r.inputsJson), r.configVersion, r.createdMs, r.force ? 1 : 0, queueSeq},
                         what);
        if (!q)
            return std::unexpected(q.error());
        if (auto ok = tx->commit(); !ok)
            return std::unexpected(ok.error());
        return r;
    });
}

Result<RunRecord> RunRepository::find(const QString &id)
{
    auto runs = selectRuns(m_db, u"WHERE id = ?"_s, {detail::text(id)}, u"find run "_s + id);
    if (!runs)
        return std::unexpected(runs.error());
    if (runs->isEmpty())
        return fail(ErrorCode::NotFound, u"no run "_s + id, u"runs"_s);
    return runs->first();
}

Result<QList<RunRecord>> RunRepository::list(const QString &pipeline, const QString &job, int limit)
{
    QString where;
    QVariantList values;
    if (!pipeline.isEmpty()) {
        where = u"WHERE pipeline = ?"_s;
        values << detail::text(pipeline);
        if (!job.isEmpty()) {
            where += u" AND job = ?"_s;
            values << detail::text(job);
        }
    }
    values << limit;
    return selectRuns(m_db, where + u" ORDER BY created_ms DESC, number DESC LIMIT ?"_s, values, u"list runs"_s);
}

Result<std::optional<RunRecord>> RunRepository::claimNext(const QString &pipeline, int maxRuns, const QString &owner,
                                                          qint64 nowMs)
{
    const QString what = u"claim a run of "_s + pipeline;
    for (int attempt = 0; attempt < 100; ++attempt) {
        auto tx = detail::Transaction::begin(m_db, what);
        if (!tx)
            return std::unexpected(tx.error());
        // As for jobs: claimers of one table serialise on PostgreSQL, so the count of running
        // runs is still true when the UPDATE commits.
        if (tx->isPostgres())
            if (auto lock = tx->run(u"LOCK TABLE runs IN SHARE ROW EXCLUSIVE MODE"_s, {}, what); !lock)
                return std::unexpected(lock.error());
        const auto none = [&]() -> Result<std::optional<RunRecord>> {
            if (auto ok = tx->commit(); !ok)
                return std::unexpected(ok.error());
            return std::optional<RunRecord>{};
        };
        // Paused is read inside the claim, so a run queued after a pause never slips through.
        auto row =
            tx->run(u"SELECT paused, job_settings FROM pipelines WHERE name = ?"_s, {detail::text(pipeline)}, what);
        if (!row)
            return std::unexpected(row.error());
        if (!row->next() || row->value(0).toInt() != 0)
            return none();
        const QMap<QString, JobSettings> jobs = detail::jobSettingsFrom(row->value(1).toString());
        // And so are paused jobs, whose queued runs wait.
        auto pausedRows = tx->run(u"SELECT job FROM job_pauses WHERE pipeline = ?"_s, {detail::text(pipeline)}, what);
        if (!pausedRows)
            return std::unexpected(pausedRows.error());
        QSet<QString> pausedJobs;
        while (pausedRows->next())
            pausedJobs.insert(pausedRows->value(0).toString());
        auto running = tx->run(u"SELECT job FROM runs WHERE pipeline = ? AND status = ?"_s,
                               {detail::text(pipeline), toString(RunStatus::Running)}, what);
        if (!running)
            return std::unexpected(running.error());
        QHash<QString, int> runningOf; // job → its running runs
        int runningNow = 0;
        while (running->next()) {
            ++runningOf[running->value(0).toString()];
            ++runningNow;
        }
        if (maxRuns > 0 && runningNow >= maxRuns)
            return none();
        // The oldest queued run its job's max_in_flight and serial groups let start: a run a
        // limit holds back keeps its place, and later runs of other jobs go past it.
        auto queued = tx->run(u"SELECT "_s + kRunColumns +
                                  u" FROM runs WHERE pipeline = ? AND status = ? ORDER BY queue_seq LIMIT 1000"_s,
                              {detail::text(pipeline), toString(RunStatus::Queued)}, what);
        if (!queued)
            return std::unexpected(queued.error());
        std::optional<RunRecord> pick;
        while (!pick && queued->next()) {
            auto candidate = runFrom(*queued);
            if (!candidate)
                return std::unexpected(candidate.error());
            if (!pausedJobs.contains(candidate->job) && mayStart(candidate->job, jobs, runningOf))
                pick = *candidate;
        }
        if (!pick)
            return none();
        RunRecord run = *pick;
        auto update = tx->run(u"UPDATE runs SET status = ?, owner = ?, started_ms = ?"
                              " WHERE id = ? AND status = ?"_s,
                              {toString(RunStatus::Running), detail::text(owner), nowMs, detail::text(run.id),
                               toString(RunStatus::Queued)},
                              what);
        if (!update)
            return std::unexpected(update.error());
        if (update->numRowsAffected() != 1)
            continue;
        if (auto ok = tx->commit(); !ok) {
            if (ok.error().code == ErrorCode::Conflict)
                continue;
            return std::unexpected(ok.error());
        }
        run.status = RunStatus::Running;
        run.owner = owner;
        run.startedMs = nowMs;
        return std::optional<RunRecord>{run};
    }
    return fail(ErrorCode::Unavailable, u"gave up claiming a run after 100 lost races"_s, u"runs"_s);
}

Result<QList<RunRecord>> RunRepository::abandoned(const QString &owner)
{
    return selectRuns(m_db, u"WHERE status = ? AND owner <> ? ORDER BY created_ms"_s,
                      {toString(RunStatus::Running), detail::text(owner)}, u"find abandoned runs"_s);
}

Result<QList<RunRecord>> RunRepository::withStatus(RunStatus status)
{
    return selectRuns(m_db, u"WHERE status = ? ORDER BY created_ms"_s, {toString(status)},
                      u"list "_s + toString(status) + u" runs"_s);
}

Status RunRepository::finish(const QString &id, RunStatus status, const QString &error, qint64 nowMs)
{
    auto q = detail::run(m_db, u"UPDATE runs SET status = ?, error = ?, finished_ms = ? WHERE id = ?"_s,
                         {toString(status), detail::text(error), nowMs, detail::text(id)}, u"finish run "_s + id);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"no run "_s + id, u"runs"_s);
    return {};
}

Result<int> RunRepository::removeOldLogs(const QString &pipeline, const QString &job, const JobSettings &settings,
                                         qint64 nowMs)
{
    if (settings.keepsEveryLog())
        return 0;
    const QString what = u"remove old logs of "_s + pipeline + u'/' + job;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto finished = tx->run(
        u"SELECT id, status, finished_ms, log_removed_ms FROM runs"
        " WHERE pipeline = ? AND job = ? AND status NOT IN (?, ?) ORDER BY number DESC"_s,
        {detail::text(pipeline), detail::text(job), toString(RunStatus::Queued), toString(RunStatus::Running)}, what);
    if (!finished)
        return std::unexpected(finished.error());
    const qint64 oldest = settings.keepLogsForDays > 0 ? nowMs - qint64(settings.keepLogsForDays) * 86'400'000 : 0;
    QStringList remove;
    int newer = 0;     // finished runs newer than this one
    int succeeded = 0; // succeeded runs kept so far, newest first
    while (finished->next()) {
        const bool success = finished->value(1).toString() == toString(RunStatus::Succeeded);
        const bool pastCount = settings.keepLogsOfRuns > 0 && newer >= settings.keepLogsOfRuns;
        const bool pastAge = oldest > 0 && finished->value(2).toLongLong() < oldest;
        ++newer;
        if (success && succeeded < settings.keepSucceededLogs) {
            ++succeeded; // kept whatever the other limits say
            continue;
        }
        if ((pastCount || pastAge) && finished->value(3).toLongLong() == 0)
            remove << finished->value(0).toString();
    }
    for (const QString &id : std::as_const(remove)) {
        // The output goes; the step events stay, so a watch still shows what ran and how it ended.
        if (auto q =
                tx->run(u"DELETE FROM run_events WHERE run_id = ? AND type = 'output'"_s, {detail::text(id)}, what);
            !q)
            return std::unexpected(q.error());
        if (auto q = tx->run(u"UPDATE runs SET log_removed_ms = ? WHERE id = ?"_s, {nowMs, detail::text(id)}, what); !q)
            return std::unexpected(q.error());
    }
    if (auto ok = tx->commit(); !ok)
        return std::unexpected(ok.error());
    return int(remove.size());
}

Status RunRepository::requeue(const QString &id)
{
    const QString what = u"requeue run "_s + id;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    for (const QString &sql :
         {u"DELETE FROM run_steps WHERE run_id = ?"_s, u"DELETE FROM run_events WHERE run_id = ?"_s,
          u"DELETE FROM run_inputs WHERE run_id = ?"_s, u"DELETE FROM run_outputs WHERE run_id = ?"_s}) {
        if (auto q = tx->run(sql, {detail::text(id)}, what); !q)
            return std::unexpected(q.error());
    }
    if (auto q = tx->run(u"UPDATE runs SET status = ?, owner = '', started_ms = 0 WHERE id = ?"_s,
                         {toString(RunStatus::Queued), detail::text(id)}, what);
        !q)
        return std::unexpected(q.error());
    return tx->commit();
}

Status RunRepository::upsertStep(const RunStepRecord &s)
{
    const QString what = u"record step "_s + s.stepId + u" of run "_s + s.runId;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    const QVariantList fields{detail::text(s.parentId),
                              s.seq,
                              detail::text(s.name),
                              detail::text(s.kind),
                              toString(s.status),
                              detail::text(s.hash),
                              s.attempt,
                              s.exitCode,
                              detail::text(s.error),
                              s.startedMs,
                              s.finishedMs};
    auto q =
        tx->run(u"UPDATE run_steps SET parent_id = ?, seq = ?, name = ?, kind = ?, status = ?, hash = ?, attempt = ?,"
                " exit_code = ?, error = ?, started_ms = ?, finished_ms = ? WHERE run_id = ? AND step_id = ?"_s,
                QVariantList(fields) << detail::text(s.runId) << detail::text(s.stepId), what);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0) {
        auto insert = tx->run(u"INSERT INTO run_steps ("_s + kRunStepColumns +
                                  u") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"_s,
                              QVariantList{detail::text(s.runId), detail::text(s.stepId)} + fields, what);
        if (!insert)
            return std::unexpected(insert.error());
    }
    return tx->commit();
}

Result<QList<RunStepRecord>> RunRepository::steps(const QString &runId)
{
    auto q =
        detail::run(m_db, u"SELECT "_s + kRunStepColumns + u" FROM run_steps WHERE run_id = ? ORDER BY seq, step_id"_s,
                    {detail::text(runId)}, u"list steps of run "_s + runId);
    if (!q)
        return std::unexpected(q.error());
    QList<RunStepRecord> list;
    while (q->next()) {
        auto step = runStepFrom(*q);
        if (!step)
            return std::unexpected(step.error());
        list.append(*step);
    }
    return list;
}

Result<qint64> RunRepository::appendEvents(const QString &runId, const QList<RunEventRecord> &events)
{
    const QString what = u"append events to run "_s + runId;
    return detail::retryOnConflict([&]() -> Result<qint64> {
        auto tx = detail::Transaction::begin(m_db, what);
        if (!tx)
            return std::unexpected(tx.error());
        auto last =
            tx->run(u"SELECT COALESCE(MAX(seq), 0) FROM run_events WHERE run_id = ?"_s, {detail::text(runId)}, what);
        if (!last)
            return std::unexpected(last.error());
        qint64 seq = last->next() ? last->value(0).toLongLong() : 0;
        for (const RunEventRecord &e : events) {
            auto q = tx->run(
                u"INSERT INTO run_events (run_id, seq, time_ms, step_id, type, data) VALUES (?, ?, ?, ?, ?, ?)"_s,
                {detail::text(runId), ++seq, e.timeMs, detail::text(e.stepId), detail::text(e.type),
                 detail::text(e.dataJson)},
                what);
            if (!q)
                return std::unexpected(q.error());
        }
        if (auto ok = tx->commit(); !ok)
            return std::unexpected(ok.error());
        return seq;
    });
}

Result<QList<RunEventRecord>> RunRepository::events(const QString &runId, qint64 afterSeq, int limit)
{
    auto q =
        detail::run(m_db,
                    u"SELECT run_id, seq, time_ms, step_id, type, data FROM run_events WHERE run_id = ? AND seq > ?"
                    " ORDER BY seq LIMIT ?"_s,
                    {detail::text(runId), afterSeq, limit}, u"read events of run "_s + runId);
    if (!q)
        return std::unexpected(q.error());
    QList<RunEventRecord> list;
    while (q->next())
        list.append(RunEventRecord{q->value(0).toString(), q->value(1).toLongLong(), q->value(2).toLongLong(),
                                   q->value(3).toString(), q->value(4).toString(), q->value(5).toString()});
    return list;
}

Result<QStringList> RunRepository::passedVersions(const QString &pipeline, const QString &job, const QString &resource,
                                                  int limit)
{
    // What the job's succeeded runs got, and what their puts made, newest run first.
    auto q = detail::run(m_db,
                         u"SELECT v.version_json FROM (SELECT run_id, version_json FROM run_inputs WHERE resource = ?"
                         " UNION ALL SELECT run_id, version_json FROM run_outputs WHERE resource = ?) v"
                         " JOIN runs r ON r.id = v.run_id"
                         " WHERE r.pipeline = ? AND r.job = ? AND r.status = ?"
                         " ORDER BY r.finished_ms DESC, r.number DESC LIMIT ?"_s,
                         {detail::text(resource), detail::text(resource), detail::text(pipeline), detail::text(job),
                          toString(RunStatus::Succeeded), limit},
                         u"versions of "_s + resource + u" that passed "_s + job);
    if (!q)
        return std::unexpected(q.error());
    QStringList versions;
    while (q->next())
        if (const QString version = q->value(0).toString(); !versions.contains(version))
            versions.append(version);
    return versions;
}

Status RunRepository::recordOutput(const QString &runId, const QString &resource, const QString &versionJson)
{
    auto q = detail::run(m_db,
                         u"INSERT INTO run_outputs (run_id, resource, version_json) VALUES (?, ?, ?)"
                         " ON CONFLICT DO NOTHING"_s,
                         {detail::text(runId), detail::text(resource), detail::text(versionJson)},
                         u"record output "_s + resource + u" of run "_s + runId);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Status RunRepository::recordInput(const QString &runId, const QString &resource, const QString &versionJson)
{
    const QString what = u"record input "_s + resource + u" of run "_s + runId;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto q = tx->run(u"UPDATE run_inputs SET version_json = ? WHERE run_id = ? AND resource = ?"_s,
                     {detail::text(versionJson), detail::text(runId), detail::text(resource)}, what);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0) {
        auto insert = tx->run(u"INSERT INTO run_inputs (run_id, resource, version_json) VALUES (?, ?, ?)"_s,
                              {detail::text(runId), detail::text(resource), detail::text(versionJson)}, what);
        if (!insert)
            return std::unexpected(insert.error());
    }
    return tx->commit();
}

} // namespace pando::core
