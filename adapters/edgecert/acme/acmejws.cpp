#include "adapters/edgecert/acme/acmejws.h"

#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace pando::adapters::edgecert {

QJsonObject protectedHeader(const jose::EcKey &key, const QByteArray &nonce, const QString &url, const QString &kid)
{
    QJsonObject header{{"alg"_L1, "ES256"_L1}, {"nonce"_L1, QString::fromLatin1(nonce)}, {"url"_L1, url}};
    if (kid.isEmpty())
        header.insert("jwk"_L1, key.publicJwk());
    else
        header.insert("kid"_L1, kid);
    return header;
}

QByteArray signedRequest(const jose::EcKey &key, const QJsonObject &header, const QByteArray &payload)
{
    const QByteArray protectedPart = jose::base64Url(QJsonDocument(header).toJson(QJsonDocument::Compact));
    const QByteArray payloadPart = jose::base64Url(payload);
    const QByteArray signature = key.sign(QByteArray(protectedPart + '.' + payloadPart));
    if (signature.isEmpty())
        return {};
    return QJsonDocument(QJsonObject{{"protected"_L1, QString::fromLatin1(protectedPart)},
                                     {"payload"_L1, QString::fromLatin1(payloadPart)},
                                     {"signature"_L1, QString::fromLatin1(jose::base64Url(signature))}})
        .toJson(QJsonDocument::Compact);
}

QString keyAuthorization(const QString &token, const jose::EcKey &accountKey)
{
    return token + u'.' + accountKey.thumbprint();
}

} // namespace pando::adapters::edgecert
