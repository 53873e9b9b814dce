// Pipelines, their resource versions, the step cache and sealed secrets.
#include "pipelinerepositories.h"

#include "sql.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

const QString kPipelineColumns = u"name, config_yaml, vars_yaml, config_version, paused, paused_reason, max_runs,"
                                 " consecutive_errors, created_ms, updated_ms, host_execution, previous_config_yaml,"
                                 " job_settings, set_by, set_by_job, set_by_run, archived_ms"_s;

} // namespace

QString detail::jobSettingsJson(const QMap<QString, JobSettings> &jobs)
{
    QJsonObject out;
    for (auto it = jobs.begin(); it != jobs.end(); ++it) {
        const JobSettings &job = it.value();
        QJsonObject o;
        if (job.maxInFlight > 0)
            o.insert(u"max_in_flight"_s, job.maxInFlight);
        if (!job.serialGroups.isEmpty())
            o.insert(u"serial_groups"_s, QJsonArray::fromStringList(job.serialGroups));
        if (job.keepLogsOfRuns > 0)
            o.insert(u"keep_logs_of_runs"_s, job.keepLogsOfRuns);
        if (job.keepLogsForDays > 0)
            o.insert(u"keep_logs_for_days"_s, job.keepLogsForDays);
        if (job.keepSucceededLogs > 0)
            o.insert(u"keep_succeeded_logs"_s, job.keepSucceededLogs);
        if (!job.oldName.isEmpty())
            o.insert(u"old_name"_s, job.oldName);
        out.insert(it.key(), o);
    }
    return QString::fromUtf8(QJsonDocument(out).toJson(QJsonDocument::Compact));
}

QMap<QString, JobSettings> detail::jobSettingsFrom(const QString &json)
{
    QMap<QString, JobSettings> jobs;
    const QJsonObject all = QJsonDocument::fromJson(json.toUtf8()).object();
    for (auto it = all.begin(); it != all.end(); ++it) {
        const QJsonObject o = it.value().toObject();
        JobSettings job;
        job.maxInFlight = o.value(u"max_in_flight"_s).toInt();
        for (const QJsonValue group : o.value(u"serial_groups"_s).toArray())
            job.serialGroups << group.toString();
        job.keepLogsOfRuns = o.value(u"keep_logs_of_runs"_s).toInt();
        job.keepLogsForDays = o.value(u"keep_logs_for_days"_s).toInt();
        job.keepSucceededLogs = o.value(u"keep_succeeded_logs"_s).toInt();
        job.oldName = o.value(u"old_name"_s).toString();
        jobs.insert(it.key(), job);
    }
    return jobs;
}

namespace {

PipelineRecord pipelineFrom(const QSqlQuery &q)
{
    PipelineRecord p;
    p.name = q.value(0).toString();
    p.configYaml = q.value(1).toString();
    p.varsYaml = q.value(2).toString();
    p.configVersion = q.value(3).toInt();
    p.paused = q.value(4).toInt() != 0;
    p.pausedReason = q.value(5).toString();
    p.maxRuns = q.value(6).toInt();
    p.consecutiveErrors = q.value(7).toInt();
    p.createdMs = q.value(8).toLongLong();
    p.updatedMs = q.value(9).toLongLong();
    p.hostExecution = q.value(10).toInt() != 0;
    p.previousConfigYaml = q.value(11).toString();
    p.jobs = detail::jobSettingsFrom(q.value(12).toString());
    p.setBy = q.value(13).toString();
    p.setByJob = q.value(14).toString();
    p.setByRun = q.value(15).toInt();
    p.archivedMs = q.value(16).toLongLong();
    return p;
}

Status expectOneRow(const Result<QSqlQuery> &q, const QString &missing, const QString &where)
{
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, missing, where);
    return {};
}

} // namespace

Result<PipelineRecord> PipelineRepository::set(const QString &name, const QString &configYaml, const QString &varsYaml,
                                               qint64 nowMs, const SetFields &fields)
{
    const QMap<QString, JobSettings> &jobs = fields.jobs;
    const QMap<QString, QString> &resourceOldNames = fields.resourceOldNames;
    const QString what = u"set pipeline "_s + name;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto existing =
        tx->run(u"SELECT config_version, archived_ms FROM pipelines WHERE name = ?"_s, {detail::text(name)}, what);
    if (!existing)
        return std::unexpected(existing.error());
    if (existing->next()) {
        const int version = existing->value(0).toInt() + 1;
        // The config being replaced is kept as the previous one, unless only the vars changed.
        auto q = tx->run(u"UPDATE pipelines SET config_yaml = ?, vars_yaml = ?, config_version = ?, updated_ms = ?,"
                         " previous_config_yaml = CASE WHEN config_yaml = ? THEN previous_config_yaml"
                         " ELSE config_yaml END, job_settings = ? WHERE name = ?"_s,
                         {detail::text(configYaml), detail::text(varsYaml), version, nowMs, detail::text(configYaml),
                          detail::text(detail::jobSettingsJson(jobs)), detail::text(name)},
                         what);
        if (!q)
            return std::unexpected(q.error());
        // An archived pipeline set again comes back, paused or not as a new one would be.
        if (existing->value(1).toLongLong() > 0) {
            auto back = tx->run(
                u"UPDATE pipelines SET archived_ms = 0, paused = ?, paused_reason = ?,"
                " consecutive_errors = 0 WHERE name = ?"_s,
                {fields.pausedReason.isEmpty() ? 0 : 1, detail::text(fields.pausedReason), detail::text(name)}, what);
            if (!back)
                return std::unexpected(back.error());
        }
        // old_name: the job's runs, and with them the versions that passed it, carry over. A job
        // that has runs under its new name already took them (the file still says old_name).
        // So does a pause of the old name.
        for (auto it = jobs.begin(); it != jobs.end(); ++it) {
            if (it->oldName.isEmpty())
                continue;
            for (const QString &table : {u"runs"_s, u"job_pauses"_s}) {
                auto renamed = tx->run(u"UPDATE "_s + table +
                                           u" SET job = ? WHERE pipeline = ? AND job = ? AND NOT "
                                           "EXISTS (SELECT 1 FROM "_s +
                                           table + u" r WHERE r.pipeline = ? AND r.job = ?)"_s,
                                       {detail::text(it.key()), detail::text(name), detail::text(it->oldName),
                                        detail::text(name), detail::text(it.key())},
                                       what);
                if (!renamed)
                    return std::unexpected(renamed.error());
            }
        }
        for (auto it = resourceOldNames.begin(); it != resourceOldNames.end(); ++it) {
            const QVariant pipeline = detail::text(name), renamed = detail::text(it.key()),
                           old = detail::text(it.value());
            auto taken = tx->run(u"SELECT COUNT(*) FROM resource_versions WHERE pipeline = ? AND resource = ?"_s,
                                 {pipeline, renamed}, what);
            if (!taken)
                return std::unexpected(taken.error());
            if (!taken->next() || taken->value(0).toInt() > 0)
                continue; // renamed on an earlier set, or a resource of its own already
            for (const QString &table : {u"resource_versions"_s, u"resource_checks"_s, u"resource_pins"_s}) {
                auto moved = tx->run(u"UPDATE "_s + table + u" SET resource = ? WHERE pipeline = ? AND resource = ?"_s,
                                     {renamed, pipeline, old}, what);
                if (!moved)
                    return std::unexpected(moved.error());
            }
            for (const QString &table : {u"run_inputs"_s, u"run_outputs"_s}) {
                auto runs = tx->run(u"UPDATE "_s + table +
                                        u" SET resource = ? WHERE resource = ? AND run_id IN"
                                        " (SELECT id FROM runs WHERE pipeline = ?)"_s,
                                    {renamed, old, pipeline}, what);
                if (!runs)
                    return std::unexpected(runs.error());
            }
        }
    } else {
        auto q = tx->run(u"INSERT INTO pipelines ("_s + kPipelineColumns +
                             u") VALUES (?, ?, ?, 1, ?, ?, 0, 0, ?, ?, 0, '', ?, ?, '', 0, 0)"_s,
                         {detail::text(name), detail::text(configYaml), detail::text(varsYaml),
                          fields.pausedReason.isEmpty() ? 0 : 1, detail::text(fields.pausedReason), nowMs, nowMs,
                          detail::text(detail::jobSettingsJson(jobs)), detail::text(fields.setBy)},
                         what);
        if (!q)
            return std::unexpected(q.error());
    }
    if (auto ok = tx->commit(); !ok)
        return std::unexpected(ok.error());
    return find(name);
}

Result<PipelineRecord> PipelineRepository::find(const QString &name)
{
    auto q = detail::run(m_db, u"SELECT "_s + kPipelineColumns + u" FROM pipelines WHERE name = ?"_s,
                         {detail::text(name)}, u"find pipeline "_s + name);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"no pipeline named "_s + name, u"pipelines"_s);
    return pipelineFrom(*q);
}

Result<QList<PipelineRecord>> PipelineRepository::list()
{
    auto q = detail::run(m_db, u"SELECT "_s + kPipelineColumns + u" FROM pipelines ORDER BY name"_s, {},
                         u"list pipelines"_s);
    if (!q)
        return std::unexpected(q.error());
    QList<PipelineRecord> list;
    while (q->next())
        list.append(pipelineFrom(*q));
    return list;
}

Status PipelineRepository::setPaused(const QString &name, bool paused, const QString &reason, qint64 nowMs)
{
    // Unpausing also closes the circuit breaker.
    return expectOneRow(
        detail::run(m_db,
                    paused ? u"UPDATE pipelines SET paused = 1, paused_reason = ?, updated_ms = ? WHERE name = ?"_s
                           : u"UPDATE pipelines SET paused = 0, paused_reason = ?, consecutive_errors = 0,"
                             " updated_ms = ? WHERE name = ?"_s,
                    {detail::text(paused ? reason : QString()), nowMs, detail::text(name)},
                    u"pause pipeline "_s + name),
        u"no pipeline named "_s + name, u"pipelines"_s);
}

Status PipelineRepository::archive(const QString &name, const QString &reason, qint64 nowMs)
{
    return expectOneRow(detail::run(m_db,
                                    u"UPDATE pipelines SET archived_ms = ?, paused = 1, paused_reason = ?,"
                                    " config_yaml = '', vars_yaml = '', previous_config_yaml = '', job_settings = '',"
                                    " updated_ms = ? WHERE name = ? AND archived_ms = 0"_s,
                                    {nowMs, detail::text(reason), nowMs, detail::text(name)},
                                    u"archive pipeline "_s + name),
                        u"no pipeline named %1 that is not archived"_s.arg(name), u"pipelines"_s);
}

Status PipelineRepository::setSetByJob(const QString &name, const QString &job, int runNumber)
{
    return expectOneRow(detail::run(m_db, u"UPDATE pipelines SET set_by_job = ?, set_by_run = ? WHERE name = ?"_s,
                                    {detail::text(job), runNumber, detail::text(name)},
                                    u"record the job that set "_s + name),
                        u"no pipeline named "_s + name, u"pipelines"_s);
}

Status PipelineRepository::setJobPaused(const QString &pipeline, const QString &job, bool paused, const QString &reason,
                                        qint64 nowMs)
{
    const QString what = u"pause job "_s + pipeline + u'/' + job;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto exists = tx->run(u"SELECT 1 FROM pipelines WHERE name = ?"_s, {detail::text(pipeline)}, what);
    if (!exists)
        return std::unexpected(exists.error());
    if (!exists->next())
        return fail(ErrorCode::NotFound, u"no pipeline named "_s + pipeline, u"pipelines"_s);
    auto q = paused ? tx->run(u"INSERT INTO job_pauses (pipeline, job, reason, paused_ms) VALUES (?, ?, ?, ?)"
                              " ON CONFLICT (pipeline, job) DO NOTHING"_s,
                              {detail::text(pipeline), detail::text(job), detail::text(reason), nowMs}, what)
                    : tx->run(u"DELETE FROM job_pauses WHERE pipeline = ? AND job = ?"_s,
                              {detail::text(pipeline), detail::text(job)}, what);
    if (!q)
        return std::unexpected(q.error());
    return tx->commit();
}

Result<QMap<QString, JobPauseRecord>> PipelineRepository::pausedJobs(const QString &pipeline)
{
    auto q = detail::run(m_db, u"SELECT job, reason, paused_ms FROM job_pauses WHERE pipeline = ?"_s,
                         {detail::text(pipeline)}, u"paused jobs of "_s + pipeline);
    if (!q)
        return std::unexpected(q.error());
    QMap<QString, JobPauseRecord> paused;
    while (q->next())
        paused.insert(q->value(0).toString(), JobPauseRecord{q->value(1).toString(), q->value(2).toLongLong()});
    return paused;
}

Status PipelineRepository::setJobSettings(const QString &name, const QMap<QString, JobSettings> &jobs)
{
    return expectOneRow(detail::run(m_db, u"UPDATE pipelines SET job_settings = ? WHERE name = ?"_s,
                                    {detail::text(detail::jobSettingsJson(jobs)), detail::text(name)},
                                    u"record the job settings of "_s + name),
                        u"no pipeline named "_s + name, u"pipelines"_s);
}

Status PipelineRepository::setMaxRuns(const QString &name, int maxRuns, qint64 nowMs)
{
    return expectOneRow(detail::run(m_db, u"UPDATE pipelines SET max_runs = ?, updated_ms = ? WHERE name = ?"_s,
                                    {maxRuns, nowMs, detail::text(name)}, u"set max-runs of "_s + name),
                        u"no pipeline named "_s + name, u"pipelines"_s);
}

Status PipelineRepository::setHostExecution(const QString &name, bool allowed, qint64 nowMs)
{
    return expectOneRow(detail::run(m_db, u"UPDATE pipelines SET host_execution = ?, updated_ms = ? WHERE name = ?"_s,
                                    {allowed ? 1 : 0, nowMs, detail::text(name)}, u"set host execution of "_s + name),
                        u"no pipeline named "_s + name, u"pipelines"_s);
}

Result<QString> InstallSettingRepository::value(const QString &name, const QString &fallback)
{
    auto q = detail::run(m_db, u"SELECT value FROM install_settings WHERE name = ?"_s, {detail::text(name)},
                         u"read setting "_s + name);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fallback;
    return q->value(0).toString();
}

Status InstallSettingRepository::set(const QString &name, const QString &value, const QString &actor, qint64 nowMs)
{
    const QString what = u"set setting "_s + name;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto removed = tx->run(u"DELETE FROM install_settings WHERE name = ?"_s, {detail::text(name)}, what);
    if (!removed)
        return std::unexpected(removed.error());
    auto q = tx->run(u"INSERT INTO install_settings (name, value, actor, updated_ms) VALUES (?, ?, ?, ?)"_s,
                     {detail::text(name), detail::text(value), detail::text(actor), nowMs}, what);
    if (!q)
        return std::unexpected(q.error());
    return tx->commit();
}

Result<int> PipelineRepository::recordRunOutcome(const QString &name, bool errored, qint64 nowMs)
{
    const QString what = u"count errors of "_s + name;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto q = tx->run(errored ? u"UPDATE pipelines SET consecutive_errors = consecutive_errors + 1, updated_ms = ?"
                               " WHERE name = ?"_s
                             : u"UPDATE pipelines SET consecutive_errors = 0, updated_ms = ? WHERE name = ?"_s,
                     {nowMs, detail::text(name)}, what);
    if (!q)
        return std::unexpected(q.error());
    auto count = tx->run(u"SELECT consecutive_errors FROM pipelines WHERE name = ?"_s, {detail::text(name)}, what);
    if (!count)
        return std::unexpected(count.error());
    if (!count->next())
        return fail(ErrorCode::NotFound, u"no pipeline named "_s + name, u"pipelines"_s);
    const int errors = count->value(0).toInt();
    if (auto ok = tx->commit(); !ok)
        return std::unexpected(ok.error());
    return errors;
}

Status PipelineRepository::remove(const QString &name)
{
    const QString what = u"remove pipeline "_s + name;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    // Secrets scoped to the pipeline have no foreign key (scope "" is the install's).
    if (auto q = tx->run(u"DELETE FROM secrets WHERE scope = ?"_s, {detail::text(name)}, what); !q)
        return std::unexpected(q.error());
    // Nor may a new pipeline of this name read the install's secrets this one could.
    if (auto q = tx->run(u"DELETE FROM secret_access WHERE pipeline = ?"_s, {detail::text(name)}, what); !q)
        return std::unexpected(q.error());
    auto q = tx->run(u"DELETE FROM pipelines WHERE name = ?"_s, {detail::text(name)}, what);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"no pipeline named "_s + name, u"pipelines"_s);
    return tx->commit();
}

Status PipelineRepository::rename(const QString &from, const QString &to, qint64 nowMs)
{
    const QString what = u"rename pipeline "_s + from + u" to "_s + to;
    return detail::retryOnConflict([&]() -> Status {
        auto tx = detail::Transaction::begin(m_db, what);
        if (!tx)
            return std::unexpected(tx.error());
        const QVariant oldName = detail::text(from), newName = detail::text(to);
        auto taken = tx->run(u"SELECT 1 FROM pipelines WHERE name = ?"_s, {newName}, what);
        if (!taken)
            return std::unexpected(taken.error());
        if (taken->next())
            return fail(ErrorCode::Conflict, u"a pipeline named %1 exists"_s.arg(to), u"name"_s,
                        u"choose another name, or remove that pipeline first (pando pipelines rm %1)"_s.arg(to));
        auto granted =
            tx->run(u"SELECT 1 FROM grants WHERE object_kind = 'pipeline' AND object = ?"_s, {newName}, what);
        if (!granted)
            return std::unexpected(granted.error());
        if (granted->next())
            return fail(
                ErrorCode::Conflict,
                u"grants on a pipeline named %1 wait for whoever sets it; they are not this pipeline's"_s.arg(to),
                u"name"_s, u"choose another name, or remove those grants first (pando grants)"_s);
        // The row under its new name first, then what names it, then the old row: the foreign
        // keys hold at every statement.
        static const QString otherColumns = QString(kPipelineColumns).remove(u"name, "_s);
        auto copied = tx->run(u"INSERT INTO pipelines ("_s + kPipelineColumns + u") SELECT ?, "_s + otherColumns +
                                  u" FROM pipelines WHERE name = ?"_s,
                              {newName, oldName}, what);
        if (!copied)
            return std::unexpected(copied.error());
        if (copied->numRowsAffected() == 0)
            return fail(ErrorCode::NotFound, u"no pipeline named "_s + from, u"pipelines"_s);
        static const QStringList moves = {
            u"UPDATE pipelines SET updated_ms = ? WHERE name = ?"_s,
            u"UPDATE runs SET pipeline = ? WHERE pipeline = ?"_s,
            u"UPDATE resource_versions SET pipeline = ? WHERE pipeline = ?"_s,
            u"UPDATE resource_checks SET pipeline = ? WHERE pipeline = ?"_s,
            u"UPDATE resource_pins SET pipeline = ? WHERE pipeline = ?"_s,
            u"UPDATE job_pauses SET pipeline = ? WHERE pipeline = ?"_s,
            u"UPDATE secret_access SET pipeline = ? WHERE pipeline = ?"_s,
            u"UPDATE secrets SET scope = ? WHERE scope = ?"_s,
            u"UPDATE grants SET object = ? WHERE object_kind = 'pipeline' AND object = ?"_s,
            u"UPDATE pipelines SET set_by = ? WHERE set_by = ?"_s,
        };
        for (const QString &move : moves) {
            const bool stamp = move.contains(u"updated_ms"_s);
            if (auto q = tx->run(move, {stamp ? QVariant(nowMs) : newName, stamp ? newName : oldName}, what); !q)
                return std::unexpected(q.error());
        }
        if (auto q = tx->run(u"DELETE FROM pipelines WHERE name = ?"_s, {oldName}, what); !q)
            return std::unexpected(q.error());
        return tx->commit();
    });
}

// --- step cache

Result<std::optional<StepCacheRecord>> StepCacheRepository::find(const QString &hash)
{
    auto q =
        detail::run(m_db, u"SELECT hash, outputs_json, run_id, step_id, created_ms FROM step_cache WHERE hash = ?"_s,
                    {detail::text(hash)}, u"find cached step "_s + hash);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return std::optional<StepCacheRecord>{};
    return std::optional<StepCacheRecord>{StepCacheRecord{q->value(0).toString(), q->value(1).toString(),
                                                          q->value(2).toString(), q->value(3).toString(),
                                                          q->value(4).toLongLong()}};
}

Status StepCacheRepository::put(const StepCacheRecord &r)
{
    const QString what = u"cache step "_s + r.hash;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto existing = tx->run(u"SELECT 1 FROM step_cache WHERE hash = ?"_s, {detail::text(r.hash)}, what);
    if (!existing)
        return std::unexpected(existing.error());
    if (existing->next())
        return tx->commit();
    auto q = tx->run(
        u"INSERT INTO step_cache (hash, outputs_json, run_id, step_id, created_ms) VALUES (?, ?, ?, ?, ?)"_s,
        {detail::text(r.hash), detail::text(r.outputsJson), detail::text(r.runId), detail::text(r.stepId), r.createdMs},
        what);
    if (!q)
        return q.error().code == ErrorCode::Conflict ? Status{} : Status{std::unexpected(q.error())};
    return tx->commit();
}

Status StepCacheRepository::remove(const QString &hash)
{
    auto q =
        detail::run(m_db, u"DELETE FROM step_cache WHERE hash = ?"_s, {detail::text(hash)}, u"forget cached step"_s);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

// --- resource versions

namespace {
ResourceVersionRecord versionFrom(const QSqlQuery &q)
{
    return ResourceVersionRecord{q.value(0).toString(), q.value(1).toString(), q.value(2).toLongLong(),
                                 q.value(3).toString(), q.value(4).toString(), q.value(5).toLongLong()};
}
const QString kVersionColumns = u"pipeline, resource, seq, version_json, metadata_json, found_ms"_s;
} // namespace

Result<QList<ResourceVersionRecord>>
ResourceVersionRepository::add(const QString &pipeline, const QString &resource,
                               const QList<QPair<QString, QString>> &versionsAndMetadata, qint64 nowMs)
{
    const QString what = u"record versions of "_s + pipeline + u'/' + resource;
    return detail::retryOnConflict([&]() -> Result<QList<ResourceVersionRecord>> {
        auto tx = detail::Transaction::begin(m_db, what);
        if (!tx)
            return std::unexpected(tx.error());
        auto last =
            tx->run(u"SELECT COALESCE(MAX(seq), 0) FROM resource_versions WHERE pipeline = ? AND resource = ?"_s,
                    {detail::text(pipeline), detail::text(resource)}, what);
        if (!last)
            return std::unexpected(last.error());
        qint64 seq = last->next() ? last->value(0).toLongLong() : 0;
        QList<ResourceVersionRecord> added;
        for (const auto &[version, metadata] : versionsAndMetadata) {
            auto seen =
                tx->run(u"SELECT 1 FROM resource_versions WHERE pipeline = ? AND resource = ? AND version_json = ?"_s,
                        {detail::text(pipeline), detail::text(resource), detail::text(version)}, what);
            if (!seen)
                return std::unexpected(seen.error());
            if (seen->next()) {
                if (added.isEmpty())
                    continue;
                auto moved = tx->run(
                    u"UPDATE resource_versions SET seq = ? WHERE pipeline = ? AND resource = ? AND version_json = ?"_s,
                    {++seq, detail::text(pipeline), detail::text(resource), detail::text(version)}, what);
                if (!moved)
                    return std::unexpected(moved.error());
                continue;
            }
            ResourceVersionRecord r{pipeline, resource, ++seq, version, metadata, nowMs};
            auto q = tx->run(u"INSERT INTO resource_versions ("_s + kVersionColumns + u") VALUES (?, ?, ?, ?, ?, ?)"_s,
                             {detail::text(pipeline), detail::text(resource), r.seq, detail::text(version),
                              detail::text(metadata), nowMs},
                             what);
            if (!q)
                return std::unexpected(q.error());
            added.append(r);
        }
        if (auto ok = tx->commit(); !ok)
            return std::unexpected(ok.error());
        return added;
    });
}

Result<std::optional<ResourceVersionRecord>> ResourceVersionRepository::latest(const QString &pipeline,
                                                                               const QString &resource)
{
    auto list = this->list(pipeline, resource, 1);
    if (!list)
        return std::unexpected(list.error());
    if (list->isEmpty())
        return std::optional<ResourceVersionRecord>{};
    return std::optional<ResourceVersionRecord>{list->first()};
}

Result<QList<ResourceVersionRecord>> ResourceVersionRepository::list(const QString &pipeline, const QString &resource,
                                                                     int limit)
{
    auto q = detail::run(m_db,
                         u"SELECT "_s + kVersionColumns +
                             u" FROM resource_versions WHERE pipeline = ? AND resource = ? ORDER BY seq DESC LIMIT ?"_s,
                         {detail::text(pipeline), detail::text(resource), limit}, u"list versions of "_s + resource);
    if (!q)
        return std::unexpected(q.error());
    QList<ResourceVersionRecord> list;
    while (q->next())
        list.append(versionFrom(*q));
    return list;
}

Status ResourceVersionRepository::recordCheck(const QString &pipeline, const QString &resource, qint64 nowMs,
                                              const QString &error)
{
    const QString what = u"record check of "_s + resource;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto q = tx->run(u"UPDATE resource_checks SET checked_ms = ?, error = ? WHERE pipeline = ? AND resource = ?"_s,
                     {nowMs, detail::text(error), detail::text(pipeline), detail::text(resource)}, what);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0) {
        auto insert =
            tx->run(u"INSERT INTO resource_checks (pipeline, resource, checked_ms, error) VALUES (?, ?, ?, ?)"_s,
                    {detail::text(pipeline), detail::text(resource), nowMs, detail::text(error)}, what);
        if (!insert)
            return std::unexpected(insert.error());
    }
    return tx->commit();
}

Result<QPair<qint64, QString>> ResourceVersionRepository::lastCheck(const QString &pipeline, const QString &resource)
{
    auto q = detail::run(m_db, u"SELECT checked_ms, error FROM resource_checks WHERE pipeline = ? AND resource = ?"_s,
                         {detail::text(pipeline), detail::text(resource)}, u"last check of "_s + resource);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return QPair<qint64, QString>{0, QString()};
    return QPair<qint64, QString>{q->value(0).toLongLong(), q->value(1).toString()};
}

Result<std::optional<ResourcePinRecord>> ResourceVersionRepository::pinned(const QString &pipeline,
                                                                           const QString &resource)
{
    auto q = detail::run(
        m_db, u"SELECT version_json, actor, pinned_ms FROM resource_pins WHERE pipeline = ? AND resource = ?"_s,
        {detail::text(pipeline), detail::text(resource)}, u"pin of "_s + resource);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return std::optional<ResourcePinRecord>{};
    return std::optional<ResourcePinRecord>{ResourcePinRecord{pipeline, resource, q->value(0).toString(),
                                                              q->value(1).toString(), q->value(2).toLongLong()}};
}

Status ResourceVersionRepository::pin(const ResourcePinRecord &pin)
{
    const QString what = u"pin "_s + pin.pipeline + u'/' + pin.resource;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto removed = tx->run(u"DELETE FROM resource_pins WHERE pipeline = ? AND resource = ?"_s,
                           {detail::text(pin.pipeline), detail::text(pin.resource)}, what);
    if (!removed)
        return std::unexpected(removed.error());
    auto q = tx->run(u"INSERT INTO resource_pins (pipeline, resource, version_json, actor, pinned_ms)"
                     " VALUES (?, ?, ?, ?, ?)"_s,
                     {detail::text(pin.pipeline), detail::text(pin.resource), detail::text(pin.versionJson),
                      detail::text(pin.actor), pin.pinnedMs},
                     what);
    if (!q)
        return std::unexpected(q.error());
    return tx->commit();
}

Status ResourceVersionRepository::unpin(const QString &pipeline, const QString &resource)
{
    return expectOneRow(detail::run(m_db, u"DELETE FROM resource_pins WHERE pipeline = ? AND resource = ?"_s,
                                    {detail::text(pipeline), detail::text(resource)}, u"unpin "_s + resource),
                        u"resource %1 of pipeline %2 is not pinned"_s.arg(resource, pipeline), u"resource"_s);
}

// --- secrets

Status SecretRepository::put(const SecretRecord &s)
{
    const QString what = u"store secret "_s + s.name;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto q = tx->run(u"UPDATE secrets SET sealed = ?, updated_ms = ? WHERE scope = ? AND name = ?"_s,
                     {detail::text(s.sealed), s.updatedMs, detail::text(s.scope), detail::text(s.name)}, what);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0) {
        auto insert = tx->run(
            u"INSERT INTO secrets (scope, name, sealed, created_ms, updated_ms, access) VALUES (?, ?, ?, ?, ?, 'listed')"_s,
            {detail::text(s.scope), detail::text(s.name), detail::text(s.sealed), s.createdMs, s.updatedMs}, what);
        if (!insert)
            return std::unexpected(insert.error());
    }
    return tx->commit();
}

Result<SecretRecord> SecretRepository::find(const QString &scope, const QString &name)
{
    auto q = detail::run(
        m_db, u"SELECT scope, name, sealed, created_ms, updated_ms FROM secrets WHERE scope = ? AND name = ?"_s,
        {detail::text(scope), detail::text(name)}, u"find secret "_s + name);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"no secret named "_s + name, u"secrets"_s);
    return SecretRecord{q->value(0).toString(), q->value(1).toString(), q->value(2).toString(),
                        q->value(3).toLongLong(), q->value(4).toLongLong()};
}

Result<QList<SecretRecord>> SecretRepository::list(const QString &scope)
{
    auto q =
        detail::run(m_db, u"SELECT scope, name, created_ms, updated_ms FROM secrets WHERE scope = ? ORDER BY name"_s,
                    {detail::text(scope)}, u"list secrets"_s);
    if (!q)
        return std::unexpected(q.error());
    QList<SecretRecord> list;
    while (q->next())
        list.append(SecretRecord{q->value(0).toString(), q->value(1).toString(), QString(), q->value(2).toLongLong(),
                                 q->value(3).toLongLong()});
    return list;
}

Status SecretRepository::remove(const QString &scope, const QString &name)
{
    const QString what = u"remove secret "_s + name;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto q =
        tx->run(u"DELETE FROM secrets WHERE scope = ? AND name = ?"_s, {detail::text(scope), detail::text(name)}, what);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"no secret named "_s + name, u"secrets"_s);
    // A secret set again later by that name starts with no pipeline allowed.
    if (scope.isEmpty())
        if (auto cleared = tx->run(u"DELETE FROM secret_access WHERE name = ?"_s, {detail::text(name)}, what); !cleared)
            return std::unexpected(cleared.error());
    return tx->commit();
}

Result<SecretAccess> SecretRepository::access(const QString &name)
{
    auto q = detail::run(m_db, u"SELECT access FROM secrets WHERE scope = '' AND name = ?"_s, {detail::text(name)},
                         u"read the access of secret "_s + name);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"no install-wide secret named "_s + name, u"secrets"_s,
                    u"pando secrets list shows them"_s);
    SecretAccess access;
    access.all = q->value(0).toString() == u"all"_s;
    q->finish();
    auto rows = detail::run(m_db, u"SELECT pipeline FROM secret_access WHERE name = ? ORDER BY pipeline"_s,
                            {detail::text(name)}, u"read the access of secret "_s + name);
    if (!rows)
        return std::unexpected(rows.error());
    while (rows->next())
        access.pipelines << rows->value(0).toString();
    return access;
}

Status SecretRepository::setAccess(const QString &name, const SecretAccess &access)
{
    const QString what = u"set the access of secret "_s + name;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto q = tx->run(u"UPDATE secrets SET access = ? WHERE scope = '' AND name = ?"_s,
                     {access.all ? u"all"_s : u"listed"_s, detail::text(name)}, what);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"no install-wide secret named "_s + name, u"secrets"_s,
                    u"set it first: pando secrets set "_s + name);
    if (auto cleared = tx->run(u"DELETE FROM secret_access WHERE name = ?"_s, {detail::text(name)}, what); !cleared)
        return std::unexpected(cleared.error());
    for (const QString &pipeline : access.all ? QStringList{} : access.pipelines)
        if (auto added = tx->run(u"INSERT INTO secret_access (name, pipeline) VALUES (?, ?)"_s,
                                 {detail::text(name), detail::text(pipeline)}, what);
            !added)
            return std::unexpected(added.error());
    return tx->commit();
}

Result<QStringList> SecretRepository::unscoped()
{
    auto q = detail::run(m_db, u"SELECT name FROM secrets WHERE scope = '' AND access = 'unset' ORDER BY name"_s, {},
                         u"list install-wide secrets without an access list"_s);
    if (!q)
        return std::unexpected(q.error());
    QStringList names;
    while (q->next())
        names << q->value(0).toString();
    return names;
}

} // namespace pando::core
