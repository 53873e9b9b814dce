#pragma once
// What the Cloudflare Tunnel router sends to Cloudflare and keeps for itself, as pure functions of
// the route table and the options: the tunnel's ingress rules (one per address, in the order
// cloudflared must try them, the catch-all last), the checks an address passes before anything is
// sent, and the table Pando keeps in its state directory to adopt on its next start.
// CloudflareRouter (cloudflarerouter.h) holds the state and talks to the API.
//
// Threading: pure functions; call them from any thread.

#include "adapters/api/routing.h"

#include <QByteArray>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QSet>
#include <QString>
#include <QStringList>

namespace pando::adapters::cloudflare {

struct CloudflareRouterOptions {
    QString accountId; // the account the tunnel belongs to: 32 hex digits
    QString tunnelId;  // the remotely-managed tunnel's UUID
    QString zoneId;    // the zone every app's host name is in: 32 hex digits
    // The API token itself (Bearer), or a file holding it that only its owner may read. Never
    // logged, never in an error, never on a command line.
    QString apiToken;
    QString apiTokenFile;
    QString apiBase = QStringLiteral("https://api.cloudflare.com/client/v4");
    // Empty: Pando does not run cloudflared (the user does, with the tunnel's token). Set: Pando
    // runs `cloudflared tunnel run` with the token in its environment, in a session of its own.
    QString cloudflaredBinary;
    QString stateDir;               // routes.json, cloudflared.pid and cloudflared.log (0700)
    int requestTimeoutMs = 15000;   // one API request, connecting included
    int apiCheckIntervalMs = 60000; // how often check() asks the API whether the ingress is still Pando's
};

namespace detail {

// A DNS record as the zone's list gives it.
struct DnsRecord {
    QString id;
    QString type;
    QString name;
    QString content;
    bool proxied = false;
};

// What Pando keeps between starts: the route table, the DNS records it made (host → record id),
// and records it made and could not delete yet.
struct State {
    QHash<QString, Route> routes;
    QHash<QString, QString> dnsRecords;
    QHash<QString, QString> staleRecords;
};

// "<tunnel>.cfargotunnel.com", which every app's CNAME points at.
QString tunnelTarget(const QString &tunnelId);

// Invalid, naming the option, for an id that is not one and a base URL that is not http(s).
Status checkOptions(const CloudflareRouterOptions &options);
// The token in file: Invalid, naming the file (never its content), when the file is missing,
// empty, more than one line, or readable by anyone but its owner.
Result<QString> readApiToken(const QString &file);
// text with every occurrence of secret replaced, for anything that quotes a peer's words.
QString scrubbed(QString text, const QString &secret);

// The RE2 pattern cloudflared matches a request's path against for a path prefix: "/api" gives
// "^/api(/.*)?$", which serves /api and /api/... but not /apis.
QString pathRegex(const QString &path);
// Where a route's requests go: "http://HOST:PORT", or "http_status:503" with no backend yet.
QString serviceFor(const Route &route);
// An ingress rule's identity: its hostname and path pattern ("" for every path).
QString ruleKey(const QJsonObject &rule);
QString ruleKey(const Address &address);

// Invalid unless the host is a lower-case DNS name (or *.name) in zone, the path "/" or
// "/seg/..." without a trailing slash, and the TLS mode auto: Cloudflare ends TLS at its edge with
// its own certificates, so the install's CA (internal) and plain HTTP (off) cannot be had.
Status checkAddress(const Address &address, const QString &zone, const QString &hostWhere, const QString &pathWhere);

// Pando's ingress rules for routes: exact host names before wildcards, longer paths first.
QJsonArray ingressRules(const QHash<QString, Route> &routes);
// current's configuration (as GET returned it) with Pando's rules first, then the rules Pando did
// not make (none of whose keys is in pandoKeys), then current's catch-all, or http_status:404.
QJsonObject configWith(const QJsonObject &current, const QJsonArray &pandoRules, const QSet<QString> &pandoKeys);
// config without the empty originRequest objects Cloudflare may add to each rule, so that what
// it gives back compares equal to what was sent.
QJsonObject comparable(QJsonObject config);
// The keys of the rules routes' addresses make.
QSet<QString> ruleKeys(const QHash<QString, Route> &routes);

QByteArray stateToJson(const State &state);
// Invalid, naming what is wrong, for a file that is not one.
Result<State> stateFromJson(const QByteArray &json);
// Where people reach route: its first address; empty while it has none (nothing listens on the
// stable port with this router).
QUrl routeUrl(const Route &route);

} // namespace detail

} // namespace pando::adapters::cloudflare
