#include "qml/apps/appeventsmodel.h"

#include <QDateTime>
#include <QJsonArray>
#include <QLocale>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

constexpr int MaxRows = 2000;

QString sizeText(qint64 bytes)
{
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
}

QString stepError(const QJsonObject &data)
{
    const QString step = data.value(u"step"_s).toString();
    const QString error = data.value(u"error"_s).toString();
    return step.isEmpty() ? error : AppEventsModel::tr("%1 failed: %2").arg(step, error);
}

} // namespace

QString AppEventsModel::actorText(const QString &actor)
{
    if (actor.startsWith(u"system:"_s))
        return tr("Pando (%1)").arg(actor.mid(7));
    if (actor.startsWith(u"user:"_s))
        return actor.mid(5).section(u'/', 0, 0);
    return actor;
}

AppEventsModel::AppEventsModel(QObject *parent) : SessionListModel(parent)
{}

AppEventsModel::~AppEventsModel() = default;

void AppEventsModel::setApp(const QString &app)
{
    if (m_app == app)
        return;
    m_app = app;
    m_deployLimit = Deploys;
    beginResetModel();
    m_rows.clear();
    endResetModel();
    Q_EMIT countChanged();
    Q_EMIT appChanged();
    refresh();
}

int AppEventsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QHash<int, QByteArray> AppEventsModel::roleNames() const
{
    return {{TimeMsRole, "timeMs"}, {TimeTextRole, "timeText"}, {TitleRole, "title"}, {DetailRole, "detail"},
            {ActorRole, "actor"},   {StateRole, "state"},       {LiveRole, "live"},   {ObjectRole, "object"}};
}

QVariant AppEventsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Entry &e = m_rows.at(index.row());
    switch (role) {
    case TimeMsRole:
        return e.timeMs;
    case TimeTextRole:
        return momentText(e.timeMs);
    case Qt::DisplayRole:
    case TitleRole:
        return e.title;
    case DetailRole:
        return e.detail;
    case ActorRole:
        return e.actor;
    case StateRole:
        return int(e.state);
    case LiveRole:
        return e.seq == 0;
    case ObjectRole:
        return e.object;
    }
    return {};
}

void AppEventsModel::setHistoryError(const QString &error)
{
    if (m_historyError == error)
        return;
    m_historyError = error;
    Q_EMIT historyErrorChanged();
}

void AppEventsModel::setHasOlder(bool hasOlder)
{
    if (m_hasOlder == hasOlder)
        return;
    m_hasOlder = hasOlder;
    Q_EMIT hasOlderChanged();
}

void AppEventsModel::sessionReplaced()
{
    m_deployLimit = Deploys;
    setHasOlder(false);
    beginResetModel();
    m_rows.clear();
    endResetModel();
    Q_EMIT countChanged();
}

void AppEventsModel::refresh()
{
    load(false);
}

void AppEventsModel::loadOlder()
{
    if (!m_hasOlder || isLoading())
        return;
    m_deployLimit = std::min(m_deployLimit + Deploys, int(MaxDeploys));
    load(true);
}

void AppEventsModel::load(bool older)
{
    const quint64 generation = ++m_generation;
    m_fetched.clear();
    m_pending = 0;
    m_keepHistory = older;
    // The objects already read stay asked for while older ones are added.
    if (!older) {
        m_asked.clear();
        setHistoryError({});
    }
    if (!m_session || m_app.isEmpty()) {
        setHasOlder(false);
        setLoading(false);
        return;
    }
    setLoading(true);
    ++m_pending; // held until every request below is made
    fetch(u"app/"_s + m_app, generation);
    QPointer<AppEventsModel> self(this);
    ++m_pending;
    m_session->deploys(m_app, m_deployLimit, [self, generation](const Result<QJsonArray> &deploys) {
        if (!self || generation != self->m_generation)
            return;
        self->m_deploysRead = deploys ? int(deploys->size()) : 0;
        if (deploys)
            for (const QJsonValue v : *deploys) {
                const QJsonObject deploy = v.toObject();
                self->fetch(u"deploy/"_s + deploy.value(u"id"_s).toString(), generation);
                if (const QString approval = deploy.value(u"approval"_s).toString(); !approval.isEmpty())
                    self->fetch(u"approval/"_s + approval, generation);
            }
        self->answered(generation);
    });
    ++m_pending;
    m_session->appServices(m_app, [self, generation](const Result<QJsonArray> &services) {
        if (!self || generation != self->m_generation)
            return;
        if (services) // an app without services, or an install without them: no lines to ask for
            for (const QJsonValue v : *services)
                self->fetch(u"app/%1/service/%2"_s.arg(self->m_app, v.toObject().value(u"slot"_s).toString()),
                            generation);
        self->answered(generation);
    });
    answered(generation);
}

void AppEventsModel::fetch(const QString &object, quint64 generation)
{
    if (m_asked.contains(object))
        return;
    m_asked.insert(object);
    ++m_pending;
    QPointer<AppEventsModel> self(this);
    m_session->auditLines(object, LinesPerObject, [self, generation](const Result<QJsonArray> &lines) {
        if (!self || generation != self->m_generation)
            return;
        if (!lines) {
            const Error &e = lines.error();
            if (e.code == ErrorCode::Forbidden)
                self->setHistoryError(
                    tr("The app's history comes from the audit log, which this account may not read (only "
                       "administrators may): %1. What happens while this tab is open is shown below.")
                        .arg(e.text()));
            else if (self->m_historyError.isEmpty())
                self->setHistoryError(tr("The app's history could not be read: %1").arg(e.text()));
        } else {
            for (const QJsonValue line : *lines)
                self->m_fetched.append(describeLine(line.toObject()));
        }
        self->answered(generation);
    });
}

namespace {

bool sameEntry(const AppEventsModel::Entry &a, const AppEventsModel::Entry &b)
{
    return a.seq == b.seq && a.timeMs == b.timeMs && a.title == b.title;
}

} // namespace

bool AppEventsModel::isSubsequence(const QList<Entry> &part, const QList<Entry> &whole)
{
    qsizetype at = 0;
    for (const Entry &e : whole)
        if (at < part.size() && sameEntry(part.at(at), e))
            ++at;
    return at == part.size();
}

void AppEventsModel::insertMissing(const QList<Entry> &rows)
{
    qsizetype at = 0;
    for (qsizetype k = 0; k < rows.size();) {
        if (at < m_rows.size() && sameEntry(m_rows.at(at), rows.at(k))) {
            ++at;
            ++k;
            continue;
        }
        qsizetype end = k;
        while (end < rows.size() && !(at < m_rows.size() && sameEntry(m_rows.at(at), rows.at(end))))
            ++end;
        beginInsertRows({}, int(at), int(at + end - k) - 1);
        for (qsizetype i = k; i < end; ++i)
            m_rows.insert(at + (i - k), rows.at(i));
        endInsertRows();
        at += end - k;
        k = end;
    }
}

void AppEventsModel::answered(quint64 generation)
{
    if (generation != m_generation || --m_pending > 0)
        return;
    // The history read before stays when older lines are added to it.
    QList<Entry> history;
    if (m_keepHistory)
        for (const Entry &e : std::as_const(m_rows))
            if (e.seq != 0)
                history.append(e);
    history.append(m_fetched);
    m_fetched.clear();
    std::stable_sort(history.begin(), history.end(), [](const Entry &a, const Entry &b) { return a.seq > b.seq; });
    history.erase(
        std::unique(history.begin(), history.end(), [](const Entry &a, const Entry &b) { return a.seq == b.seq; }),
        history.end());
    // Live events the log has caught up with are in it now; newer ones stay on top.
    const qint64 newest = history.isEmpty() ? 0 : history.first().timeMs;
    QList<Entry> rows;
    for (const Entry &e : std::as_const(m_rows))
        if (e.seq == 0 && (history.isEmpty() || e.timeMs > newest))
            rows.append(e);
    rows.append(history);
    if (rows.size() > MaxRows)
        rows.resize(MaxRows);
    // Older lines are inserted where they go among the rows shown (mostly below them), so the
    // list keeps its place: the user scrolled down to ask for them. Anything else is a new list.
    if (m_keepHistory && isSubsequence(m_rows, rows))
        insertMissing(rows);
    else {
        beginResetModel();
        m_rows = std::move(rows);
        endResetModel();
    }
    // A full page of deploys may have more behind it.
    setHasOlder(m_deploysRead >= m_deployLimit && m_deployLimit < MaxDeploys && m_rows.size() < MaxRows);
    m_loaded = true;
    setLoading(false);
    Q_EMIT countChanged();
}

namespace {

// What happened, once for both sources: the audit line's action and the live event's type that
// say it, its words and its state. Either name may be empty where only one source tells it.
struct Happening {
    QLatin1StringView action;
    QLatin1StringView event;
    const char *title;
    DisplayState::Value state;
};

constexpr Happening Happenings[] = {
    {"app.create"_L1, "app.created"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "App created"), DisplayState::Neutral},
    {"app.update"_L1, "app.updated"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Spec changed"), DisplayState::Neutral},
    {"app.remove"_L1, "app.removed"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "App removed"), DisplayState::Neutral},
    {"app.start"_L1, "app.started"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Started again"), DisplayState::Neutral},
    {"app.stop"_L1, "app.stopped"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Stopped"), DisplayState::Neutral},
    {"app.restart"_L1, "app.restarted"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Container restarted"),
     DisplayState::Waiting},
    {"app.recreate"_L1, {}, QT_TRANSLATE_NOOP("AppEventsModel", "Container recreated"), DisplayState::Waiting},
    {"app.disk.exceed"_L1, "app.disk.exceeded"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Over its disk limit"),
     DisplayState::Waiting},
    {{}, "app.secrets.changed"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Secrets changed"), DisplayState::Neutral},
    {"app.hook"_L1, "app.hook.delivered"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Webhook delivery"),
     DisplayState::Neutral},
    {"app.hook.secret"_L1, {}, QT_TRANSLATE_NOOP("AppEventsModel", "Webhook secret replaced"), DisplayState::Neutral},
    {{}, "app.unhealthy"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Unhealthy"), DisplayState::Failed},
    {{}, "app.healthy"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Healthy again"), DisplayState::Healthy},
    {{}, "container.removed"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Container removed"), DisplayState::Neutral},
    {{}, "service.removed"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Service removed"), DisplayState::Neutral},
    {"deploy.start"_L1, "deploy.queued"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Deploy started"),
     DisplayState::Progress},
    {{},
     "deploy.awaiting-approval"_L1,
     QT_TRANSLATE_NOOP("AppEventsModel", "Deploy waits for approval"),
     DisplayState::Waiting},
    {{}, "deploy.succeeded"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Deploy succeeded"), DisplayState::Healthy},
    {{}, "deploy.failed"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Deploy failed"), DisplayState::Failed},
    {"deploy.cancel"_L1, {}, QT_TRANSLATE_NOOP("AppEventsModel", "Deploy cancelled"), DisplayState::Stopped},
    {"approval.request"_L1, "approval.requested"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Approval requested"),
     DisplayState::Waiting},
    {"approval.approve"_L1, "approval.approved"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Approved"),
     DisplayState::Healthy},
    {"approval.reject"_L1, "approval.rejected"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Rejected"),
     DisplayState::Failed},
    {"approval.expire"_L1, "approval.expired"_L1, QT_TRANSLATE_NOOP("AppEventsModel", "Approval expired"),
     DisplayState::Stopped},
};

const Happening *happening(QLatin1StringView Happening::*name, const QString &value)
{
    for (const Happening &h : Happenings)
        if (!(h.*name).isEmpty() && h.*name == value)
            return &h;
    return nullptr;
}

QString diskDetail(const QJsonObject &data)
{
    const QString used = sizeText(data.value(u"used_bytes"_s).toInteger());
    const QString limit = sizeText(data.value(u"limit_bytes"_s).toInteger());
    return data.value(u"action"_s).toString() == u"stopped"_s
               ? AppEventsModel::tr("wrote %1, over its limit of %2: Pando stopped it").arg(used, limit)
               : AppEventsModel::tr("wrote %1, over its limit of %2").arg(used, limit);
}

} // namespace

AppEventsModel::Entry AppEventsModel::describeLine(const QJsonObject &line)
{
    Entry e;
    e.seq = line.value(u"seq"_s).toInteger();
    e.timeMs = line.value(u"time_ms"_s).toInteger();
    e.actor = actorText(line.value(u"actor"_s).toString());
    e.object = line.value(u"object"_s).toString();
    const QString action = line.value(u"action"_s).toString();
    const QString outcome = line.value(u"outcome"_s).toString();
    const QJsonObject detail = line.value(u"detail"_s).toObject();
    const bool ok = outcome == u"success"_s;
    const QString slot = e.object.section(u'/', 3, 3);
    if (const Happening *h = happening(&Happening::action, action)) {
        e.title = tr(h->title);
        e.state = h->state;
    } else if (action == u"deploy.finish"_s || action == u"deploy.settle"_s) {
        e.title = ok ? tr("Deploy succeeded") : tr("Deploy failed");
        e.state = ok ? DisplayState::Healthy : DisplayState::Failed;
    } else if (action == u"app.secret.set"_s) {
        e.title = tr("Secret %1 set").arg(detail.value(u"name"_s).toString());
    } else if (action == u"app.secret.remove"_s) {
        e.title = tr("Secret %1 removed").arg(detail.value(u"name"_s).toString());
    } else if (action == u"service.backup"_s) {
        e.title = tr("Backup of %1").arg(slot);
        if (ok)
            e.detail = sizeText(detail.value(u"bytes"_s).toInteger());
    } else if (action == u"service.remove"_s) {
        e.title = tr("Service %1 removed").arg(slot);
    } else {
        e.title = action; // an action this version has no words for: the log's own
    }
    if (action == u"deploy.start"_s)
        e.detail = tr("ref %1").arg(detail.value(u"ref"_s).toString());
    else if (action == u"app.restart"_s)
        e.detail = detail.contains(u"probe"_s)
                       ? tr("unhealthy: %1").arg(detail.value(u"probe"_s).toString())
                       : tr("it had exited (exit code %1)").arg(detail.value(u"exit_code"_s).toInteger());
    else if (action == u"app.disk.exceed"_s)
        e.detail = diskDetail(detail);
    else if (action.startsWith(u"approval."_s) || action.startsWith(u"deploy."_s))
        e.detail = action == u"deploy.finish"_s || action == u"deploy.settle"_s ? (ok ? QString() : stepError(detail))
                                                                                : detail.value(u"reason"_s).toString();
    if (outcome == u"denied"_s) {
        e.title = tr("Refused: %1").arg(e.title);
        e.state = DisplayState::Failed;
    } else if (!ok) {
        e.state = DisplayState::Failed;
        if (e.detail.isEmpty())
            e.detail = detail.value(u"error"_s).toString();
    }
    return e;
}

std::optional<AppEventsModel::Entry> AppEventsModel::describeEvent(const QJsonObject &event)
{
    const Happening *h = happening(&Happening::event, event.value(u"type"_s).toString());
    if (!h)
        return std::nullopt; // steps belong to the Deploys tab
    const QJsonObject data = event.value(u"data"_s).toObject();
    Entry e;
    e.timeMs = event.value(u"time_ms"_s).toInteger();
    if (e.timeMs <= 0)
        e.timeMs = QDateTime::currentMSecsSinceEpoch();
    e.title = tr(h->title);
    e.state = h->state;
    // What the audit line of the same happening names, so a live row leads where a read one does.
    if (const QString deploy = event.value(u"deploy"_s).toString(); !deploy.isEmpty())
        e.object = u"deploy/"_s + deploy;
    e.actor = data.contains(u"actor"_s) ? actorText(data.value(u"actor"_s).toString()) : QString();
    if (h->state == DisplayState::Failed)
        e.detail = data.contains(u"step"_s) ? stepError(data) : data.value(u"reason"_s).toString();
    else if (h->action == "app.disk.exceed"_L1)
        e.detail = diskDetail(data);
    else
        e.detail = data.value(u"reason"_s).toString();
    return e;
}

void AppEventsModel::onEvent(const QJsonObject &event)
{
    if (m_app.isEmpty() || event.value(u"app"_s).toString() != m_app)
        return;
    std::optional<Entry> entry = describeEvent(event);
    if (!entry)
        return;
    beginInsertRows({}, 0, 0);
    m_rows.prepend(std::move(*entry));
    endInsertRows();
    if (m_rows.size() > MaxRows) {
        beginRemoveRows({}, MaxRows, int(m_rows.size()) - 1);
        m_rows.resize(MaxRows);
        endRemoveRows();
    }
    Q_EMIT countChanged();
}

} // namespace pando::desktop
