#pragma once
// A certificate's key and its signing request (PKCS#10, DER) for one DNS name, as ACME's
// finalize wants it: a fresh P-256 key for every certificate, the name as its subject's CN and
// its only subjectAltName. Over OpenSSL.

#include "adapters/api/error.h"

#include <QByteArray>
#include <QString>

namespace pando::adapters::edgecert {

struct CertificateRequest {
    QByteArray keyPem; // PKCS#8: the new certificate's private key
    QByteArray csrDer;
};

Result<CertificateRequest> makeCertificateRequest(const QString &host);

} // namespace pando::adapters::edgecert
