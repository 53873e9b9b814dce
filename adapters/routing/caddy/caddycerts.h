#pragma once
// What the Caddy edge's certificates are: the ones in its storage (Caddy's file layout:
// certificates/<issuer>/<name>/<name>.crt, "wildcard_" for "*"), and the last error Caddy logged
// for a name (its JSON log lines with an "identifier"). An error older than the certificate on
// disk no longer holds: a later try worked.

#include "adapters/api/routing.h"

#include <QString>
#include <QStringList>

namespace pando::adapters::caddy {

QList<CertificateState> certificateStates(const QString &storageDir, const QString &logFile, const QStringList &hosts);
// Whether the storage holds a certificate for host that has not expired.
bool holdsCertificate(const QString &storageDir, const QString &host);
// The install CA's root certificate (PEM), once Caddy made it; empty before.
QByteArray installCaRoot(const QString &storageDir);

} // namespace pando::adapters::caddy
