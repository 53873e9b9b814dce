#include "qml/approvals/approvalsmodel.h"
#include "core/vocab/vocab.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QLocale>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

QString personName(const QString &requester)
{
    // "user:alice/token:t1" reads as alice (the person, not the token they used); system actors
    // keep their kind.
    const QString person = requester.section(u'/', 0, 0);
    return person.startsWith(u"user:"_s) ? person.mid(5) : person;
}

QString joined(const QJsonValue &value)
{
    QStringList items;
    for (const QJsonValue v : value.toArray())
        items.append(v.toString());
    return items.join(u", "_s);
}

// A resource version as one line: {"ref": "abc"} reads as ref=abc.
QString versionText(const QJsonValue &value)
{
    const auto scalar = [](const QJsonValue &v) {
        if (v.isObject())
            return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
        if (v.isArray())
            return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
        return v.toVariant().toString();
    };
    if (!value.isObject())
        return scalar(value);
    QStringList parts;
    const QJsonObject o = value.toObject();
    for (auto it = o.begin(); it != o.end(); ++it)
        parts.append(it.key() + u'=' + scalar(it.value()));
    return parts.join(u' ');
}

QVariantMap line(const QString &label, const QString &value)
{
    return {{u"label"_s, label}, {u"value"_s, value}};
}

} // namespace

ApprovalsModel::ApprovalsModel(QObject *parent)
    : SessionListModel(parent), m_now([] { return QDateTime::currentMSecsSinceEpoch(); })
{
    m_tick.setInterval(30 * 1000);
    connect(&m_tick, &QTimer::timeout, this, [this] {
        if (m_rows.isEmpty())
            return;
        Q_EMIT dataChanged(index(0), index(int(m_rows.size()) - 1), {ExpiresTextRole, CreatedTextRole});
        if (m_selected >= 0)
            Q_EMIT selectedChanged();
    });
    m_tick.start();
}

ApprovalsModel::~ApprovalsModel() = default;

void ApprovalsModel::sessionReplaced()
{
    beginResetModel();
    m_rows.clear();
    endResetModel();
    m_loaded = false;
    m_selected = -1;
    Q_EMIT countChanged();
    Q_EMIT loadingChanged();
    Q_EMIT selectedChanged();
}

int ApprovalsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QHash<int, QByteArray> ApprovalsModel::roleNames() const
{
    return {
        {IdRole, "id"},
        {KindRole, "kind"},
        {ObjectRole, "object"},
        {RequesterRole, "requester"},
        {SummaryRole, "summary"},
        {StatusRole, "status"},
        {CreatedMsRole, "createdMs"},
        {ExpiresMsRole, "expiresMs"},
        {ApproversRole, "approvers"},
        {DecidedByRole, "decidedBy"},
        {ReasonRole, "reason"},
        {TitleRole, "title"},
        {KindTextRole, "kindText"},
        {RequesterTextRole, "requesterText"},
        {ExpiresTextRole, "expiresText"},
        {CreatedTextRole, "createdText"},
        {BusyRole, "busy"},
        {ActionErrorRole, "actionError"},
    };
}

QVariant ApprovalsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    if (role == Qt::DisplayRole)
        role = TitleRole;
    return roleValue(m_rows.at(index.row()), role);
}

QString ApprovalsModel::relative(qint64 ms) const
{
    const qint64 delta = ms - m_now();
    const qint64 minutes = qAbs(delta) / 60000;
    QString span;
    if (minutes < 1)
        span = tr("less than a minute");
    else if (minutes < 120)
        span = tr("%n minute(s)", nullptr, int(minutes));
    else if (minutes < qint64{48} * 60)
        span = tr("%n hour(s)", nullptr, int(minutes / 60));
    else
        span = tr("%n day(s)", nullptr, int(minutes / (qint64{24} * 60)));
    return delta >= 0 ? tr("in %1").arg(span) : tr("%1 ago").arg(span);
}

QVariant ApprovalsModel::roleValue(const Row &row, int role) const
{
    const QJsonObject &a = row.approval;
    const QString kind = a.value(u"kind"_s).toString();
    switch (role) {
    case IdRole:
        return a.value(u"id"_s).toString();
    case KindRole:
        return kind;
    case ObjectRole:
        return a.value(u"object"_s).toString();
    case RequesterRole:
        return a.value(u"requester"_s).toString();
    case SummaryRole:
        return a.value(u"summary"_s).toString();
    case StatusRole:
        return a.value(u"status"_s).toString();
    case CreatedMsRole:
        return a.value(u"created_ms"_s).toInteger();
    case ExpiresMsRole:
        return a.value(u"expires_ms"_s).toInteger();
    case ApproversRole:
        return a.value(u"approvers"_s).toVariant().toStringList();
    case DecidedByRole:
        return a.value(u"decided_by"_s).toString();
    case ReasonRole:
        return a.value(u"reason"_s).toString();
    case TitleRole: {
        const QJsonObject plan = a.value(u"plan"_s).toObject();
        const QString object = a.value(u"object"_s).toString();
        if (kind == u"deploy"_s) {
            const QString app = plan.value(u"app"_s).toString();
            return app.isEmpty() ? tr("Deploy %1").arg(object.section(u'/', 1)) : tr("Deploy of %1").arg(app);
        }
        if (kind == u"pipeline-step"_s) // run/<id>/step/<name>
            return tr("Pipeline step %1").arg(object.section(u'/', 3));
        return object;
    }
    case KindTextRole:
        if (kind == u"deploy"_s)
            return tr("deploy");
        if (kind == u"pipeline-step"_s)
            return tr("pipeline step");
        return kind;
    case RequesterTextRole:
        return personName(a.value(u"requester"_s).toString());
    case ExpiresTextRole: {
        const qint64 expires = a.value(u"expires_ms"_s).toInteger();
        if (expires <= 0)
            return tr("never expires");
        if (expires <= m_now())
            return tr("expired");
        return tr("expires %1").arg(relative(expires));
    }
    case CreatedTextRole: {
        const qint64 created = a.value(u"created_ms"_s).toInteger();
        return created > 0 ? tr("asked %1").arg(relative(created)) : QString();
    }
    case BusyRole:
        return row.busy;
    case ActionErrorRole:
        return row.actionError;
    }
    return {};
}

void ApprovalsModel::selectionMoved()
{
    // The plan is fetched for the approval looked at, not for every row.
    if (m_selected >= 0 && !m_rows.at(m_selected).planLoaded)
        fetchPlan(m_selected);
}

bool ApprovalsModel::selectId(const QString &id)
{
    const int row = rowOf(id);
    setSelectedRow(row);
    return row >= 0;
}

QVariantMap ApprovalsModel::selected() const
{
    // Every key is always there (an empty row's values when nothing is selected), so bindings
    // never read undefined while the selection changes.
    static const Row none;
    const Row &row = m_selected >= 0 && m_selected < m_rows.size() ? m_rows.at(m_selected) : none;
    QVariantMap map;
    const auto names = roleNames();
    for (auto it = names.cbegin(); it != names.cend(); ++it)
        map.insert(QString::fromLatin1(it.value()), roleValue(row, it.key()));
    return map;
}

bool ApprovalsModel::isPlanLoading() const
{
    return m_selected >= 0 && m_rows.at(m_selected).planLoading;
}

QString ApprovalsModel::planError() const
{
    return m_selected >= 0 ? m_rows.at(m_selected).planError : QString();
}

QVariantList ApprovalsModel::planLines() const
{
    if (m_selected < 0 || !m_rows.at(m_selected).planLoaded)
        return {};
    const QJsonObject &a = m_rows.at(m_selected).approval;
    const QJsonObject plan = a.value(u"plan"_s).toObject();
    QVariantList lines;
    const auto add = [&lines](const QString &label, const QString &value) {
        if (!value.isEmpty())
            lines.append(line(label, value));
    };
    if (a.value(u"kind"_s).toString() == u"deploy"_s) {
        const QJsonObject serving = plan.value(u"serving"_s).toObject();
        add(tr("App"), plan.value(u"app"_s).toString());
        add(tr("Why it waits"), joined(plan.value(u"reasons"_s)));
        add(tr("Commit"),
            plan.value(u"commit"_s).toString().left(12) + (plan.value(u"ref"_s).toString().isEmpty()
                                                               ? QString()
                                                               : u" ("_s + plan.value(u"ref"_s).toString() + u')'));
        const QString repo = plan.value(u"repo"_s).toString();
        const QString wasRepo = serving.value(u"repo"_s).toString();
        add(tr("Repository"), wasRepo.isEmpty() || wasRepo == repo ? repo : tr("%1 (was %2)").arg(repo, wasRepo));
        add(tr("Image built from"), plan.value(u"dockerfile"_s).toString());
        if (const int port = plan.value(u"port"_s).toInt(); port > 0)
            add(tr("Port"), QString::number(port));
        const qint64 memory = plan.value(u"memory_bytes"_s).toInteger();
        const qint64 wasMemory = serving.value(u"memory_bytes"_s).toInteger();
        const QString memoryText = memory > 0 ? QLocale().formattedDataSize(memory) : tr("no limit");
        add(tr("Memory"),
            serving.contains(u"memory_bytes"_s) && wasMemory != memory
                ? tr("%1 (was %2)")
                      .arg(memoryText, wasMemory > 0 ? QLocale().formattedDataSize(wasMemory) : tr("no limit"))
                : memoryText);
        const double cpus = plan.value(u"cpus"_s).toDouble();
        const double wasCpus = serving.value(u"cpus"_s).toDouble();
        const QString cpuText = cpus > 0 ? QLocale().toString(cpus) : tr("no limit");
        add(tr("CPUs"), serving.contains(u"cpus"_s) && !qFuzzyCompare(1 + wasCpus, 1 + cpus)
                            ? tr("%1 (was %2)").arg(cpuText, wasCpus > 0 ? QLocale().toString(wasCpus) : tr("no limit"))
                            : cpuText);
        const QString egress = plan.value(u"egress"_s).toString();
        const QString wasEgress = serving.value(u"egress"_s).toString();
        add(tr("Outbound network"),
            wasEgress.isEmpty() || wasEgress == egress ? egress : tr("%1 (was %2)").arg(egress, wasEgress));
        add(tr("Command"), plan.value(u"command"_s).toVariant().toStringList().join(u' '));
        add(tr("Environment"), joined(plan.value(u"env"_s)));
        add(tr("Notes"), joined(plan.value(u"notes"_s)));
        add(tr("Serving now"), serving.isEmpty() ? tr("nothing (first deploy)")
                                                 : tr("deploy %1 at %2")
                                                       .arg(serving.value(u"deploy"_s).toString(),
                                                            serving.value(u"commit"_s).toString().left(12)));
    } else {
        add(tr("Message"), plan.value(u"message"_s).toString());
        add(tr("Pipeline"), plan.value(u"pipeline"_s).toString());
        add(tr("Job"), plan.value(u"job"_s).toString());
        if (plan.contains(u"number"_s))
            add(tr("Run"),
                tr("#%1 (%2)").arg(plan.value(u"number"_s).toInteger()).arg(plan.value(u"run"_s).toString()));
        add(tr("Step"), plan.value(u"step_path"_s).toString(plan.value(u"step"_s).toString()));
        const QJsonObject inputs = plan.value(u"inputs"_s).toObject();
        for (auto it = inputs.begin(); it != inputs.end(); ++it)
            add(tr("Input %1").arg(it.key()), versionText(it.value()));
    }
    return lines;
}

int ApprovalsModel::rowOf(const QString &id) const
{
    for (int i = 0; i < m_rows.size(); ++i)
        if (m_rows.at(i).approval.value(u"id"_s).toString() == id)
            return i;
    return -1;
}

void ApprovalsModel::refresh()
{
    if (!m_session)
        return;
    setLoading(true);
    const quint64 generation = m_generation;
    QPointer<ApprovalsModel> self(this);
    m_session->approvals(u"pending"_s, [self, generation](const Result<QJsonArray> &pending) {
        if (!self || self->m_generation != generation)
            return;
        if (!pending) {
            self->setError(pending.error().text());
            self->setLoading(false);
            return;
        }
        self->setError({});
        self->m_loaded = true;
        QStringList seen;
        for (const QJsonValue approval : *pending) {
            seen.append(approval.toObject().value(u"id"_s).toString());
            self->apply(approval.toObject());
        }
        for (int i = int(self->m_rows.size()) - 1; i >= 0; --i) {
            const QString id = self->m_rows.at(i).approval.value(u"id"_s).toString();
            if (!seen.contains(id))
                self->remove(id);
        }
        self->setLoading(false);
    });
}

void ApprovalsModel::apply(const QJsonObject &approval)
{
    const QString id = approval.value(u"id"_s).toString();
    if (id.isEmpty())
        return;
    if (approval.value(u"status"_s).toString() != u"pending"_s) {
        remove(id);
        return;
    }
    const int row = rowOf(id);
    if (row >= 0) {
        Row &r = m_rows[row];
        // Lists and events come without the plan: keep the one already fetched.
        const QJsonValue plan = r.approval.value(u"plan"_s);
        r.approval = approval;
        if (!approval.contains(u"plan"_s) && !plan.isUndefined())
            r.approval.insert(u"plan"_s, plan);
        rowChanged(row);
        return;
    }
    // Newest first, as the API lists them.
    const qint64 created = approval.value(u"created_ms"_s).toInteger();
    int at = 0;
    while (at < m_rows.size() && m_rows.at(at).approval.value(u"created_ms"_s).toInteger() >= created)
        ++at;
    beginInsertRows({}, at, at);
    m_rows.insert(at, Row{approval});
    endInsertRows();
    if (m_selected >= at) {
        ++m_selected;
        Q_EMIT selectedChanged();
    }
    Q_EMIT countChanged();
}

void ApprovalsModel::remove(const QString &id)
{
    const int row = rowOf(id);
    if (row < 0)
        return;
    removeListRow(m_rows, row);
    Q_EMIT selectedChanged();
    Q_EMIT countChanged();
}

void ApprovalsModel::rowChanged(int row)
{
    const QModelIndex i = index(row);
    Q_EMIT dataChanged(i, i);
    if (row == m_selected)
        Q_EMIT selectedChanged();
}

void ApprovalsModel::fetchPlan(int row)
{
    if (!m_session)
        return;
    Row &r = m_rows[row];
    if (r.planLoading)
        return;
    r.planLoading = true;
    r.planError.clear();
    const QString id = r.approval.value(u"id"_s).toString();
    const quint64 generation = m_generation;
    QPointer<ApprovalsModel> self(this);
    m_session->approval(id, [self, generation, id](const Result<QJsonObject> &shown) {
        if (!self || self->m_generation != generation)
            return;
        const int at = self->rowOf(id);
        if (at < 0)
            return;
        Row &r = self->m_rows[at];
        r.planLoading = false;
        if (!shown) {
            r.planError = shown.error().text();
            self->rowChanged(at);
            return;
        }
        r.planLoaded = true;
        self->apply(*shown); // may remove the row: decided while the plan was on its way
    });
}

void ApprovalsModel::approve(int row, const QString &reason)
{
    decide(row, true, reason);
}

void ApprovalsModel::reject(int row, const QString &reason)
{
    decide(row, false, reason);
}

void ApprovalsModel::decide(int row, bool approve, const QString &reason)
{
    if (!m_session || row < 0 || row >= m_rows.size() || m_rows.at(row).busy)
        return;
    Row &r = m_rows[row];
    r.busy = true;
    r.actionError.clear();
    rowChanged(row);
    setError({});
    const QString id = r.approval.value(u"id"_s).toString();
    const quint64 generation = m_generation;
    QPointer<ApprovalsModel> self(this);
    m_session->decideApproval(id, approve, reason, [self, generation, id](const Result<QJsonObject> &decided) {
        if (!self || self->m_generation != generation)
            return;
        const int at = self->rowOf(id);
        if (decided) {
            self->apply(*decided); // no longer pending: the row goes
            return;
        }
        // The install's words say who refused and why (the requester may not approve their own
        // request; someone decided first; it expired), and its hint what to do instead.
        const Error &e = decided.error();
        const QString text = e.hint.isEmpty() ? e.text() : tr("%1 — %2").arg(e.text(), e.hint);
        if (at < 0) {
            self->setError(text);
            return;
        }
        Row &r = self->m_rows[at];
        r.busy = false;
        r.actionError = text;
        self->rowChanged(at);
    });
}

void ApprovalsModel::onEvent(const QJsonObject &event)
{
    const std::optional<core::EventType> type = core::parseEventType(event.value(u"type"_s).toString());
    if (!(type && core::isApprovalEvent(*type)))
        return;
    const QJsonObject approval = event.value(u"data"_s).toObject();
    if (type == core::EventType::ApprovalRequested)
        apply(approval);
    else if (type == core::EventType::ApprovalApproved || type == core::EventType::ApprovalRejected ||
             type == core::EventType::ApprovalExpired)
        remove(approval.value(u"id"_s).toString());
}

} // namespace pando::desktop
