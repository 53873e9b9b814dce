#include "connectedmodel.h"

#include <QDateTime>
#include <QLocale>

using namespace Qt::StringLiterals;

namespace pando::desktop {

ConnectedModel::ConnectedModel(QObject *parent) : SessionListModel(parent)
{
    m_timer.setInterval(3000);
    connect(&m_timer, &QTimer::timeout, this, &ConnectedModel::refresh);
}

int ConnectedModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QVariant ConnectedModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonObject &row = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
    case AccountRole:
        return row.value(u"user"_s).toString();
    case AddressRole:
        return row.value(u"address"_s).toString();
    case StreamRole:
        return row.value(u"stream"_s).toString();
    case SinceRole:
        return row.value(u"sinceMs"_s).toInteger();
    case SinceTextRole:
        return tr("since %1")
            .arg(QLocale().toString(QDateTime::fromMSecsSinceEpoch(row.value(u"sinceMs"_s).toInteger()).time(),
                                    QLocale::ShortFormat));
    default:
        return {};
    }
}

QHash<int, QByteArray> ConnectedModel::roleNames() const
{
    return {{AccountRole, "account"},
            {AddressRole, "address"},
            {StreamRole, "stream"},
            {SinceRole, "since"},
            {SinceTextRole, "sinceText"}};
}

void ConnectedModel::setActive(bool active)
{
    if (active == isActive())
        return;
    if (active) {
        m_timer.start();
        refresh();
    } else {
        m_timer.stop();
    }
    Q_EMIT activeChanged();
}

void ConnectedModel::sessionReplaced()
{
    apply({});
}

void ConnectedModel::refresh()
{
    if (!m_session)
        return;
    const quint64 generation = ++m_generation;
    QPointer<ConnectedModel> self(this);
    m_session->connectedClients([self, generation](const Result<QJsonArray> &rows) {
        if (!self || generation != self->m_generation)
            return;
        self->setError(rows ? QString() : rows.error().message);
        if (rows)
            self->apply(*rows);
    });
}

void ConnectedModel::apply(const QJsonArray &rows)
{
    // Teammates come in over TLS; the desktop's own loopback streams are not "who is connected".
    QList<QJsonObject> next;
    for (const QJsonValue row : rows) {
        if (row.toObject().value(u"tls"_s).toBool())
            next.append(row.toObject());
    }
    // Rows are matched by connection id so a view keeps its place while the list is polled.
    for (qsizetype i = m_rows.size() - 1; i >= 0; --i) {
        const QString id = m_rows.at(i).value(u"id"_s).toString();
        const bool stays = std::any_of(next.cbegin(), next.cend(),
                                       [&id](const QJsonObject &o) { return o.value(u"id"_s).toString() == id; });
        if (!stays) {
            beginRemoveRows({}, int(i), int(i));
            m_rows.removeAt(i);
            endRemoveRows();
        }
    }
    for (const QJsonObject &row : std::as_const(next)) {
        const QString id = row.value(u"id"_s).toString();
        const bool known = std::any_of(m_rows.cbegin(), m_rows.cend(),
                                       [&id](const QJsonObject &o) { return o.value(u"id"_s).toString() == id; });
        if (!known) {
            beginInsertRows({}, int(m_rows.size()), int(m_rows.size()));
            m_rows.append(row);
            endInsertRows();
        }
    }
    Q_EMIT countChanged();
}

} // namespace pando::desktop
