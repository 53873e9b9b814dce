#include "qml/apps/appaddressesmodel.h"

#include "core/vocab/vocab.h"

#include <QDateTime>
#include <QJsonArray>
#include <QLocale>

using namespace Qt::StringLiterals;

namespace pando::desktop {

AppAddressesModel::AppAddressesModel(QObject *parent) : SessionListModel(parent)
{}

AppAddressesModel::~AppAddressesModel() = default;

void AppAddressesModel::setApp(const QString &app)
{
    if (m_app == app)
        return;
    m_app = app;
    setRows({}, {});
    Q_EMIT appChanged();
    refresh();
}

int AppAddressesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QHash<int, QByteArray> AppAddressesModel::roleNames() const
{
    return {{UrlRole, "url"},
            {TlsRole, "tls"},
            {TlsTextRole, "tlsText"},
            {MovedRole, "moved"},
            {CertificateTextRole, "certificateText"},
            {CertificateStateRole, "certificateState"}};
}

QVariant AppAddressesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Entry &e = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
    case UrlRole:
        return e.url;
    case TlsRole:
        return e.tls;
    case TlsTextRole:
        return e.tlsText;
    case MovedRole:
        return e.moved;
    case CertificateTextRole:
        return e.certificateText;
    case CertificateStateRole:
        return int(e.certificateState);
    }
    return {};
}

AppAddressesModel::Entry AppAddressesModel::describe(const QJsonObject &address)
{
    Entry e;
    e.url = address.value(u"url"_s).toString();
    e.tls = address.value(u"tls"_s).toString();
    e.moved = address.value(u"moved"_s).toBool();
    if (e.tls == u"auto"_s)
        e.tlsText = tr("HTTPS, certificate from a public CA (ACME)");
    else if (e.tls == u"internal"_s)
        e.tlsText = tr("HTTPS, certificate from the install CA");
    else if (e.tls == u"off"_s)
        e.tlsText = tr("plain HTTP");
    else
        e.tlsText = e.tls;
    if (e.tls == u"off"_s) {
        e.certificateText = tr("no certificate needed");
        return e;
    }
    const QJsonObject certificate = address.value(u"certificate"_s).toObject();
    const QString error = certificate.value(u"error"_s).toString();
    const QString issuer = certificate.value(u"issuer"_s).toString();
    const qint64 notAfterMs = qint64(certificate.value(u"not_after_ms"_s).toDouble());
    if (!error.isEmpty()) {
        e.certificateText = tr("certificate failed: %1").arg(error);
        e.certificateState = DisplayState::Failed;
    } else if (!issuer.isEmpty() && notAfterMs > 0) {
        const QDateTime until = QDateTime::fromMSecsSinceEpoch(notAfterMs);
        e.certificateText =
            tr("certificate from %1 until %2").arg(issuer, QLocale().toString(until.date(), QLocale::ShortFormat));
        e.certificateState = DisplayState::Healthy;
    } else {
        e.certificateText = tr("certificate not issued yet");
    }
    return e;
}

void AppAddressesModel::setRows(const QList<Entry> &rows, const QString &url, bool signInOnly)
{
    const bool countMoves = rows.size() != m_rows.size();
    beginResetModel();
    m_rows = rows;
    endResetModel();
    if (countMoves)
        Q_EMIT countChanged();
    if (m_url != url || m_signInOnly != signInOnly) {
        m_url = url;
        m_signInOnly = signInOnly;
        Q_EMIT urlChanged();
    }
}

void AppAddressesModel::sessionReplaced()
{
    setRows({}, {});
}

void AppAddressesModel::refresh()
{
    const QString app = m_app;
    reloadWith(
        !app.isEmpty(), [app](Session &session, Session::ObjectCallback done) { session.app(app, std::move(done)); },
        [this](const QJsonObject &answer) {
            QList<Entry> rows;
            for (const QJsonValue v : answer.value(u"addresses"_s).toArray())
                rows.append(describe(v.toObject()));
            const QJsonObject route = answer.value(u"spec"_s).toObject().value(u"route"_s).toObject();
            setRows(rows, answer.value(u"url"_s).toString(), route.value(u"auth"_s).toString() == u"pando"_s);
        });
}

void AppAddressesModel::onEvent(const QJsonObject &event)
{
    if (event.value(u"app"_s).toString() != m_app || m_app.isEmpty())
        return;
    const std::optional<core::EventType> type = core::parseEventType(event.value(u"type"_s).toString());
    if (type == core::EventType::DeploySucceeded || type == core::EventType::AppUpdated)
        refresh();
}

} // namespace pando::desktop
