#pragma once
// The Caddy edge's configuration, as pure functions: Pando's route table in, Caddy's JSON
// configuration out (the table written down beside it is adapters/api/routetable.h's).
//
// Each app keeps its stable 127.0.0.1 port: a server "pando:APP" reverse-proxying to the current
// container. Apps with addresses share two more servers on the edge's HTTP and HTTPS ports:
// "pando-edge:https" routes each address (host, path prefix) to its app, with certificates from
// the ACME CA (tls auto) or the install's own CA (tls internal, Caddy's PKI app, CA "pando");
// "pando-edge:http" serves the addresses with tls off and redirects the others to HTTPS (ACME's
// HTTP challenge is answered there by Caddy itself). When Pando gets the tls auto names'
// certificates (CertificateSource::Pando), Caddy gets none for them (skip_certificates, no
// automation policy): it serves the ones Pando hands it (tls.certificates.load_pem) and answers
// the CA's HTTP-01 challenges with what Pando says (static responses ahead of the redirect). An address an app moved
// away from redirects (308) to where it moved, once the new address serves (its certificate exists); until then it
// keeps serving the app.
//
// An app that wants only people signed in to Pando (Route::signIn) is served through a subroute,
// on its stable port and its addresses alike: /.pando/sign-in goes to pandod's sign-in page (its
// session cookie is then the app host's own); every other request is first asked of pandod's
// GET /api/v1/edge/auth, and goes on to the app only on a 2xx, with the X-Pando-Assertion that
// answer carried and without Pando's credential (the pando_session cookie, a Pando bearer token).
// Any other answer (401, 403, a browser's redirect to the sign-in page) goes back to the client;
// while pandod does not answer, such apps answer 502, never unchecked.

#include "adapters/api/routing.h"

#include <QByteArray>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <functional>

namespace pando::adapters::caddy {

// Who gets the certificates of names served with tls: auto: Caddy itself, through ACME (the
// default), or Pando (adapters/edgecert), which hands them to the edge to serve.
enum class CertificateSource { Caddy, Pando };

// Where the shared ports listen and where certificates come from.
struct EdgeSite {
    QString listenHost;    // empty: every interface
    int httpPort = 0;      // 0: 80 when Pando runs as root, else 8080 (CaddyEdge decides)
    int httpsPort = 0;     // 0: 443 as root, else 8443
    QString acmeDirectory; // empty: Caddy's default CAs (Let's Encrypt, ZeroSSL)
    QString acmeEmail;
    QString acmeRootFile;      // PEM roots the ACME directory's own certificate is checked against
    QString acmeChallenge;     // "http-01" or "tls-alpn-01" alone; empty: whichever the CA picks
    int renewCheckSeconds = 0; // how often Caddy looks for certificates to renew; 0: its default (10 min)
    CertificateSource certificates = CertificateSource::Caddy;
};

inline constexpr auto InstallCaId = "pando";

struct ConfigInput {
    QHash<QString, Route> routes;
    QString adminSocket;
    QString storageDir;
    EdgeSite site;
    // Whether the edge holds a certificate for host (a moved address redirects once it does).
    std::function<bool(const QString &host)> hasCertificate;
    // Where apps that want people signed in ask who they are; unset: such apps answer 503.
    IdentityCheck identity;
    // With CertificateSource::Pando: the HTTP-01 answers served on the HTTP port, and the
    // certificates served for tls: auto names (Caddy does no ACME for those names).
    QList<ChallengeAnswer> challenges;
    QList<ServedCertificate> certificates;
};

// The paths on an app's own host where people sign in to Pando and out (the edge hands them to
// pandod).
inline constexpr auto SignInPath = "/.pando/sign-in";
inline constexpr auto SignOutPath = "/.pando/sign-out";

QByteArray renderConfig(const ConfigInput &input);
// Whether every address a moved one points at serves already (so the redirect is in place).
bool movesSettled(const QHash<QString, Route> &routes, const std::function<bool(const QString &)> &hasCertificate);

// The per-app servers of a configuration Caddy serves: ports, backends and whether people must
// sign in; no addresses.
QHash<QString, Route> routesOfServers(const QJsonObject &servers);
// Where those servers ask who is signed in (unset when no app wants it).
IdentityCheck identityOfServers(const QJsonObject &servers);

// The certificates Pando handed to a configuration Caddy serves (tls.certificates.load_pem, each
// tagged with its name), from GET /config/apps/tls/certificates/load_pem.
QList<ServedCertificate> certificatesOfConfig(const QJsonArray &loadPem);

// Caddy's {"error": "..."} body, or the body itself.
QString caddyError(const QByteArray &body);

} // namespace pando::adapters::caddy
