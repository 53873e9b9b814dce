#include "qml/deploys/deploysmodel.h"
#include "core/vocab/vocab.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QJsonArray>
#include <QLocale>

using namespace Qt::StringLiterals;

namespace pando::desktop {

QString deployStatusWord(const QString &status, DisplayState::Value state)
{
    // The translations keep the context these words had when the tab had a state enum of its own.
    switch (state) {
    case DisplayState::Healthy:
        return QCoreApplication::translate("DeployState", "succeeded");
    case DisplayState::Progress:
        return QCoreApplication::translate("DeployState", "in progress");
    case DisplayState::Waiting:
        return QCoreApplication::translate("DeployState", "waiting for approval");
    case DisplayState::Failed:
        return QCoreApplication::translate("DeployState", "failed");
    case DisplayState::Stopped:
        return QCoreApplication::translate("DeployState", "cancelled");
    case DisplayState::Cached:
    case DisplayState::Neutral:
        break;
    }
    if (core::parseDeployStepStatus(status) == core::DeployStepStatus::Skipped)
        return QCoreApplication::translate("DeployState", "skipped");
    return QCoreApplication::translate("DeployState", "not started");
}

std::pair<QString, QString> splitHint(const QString &error)
{
    static const QString marker = u" (hint: "_s;
    const qsizetype at = error.lastIndexOf(marker);
    if (at < 0 || !error.endsWith(u')'))
        return {error, {}};
    return {error.left(at), error.mid(at + marker.size(), error.size() - at - marker.size() - 1)};
}

DeploysModel::DeploysModel(QObject *parent) : SessionListModel(parent)
{}

DeploysModel::~DeploysModel() = default;

void DeploysModel::setApp(const QString &app)
{
    if (app == m_app)
        return;
    m_app = app;
    ++m_generation;
    beginResetModel();
    m_rows.clear();
    endResetModel();
    m_selected = -1;
    Q_EMIT appChanged();
    Q_EMIT countChanged();
    Q_EMIT selectedChanged();
    refresh();
}

int DeploysModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QHash<int, QByteArray> DeploysModel::roleNames() const
{
    return {
        {IdRole, "id"},
        {StatusRole, "status"},
        {StateRole, "state"},
        {StatusTextRole, "statusText"},
        {RefRole, "ref"},
        {CommitRole, "commit"},
        {ActorRole, "actor"},
        {CreatedMsRole, "createdMs"},
        {DurationMsRole, "durationMs"},
        {FailedStepRole, "failedStep"},
        {ErrorRole, "error"},
        {ReasonRole, "reason"},
        {HintRole, "hint"},
        {WhenTextRole, "whenText"},
    };
}

QVariant DeploysModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonObject &d = m_rows.at(index.row());
    const QString status = d.value(u"status"_s).toString();
    switch (role) {
    case Qt::DisplayRole:
    case IdRole:
        return d.value(u"id"_s).toString();
    case StatusRole:
        return status;
    case StateRole:
        return int(DisplayState::ofDeploy(status));
    case StatusTextRole:
        if (core::parseDeployStatus(status) == core::DeployStatus::Rejected)
            return tr("rejected");
        if (core::parseDeployStatus(status) == core::DeployStatus::Queued)
            return tr("queued");
        return deployStatusWord(status, DisplayState::ofDeploy(status));
    case RefRole:
        return d.value(u"ref"_s).toString();
    case CommitRole:
        return d.value(u"commit"_s).toString();
    case ActorRole:
        return d.value(u"actor"_s).toString();
    case CreatedMsRole:
        return d.value(u"created_ms"_s).toInteger();
    case DurationMsRole: {
        if (d.contains(u"duration_ms"_s))
            return d.value(u"duration_ms"_s).toInteger();
        const qint64 started = d.value(u"started_ms"_s).toInteger();
        const qint64 finished = d.value(u"finished_ms"_s).toInteger();
        return started > 0 && finished >= started ? finished - started : qint64(0);
    }
    case FailedStepRole:
        return d.value(u"failed_step"_s).toString();
    case ErrorRole:
        return d.value(u"error"_s).toString();
    case ReasonRole:
        return splitHint(d.value(u"error"_s).toString()).first;
    case HintRole:
        return splitHint(d.value(u"error"_s).toString()).second;
    case WhenTextRole: {
        const qint64 ms = d.value(u"created_ms"_s).toInteger();
        return ms > 0 ? QLocale().toString(QDateTime::fromMSecsSinceEpoch(ms), QLocale::ShortFormat) : QString();
    }
    }
    return {};
}

QString DeploysModel::selectedId() const
{
    return m_selected >= 0 && m_selected < m_rows.size() ? m_rows.at(m_selected).value(u"id"_s).toString() : QString();
}

QString DeploysModel::selectedCommit() const
{
    return m_selected >= 0 && m_selected < m_rows.size() ? m_rows.at(m_selected).value(u"commit"_s).toString()
                                                         : QString();
}

bool DeploysModel::selectedCancellable() const
{
    if (m_selected < 0 || m_selected >= m_rows.size())
        return false;
    const std::optional<core::DeployStatus> status =
        core::parseDeployStatus(m_rows.at(m_selected).value(u"status"_s).toString());
    return status && !core::isFinished(*status);
}

int DeploysModel::rowOf(const QString &id) const
{
    for (int i = 0; i < m_rows.size(); ++i)
        if (m_rows.at(i).value(u"id"_s).toString() == id)
            return i;
    return -1;
}

void DeploysModel::refresh()
{
    if (!m_session || m_app.isEmpty() || m_session->state() != Session::State::Connected)
        return;
    setLoading(true);
    const quint64 generation = m_generation;
    QPointer<DeploysModel> self(this);
    m_session->deploys(m_app, 50, [self, generation](const Result<QJsonArray> &deploys) {
        if (!self || self->m_generation != generation)
            return;
        if (!deploys)
            self->setError(deploys.error().text());
        else {
            self->setError({});
            self->apply(*deploys);
        }
        self->setLoading(false);
    });
}

void DeploysModel::redeploy(int row)
{
    if (!m_session || row < 0 || row >= m_rows.size())
        return;
    const QString commit = m_rows.at(row).value(u"commit"_s).toString();
    if (commit.isEmpty())
        return setActionError(tr("This deploy never got as far as a commit: deploy a ref instead"));
    setActionError({});
    const quint64 generation = m_generation;
    QPointer<DeploysModel> self(this);
    // The exact commit, not the ref it came from: the ref may have moved since.
    m_session->deploy(m_app, commit, [self, generation](const Result<QJsonObject> &queued) {
        if (!self || self->m_generation != generation)
            return;
        if (!queued) {
            const Error &e = queued.error();
            return self->setActionError(e.hint.isEmpty() ? e.text() : tr("%1 — %2").arg(e.text(), e.hint));
        }
        // The history shows the new deploy selected, as the user asked for it.
        self->m_selectNext = queued->value(u"id"_s).toString();
        self->refresh();
    });
}

void DeploysModel::cancel(int row)
{
    if (!m_session || row < 0 || row >= m_rows.size())
        return;
    setActionError({});
    const quint64 generation = m_generation;
    QPointer<DeploysModel> self(this);
    m_session->cancelDeploy(m_rows.at(row).value(u"id"_s).toString(), [self, generation](const Status &done) {
        if (!self || self->m_generation != generation)
            return;
        if (!done) {
            const Error &e = done.error();
            return self->setActionError(e.hint.isEmpty() ? e.text() : tr("%1 — %2").arg(e.text(), e.hint));
        }
        self->refresh();
    });
}

void DeploysModel::setActionError(const QString &error)
{
    if (error == m_actionError)
        return;
    m_actionError = error;
    Q_EMIT actionErrorChanged();
}

void DeploysModel::apply(const QJsonArray &deploys)
{
    const QString selected = selectedId();
    // A reset is cheap for a page of deploys; the selection is put back on the same id, or moves
    // to the deploy just asked for once it is listed.
    beginResetModel();
    m_rows.clear();
    for (const QJsonValue d : deploys)
        m_rows.append(d.toObject());
    endResetModel();
    int row = m_selectNext.isEmpty() ? -1 : rowOf(m_selectNext);
    if (row >= 0)
        m_selectNext.clear();
    else
        row = selected.isEmpty() ? -1 : rowOf(selected);
    // Nothing chosen yet: the newest deploy, which is what the user came to see.
    if (row < 0 && !m_rows.isEmpty())
        row = 0;
    m_selected = row;
    Q_EMIT countChanged();
    Q_EMIT selectedChanged();
}

void DeploysModel::onEvent(const QJsonObject &event)
{
    if (event.value(u"app"_s).toString() != m_app)
        return;
    const std::optional<core::EventType> type = core::parseEventType(event.value(u"type"_s).toString());
    // Steps change the timeline, not the history; every other deploy.* event changes a row.
    if ((type && core::isDeployEvent(*type)) && type != core::EventType::DeployStep)
        refresh();
}

} // namespace pando::desktop
