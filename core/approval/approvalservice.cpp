#include "approvalservice.h"

#include "core/state/sql.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace approval {
bool isKnownKind(const QString &kind)
{
    return kind == KindDeploy || kind == KindPipelineStep;
}

bool isKnownStatus(const QString &status)
{
    return status == Pending || status == Approved || status == Rejected || status == Expired || status == Used;
}

QString personOf(const QString &actorName)
{
    return actorName.section(u'/', 0, 0);
}

Status validateApprover(const QString &entry)
{
    if (entry.startsWith(u"role:"_s)) {
        if (!accounts::roleFromName(entry.mid(5)))
            return fail(ErrorCode::Invalid,
                        u"\"%1\" names no role (roles: admin, operator, member, viewer)"_s.arg(entry), u"approvers"_s);
        return {};
    }
    if (!accounts::isValidUsername(entry))
        return fail(ErrorCode::Invalid, u"\"%1\" is neither a username nor role:<role>"_s.arg(entry), u"approvers"_s);
    return {};
}
} // namespace approval

namespace {

const QString Columns = u"id, kind, object, requester, summary, plan_json, status, decided_by, reason, created_ms,"
                        " expires_ms, decided_ms, approvers"_s;
const QString ExpiryActor = u"system:approval"_s;

ApprovalRecord readRecord(const QSqlQuery &q)
{
    ApprovalRecord r;
    r.id = q.value(0).toString();
    r.kind = q.value(1).toString();
    r.object = q.value(2).toString();
    r.requester = q.value(3).toString();
    r.summary = q.value(4).toString();
    r.planJson = q.value(5).toString();
    r.status = q.value(6).toString();
    r.decidedBy = q.value(7).toString();
    r.reason = q.value(8).toString();
    r.createdMs = q.value(9).toLongLong();
    r.expiresMs = q.value(10).toLongLong();
    r.decidedMs = q.value(11).toLongLong();
    r.approvers = q.value(12).toString().split(u' ', Qt::SkipEmptyParts);
    return r;
}

QString newId()
{
    return u"a%1"_s.arg(QRandomGenerator::system()->generate64(), 16, 16, QLatin1Char('0'));
}

QString objectOf(const QString &id)
{
    return u"approval/"_s + id;
}

} // namespace

QJsonObject ApprovalRecord::toJson() const
{
    QJsonObject o{
        {u"id"_s, id},           {u"kind"_s, kind},     {u"object"_s, object},        {u"requester"_s, requester},
        {u"summary"_s, summary}, {u"status"_s, status}, {u"created_ms"_s, createdMs}, {u"expires_ms"_s, expiresMs}};
    if (!planJson.isEmpty()) {
        const QJsonDocument plan = QJsonDocument::fromJson(planJson.toUtf8());
        o.insert(u"plan"_s, plan.isArray() ? QJsonValue(plan.array()) : QJsonValue(plan.object()));
    }
    if (!approvers.isEmpty())
        o.insert(u"approvers"_s, QJsonArray::fromStringList(approvers));
    if (!decidedBy.isEmpty()) {
        o.insert(u"decided_by"_s, decidedBy);
        o.insert(u"reason"_s, reason);
        o.insert(u"decided_ms"_s, decidedMs);
    }
    return o;
}

Result<ApprovalRecord> ApprovalService::request(const QString &kind, const QString &object, const Actor &requester,
                                                const QString &summary, const QString &planJson, qint64 ttlMs,
                                                const QStringList &approvers)
{
    if (!approval::isKnownKind(kind))
        return fail(ErrorCode::Invalid, u"unknown approval kind \"%1\" (known: deploy, pipeline-step)"_s.arg(kind),
                    u"kind"_s);
    if (object.isEmpty())
        return fail(ErrorCode::Invalid, u"an approval needs the object it holds back"_s, u"object"_s);
    if (requester.name.isEmpty())
        return fail(ErrorCode::Invalid, u"an approval needs a requester"_s, u"requester"_s);
    if (ttlMs < 0)
        return fail(ErrorCode::Invalid, u"the time to live may not be negative"_s, u"ttl"_s);
    if (!planJson.isEmpty()) {
        QJsonParseError error;
        const QJsonDocument plan = QJsonDocument::fromJson(planJson.toUtf8(), &error);
        if (error.error != QJsonParseError::NoError || plan.isNull())
            return fail(ErrorCode::Invalid, u"the plan is not JSON: "_s + error.errorString(), u"plan"_s);
    }
    for (const QString &entry : approvers)
        if (auto valid = approval::validateApprover(entry); !valid)
            return std::unexpected(valid.error());
    ApprovalRecord r;
    r.id = newId();
    r.kind = kind;
    r.object = object;
    r.requester = requester.name;
    r.summary = summary;
    r.planJson = planJson;
    r.approvers = approvers;
    r.status = approval::Pending;
    r.createdMs = m_clock.nowMs();
    r.expiresMs = ttlMs > 0 ? r.createdMs + ttlMs : 0;

    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(),
                         u"INSERT INTO approvals (id, kind, object, requester, summary, plan_json, status, created_ms,"
                         " expires_ms, approvers) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"_s,
                         {r.id, r.kind, r.object, r.requester, detail::text(r.summary), detail::text(r.planJson),
                          r.status, r.createdMs, r.expiresMs, detail::text(approvers.join(u' '))},
                         u"insert approval for "_s + object);
    if (!q)
        return std::unexpected(q.error());
    if (auto told = announce(r, requester, u"approval.request"_s, EventType::ApprovalRequested, nullptr); !told) {
        // Not audited, not asked: nobody has seen the request yet.
        discardResult(detail::run(*db, m_db.isPostgres(), u"DELETE FROM approvals WHERE id = ?"_s, {r.id},
                                  u"take back approval "_s + r.id),
                      "the audit error is the answer");
        return std::unexpected(told.error());
    }
    return r;
}

Result<ApprovalRecord> ApprovalService::approve(const QString &id, const Approver &approver, const QString &reason)
{
    return settle(id, approver, reason, true);
}

Result<ApprovalRecord> ApprovalService::reject(const QString &id, const Approver &approver, const QString &reason)
{
    return settle(id, approver, reason, false);
}

Status ApprovalService::maySettle(const ApprovalRecord &record, const Approver &approver, bool approve)
{
    const QString person = approval::personOf(approver.actor.name);
    const bool isRequester = person == approval::personOf(record.requester);
    if (approve && isRequester)
        return fail(ErrorCode::Forbidden, u"%1 asked for approval %2 and may not approve it"_s.arg(person, record.id),
                    objectOf(record.id), u"another person has to approve it"_s);
    if (isRequester || record.approvers.isEmpty())
        return {}; // withdrawing one's own request; or any other person may decide
    const QString username = person.startsWith(u"user:"_s) ? person.mid(5) : QString();
    for (const QString &entry : record.approvers) {
        if (!username.isEmpty() && entry == username)
            return {};
        if (approver.role && entry.startsWith(u"role:"_s)) {
            const auto needed = accounts::roleFromName(entry.mid(5));
            // Roles are ordered strongest first.
            if (needed && int(*approver.role) <= int(*needed))
                return {};
        }
    }
    return fail(ErrorCode::Forbidden,
                u"%1 is not among the approvers of %2 (%3)"_s.arg(person, record.id, record.approvers.join(u", "_s)),
                objectOf(record.id), u"ask one of them to decide"_s);
}

Result<ApprovalRecord> ApprovalService::settle(const QString &id, const Approver &who, const QString &reason,
                                               bool approve)
{
    const QString action = approve ? u"approval.approve"_s : u"approval.reject"_s;
    const Actor &approver = who.actor;
    if (reason.size() > MaxReasonLength)
        return fail(ErrorCode::Invalid, u"reason is longer than %1 characters"_s.arg(MaxReasonLength), u"reason"_s);
    auto found = mustFind(id);
    if (!found) {
        auditRefusal(approver, action, id, u"failure"_s, found.error());
        return std::unexpected(found.error());
    }
    if (auto allowed = maySettle(*found, who, approve); !allowed) {
        auditRefusal(approver, action, id, u"denied"_s, allowed.error());
        return std::unexpected(allowed.error());
    }
    const qint64 now = m_clock.nowMs();
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    // The status check and the expiry check are in the WHERE clause: whichever approver's
    // UPDATE lands first changes the row, the other's matches nothing.
    auto q = detail::run(
        *db, m_db.isPostgres(),
        u"UPDATE approvals SET status = ?, decided_by = ?, reason = ?, decided_ms = ?"
        " WHERE id = ? AND status = 'pending' AND (expires_ms = 0 OR expires_ms > ?)"_s,
        {QString(approve ? approval::Approved : approval::Rejected), approver.name, detail::text(reason), now, id, now},
        u"settle approval "_s + id);
    if (!q)
        return std::unexpected(q.error());
    const int changed = q->numRowsAffected();
    q->finish();
    auto after = mustFind(id);
    if (!after)
        return std::unexpected(after.error());
    if (changed != 1) {
        const Error e = notPending(*after, approve ? u"approved"_s : u"rejected"_s);
        auditRefusal(approver, action, id, u"failure"_s, e);
        return std::unexpected(e);
    }
    if (auto told = announce(*after, approver, action,
                             approve ? EventType::ApprovalApproved : EventType::ApprovalRejected, &*found);
        !told)
        return std::unexpected(told.error());
    return *after;
}

Status ApprovalService::unsettle(const ApprovalRecord &before, const QString &settledAs)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    // Conditional, like the settling: a request the waiting work consumed meanwhile stays used.
    auto q = detail::run(*db, m_db.isPostgres(),
                         u"UPDATE approvals SET status = ?, decided_by = ?, reason = ?, decided_ms = ?"
                         " WHERE id = ? AND status = ?"_s,
                         {before.status, detail::text(before.decidedBy), detail::text(before.reason), before.decidedMs,
                          before.id, settledAs},
                         u"take back the decision on approval "_s + before.id);
    if (!q)
        return std::unexpected(q.error());
    const int changed = q->numRowsAffected();
    q->finish();
    if (changed != 1)
        return fail(ErrorCode::Conflict, u"approval %1 was acted on already"_s.arg(before.id), objectOf(before.id));
    return {};
}

Error ApprovalService::notPending(const ApprovalRecord &record, const QString &action)
{
    if (record.status == approval::Pending && record.expiresMs != 0 && record.expiresMs <= m_clock.nowMs()) {
        // Past its time but not yet swept: settle it now so the answer and the row agree.
        discardResult(expire(), "the answer is the conflict either way; the next sweep retries");
        return Error{ErrorCode::Conflict, u"approval %1 expired and can no longer be %2"_s.arg(record.id, action),
                     objectOf(record.id), u"request a new approval"_s};
    }
    QString by = record.decidedBy.isEmpty() ? QString() : u" by "_s + record.decidedBy;
    return Error{ErrorCode::Conflict,
                 u"approval %1 is %2%3 and can no longer be %4"_s.arg(record.id, record.status, by, action),
                 objectOf(record.id),
                 {}};
}

Result<QList<ApprovalRecord>> ApprovalService::expire()
{
    const qint64 now = m_clock.nowMs();
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto due = detail::run(*db, m_db.isPostgres(),
                           u"SELECT id FROM approvals WHERE status = 'pending' AND expires_ms <> 0 AND expires_ms <= ?"
                           " ORDER BY expires_ms, id"_s,
                           {now}, u"list expired approvals"_s);
    if (!due)
        return std::unexpected(due.error());
    QStringList ids;
    while (due->next())
        ids << due->value(0).toString();
    due->finish();

    QList<ApprovalRecord> settled;
    const Actor actor = Actor::system(u"approval"_s);
    for (const QString &id : ids) {
        // One row at a time and conditional, so a sweep racing an approver (or another sweep)
        // settles each row once and announces it once.
        auto q = detail::run(*db, m_db.isPostgres(),
                             u"UPDATE approvals SET status = 'expired', decided_by = ?, reason = ?, decided_ms = ?"
                             " WHERE id = ? AND status = 'pending'"_s,
                             {ExpiryActor, u"no decision before it expired"_s, now, id}, u"expire approval "_s + id);
        if (!q)
            return std::unexpected(q.error());
        const int changed = q->numRowsAffected();
        q->finish();
        if (changed != 1)
            continue;
        auto record = mustFind(id);
        if (!record)
            return std::unexpected(record.error());
        ApprovalRecord before = *record;
        before.status = QString(approval::Pending);
        before.decidedBy.clear();
        before.reason.clear();
        before.decidedMs = 0;
        if (auto told = announce(*record, actor, u"approval.expire"_s, EventType::ApprovalExpired, &before); !told) {
            // Taken back (the next sweep tries again) unless something acted on it meanwhile.
            if (record->status == QString(approval::Pending))
                continue;
            return std::unexpected(told.error());
        }
        settled << *record;
    }
    return settled;
}

Result<ApprovalRecord> ApprovalService::consume(const QString &id, const Actor &actor)
{
    const QString action = u"approval.use"_s;
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(),
                         u"UPDATE approvals SET status = 'used' WHERE id = ? AND status = 'approved'"_s, {id},
                         u"use approval "_s + id);
    if (!q)
        return std::unexpected(q.error());
    const int changed = q->numRowsAffected();
    q->finish();
    auto after = mustFind(id);
    if (!after) {
        auditRefusal(actor, action, id, u"failure"_s, after.error());
        return std::unexpected(after.error());
    }
    if (changed != 1) {
        const Error e = after->status == approval::Used
                            ? Error{ErrorCode::Conflict, u"approval %1 was used already"_s.arg(id), objectOf(id), {}}
                            : Error{ErrorCode::Conflict,
                                    u"approval %1 is %2, not approved"_s.arg(id, after->status),
                                    objectOf(id),
                                    {}};
        auditRefusal(actor, action, id, u"failure"_s, e);
        return std::unexpected(e);
    }
    if (auto recorded = m_audit.record(actor, action, objectOf(id), u"success"_s,
                                       {{u"kind"_s, after->kind}, {u"object"_s, after->object}});
        !recorded) {
        // Not audited, not used: the approval stays approved for the work to use later.
        ApprovalRecord before = *after;
        before.status = QString(approval::Approved);
        discardResult(unsettle(before, QString(approval::Used)), "the audit error is the answer");
        return std::unexpected(recorded.error());
    }
    return *after;
}

Result<std::optional<ApprovalRecord>> ApprovalService::find(const QString &id)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(), u"SELECT "_s + Columns + u" FROM approvals WHERE id = ?"_s, {id},
                         u"find approval "_s + id);
    if (!q)
        return std::unexpected(q.error());
    std::optional<ApprovalRecord> out;
    if (q->next())
        out = readRecord(*q);
    q->finish();
    return out;
}

Result<ApprovalRecord> ApprovalService::mustFind(const QString &id)
{
    auto found = find(id);
    if (!found)
        return std::unexpected(found.error());
    const auto &approval = *found;
    if (!approval)
        return fail(ErrorCode::NotFound, u"no approval %1"_s.arg(id), objectOf(id));
    return *approval;
}

Result<QList<ApprovalRecord>> ApprovalService::list(const QString &status, int limit, int offset)
{
    if (!status.isEmpty() && !approval::isKnownStatus(status))
        return fail(ErrorCode::Invalid,
                    u"unknown approval status \"%1\" (known: pending, approved, rejected, expired, used)"_s.arg(status),
                    u"status"_s);
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    QString sql = u"SELECT "_s + Columns + u" FROM approvals"_s;
    QVariantList values;
    if (!status.isEmpty()) {
        sql += u" WHERE status = ?"_s;
        values << status;
    }
    sql += u" ORDER BY created_ms DESC, id DESC LIMIT ? OFFSET ?"_s;
    values << qBound(1, limit, 1000) << qMax(0, offset);
    auto q = detail::run(*db, m_db.isPostgres(), sql, values, u"list approvals"_s);
    if (!q)
        return std::unexpected(q.error());
    QList<ApprovalRecord> out;
    while (q->next())
        out << readRecord(*q);
    q->finish();
    return out;
}

Status ApprovalService::announce(ApprovalRecord &record, const Actor &actor, const QString &action, EventType event,
                                 const ApprovalRecord *before)
{
    QJsonObject detail{{u"kind"_s, record.kind}, {u"object"_s, record.object}, {u"status"_s, record.status}};
    if (!record.reason.isEmpty())
        detail.insert(u"reason"_s, record.reason);
    // The change is committed; the caller hears of success only once its audit line is too. A
    // decision whose line cannot be written is taken back: nobody acted on it yet (the deploy it
    // holds resumes only once this returns), and a decision that stands unaudited is worse than
    // one made again.
    if (auto recorded = m_audit.record(actor, action, objectOf(record.id), u"success"_s, detail); !recorded) {
        if (!before)
            return recorded;
        if (unsettle(*before, record.status)) {
            record = *before;
            return recorded;
        }
        // The waiting work consumed it in the meantime: it stands, and the caller hears that.
        return std::unexpected(unaudited(u"approval %1 was %2"_s.arg(record.id, record.status), recorded.error()));
    }
    if (m_bus) {
        Event e;
        e.type = event;
        e.timeMs = m_clock.nowMs();
        QJsonObject data = record.toJson();
        data.remove(u"plan"_s); // subscribers (tray, notifications) want the headline, not the plan
        e.data = data;
        m_bus->publish(e);
    }
    return {};
}

void ApprovalService::auditRefusal(const Actor &actor, const QString &action, const QString &id, const QString &outcome,
                                   const Error &error)
{
    discardResult(m_audit.record(actor, action, objectOf(id), outcome, {{u"error"_s, error.text()}}),
                  "the caller is already getting an error; a failing audit log must not replace it");
}

} // namespace pando::core
