#include "qml/activity/activitymodel.h"

#include <QDateTime>
#include <QLocale>

using namespace Qt::StringLiterals;

namespace pando::desktop {

ActivityModel::ActivityModel(QObject *parent) : SessionListModel(parent)
{}

ActivityModel::~ActivityModel() = default;

int ActivityModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_entries.size());
}

QHash<int, QByteArray> ActivityModel::roleNames() const
{
    return {{TimeMsRole, "timeMs"}, {TimeTextRole, "timeText"}, {KindRole, "kind"}, {StateRole, "state"},
            {TitleRole, "title"},   {DetailRole, "detail"},     {AppRole, "app"},   {TargetRole, "target"}};
}

QVariant ActivityModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Entry &e = m_entries.at(size_t(index.row()));
    switch (role) {
    case TimeMsRole:
        return e.timeMs;
    case TimeTextRole: {
        const QDateTime at = QDateTime::fromMSecsSinceEpoch(e.timeMs);
        return at.date() == QDate::currentDate() ? QLocale().toString(at.time(), QLocale::ShortFormat)
                                                 : QLocale().toString(at, QLocale::ShortFormat);
    }
    case KindRole:
        return e.kind;
    case StateRole:
        return int(e.state);
    case Qt::DisplayRole:
    case TitleRole:
        return e.title;
    case DetailRole:
        return e.detail;
    case AppRole:
        return e.app;
    case TargetRole:
        return e.target;
    }
    return {};
}

void ActivityModel::clear()
{
    if (m_entries.empty())
        return;
    beginResetModel();
    m_entries.clear();
    endResetModel();
    Q_EMIT countChanged();
}

std::optional<ActivityModel::Entry> ActivityModel::describe(const QJsonObject &event)
{
    const QString type = event.value(u"type"_s).toString();
    const QString app = event.value(u"app"_s).toString();
    const QJsonObject data = event.value(u"data"_s).toObject();
    Entry e;
    e.timeMs = event.value(u"time_ms"_s).toInteger();
    if (e.timeMs <= 0)
        e.timeMs = QDateTime::currentMSecsSinceEpoch();
    e.app = app;
    e.kind = type.section(u'.', 0, 0);
    if (type == u"deploy.queued"_s) {
        e.state = DisplayState::Progress;
        e.title = tr("%1: deploy queued").arg(app);
        if (data.contains(u"approval"_s))
            e.detail = tr("approved (%1)").arg(data.value(u"approval"_s).toString());
        e.target = event.value(u"deploy"_s).toString();
    } else if (type == u"deploy.succeeded"_s) {
        e.state = DisplayState::Healthy;
        e.title = tr("%1: deploy succeeded").arg(app);
        e.target = event.value(u"deploy"_s).toString();
    } else if (type == u"deploy.failed"_s) {
        e.state = DisplayState::Failed;
        e.title = tr("%1: deploy failed").arg(app);
        const QString step = data.value(u"step"_s).toString();
        const QString error = data.value(u"error"_s).toString();
        e.detail = step.isEmpty() ? error : tr("%1 failed: %2").arg(step, error);
        e.target = event.value(u"deploy"_s).toString();
    } else if (type == u"app.created"_s) {
        e.title = tr("%1 was created").arg(app);
    } else if (type == u"app.updated"_s) {
        e.title = tr("%1: spec changed").arg(app);
    } else if (type == u"app.removed"_s) {
        e.title = tr("%1 was removed").arg(app);
    } else if (type == u"approval.requested"_s) {
        e.state = DisplayState::Waiting;
        e.title = tr("Approval requested: %1").arg(data.value(u"object"_s).toString());
        e.detail = data.value(u"summary"_s).toString();
        e.target = data.value(u"id"_s).toString();
    } else if (type == u"approval.approved"_s || type == u"approval.rejected"_s || type == u"approval.expired"_s) {
        const QString word = type.section(u'.', 1);
        e.state = word == u"approved"_s ? DisplayState::Healthy : DisplayState::Failed;
        e.title = word == u"approved"_s   ? tr("Approved: %1").arg(data.value(u"object"_s).toString())
                  : word == u"rejected"_s ? tr("Rejected: %1").arg(data.value(u"object"_s).toString())
                                          : tr("Expired: %1").arg(data.value(u"object"_s).toString());
        e.detail = data.value(u"reason"_s).toString();
        e.target = data.value(u"id"_s).toString();
    } else if (type == u"run.queued"_s || type == u"run.started"_s || type == u"run.finished"_s) {
        const QString run = u"%1/%2 #%3"_s.arg(data.value(u"pipeline"_s).toString(), data.value(u"job"_s).toString(),
                                               QString::number(data.value(u"number"_s).toInteger()));
        e.target = data.value(u"run"_s).toString();
        if (type == u"run.queued"_s) {
            e.state = DisplayState::Progress;
            e.title = tr("%1 queued").arg(run);
        } else if (type == u"run.started"_s) {
            e.state = DisplayState::Progress;
            e.title = tr("%1 started").arg(run);
        } else {
            const QString status = data.value(u"status"_s).toString();
            e.state = DisplayState::ofRun(status);
            e.title = status == u"succeeded"_s ? tr("%1 succeeded").arg(run)
                      : status == u"failed"_s  ? tr("%1 failed").arg(run)
                      : status == u"errored"_s ? tr("%1 errored").arg(run)
                      : status == u"aborted"_s ? tr("%1 aborted").arg(run)
                                               : tr("%1 ended: %2").arg(run, status);
            e.detail = data.value(u"error"_s).toString();
        }
    } else if (type == u"pipeline.paused"_s) {
        e.state = DisplayState::Waiting;
        e.title = tr("Pipeline %1 paused").arg(data.value(u"pipeline"_s).toString());
        e.detail = data.value(u"reason"_s).toString();
    } else {
        return std::nullopt; // steps, output lines and the rest belong to their own views
    }
    return e;
}

void ActivityModel::onEvent(const QJsonObject &event)
{
    std::optional<Entry> entry = describe(event);
    if (!entry)
        return;
    beginInsertRows({}, 0, 0);
    m_entries.push_front(std::move(*entry));
    endInsertRows();
    if (m_entries.size() > size_t(Limit)) {
        beginRemoveRows({}, Limit, int(m_entries.size()) - 1);
        m_entries.resize(size_t(Limit));
        endRemoveRows();
    }
    Q_EMIT countChanged();
}

} // namespace pando::desktop
