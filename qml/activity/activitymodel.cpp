#include "qml/activity/activitymodel.h"

#include <QDateTime>

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
    case TimeTextRole:
        return momentText(e.timeMs);
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
    const QString typeText = event.value(u"type"_s).toString();
    const std::optional<core::EventType> type = core::parseEventType(typeText);
    if (!type)
        return std::nullopt; // a newer server's event: nothing this view knows how to say
    using T = core::EventType;
    const QString app = event.value(u"app"_s).toString();
    const QJsonObject data = event.value(u"data"_s).toObject();
    Entry e;
    e.timeMs = event.value(u"time_ms"_s).toInteger();
    if (e.timeMs <= 0)
        e.timeMs = QDateTime::currentMSecsSinceEpoch();
    e.app = app;
    e.kind = typeText.section(u'.', 0, 0);
    if (type == T::DeployQueued) {
        e.state = DisplayState::Progress;
        e.title = tr("%1: deploy queued").arg(app);
        if (data.contains(u"approval"_s))
            e.detail = tr("approved (%1)").arg(data.value(u"approval"_s).toString());
        e.target = event.value(u"deploy"_s).toString();
    } else if (type == T::DeploySucceeded) {
        e.state = DisplayState::Healthy;
        e.title = tr("%1: deploy succeeded").arg(app);
        e.target = event.value(u"deploy"_s).toString();
    } else if (type == T::DeployFailed) {
        e.state = DisplayState::Failed;
        e.title = tr("%1: deploy failed").arg(app);
        const QString step = data.value(u"step"_s).toString();
        const QString error = data.value(u"error"_s).toString();
        e.detail = step.isEmpty() ? error : tr("%1 failed: %2").arg(step, error);
        e.target = event.value(u"deploy"_s).toString();
    } else if (type == T::AppCreated) {
        e.title = tr("%1 was created").arg(app);
    } else if (type == T::AppUpdated) {
        e.title = tr("%1: spec changed").arg(app);
    } else if (type == T::AppRemoved) {
        e.title = tr("%1 was removed").arg(app);
    } else if (type == T::ApprovalRequested) {
        e.state = DisplayState::Waiting;
        e.title = tr("Approval requested: %1").arg(data.value(u"object"_s).toString());
        e.detail = data.value(u"summary"_s).toString();
        e.target = data.value(u"id"_s).toString();
    } else if (core::isApprovalEvent(*type)) {
        e.state = type == T::ApprovalApproved ? DisplayState::Healthy : DisplayState::Failed;
        e.title = type == T::ApprovalApproved   ? tr("Approved: %1").arg(data.value(u"object"_s).toString())
                  : type == T::ApprovalRejected ? tr("Rejected: %1").arg(data.value(u"object"_s).toString())
                                                : tr("Expired: %1").arg(data.value(u"object"_s).toString());
        e.detail = data.value(u"reason"_s).toString();
        e.target = data.value(u"id"_s).toString();
    } else if (type == T::RunQueued || type == T::RunStarted || type == T::RunFinished) {
        const QString run = u"%1/%2 #%3"_s.arg(data.value(u"pipeline"_s).toString(), data.value(u"job"_s).toString(),
                                               QString::number(data.value(u"number"_s).toInteger()));
        e.target = data.value(u"run"_s).toString();
        if (type == T::RunQueued) {
            e.state = DisplayState::Progress;
            e.title = tr("%1 queued").arg(run);
        } else if (type == T::RunStarted) {
            e.state = DisplayState::Progress;
            e.title = tr("%1 started").arg(run);
        } else {
            const QString statusText = data.value(u"status"_s).toString();
            const std::optional<core::RunStatus> status = core::parseRunStatus(statusText);
            e.state = DisplayState::ofRun(statusText);
            e.title = status == core::RunStatus::Succeeded ? tr("%1 succeeded").arg(run)
                      : status == core::RunStatus::Failed  ? tr("%1 failed").arg(run)
                      : status == core::RunStatus::Errored ? tr("%1 errored").arg(run)
                      : status == core::RunStatus::Aborted ? tr("%1 aborted").arg(run)
                                                           : tr("%1 ended: %2").arg(run, statusText);
            e.detail = data.value(u"error"_s).toString();
        }
    } else if (type == T::PipelinePaused) {
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
