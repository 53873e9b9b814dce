#include "sourcerepositoriesmodel.h"

#include <QJsonArray>
#include <QPointer>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::desktop {

SourceRepositoriesModel::SourceRepositoriesModel(QObject *parent) : SessionListModel(parent)
{}

int SourceRepositoriesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QString SourceRepositoriesModel::appNameFor(const QString &fullName)
{
    static const QRegularExpression others(u"[^a-z0-9]+"_s);
    QString name = fullName.section(u'/', -1).toLower();
    if (name.endsWith(u".git"_s))
        name.chop(4);
    name.replace(others, u"-"_s);
    while (name.startsWith(u'-'))
        name.remove(0, 1);
    while (name.endsWith(u'-'))
        name.chop(1);
    return name;
}

QVariant SourceRepositoriesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonObject &row = m_rows.at(index.row());
    const bool isPrivate = row.value(u"private"_s).toBool();
    switch (role) {
    case Qt::DisplayRole:
    case FullNameRole:
        return row.value(u"full_name"_s).toString();
    case CloneUrlRole:
        return row.value(u"clone_url"_s).toString();
    case WebUrlRole:
        return row.value(u"web_url"_s).toString();
    case DefaultBranchRole:
        return row.value(u"default_branch"_s).toString();
    case PrivateRole:
        return isPrivate;
    case VisibilityTextRole:
        return isPrivate ? tr("private") : tr("public");
    case AppNameRole:
        return appNameFor(row.value(u"full_name"_s).toString());
    default:
        return {};
    }
}

QHash<int, QByteArray> SourceRepositoriesModel::roleNames() const
{
    return {{FullNameRole, "fullName"}, {CloneUrlRole, "cloneUrl"},
            {WebUrlRole, "webUrl"},     {DefaultBranchRole, "defaultBranch"},
            {PrivateRole, "isPrivate"}, {VisibilityTextRole, "visibilityText"},
            {AppNameRole, "appName"}};
}

void SourceRepositoriesModel::setConnection(const QString &connection)
{
    if (connection == m_connection)
        return;
    m_connection = connection;
    // An answer still on its way is for the connection that was selected before.
    ++m_generation;
    apply({});
    setLoaded(false);
    setError({});
    setLoading(false);
    Q_EMIT connectionChanged();
}

void SourceRepositoriesModel::sessionReplaced()
{
    apply({});
    setLoaded(false);
    setError({});
    setLoading(false);
}

void SourceRepositoriesModel::refresh()
{
    if (m_loaded)
        load();
}

void SourceRepositoriesModel::load()
{
    if (!m_session || m_connection.isEmpty())
        return;
    const quint64 generation = ++m_generation;
    setLoading(true);
    setError({});
    QPointer<SourceRepositoriesModel> self(this);
    m_session->sourceConnectionRepositories(m_connection, [self, generation](const Result<QJsonArray> &rows) {
        if (!self || generation != self->m_generation)
            return;
        if (rows) {
            self->apply(*rows);
            self->setLoaded(true);
        } else {
            const Error &e = rows.error();
            self->apply({});
            self->setError(e.hint.isEmpty() ? e.message : tr("%1 — %2").arg(e.message, e.hint));
        }
        self->setLoading(false);
    });
}

void SourceRepositoriesModel::apply(const QJsonArray &rows)
{
    if (rows.isEmpty() && m_rows.isEmpty())
        return;
    // A reset: the listing comes whole each time.
    beginResetModel();
    m_rows.clear();
    for (const QJsonValue row : rows)
        m_rows.append(row.toObject());
    endResetModel();
    Q_EMIT countChanged();
}

void SourceRepositoriesModel::setLoaded(bool loaded)
{
    if (loaded == m_loaded)
        return;
    m_loaded = loaded;
    Q_EMIT loadedChanged();
}

} // namespace pando::desktop
