#pragma once
// The embedded server's TLS identity: a self-signed certificate (EC P-256, SHA-256 signature,
// subjectAltName with the host names and addresses teammates reach it by) and its private key,
// made with OpenSSL's libcrypto the first time and reused on every later start, so the
// fingerprint in a pairing link stays valid. The key file is written with mode 0600 from the
// start. Clients pin the certificate by its SHA-256 fingerprint instead of trusting a CA.

#include "adapters/api/error.h"

#include <QSslCertificate>
#include <QSslKey>
#include <QStringList>

namespace pando::server {

struct TlsIdentity {
    QSslCertificate certificate;
    QSslKey key;
    QString fingerprint; // SHA-256 of the certificate's DER, 64 lowercase hex digits
    QString certificatePath;
    QString keyPath;
    bool created = false; // made on this call rather than loaded
};

// Loads dir/server.crt and dir/server.key, or makes new ones when they are missing, do not
// match each other, have expired, or do not name every entry of hostNames (DNS names or IP
// addresses; "localhost" and 127.0.0.1 are always included).
Result<TlsIdentity> loadOrCreateTlsIdentity(const QString &dir, const QStringList &hostNames);

// A certificate and key someone else made (a CA's, say), as PEM files: errors name the file that
// could not be read, and a key that is not the certificate's is refused.
Result<TlsIdentity> loadTlsIdentity(const QString &certificatePath, const QString &keyPath);

// SHA-256 of the certificate's DER as 64 lowercase hex digits.
QString certificateFingerprint(const QSslCertificate &certificate);

// A fingerprint as people paste it ("AB:CD:…", "abcd…", with spaces) → 64 lowercase hex digits,
// or empty when it is not one.
QString normalizeFingerprint(const QString &text);

} // namespace pando::server
