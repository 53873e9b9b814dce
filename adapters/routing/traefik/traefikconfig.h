#pragma once
// What the Traefik router writes, as pure functions of the route table and the options: Traefik
// v3's dynamic configuration for its file provider (routers, services, middlewares, TLS
// certificates), the static-configuration fragment listing the entry points of the apps' stable
// ports, the route table Pando keeps to adopt on its next start, and the checks an address passes
// before any of it is written. TraefikRouter (traefikrouter.h) holds the state and writes files.
//
// Threading: pure functions; call them from any thread.

#include "adapters/api/routing.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QString>

namespace pando::adapters::traefik {

struct TraefikRouterOptions {
    // The directory Traefik's providers.file.directory names; Pando writes pando.yml there (and
    // nothing else, since Traefik reads every .yml/.yaml/.toml in it). Made 0700 when missing.
    QString configDir;
    // Pando's own files (0700): routes.json, the route table it adopts on its next start, and
    // entrypoints.yml, the static-configuration fragment. Must not be configDir.
    QString stateDir;
    QString certResolver = QStringLiteral("pando");            // the certificatesResolvers entry for TLS auto
    QString webEntryPoint = QStringLiteral("web");             // Traefik's plain HTTP entry point
    QString websecureEntryPoint = QStringLiteral("websecure"); // Traefik's HTTPS entry point
    int webPort = 80;                                          // the ports those listen on, for the URLs Pando shows
    int websecurePort = 443;
    // TLS internal: HOST.crt and HOST.key (_wildcard.example.com.* for *.example.com), issued by
    // the install's CA, are handed to Traefik when both exist. Empty: Traefik's default
    // certificate serves those hosts (docs/edge.md).
    QString certificatesDir;
};

namespace detail {

// The entry point of app's stable port: "pando-APP".
QString entryPointName(const QString &app);
// Traefik v3 rule syntax: Host(`h`), or HostRegexp(`^[a-z0-9-]+\.example\.com$`) for
// *.example.com, && (Path(`/api`) || PathPrefix(`/api/`)) when the path is not "/".
QString ruleFor(const Address &address);
// Exact hosts beat wildcards, then longer paths win.
int priorityFor(const Address &address);
// A redirectRegex matching every URL under from (either scheme, any port, any query) and the
// replacement that keeps what follows from's path after to.
std::pair<QString, QString> redirectFor(const MovedAddress &moved);
// Where the certificate and key for host would be in dir (TLS internal).
std::pair<QString, QString> certificateFiles(const QString &dir, const QString &host);

// Invalid unless the host is a lower-case DNS name (or *.name) and the path "/" or "/seg/..."
// without a trailing slash, in characters a rule and a URL hold as they are; the error is at
// hostWhere or pathWhere.
Status checkAddress(const Address &address, const QString &hostWhere, const QString &pathWhere);

// The dynamic configuration for routes as a JSON tree (YAML is written from it).
QJsonObject dynamicConfig(const QHash<QString, Route> &routes, const TraefikRouterOptions &options);
// The static configuration's entryPoints: one pando-APP per route on 127.0.0.1:PORT.
QJsonObject staticEntryPoints(const QHash<QString, Route> &routes);
// Block YAML for a JSON tree; every string double-quoted (JSON escapes are YAML's too).
QByteArray toYaml(const QJsonObject &tree, const QByteArray &header = {});

// Where people reach route: its first address, else its stable port.
QUrl routeUrl(const Route &route, const TraefikRouterOptions &options);

} // namespace detail

} // namespace pando::adapters::traefik
