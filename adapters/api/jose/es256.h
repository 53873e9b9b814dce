#pragma once
// ES256 (ECDSA over P-256 with SHA-256) as JOSE uses it, over OpenSSL's EVP API: key pairs kept
// as PEM, signatures as the raw 64-byte r||s that JWS carries (OpenSSL speaks DER; converted
// both ways here), public keys as JWK coordinates, RFC 7638 thumbprints, and base64url without
// padding. It sits under adapters/api because both sides sign with it: core's assertion package
// (identity assertions) and the edgecert adapter (its ACME account's requests); it is the only
// part of adapters/api that links OpenSSL, so it is a target of its own.
//
// Threading: free functions over values; an EcKey may be used from several threads at once for
// signing and verifying (OpenSSL's EVP_PKEY is safe for concurrent use once built).

#include "adapters/api/error.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <memory>
#include <optional>

struct evp_pkey_st;

namespace pando::adapters::jose {

QByteArray base64Url(QByteArrayView bytes);
// RFC 7638: base64url(SHA-256) of the JWK's required members (EC: crv, kty, x, y; RSA: e, kty, n;
// oct: k, kty) in lexicographic order without whitespace; empty for another kty or a member
// missing.
QString jwkThumbprint(const QJsonObject &jwk);
// Strict: only the base64url alphabet, no padding; nullopt otherwise.
std::optional<QByteArray> fromBase64Url(QByteArrayView text);

// A P-256 key: a private one (can sign) or a public one (from a JWK; verifies only).
class EcKey {
public:
    // A new private key from the system's random source.
    static Result<EcKey> generate();
    // A private key from its PEM (PKCS#8); Invalid unless it is a P-256 key.
    static Result<EcKey> fromPem(const QByteArray &pem);
    // A public key from a JWK's x and y (base64url, 32 bytes each); Invalid naming the field.
    static Result<EcKey> fromJwk(const QJsonObject &jwk);

    bool isNull() const { return !m_key; }
    bool hasPrivate() const { return m_private; }
    QByteArray privatePem() const; // PKCS#8; empty for a public key
    // {kty: EC, crv: P-256, x, y}: the public half, coordinates left-padded to 32 bytes.
    QJsonObject publicJwk() const;
    // RFC 7638 thumbprint of the public JWK (base64url SHA-256): a kid that names the key itself.
    QString thumbprint() const;

    // The 64-byte r||s signature over data; empty when signing failed (never for a valid key).
    QByteArray sign(QByteArrayView data) const;
    // Whether signature (64 bytes r||s) is this key's over data.
    bool verify(QByteArrayView data, QByteArrayView signature) const;

private:
    std::shared_ptr<evp_pkey_st> m_key; // freed with EVP_PKEY_free
    bool m_private = false;
};

} // namespace pando::adapters::jose
