#include "qml/runs/resourcesmodel.h"

#include <QDateTime>
#include <QJsonArray>
#include <QLocale>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {
constexpr int VersionLimit = 100;
constexpr int CheckPollMs = 500;
constexpr int CheckPolls = 60; // 30 s: a check that takes longer shows at the next refresh

// "ref: abc123, branch: main", keys sorted as the API sends them.
QString versionText(const QJsonObject &version)
{
    QStringList parts;
    for (auto it = version.begin(); it != version.end(); ++it)
        parts << it.key() + u": "_s + it.value().toString();
    return parts.join(u", "_s);
}

QString timeText(qint64 ms)
{
    return QLocale().toString(QDateTime::fromMSecsSinceEpoch(ms), QLocale::ShortFormat);
}

QString explain(const Error &e)
{
    return e.hint.isEmpty() ? e.text() : ResourcesModel::tr("%1 — %2").arg(e.text(), e.hint);
}
} // namespace

// ResourceVersionsModel

int ResourceVersionsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_versions.size());
}

QVariant ResourceVersionsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonObject &v = m_versions.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
    case VersionTextRole:
        return versionText(v.value(u"version"_s).toObject());
    case FoundTextRole:
        return timeText(v.value(u"found_ms"_s).toInteger());
    case PinnedRole:
        return v.value(u"pinned"_s).toBool();
    case SeqRole:
        return v.value(u"seq"_s).toInt();
    }
    return {};
}

QHash<int, QByteArray> ResourceVersionsModel::roleNames() const
{
    return {{VersionTextRole, "versionText"}, {FoundTextRole, "foundText"}, {PinnedRole, "pinned"}, {SeqRole, "seq"}};
}

void ResourceVersionsModel::reset(const QJsonArray &versions)
{
    beginResetModel();
    m_versions.clear();
    for (const QJsonValue v : versions)
        m_versions << v.toObject();
    endResetModel();
    Q_EMIT countChanged();
}

QJsonObject ResourceVersionsModel::version(int row) const
{
    return row >= 0 && row < m_versions.size() ? m_versions.at(row).value(u"version"_s).toObject() : QJsonObject();
}

// ResourcesModel

ResourcesModel::ResourcesModel(QObject *parent) : SessionListModel(parent)
{
    m_poll.setInterval(CheckPollMs);
    m_poll.setSingleShot(true);
    connect(&m_poll, &QTimer::timeout, this, &ResourcesModel::pollCheck);
}

ResourcesModel::~ResourcesModel() = default;

void ResourcesModel::sessionReplaced()
{
    beginResetModel();
    m_rows.clear();
    endResetModel();
    m_versions.reset({});
    m_loaded = false;
    m_selected = -1;
    m_poll.stop();
    setAction(false, {});
    Q_EMIT countChanged();
    Q_EMIT selectedChanged();
}

int ResourcesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QHash<int, QByteArray> ResourcesModel::roleNames() const
{
    return {{NameRole, "name"},
            {TypeRole, "type"},
            {CheckTextRole, "checkText"},
            {CheckErrorRole, "checkError"},
            {PinnedRole, "pinned"},
            {PinnedTextRole, "pinnedText"},
            {PinnedInConfigRole, "pinnedInConfig"}};
}

QVariant ResourcesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonObject &r = m_rows.at(index.row());
    const QJsonObject pinned = r.value(u"pinned_version"_s).toObject();
    switch (role) {
    case Qt::DisplayRole:
    case NameRole:
        return r.value(u"name"_s).toString();
    case TypeRole:
        return r.value(u"type"_s).toString();
    case CheckTextRole: {
        const qint64 checked = r.value(u"checked_ms"_s).toInteger();
        return checked > 0 ? tr("checked %1").arg(timeText(checked)) : tr("never checked");
    }
    case CheckErrorRole:
        return r.value(u"check_error"_s).toString();
    case PinnedRole:
        return !pinned.isEmpty();
    case PinnedTextRole:
        if (pinned.isEmpty())
            return QString();
        if (r.value(u"pinned_in_config"_s).toBool())
            return tr("pinned to %1 in the config").arg(versionText(pinned));
        return tr("pinned to %1 by %2").arg(versionText(pinned), r.value(u"pinned_by"_s).toString());
    case PinnedInConfigRole:
        return r.value(u"pinned_in_config"_s).toBool();
    }
    return {};
}

int ResourcesModel::rowOf(const QString &resource) const
{
    for (int i = 0; i < m_rows.size(); ++i)
        if (m_rows.at(i).value(u"name"_s).toString() == resource)
            return i;
    return -1;
}

QString ResourcesModel::selectedName() const
{
    return m_selected >= 0 && m_selected < m_rows.size() ? m_rows.at(m_selected).value(u"name"_s).toString()
                                                         : QString();
}

bool ResourcesModel::selectedPinned() const
{
    return m_selected >= 0 && m_selected < m_rows.size() &&
           !m_rows.at(m_selected).value(u"pinned_version"_s).toObject().isEmpty();
}

bool ResourcesModel::selectedPinnedInConfig() const
{
    return m_selected >= 0 && m_selected < m_rows.size() && m_rows.at(m_selected).value(u"pinned_in_config"_s).toBool();
}

void ResourcesModel::setPipeline(const QString &pipeline)
{
    if (pipeline == m_pipeline)
        return;
    m_pipeline = pipeline;
    ++m_generation;
    m_poll.stop();
    beginResetModel();
    m_rows.clear();
    endResetModel();
    m_versions.reset({});
    m_selected = -1;
    setAction(false, {});
    Q_EMIT countChanged();
    Q_EMIT selectedChanged();
    Q_EMIT pipelineChanged();
    refresh();
}

void ResourcesModel::setAction(bool busy, const QString &error)
{
    if (busy == m_busy && error == m_actionError)
        return;
    m_busy = busy;
    m_actionError = error;
    Q_EMIT actionChanged();
}

void ResourcesModel::refresh()
{
    if (!m_session || m_pipeline.isEmpty())
        return;
    setLoading(true);
    const quint64 generation = ++m_generation;
    QPointer<ResourcesModel> self(this);
    m_session->resources(m_pipeline, [self, generation](const Result<QJsonArray> &resources) {
        if (!self || self->m_generation != generation)
            return;
        self->m_loaded = true;
        self->setLoading(false);
        if (!resources) {
            self->setError(explain(resources.error()));
            return;
        }
        self->setError({});
        self->apply(*resources);
    });
}

void ResourcesModel::apply(const QJsonArray &resources)
{
    const QString selected = selectedName();
    beginResetModel();
    m_rows.clear();
    for (const QJsonValue r : resources)
        m_rows << r.toObject();
    endResetModel();
    Q_EMIT countChanged();
    // The resource in front stays selected (its versions read again); the first one is until
    // the user picks another.
    const int row = rowOf(selected);
    m_selected = -1;
    setSelectedRow(row >= 0 ? row : (m_rows.isEmpty() ? -1 : 0));
}

void ResourcesModel::selectionMoved()
{
    m_poll.stop();
    setAction(false, {});
    m_versions.reset({});
    fetchVersions();
}

void ResourcesModel::fetchVersions()
{
    const QString resource = selectedName();
    if (!m_session || resource.isEmpty())
        return;
    const quint64 generation = m_generation;
    QPointer<ResourcesModel> self(this);
    m_session->resourceVersions(m_pipeline, resource, VersionLimit,
                                [self, generation, resource](const Result<QJsonArray> &versions) {
                                    if (!self || self->m_generation != generation || self->selectedName() != resource)
                                        return;
                                    if (!versions) {
                                        self->setAction(self->m_busy, explain(versions.error()));
                                        return;
                                    }
                                    self->m_versions.reset(*versions);
                                });
}

void ResourcesModel::pin(int versionRow)
{
    const QString resource = selectedName();
    const QJsonObject version = m_versions.version(versionRow);
    if (!m_session || resource.isEmpty() || version.isEmpty() || m_busy)
        return;
    setAction(true, {});
    const quint64 generation = m_generation;
    QPointer<ResourcesModel> self(this);
    m_session->pinResource(m_pipeline, resource, version, [self, generation](const Result<QJsonObject> &pinned) {
        if (!self || self->m_generation != generation)
            return;
        self->setAction(false, pinned ? QString() : explain(pinned.error()));
        if (pinned)
            self->refresh();
    });
}

void ResourcesModel::unpin()
{
    const QString resource = selectedName();
    if (!m_session || resource.isEmpty() || m_busy)
        return;
    setAction(true, {});
    const quint64 generation = m_generation;
    QPointer<ResourcesModel> self(this);
    m_session->unpinResource(m_pipeline, resource, [self, generation](const Status &done) {
        if (!self || self->m_generation != generation)
            return;
        self->setAction(false, done ? QString() : explain(done.error()));
        if (done)
            self->refresh();
    });
}

void ResourcesModel::checkNow()
{
    check({});
}

void ResourcesModel::checkFrom(int versionRow)
{
    if (const QJsonObject version = m_versions.version(versionRow); !version.isEmpty())
        check(version);
}

void ResourcesModel::check(const QJsonObject &from)
{
    const QString resource = selectedName();
    if (!m_session || resource.isEmpty() || m_busy)
        return;
    m_checkedBefore = m_rows.at(m_selected).value(u"checked_ms"_s).toInteger();
    setAction(true, {});
    const quint64 generation = m_generation;
    QPointer<ResourcesModel> self(this);
    m_session->checkResource(m_pipeline, resource, from, [self, generation](const Status &done) {
        if (!self || self->m_generation != generation)
            return;
        if (!done) {
            self->setAction(false, explain(done.error()));
            return;
        }
        // The check runs on the install's trigger loop: read the resource until it has answered.
        self->m_pollsLeft = CheckPolls;
        self->m_poll.start();
    });
}

void ResourcesModel::pollCheck()
{
    const QString resource = selectedName();
    if (!m_session || resource.isEmpty())
        return setAction(false, {});
    const quint64 generation = m_generation;
    QPointer<ResourcesModel> self(this);
    m_session->resources(m_pipeline, [self, generation, resource](const Result<QJsonArray> &resources) {
        if (!self || self->m_generation != generation || self->selectedName() != resource)
            return;
        qint64 checked = 0;
        if (resources)
            for (const QJsonValue r : *resources)
                if (r.toObject().value(u"name"_s).toString() == resource)
                    checked = r.toObject().value(u"checked_ms"_s).toInteger();
        if (resources && checked > self->m_checkedBefore) {
            self->setAction(false, {});
            self->apply(*resources);
            return;
        }
        if (--self->m_pollsLeft > 0)
            return self->m_poll.start();
        self->setAction(false,
                        tr("the check has not answered in 30 s; select the resource again to see what it found"));
    });
}

} // namespace pando::desktop
