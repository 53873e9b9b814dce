#include "qml/apps/apppreviewsmodel.h"

#include "core/vocab/vocab.h"
#include "qml/states/statestyle.h"

#include <QDateTime>
#include <QJsonArray>
#include <QLocale>

using namespace Qt::StringLiterals;

namespace pando::desktop {

AppPreviewsModel::AppPreviewsModel(QObject *parent) : SessionListModel(parent)
{}

void AppPreviewsModel::setApp(const QString &app)
{
    if (m_app == app)
        return;
    m_app = app;
    setError({});
    show({});
    Q_EMIT appChanged();
    refresh();
}

int AppPreviewsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QHash<int, QByteArray> AppPreviewsModel::roleNames() const
{
    return {{NumberRole, "number"},         {TitleRole, "title"},   {PreviewAppRole, "previewApp"},
            {BranchRole, "branch"},         {CommitRole, "commit"}, {StateRole, "displayState"},
            {StatusTextRole, "statusText"}, {UrlRole, "url"},       {ExpiresTextRole, "expiresText"},
            {WebUrlRole, "webUrl"},         {AuthorRole, "author"}};
}

QVariant AppPreviewsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonObject &p = m_rows.at(index.row());
    const QString status = p.value(u"status"_s).toString();
    const QString deployStatus = p.value(u"deploy"_s).toObject().value(u"status"_s).toString();
    switch (role) {
    case NumberRole:
        return p.value(u"number"_s).toInt();
    case Qt::DisplayRole:
    case TitleRole:
        return p.value(u"title"_s).toString();
    case PreviewAppRole:
        return p.value(u"app"_s).toString();
    case BranchRole:
        return p.value(u"fork"_s).toBool() ? tr("%1 (fork)").arg(p.value(u"head_branch"_s).toString())
                                           : p.value(u"head_branch"_s).toString();
    case CommitRole:
        return p.value(u"head_commit"_s).toString().left(12);
    case StateRole:
        return int(status.isEmpty() ? DisplayState::Progress : DisplayState::ofApp(status, deployStatus));
    case StatusTextRole:
        // No app yet (being made) or any more (being removed): the row says which.
        if (status.isEmpty())
            return tr("being made or removed");
        if (status == u"removing")
            return tr("removing");
        return StateStyle::wordOf(DisplayState::ofApp(status, deployStatus));
    case UrlRole:
        return p.value(u"url"_s).toString();
    case ExpiresTextRole: {
        const QDateTime at = QDateTime::fromString(p.value(u"expires_at"_s).toString(), Qt::ISODateWithMs);
        return at.isValid() ? tr("removed %1 unless something is pushed")
                                  .arg(QLocale().toString(at.toLocalTime(), QLocale::ShortFormat))
                            : QString();
    }
    case WebUrlRole:
        return p.value(u"web_url"_s).toString();
    case AuthorRole:
        return p.value(u"author"_s).toString();
    }
    return {};
}

void AppPreviewsModel::refresh()
{
    const QString app = m_app;
    reloadWith(
        !app.isEmpty(),
        [app](Session &session, Session::ObjectCallback done) { session.appPreviews(app, std::move(done)); },
        [this](const QJsonObject &answer) {
            QList<QJsonObject> rows;
            for (const QJsonValue v : answer.value(u"previews"_s).toArray())
                rows.append(v.toObject());
            show(rows);
        });
}

void AppPreviewsModel::remove(int number)
{
    if (!m_session || m_app.isEmpty())
        return;
    QPointer<AppPreviewsModel> self(this);
    const quint64 generation = m_generation;
    m_session->removeAppPreview(m_app, number, [self, generation](const Status &done) {
        if (!self || generation != self->m_generation)
            return;
        if (!done) {
            self->setError(done.error().text());
            return;
        }
        self->refresh();
    });
}

void AppPreviewsModel::show(const QList<QJsonObject> &rows)
{
    const bool countMoves = rows.size() != m_rows.size();
    beginResetModel();
    m_rows = rows;
    endResetModel();
    if (countMoves)
        Q_EMIT countChanged();
}

void AppPreviewsModel::sessionReplaced()
{
    show({});
}

void AppPreviewsModel::onEvent(const QJsonObject &event)
{
    if (m_app.isEmpty())
        return;
    const QString app = event.value(u"app"_s).toString();
    const std::optional<core::EventType> type = core::parseEventType(event.value(u"type"_s).toString());
    if (!type)
        return;
    // The app's deliveries make, deploy and remove previews; a preview's own deploys and removal
    // move its row (the steps in between change nothing here).
    if (app == m_app ? *type == core::EventType::AppHookDelivered
                     : app.startsWith(m_app + u"-pr-"_s) &&
                           ((core::isDeployEvent(*type) && *type != core::EventType::DeployStep) ||
                            *type == core::EventType::AppRemoved || *type == core::EventType::AppCreated))
        refresh();
}

} // namespace pando::desktop
