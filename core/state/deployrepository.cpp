#include "repositories.h"

#include "sql.h"

#include <QSqlQuery>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

const QString kDeployColumns = u"id, app, ref, commit_id, status, failed_step, error, image_id, container_id, actor,"
                               " created_ms, started_ms, finished_ms, approval_id, spec_yaml, port"_s;
const QString kDeployStepColumns = u"deploy_id, seq, name, status, detail, started_ms, finished_ms"_s;

Result<DeployRecord> deployFrom(const QSqlQuery &q)
{
    DeployRecord d;
    d.id = q.value(0).toString();
    d.app = q.value(1).toString();
    d.ref = q.value(2).toString();
    d.commit = q.value(3).toString();
    auto status = detail::word<DeployStatus>(q.value(4), u"deploys.status"_s, u"deploy "_s + d.id);
    if (!status)
        return std::unexpected(status.error());
    d.status = *status;
    d.failedStep = q.value(5).toString();
    d.error = q.value(6).toString();
    d.imageId = q.value(7).toString();
    d.containerId = q.value(8).toString();
    d.actor = q.value(9).toString();
    d.createdMs = q.value(10).toLongLong();
    d.startedMs = q.value(11).toLongLong();
    d.finishedMs = q.value(12).toLongLong();
    d.approvalId = q.value(13).toString();
    d.specYaml = q.value(14).toString();
    d.port = q.value(15).toInt();
    return d;
}

Result<StepRecord> deployStepFrom(const QSqlQuery &q)
{
    StepRecord s;
    s.deployId = q.value(0).toString();
    s.seq = q.value(1).toInt();
    s.name = q.value(2).toString();
    auto status = detail::word<DeployStepStatus>(q.value(3), u"deploy_steps.status"_s,
                                                 u"step %1 of deploy %2"_s.arg(s.name, s.deployId));
    if (!status)
        return std::unexpected(status.error());
    s.status = *status;
    s.detail = q.value(4).toString();
    s.startedMs = q.value(5).toLongLong();
    s.finishedMs = q.value(6).toLongLong();
    return s;
}

Result<QList<DeployRecord>> selectDeploys(Database &database, const QString &tail, const QVariantList &values,
                                          const QString &what)
{
    auto db = database.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, database.isPostgres(), u"SELECT "_s + kDeployColumns + u" FROM deploys "_s + tail, values,
                         what);
    if (!q)
        return std::unexpected(q.error());
    QList<DeployRecord> deploys;
    while (q->next()) {
        auto d = deployFrom(*q);
        if (!d)
            return std::unexpected(d.error());
        deploys.append(*d);
    }
    return deploys;
}

} // namespace

Status DeployRepository::create(const DeployRecord &d)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(),
                         u"INSERT INTO deploys ("_s + kDeployColumns +
                             u") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"_s,
                         {detail::text(d.id), detail::text(d.app), detail::text(d.ref), detail::text(d.commit),
                          toString(d.status), detail::text(d.failedStep), detail::text(d.error),
                          detail::text(d.imageId), detail::text(d.containerId), detail::text(d.actor), d.createdMs,
                          d.startedMs, d.finishedMs, detail::text(d.approvalId), detail::text(d.specYaml), d.port},
                         u"create deploy "_s + d.id);
    if (!q) {
        if (q.error().code == ErrorCode::Conflict)
            return fail(ErrorCode::Conflict, u"a deploy with id "_s + d.id + u" already exists"_s, u"deploys"_s);
        if (q.error().code == ErrorCode::NotFound)
            return fail(ErrorCode::NotFound, u"no app named "_s + d.app + u" for deploy "_s + d.id, u"deploys"_s);
        return std::unexpected(q.error());
    }
    return {};
}

Result<DeployRecord> DeployRepository::find(const QString &id)
{
    auto deploys = selectDeploys(m_db, u"WHERE id = ?"_s, {detail::text(id)}, u"find deploy "_s + id);
    if (!deploys)
        return std::unexpected(deploys.error());
    if (deploys->isEmpty())
        return fail(ErrorCode::NotFound, u"no deploy with id "_s + id, u"deploys"_s);
    return deploys->first();
}

Result<QList<DeployRecord>> DeployRepository::listForApp(const QString &app, int limit)
{
    if (limit <= 0)
        return fail(ErrorCode::Invalid, u"limit must be positive, got "_s + QString::number(limit), u"limit"_s);
    // id breaks ties between deploys made in the same millisecond.
    return selectDeploys(m_db, u"WHERE app = ? ORDER BY created_ms DESC, id DESC LIMIT ?"_s, {detail::text(app), limit},
                         u"list deploys of "_s + app);
}

Result<QList<DeployRecord>> DeployRepository::unfinished()
{
    return selectDeploys(m_db, u"WHERE status IN (?, ?) ORDER BY created_ms, id"_s,
                         {toString(DeployStatus::Queued), toString(DeployStatus::Running)},
                         u"list unfinished deploys"_s);
}

Result<QList<DeployRecord>> DeployRepository::awaitingApproval()
{
    return selectDeploys(m_db, u"WHERE status = ? ORDER BY created_ms, id"_s,
                         {toString(DeployStatus::AwaitingApproval)}, u"list deploys awaiting approval"_s);
}

Status DeployRepository::update(const DeployRecord &d)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q =
        detail::run(*db, m_db.isPostgres(),
                    u"UPDATE deploys SET ref = ?, commit_id = ?, status = ?, failed_step = ?, error = ?,"
                    " image_id = ?, container_id = ?, actor = ?, started_ms = ?, finished_ms = ?, approval_id = ?,"
                    " port = ? WHERE id = ?"_s,
                    {detail::text(d.ref), detail::text(d.commit), toString(d.status), detail::text(d.failedStep),
                     detail::text(d.error), detail::text(d.imageId), detail::text(d.containerId), detail::text(d.actor),
                     d.startedMs, d.finishedMs, detail::text(d.approvalId), d.port, detail::text(d.id)},
                    u"update deploy "_s + d.id);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"no deploy with id "_s + d.id, u"deploys"_s);
    return {};
}

Status DeployRepository::addStep(const StepRecord &s)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    const QString what = u"add step "_s + QString::number(s.seq) + u" to deploy "_s + s.deployId;
    auto q = detail::run(*db, m_db.isPostgres(),
                         u"INSERT INTO deploy_steps ("_s + kDeployStepColumns + u") VALUES (?, ?, ?, ?, ?, ?, ?)"_s,
                         {detail::text(s.deployId), s.seq, detail::text(s.name), toString(s.status),
                          detail::text(s.detail), s.startedMs, s.finishedMs},
                         what);
    if (!q) {
        if (q.error().code == ErrorCode::Conflict)
            return fail(ErrorCode::Conflict,
                        u"deploy "_s + s.deployId + u" already has a step "_s + QString::number(s.seq), u"steps"_s);
        if (q.error().code == ErrorCode::NotFound)
            return fail(ErrorCode::NotFound, u"no deploy with id "_s + s.deployId, u"steps"_s);
        return std::unexpected(q.error());
    }
    return {};
}

Status DeployRepository::updateStep(const StepRecord &s)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(),
                         u"UPDATE deploy_steps SET name = ?, status = ?, detail = ?, started_ms = ?, finished_ms = ?"
                         " WHERE deploy_id = ? AND seq = ?"_s,
                         {detail::text(s.name), toString(s.status), detail::text(s.detail), s.startedMs, s.finishedMs,
                          detail::text(s.deployId), s.seq},
                         u"update step "_s + QString::number(s.seq) + u" of deploy "_s + s.deployId);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"deploy "_s + s.deployId + u" has no step "_s + QString::number(s.seq),
                    u"steps"_s);
    return {};
}

Result<QList<StepRecord>> DeployRepository::steps(const QString &deployId)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(),
                         u"SELECT "_s + kDeployStepColumns + u" FROM deploy_steps WHERE deploy_id = ? ORDER BY seq"_s,
                         {detail::text(deployId)}, u"list steps of deploy "_s + deployId);
    if (!q)
        return std::unexpected(q.error());
    QList<StepRecord> steps;
    while (q->next()) {
        auto step = deployStepFrom(*q);
        if (!step)
            return std::unexpected(step.error());
        steps.append(*step);
    }
    return steps;
}

} // namespace pando::core
