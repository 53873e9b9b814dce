#pragma once
// The JOSE pieces of ACME (RFC 8555 section 6.2): every request to the CA is a flattened JWS
// signed with the account's ES256 key, naming the key itself (jwk) until the CA knows the
// account, then the account's URL (kid); and the key authorization a challenge answers with
// (section 8.1: the token, ".", the base64url RFC 7638 thumbprint of the account's key).
//
// Threading: free functions over values.

#include "adapters/api/jose/es256.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

namespace pando::adapters::edgecert {

// The protected header: alg ES256, the nonce and URL, and kid when it is set, else the key's jwk.
QJsonObject protectedHeader(const jose::EcKey &key, const QByteArray &nonce, const QString &url, const QString &kid);

// {"protected", "payload", "signature"} as the CA wants it (Content-Type application/jose+json).
// An empty payload is a POST-as-GET. Empty when the key could not sign.
QByteArray signedRequest(const jose::EcKey &key, const QJsonObject &header, const QByteArray &payload);

QString keyAuthorization(const QString &token, const jose::EcKey &accountKey);

} // namespace pando::adapters::edgecert
