#pragma once
// The routing adapter interface: the stable address an app is reached at, and which running
// container it leads to. Switching a route's backend is what makes a redeploy seamless.
//
// Threading: every call may be made from any thread; implementations that run an event loop
// of their own hand the call over to it and return once it took effect.

#include "error.h"

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <optional>

namespace pando::adapters {

// How an address is served: a certificate from the edge's ACME CA (auto), from the install's own
// CA (internal, for names only the local network resolves), or plain HTTP (off).
enum class TlsMode { Auto, Internal, Off };
QString tlsModeName(TlsMode mode); // "auto", "internal", "off"

// One place an app is reached at on the edge's shared ports: a host name (ASCII, lower case;
// "*.example.com" for a wildcard) and a path prefix ("/" for the whole host, else "/api" with no
// trailing slash, which also serves "/api/..."). Two apps never share one.
struct Address {
    QString host;
    QString path = QStringLiteral("/");
    TlsMode tls = TlsMode::Auto;
    bool operator==(const Address &) const = default;
    // "https://shop.example.com/api" (with the edge's port when it is not the default one).
    QUrl url(int httpPort = 80, int httpsPort = 443) const;
    // Whether a request for path on this host would reach this address.
    bool covers(const QString &requestPath) const;
    // Whether a request could reach both: the same host and paths one of which covers the other.
    bool overlaps(const Address &other) const;
};

// An address the app stopped using, kept answering with a redirect to where it moved.
struct MovedAddress {
    Address from;
    QUrl to;
    bool operator==(const MovedAddress &) const = default;
};

// What an app's addresses should be, as the deploy and the reconciler hand them to the edge.
struct AddressChange {
    QList<Address> addresses;
    bool redirectMoved = true; // an address no longer listed redirects to the first new one; else it is dropped
    // Only people signed in to Pando reach the app (its stable port and its addresses), each
    // request with Pando's identity assertion (route.auth: pando).
    bool signIn = false;
};

// Where an edge asks who is signed in before a request reaches an app that wants to know:
// pandod's API (GET /api/v1/edge/auth, and /.pando/sign-in for browsers).
struct IdentityCheck {
    QString dial;    // "127.0.0.1:7420"; empty: nobody answers, and such apps answer 503
    QString caFile;  // PEM the API's TLS certificate is checked against; empty: plain HTTP
    QString tlsName; // the name the certificate is checked for (it names localhost and 127.0.0.1)
    bool operator==(const IdentityCheck &) const = default;
};

struct Route {
    QString app;
    int port = 0;        // the stable port (loopback router)
    QUrl url;            // where people reach the app
    QString backendHost; // empty: no backend yet
    int backendPort = 0;
    QList<Address> addresses;  // on the edge's shared ports; empty: only the stable port
    QList<MovedAddress> moved; // answered with a redirect
    bool signIn = false;       // only people signed in to Pando reach it (AddressChange::signIn)
    bool operator==(const Route &) const = default;
};

// A certificate the edge holds (or tried to get) for one host name.
struct CertificateState {
    QString host;
    QString issuer;     // the issuing CA's name; empty when none was issued yet
    QDateTime notAfter; // invalid when none was issued yet
    QString error;      // the last failure to get or renew one; empty when the last try worked
};

// The answer an edge gives to an ACME CA's HTTP-01 challenge for host, when Pando gets the
// edge's certificates itself (adapters/edgecert): the body of
// http://HOST/.well-known/acme-challenge/TOKEN.
struct ChallengeAnswer {
    QString host;
    QString token;
    QString keyAuthorization;
    bool operator==(const ChallengeAnswer &) const = default;
};

// A certificate Pando got for host, for an edge to serve: the chain (leaf first) and its key, PEM.
struct ServedCertificate {
    QString host;
    QByteArray chainPem;
    QByteArray keyPem;
    bool operator==(const ServedCertificate &) const = default;
};

// The state of a certificate held as a PEM chain (issuer and expiry of its leaf), for host.
CertificateState certificateStateOf(const QString &host, const QByteArray &chainPem);

// What serves the routes, for `pando edge status`, GET /api/v1/edge and the desktop's status line.
struct RouterStatus {
    QString kind;               // "caddy", "in-process", "traefik"
    bool running = true;        // it answers: apps are reachable through it
    bool outlivesPando = false; // apps keep answering while Pando is stopped
    qint64 pid = 0;             // its process, when it has one of its own
    int routes = 0;
    int httpPort = 0; // the shared ports apps' addresses are served on; 0: it serves none
    int httpsPort = 0;
    QString problem; // empty while it serves as it should; else what is wrong and what to do
};

class Router {
public:
    virtual ~Router() = default;

    // Creates the route or returns the existing one. requestedPort 0 picks a free port;
    // a taken port is ErrorCode::Conflict.
    virtual Result<Route> ensure(const QString &app, int requestedPort) = 0;
    // New connections go to host:port from now on; open ones finish where they started.
    virtual Status setBackend(const QString &app, const QString &host, int port) = 0;
    // Stops serving the route and frees its port; a missing route is not an error.
    virtual Status remove(const QString &app) = 0;
    virtual std::optional<Route> route(const QString &app) = 0;
    // Whether this router serves addresses (host names and paths on shared ports) at all; a spec
    // that names domains is refused before anything is created when it does not.
    virtual bool servesAddresses() const { return false; }
    // Serves the app's route at these addresses from now on (its stable port stays). Addresses the
    // route had and the change drops redirect to the first new one, or are dropped, as asked;
    // Conflict when another app holds one of them. The previous addresses keep serving on error.
    // Refuses a change asking for signIn unless assertsIdentity().
    virtual Status setAddresses(const QString &app, const AddressChange &change);
    // Whether this router asks Pando who is signed in before a request reaches an app that wants
    // it (AddressChange::signIn); a spec with route.auth: pando is refused when it does not.
    virtual bool assertsIdentity() const { return false; }
    // Where it asks (pandod's API, known once it listens); routers that cannot ignore it.
    virtual Status setIdentityCheck(const IdentityCheck & /*check*/) { return {}; }
    // The certificates the edge holds or tried to get, by host name.
    virtual QList<CertificateState> certificates() { return {}; }
    // Whether the edge serves certificates Pando gets for it (adapters/edgecert) instead of getting
    // them itself: then it answers the challenges and serves the certificates it is handed below,
    // and does no ACME of its own for autoTlsHosts().
    virtual bool takesCertificates() const { return false; }
    // The names it serves with tls: auto (a moved address's too): the ones an ACME CA certifies.
    virtual QStringList autoTlsHosts() { return {}; }
    // Answers exactly these HTTP-01 challenges from now on, on its HTTP port; Invalid unless
    // takesCertificates(). Each change is applied as every route change is (atomically).
    virtual Status setChallengeAnswers(const QList<ChallengeAnswer> &answers);
    // Serves exactly these certificates for their names from now on; Invalid unless
    // takesCertificates(). A name without one has none (its TLS handshake fails).
    virtual Status setCertificates(const QList<ServedCertificate> &certificates);
    // The root certificate (PEM) of the install's own CA, which serves tls: internal; empty when
    // this router has none (yet).
    virtual QByteArray installCa() { return {}; }
    // The HTTP and HTTPS ports addresses are served on (for their URLs).
    virtual std::pair<int, int> addressPorts() const { return {80, 443}; }
    // Makes sure what serves the routes runs (an edge in its own process is started again with
    // the routes it had); an error when it cannot. Called on every reconciler pass.
    virtual Status check() { return {}; }
    virtual RouterStatus status() = 0;
};

// What every router checks before it routes app on requestedPort (0: any) among its routes: bad
// input is Invalid; the app's route (in routes) when it has one on that port (or any); Conflict
// when it is routed on another port or another app holds that one; null when a new route may be
// made.
Result<const Route *> routeToKeep(const QHash<QString, Route> &routes, const QString &app, int requestedPort);

// Invalid unless app is a DNS label (a-z, 0-9, -), as the routers that put it into names need.
Status checkAppName(const QString &app);

// Invalid unless the host is a lower-case DNS name (or *.name below more than a top-level domain)
// and the path "/" or "/seg/..." without a trailing slash, in characters a proxy's rule and a URL
// hold as they are; the error is at hostWhere or pathWhere.
Status checkAddressSyntax(const Address &address, const QString &hostWhere, const QString &pathWhere);

// text with what Go's RE2 syntax gives a meaning to escaped, for the regular expressions of the
// proxies written in Go (Traefik's rules, cloudflared's ingress paths).
QString escapeRe2(const QString &text);

} // namespace pando::adapters
