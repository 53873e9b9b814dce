#pragma once
// Where the certificates Pando gets for the edge are kept, so that they survive restarts of
// Pando and of the edge: a directory (0700) holding the ACME account's key and URL, and for each
// name its key, its chain and the last error getting one. Every file is 0600 and written whole
// (a new file renamed into place), so a crash leaves the old one or the new one.
//
//   account.key          the account's P-256 key (PKCS#8 PEM)
//   account.json         {"directory": URL, "url": the account's URL at that CA}
//   NAME.key, NAME.crt   the certificate's key and chain (leaf first), PEM
//   NAME.json            {"error": the last failure, "at": when}; gone after a success
//
// Threading: one store is used by one thread at a time; files are its only state.

#include "adapters/api/error.h"
#include "adapters/api/jose/es256.h"
#include "adapters/api/routing.h"

#include <QByteArray>
#include <QDateTime>
#include <QString>
#include <optional>

namespace pando::adapters::edgecert {

struct HeldCertificate {
    QByteArray chainPem;
    QByteArray keyPem;
    QDateTime notBefore;
    QDateTime notAfter;
    QString issuer;
};

struct LastError {
    QString error;
    QDateTime at;
};

class CertStore {
public:
    explicit CertStore(const QString &dir);

    QString dir() const { return m_dir; }
    // Makes the directory (0700), or makes an existing one private again.
    Status prepare() const;

    // The account's key: the one kept, else a new one, kept from now on.
    Result<jose::EcKey> accountKey() const;
    // The account's URL at the CA whose directory is given; empty when it has none there yet.
    QString accountUrl(const QString &directory) const;
    Status setAccountUrl(const QString &directory, const QString &url) const;

    // The name's certificate, when one is kept and its files read back as a chain and a key.
    std::optional<HeldCertificate> held(const QString &host) const;
    // Keeps a new certificate for host (and forgets its last error).
    Status keep(const QString &host, const QByteArray &chainPem, const QByteArray &keyPem) const;
    std::optional<LastError> lastError(const QString &host) const;
    Status recordError(const QString &host, const QString &error, const QDateTime &at) const;

private:
    QString file(const QString &host, const char *suffix) const;
    Status write(const QString &path, const QByteArray &content) const;

    QString m_dir;
};

// Invalid unless host can name files in the store: a lower-case DNS name, no wildcard.
Status checkStorableHost(const QString &host);

} // namespace pando::adapters::edgecert
