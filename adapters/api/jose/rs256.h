#pragma once
// RS256 (RSASSA-PKCS1-v1_5 with SHA-256) as JOSE uses it, over OpenSSL's EVP API: the signature
// a GitHub App's JSON Web Token carries (adapters/forge/rest/githubapp.cpp), and the check that a
// key given to a source connection is such a key (core/sourceconn).
//
// Threading: an RsaKey may sign from several threads at once (an EVP_PKEY is safe for
// concurrent use once built).

#include "adapters/api/error.h"

#include <QByteArray>
#include <memory>

struct evp_pkey_st;

namespace pando::adapters::jose {

// An RSA private key.
class RsaKey {
public:
    // The smallest key accepted: what RFC 7518 requires of RS256, and what GitHub generates.
    static constexpr int MinimumBits = 2048;

    // A private key from its PEM, PKCS#1 ("BEGIN RSA PRIVATE KEY", as GitHub hands out App keys)
    // or PKCS#8. Invalid, saying what it is instead, for text that is no PEM private key, a key
    // protected by a passphrase, a key of another type, or one shorter than MinimumBits.
    static Result<RsaKey> fromPem(const QByteArray &pem);

    int bits() const;
    // The RS256 signature over data; empty when signing failed (never for a valid key).
    QByteArray sign(QByteArrayView data) const;
    // Whether signature is this key's RS256 signature over data.
    bool verify(QByteArrayView data, QByteArrayView signature) const;

private:
    std::shared_ptr<evp_pkey_st> m_key; // freed with EVP_PKEY_free
};

} // namespace pando::adapters::jose
