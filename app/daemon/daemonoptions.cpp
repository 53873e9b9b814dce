#include "daemonoptions.h"

#include "app/wiring/edgesettings.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QUrl>

#include <algorithm>
#include <tuple>

namespace pando::daemon {

namespace {

// The first of an edge's flags that is set when another edge was chosen, refused by name (only the
// flags: the variables may sit in an environment shared with other edges).
Status refuseOtherEdgesFlags(const QCommandLineParser &parser,
                             std::initializer_list<const QCommandLineOption *> options, const char *edge)
{
    for (const QCommandLineOption *option : options)
        if (parser.isSet(*option))
            return fail(ErrorCode::Invalid, QStringLiteral("goes with --edge %1").arg(QLatin1StringView(edge)),
                        QStringLiteral("--") + option->names().constFirst());
    return {};
}

// A flag's value, else its variable's, with where it was given; one given nowhere is the flag's
// to give (an error about a missing value names the flag).
wiring::Given givenOf(const QCommandLineParser &parser, const QProcessEnvironment &environment,
                      const QCommandLineOption &option, const char *variable)
{
    const QString flag = QStringLiteral("--") + option.names().constFirst();
    if (parser.isSet(option))
        return {parser.value(option), flag};
    const QString value = environment.value(QLatin1StringView(variable));
    return {value, value.isEmpty() ? flag : QString(QLatin1StringView(variable))};
}

// The edge's shared ports and ACME CA (adapters/routing/caddy/caddyconfig.h).
struct EdgeSiteFlags {
    QCommandLineOption listen{QStringLiteral("edge-listen"),
                              QStringLiteral("The address apps' domains are served on (default: every interface)."),
                              QStringLiteral("address")};
    QCommandLineOption httpPort{QStringLiteral("edge-http-port"),
                                QStringLiteral("The port apps' domains are served on over HTTP (default 80 as root, "
                                               "else 8080)."),
                                QStringLiteral("port")};
    QCommandLineOption httpsPort{QStringLiteral("edge-https-port"),
                                 QStringLiteral("The port apps' domains are served on over HTTPS (default 443 as "
                                                "root, else 8443)."),
                                 QStringLiteral("port")};
    QCommandLineOption acmeCa{QStringLiteral("acme-ca"),
                              QStringLiteral("The ACME directory certificates for tls: auto come from (default: "
                                             "Let's Encrypt, then ZeroSSL)."),
                              QStringLiteral("url")};
    QCommandLineOption acmeEmail{QStringLiteral("acme-email"),
                                 QStringLiteral("The address the ACME CA writes to about certificates."),
                                 QStringLiteral("email")};
    QCommandLineOption acmeRoot{QStringLiteral("acme-ca-root"),
                                QStringLiteral("A PEM file of roots the ACME directory's own certificate is checked "
                                               "against (a private CA)."),
                                QStringLiteral("file")};
    QCommandLineOption certificates{
        QStringLiteral("edge-certificates"),
        QStringLiteral("Who gets the certificates of tls: auto names from the ACME CA: caddy (the Caddy edge itself, "
                       "the default) or pando (pandod does, and the edge serves them: for several edges behind one "
                       "name)."),
        QStringLiteral("caddy|pando")};

    void addTo(QCommandLineParser &parser) const
    {
        parser.addOptions({listen, httpPort, httpsPort, acmeCa, acmeEmail, acmeRoot, certificates});
    }

    Result<adapters::caddy::EdgeSite> read(const QCommandLineParser &parser) const
    {
        adapters::caddy::EdgeSite site;
        if (parser.isSet(listen)) {
            const QHostAddress address(parser.value(listen));
            if (address.isNull())
                return fail(ErrorCode::Invalid,
                            QStringLiteral("expected an IP address, got \"%1\"").arg(parser.value(listen)),
                            QStringLiteral("--edge-listen"));
            site.listenHost = address.toString();
        }
        for (const auto &[option, target] :
             {std::pair{&httpPort, &site.httpPort}, std::pair{&httpsPort, &site.httpsPort}}) {
            if (!parser.isSet(*option))
                continue;
            bool ok = false;
            const int port = parser.value(*option).toInt(&ok);
            if (!ok || port < 1 || port > 65535)
                return fail(ErrorCode::Invalid,
                            QStringLiteral("expected a port 1-65535, got \"%1\"").arg(parser.value(*option)),
                            QStringLiteral("--") + option->names().constFirst());
            *target = port;
        }
        if (site.httpPort != 0 && site.httpPort == site.httpsPort)
            return fail(ErrorCode::Invalid, QStringLiteral("HTTP and HTTPS cannot share port %1").arg(site.httpPort),
                        QStringLiteral("--edge-https-port"));
        if (parser.isSet(acmeCa)) {
            const QUrl url(parser.value(acmeCa), QUrl::StrictMode);
            if (!url.isValid() || url.scheme() != QLatin1String("https") || url.host().isEmpty())
                return fail(ErrorCode::Invalid,
                            QStringLiteral("expected the https:// URL of an ACME directory, got \"%1\"")
                                .arg(parser.value(acmeCa)),
                            QStringLiteral("--acme-ca"));
            site.acmeDirectory = url.toString();
        }
        site.acmeEmail = parser.value(acmeEmail);
        if (!site.acmeEmail.isEmpty() && !site.acmeEmail.contains(QLatin1Char('@')))
            return fail(ErrorCode::Invalid, QStringLiteral("expected an email address"),
                        QStringLiteral("--acme-email"));
        if (parser.isSet(acmeRoot)) {
            const QFileInfo root(parser.value(acmeRoot));
            if (!root.isFile() || !root.isReadable())
                return fail(ErrorCode::Invalid, QStringLiteral("cannot read %1").arg(parser.value(acmeRoot)),
                            QStringLiteral("--acme-ca-root"));
            site.acmeRootFile = root.absoluteFilePath();
        }
        if (parser.isSet(certificates)) {
            const QString who = parser.value(certificates);
            if (who != QLatin1String("caddy") && who != QLatin1String("pando"))
                return fail(ErrorCode::Invalid, QStringLiteral("expected caddy or pando, got \"%1\"").arg(who),
                            QStringLiteral("--edge-certificates"));
            site.certificates = who == QLatin1String("pando") ? adapters::caddy::CertificateSource::Pando
                                                              : adapters::caddy::CertificateSource::Caddy;
        }
        return site;
    }
};

// The Traefik edge's flags, each also read from its variable (docs/edge.md, Traefik).
struct TraefikFlags {
    QCommandLineOption dir{
        QStringLiteral("traefik-dir"),
        QStringLiteral("With --edge traefik: the directory Traefik's providers.file.directory watches; pandod "
                       "writes pando.yml there. Also $PANDO_TRAEFIK_DIR."),
        QStringLiteral("dir")};
    QCommandLineOption resolver{
        QStringLiteral("traefik-resolver"),
        QStringLiteral("With --edge traefik: the certificatesResolvers entry that gets certificates for TLS-auto "
                       "addresses (default pando). Also $PANDO_TRAEFIK_RESOLVER."),
        QStringLiteral("name")};
    QCommandLineOption certs{
        QStringLiteral("traefik-certs"),
        QStringLiteral("With --edge traefik: a directory of HOST.crt/HOST.key pairs for TLS-internal addresses "
                       "(default: Traefik's default certificate). Also $PANDO_TRAEFIK_CERTS."),
        QStringLiteral("dir")};

    void addTo(QCommandLineParser &parser) const { parser.addOptions({dir, resolver, certs}); }

    // Into o with --edge traefik; a flag with another edge is refused (only the flags: the
    // variables may sit in an environment shared with other edges).
    Status read(const QCommandLineParser &parser, const QProcessEnvironment &environment, DaemonOptions &o) const
    {
        if (o.edge != wiring::EdgeChoice::Traefik)
            return refuseOtherEdgesFlags(parser, {&dir, &resolver, &certs}, "traefik");
        auto traefik = wiring::traefikOptions({givenOf(parser, environment, dir, "PANDO_TRAEFIK_DIR"),
                                               givenOf(parser, environment, resolver, "PANDO_TRAEFIK_RESOLVER"),
                                               givenOf(parser, environment, certs, "PANDO_TRAEFIK_CERTS")});
        if (!traefik)
            return std::unexpected(traefik.error());
        o.traefikDir = traefik->configDir;
        o.traefikResolver = traefik->certResolver;
        o.traefikCertificates = traefik->certificatesDir;
        return {};
    }
};

// The Cloudflare Tunnel edge's flags (adapters/routing/cloudflare/cloudflareconfig.h), each also
// read from a PANDO_CLOUDFLARE_* variable. The API token itself is never a flag (argv is public):
// a file only pandod's user may read, or $PANDO_CLOUDFLARE_TOKEN.
struct CloudflareFlags {
    QCommandLineOption account{QStringLiteral("cloudflare-account"),
                               QStringLiteral("With --edge cloudflare: the account id the tunnel belongs to. Also "
                                              "$PANDO_CLOUDFLARE_ACCOUNT."),
                               QStringLiteral("id")};
    QCommandLineOption tunnel{QStringLiteral("cloudflare-tunnel"),
                              QStringLiteral("With --edge cloudflare: the id (UUID) of a remotely-managed tunnel "
                                             "whose ingress pandod manages. Also $PANDO_CLOUDFLARE_TUNNEL."),
                              QStringLiteral("uuid")};
    QCommandLineOption zone{QStringLiteral("cloudflare-zone"),
                            QStringLiteral("With --edge cloudflare: the id of the zone apps' host names are in; "
                                           "pandod adds and removes their CNAMEs there. Also $PANDO_CLOUDFLARE_ZONE."),
                            QStringLiteral("id")};
    QCommandLineOption tokenFile{
        QStringLiteral("cloudflare-token-file"),
        QStringLiteral("With --edge cloudflare: a file (mode 0600) holding an API token with "
                       "Cloudflare Tunnel Edit and DNS Edit. Also $PANDO_CLOUDFLARE_TOKEN_FILE, "
                       "or the token itself in $PANDO_CLOUDFLARE_TOKEN."),
        QStringLiteral("file")};
    QCommandLineOption api{QStringLiteral("cloudflare-api"),
                           QStringLiteral("With --edge cloudflare: the API's base URL (default "
                                          "https://api.cloudflare.com/client/v4). Also $PANDO_CLOUDFLARE_API."),
                           QStringLiteral("url")};
    QCommandLineOption cloudflared{QStringLiteral("cloudflared"),
                                   QStringLiteral("With --edge cloudflare: a cloudflared binary pandod runs the tunnel "
                                                  "with (not packaged by Debian); without it you run cloudflared. Also "
                                                  "$PANDO_CLOUDFLARED."),
                                   QStringLiteral("path")};

    void addTo(QCommandLineParser &parser) const
    {
        parser.addOptions({account, tunnel, zone, tokenFile, api, cloudflared});
    }

    // Into o with --edge cloudflare (its files in <data-dir>/cloudflare); a flag with another
    // edge is refused (only the flags: the variables may sit in an environment shared with others).
    Status read(const QCommandLineParser &parser, const QProcessEnvironment &environment, DaemonOptions &o) const
    {
        if (o.edge != wiring::EdgeChoice::Cloudflare)
            return refuseOtherEdgesFlags(parser, {&account, &tunnel, &zone, &tokenFile, &api, &cloudflared},
                                         "cloudflare");
        const auto given = [&](const QCommandLineOption &option, const char *variable) {
            return givenOf(parser, environment, option, variable);
        };
        wiring::CloudflareSettings settings;
        settings.account = given(account, "PANDO_CLOUDFLARE_ACCOUNT");
        settings.tunnel = given(tunnel, "PANDO_CLOUDFLARE_TUNNEL");
        settings.zone = given(zone, "PANDO_CLOUDFLARE_ZONE");
        settings.tokenFile = given(tokenFile, "PANDO_CLOUDFLARE_TOKEN_FILE");
        settings.api = given(api, "PANDO_CLOUDFLARE_API");
        settings.cloudflared = given(cloudflared, "PANDO_CLOUDFLARED");
        // The token itself, from the environment only.
        settings.token = environment.value(QStringLiteral("PANDO_CLOUDFLARE_TOKEN"));
        auto read = wiring::cloudflareOptions(settings, o.engine.dataDir + QStringLiteral("/cloudflare"));
        if (!read)
            return std::unexpected(read.error());
        o.cloudflare = *read;
        return {};
    }
};

} // namespace

Result<DaemonOptions> parseOptions(const QStringList &arguments, const QProcessEnvironment &environment)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Pando's engine and API, headless."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption dataDir(QStringLiteral("data-dir"),
                                     QStringLiteral("Where the state, source cache and keys live."),
                                     QStringLiteral("dir"));
    const QCommandLineOption listen(QStringLiteral("listen"),
                                    QStringLiteral("Address and port of the API (default 127.0.0.1:7420)."),
                                    QStringLiteral("host:port"));
    const QCommandLineOption database(
        QStringLiteral("database"),
        QStringLiteral("sqlite:///path or postgres://user@host:port/db (default: SQLite in the data dir). A URL with a "
                       "password goes in $PANDO_DATABASE_URL or --database-file, never here: argv is public."),
        QStringLiteral("url"));
    const QCommandLineOption databaseFile(
        QStringLiteral("database-file"),
        QStringLiteral("A file (readable by pandod's user only) holding the database URL, password and all."),
        QStringLiteral("file"));
    const QCommandLineOption insecureHttp(
        QStringLiteral("insecure-http"),
        QStringLiteral("Serve plain HTTP on an address other than loopback (tokens and passwords cross the network "
                       "in the clear); without it such a --listen needs --tls."));
    const QCommandLineOption workers(QStringLiteral("workers"), QStringLiteral("Deploys run in parallel (default 2)."),
                                     QStringLiteral("n"));
    const QCommandLineOption reconcile(QStringLiteral("reconcile-interval"),
                                       QStringLiteral("Milliseconds between reconciler passes (default 5000)."),
                                       QStringLiteral("ms"));
    const QCommandLineOption diskCheck(
        QStringLiteral("disk-check-interval"),
        QStringLiteral("Milliseconds between checks of apps' disk limits (default 30000; 0: never)."),
        QStringLiteral("ms"));
    const QCommandLineOption docker(QStringLiteral("docker-socket"), QStringLiteral("The Docker Engine's unix socket."),
                                    QStringLiteral("path"));
    const QCommandLineOption install(
        QStringLiteral("install-id"),
        QStringLiteral("Share an install id on purpose (default: the data dir's own, in <data-dir>/install-id; "
                       "two installs with one id on one engine delete each other's containers)."),
        QStringLiteral("id"));
    const QCommandLineOption maxRuns(QStringLiteral("max-runs"),
                                     QStringLiteral("Pipeline runs at once, all pipelines together (default 4)."),
                                     QStringLiteral("n"));
    const QCommandLineOption auditSinks(QStringLiteral("audit-sinks"),
                                        QStringLiteral("A JSON file of syslog/HTTPS sinks the audit log is pushed to."),
                                        QStringLiteral("file"));
    const QCommandLineOption edge(
        QStringLiteral("edge"),
        QStringLiteral("What serves the apps: caddy (its own process: apps answer while pandod is stopped), "
                       "in-process, traefik (a Traefik you run, configured through --traefik-dir), cloudflare (a "
                       "Cloudflare Tunnel, configured through --cloudflare-*), or auto (caddy when installed; the "
                       "default). Also $PANDO_EDGE."),
        QStringLiteral("auto|caddy|in-process|traefik|cloudflare"));
    parser.addOption(edge);
    const TraefikFlags traefik;
    traefik.addTo(parser);
    const QCommandLineOption appLimit(QStringLiteral("app-limit"),
                                      QStringLiteral("Apps a member may own (default 10; operators and admins: any)."),
                                      QStringLiteral("n"));
    const QCommandLineOption approvalPolicy(
        QStringLiteral("approval-policy"),
        QStringLiteral("A JSON file of the rules deciding which deploys wait for sign-off (default: none wait)."),
        QStringLiteral("file"));
    const QCommandLineOption approvalTtl(
        QStringLiteral("approval-ttl"),
        QStringLiteral("How long a deploy waits for sign-off before its request expires (default 24h)."),
        QStringLiteral("duration"));
    const QCommandLineOption tls(
        QStringLiteral("tls"),
        QStringLiteral(
            "Serve HTTPS, with a certificate made and kept in <data-dir>/tls (clients pin its fingerprint)."));
    const QCommandLineOption tlsName(
        QStringLiteral("tls-name"),
        QStringLiteral("A host name or address teammates reach this install by, for the made certificate (repeat)."),
        QStringLiteral("name"));
    const QCommandLineOption tlsCert(QStringLiteral("tls-cert"),
                                     QStringLiteral("Serve HTTPS with this PEM certificate (with --tls-key)."),
                                     QStringLiteral("file"));
    const QCommandLineOption tlsKey(QStringLiteral("tls-key"), QStringLiteral("The PEM private key of --tls-cert."),
                                    QStringLiteral("file"));
    const QCommandLineOption rotateKey(
        QStringLiteral("rotate-secrets-key"),
        QStringLiteral("Re-seal every secret (pipelines' and apps') with a new key, replace <data-dir>/seal.key, "
                       "and exit. Stop pandod first."));
    const QCommandLineOption resetAdmin(
        QStringLiteral("reset-admin"),
        QStringLiteral("Recover a locked-out install: make USER (created when missing) an enabled administrator with "
                       "a new password, and exit. Stop pandod first. The password is read from --password-file, or "
                       "a one-time one is written to <data-dir>/reset-admin-password (0600)."),
        QStringLiteral("user"));
    const QCommandLineOption passwordFile(
        QStringLiteral("password-file"),
        QStringLiteral("With --reset-admin: the file holding the new password (its first line; - for standard input)."),
        QStringLiteral("file"));
    const QCommandLineOption runtime(
        QStringLiteral("runtime"),
        QStringLiteral("Where apps whose spec names no runtime are deployed: docker (default) or incus."),
        QStringLiteral("kind"));
    const QCommandLineOption incus(
        QStringLiteral("incus"),
        QStringLiteral("auto (default: use the local incusd when it answers), on (it must answer) or off."),
        QStringLiteral("mode"));
    const QCommandLineOption incusSocket(QStringLiteral("incus-socket"),
                                         QStringLiteral("The local incusd's unix socket (implies --incus on)."),
                                         QStringLiteral("path"));
    const QCommandLineOption incusUrl(
        QStringLiteral("incus-url"),
        QStringLiteral(
            "A remote Incus, https://host:8443, reached with --incus-client-cert/-key (implies --incus on)."),
        QStringLiteral("url"));
    const QCommandLineOption incusCert(QStringLiteral("incus-client-cert"),
                                       QStringLiteral("PEM certificate the remote Incus trusts."),
                                       QStringLiteral("file"));
    const QCommandLineOption incusKey(QStringLiteral("incus-client-key"),
                                      QStringLiteral("The PEM private key of --incus-client-cert."),
                                      QStringLiteral("file"));
    const QCommandLineOption incusServerCert(
        QStringLiteral("incus-server-cert"),
        QStringLiteral("The remote Incus's own PEM certificate, pinned (default: the system's CAs)."),
        QStringLiteral("file"));
    const QCommandLineOption serviceImage(
        QStringLiteral("service-image"),
        QStringLiteral("Run services of a kind from another image, e.g. postgres=postgres:15 or redis:7=redis:7 "
                       "(repeatable; default: Pando's local pando/postgres:15, pando/mariadb:10.11, pando/redis:7)."),
        QStringLiteral("kind=image"));
    parser.addOption(serviceImage);
    const QCommandLineOption maxConnections(
        QStringLiteral("max-connections"),
        QStringLiteral("Connections the API holds open at once; past it one is answered 503 (default 512)."),
        QStringLiteral("n"));
    const QCommandLineOption headerTimeout(
        QStringLiteral("header-timeout"),
        QStringLiteral("How long a request's headers may take to arrive, e.g. 10s (default 10s)."),
        QStringLiteral("duration"));
    const QCommandLineOption idleTimeout(
        QStringLiteral("idle-timeout"),
        QStringLiteral("How long a connection may stay silent between requests or inside a body (default 60s)."),
        QStringLiteral("duration"));
    const QCommandLineOption allowHost(
        QStringLiteral("allow-host"),
        QStringLiteral("A host name requests may name in their Host header besides loopback names, the listen "
                       "address and the certificate's names, e.g. a reverse proxy's (repeat)."),
        QStringLiteral("name"));
    const QCommandLineOption gitTimeout(
        QStringLiteral("git-timeout"),
        QStringLiteral("How long a git host may take to connect or stay silent mid-fetch, e.g. 30s (default 30s)."),
        QStringLiteral("duration"));
    parser.addOptions({maxConnections, headerTimeout, idleTimeout, allowHost, gitTimeout, databaseFile, insecureHttp});
    parser.addOptions({resetAdmin, passwordFile});
    const EdgeSiteFlags edgeSite;
    edgeSite.addTo(parser);
    const CloudflareFlags cloudflare;
    cloudflare.addTo(parser);
    const QCommandLineOption assertionIssuer(
        QStringLiteral("assertion-issuer"),
        QStringLiteral("The iss of the identity assertions apps are given (docs/edge.md): this install's URL or name "
                       "(default pando:<install id>)."),
        QStringLiteral("url"));
    const QCommandLineOption assertionKeyDays(
        QStringLiteral("assertion-key-days"),
        QStringLiteral("Days an identity assertion signing key signs before a new one replaces it (default 7)."),
        QStringLiteral("n"));
    parser.addOptions({assertionIssuer, assertionKeyDays});
    parser.addOptions({dataDir,  listen,    database,   workers,        reconcile,      diskCheck,   docker,
                       install,  maxRuns,   auditSinks, appLimit,       approvalPolicy, approvalTtl, tls,
                       tlsName,  tlsCert,   tlsKey,     rotateKey,      runtime,        incus,       incusSocket,
                       incusUrl, incusCert, incusKey,   incusServerCert});
    parser.process(arguments);
    if (!parser.positionalArguments().isEmpty())
        return fail(ErrorCode::Invalid,
                    QStringLiteral("unexpected argument \"%1\"").arg(parser.positionalArguments().first()), {},
                    QStringLiteral("see pandod --help"));

    DaemonOptions o;
    o.engine.dataDir = parser.isSet(dataDir) ? parser.value(dataDir)
                                             : QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) +
                                                   QStringLiteral("/pando");
    o.engine.dataDir = QDir(o.engine.dataDir).absolutePath();
    if (parser.isSet(listen)) {
        const QString value = parser.value(listen);
        const qsizetype colon = value.lastIndexOf(QLatin1Char(':'));
        bool ok = false;
        const uint port = colon > 0 ? value.mid(colon + 1).toUInt(&ok) : 0;
        QString host = colon > 0 ? value.left(colon) : QString();
        if (host.startsWith(QLatin1Char('[')) && host.endsWith(QLatin1Char(']')))
            host = host.mid(1, host.size() - 2);
        if (!ok || port > 65535 || !o.listenAddress.setAddress(host))
            return fail(ErrorCode::Invalid,
                        QStringLiteral("expected host:port with a numeric address, got \"%1\"").arg(value),
                        QStringLiteral("--listen"));
        o.listenPort = quint16(port);
    }
    // The database URL: --database (no password: every user of the machine reads argv), else
    // --database-file, else $PANDO_DATABASE_URL, else SQLite in the data directory.
    const int dbSources = int(parser.isSet(database)) + int(parser.isSet(databaseFile));
    if (dbSources > 1)
        return fail(ErrorCode::Invalid, QStringLiteral("--database and --database-file exclude each other"),
                    QStringLiteral("--database-file"));
    QString dbUrl;
    QString dbWhere = QStringLiteral("--database");
    if (parser.isSet(database)) {
        dbUrl = parser.value(database);
        if (!QUrl(dbUrl).password().isEmpty())
            return fail(ErrorCode::Invalid,
                        QStringLiteral("the URL carries a password, which every user of this machine can read in "
                                       "the process list"),
                        QStringLiteral("--database"),
                        QStringLiteral("put the URL in $PANDO_DATABASE_URL or in a file given with --database-file"));
    } else if (parser.isSet(databaseFile)) {
        dbWhere = QStringLiteral("--database-file");
        QFile file(parser.value(databaseFile));
        if (!file.open(QIODevice::ReadOnly))
            return fail(ErrorCode::Invalid,
                        QStringLiteral("cannot read %1: %2").arg(file.fileName(), file.errorString()), dbWhere);
        dbUrl = QString::fromUtf8(file.read(qint64{64} * 1024)).trimmed();
    } else if (environment.contains(QStringLiteral("PANDO_DATABASE_URL"))) {
        dbWhere = QStringLiteral("PANDO_DATABASE_URL");
        dbUrl = environment.value(QStringLiteral("PANDO_DATABASE_URL")).trimmed();
    } else {
        dbUrl = QStringLiteral("sqlite://") + o.engine.dataDir + QStringLiteral("/pando.db");
    }
    auto db = core::DatabaseConfig::fromUrl(dbUrl);
    if (!db) {
        // Not the URL's password: QUrl's errors quote the URL.
        Error e = db.error();
        e.where = dbWhere;
        if (const QString password = QUrl(dbUrl).password(QUrl::FullyEncoded); !password.isEmpty()) {
            e.message.replace(password, QStringLiteral("***"));
            e.message.replace(QUrl::fromPercentEncoding(password.toUtf8()), QStringLiteral("***"));
        }
        return std::unexpected(e);
    }
    o.engine.database = *db;
    if (parser.isSet(workers)) {
        bool ok = false;
        o.engine.workers = parser.value(workers).toInt(&ok);
        if (!ok || o.engine.workers < 1 || o.engine.workers > 64)
            return fail(ErrorCode::Invalid, QStringLiteral("expected a number from 1 to 64"),
                        QStringLiteral("--workers"));
    }
    if (parser.isSet(reconcile)) {
        bool ok = false;
        o.engine.reconcileIntervalMs = parser.value(reconcile).toInt(&ok);
        if (!ok || o.engine.reconcileIntervalMs < 100)
            return fail(ErrorCode::Invalid, QStringLiteral("expected milliseconds, at least 100"),
                        QStringLiteral("--reconcile-interval"));
    }
    if (parser.isSet(diskCheck)) {
        bool ok = false;
        o.engine.diskCheckIntervalMs = parser.value(diskCheck).toInt(&ok);
        if (!ok || (o.engine.diskCheckIntervalMs != 0 && o.engine.diskCheckIntervalMs < 1000))
            return fail(ErrorCode::Invalid, QStringLiteral("expected milliseconds, 0 or at least 1000"),
                        QStringLiteral("--disk-check-interval"));
    }
    if (parser.isSet(assertionIssuer)) {
        o.engine.assertionIssuer = parser.value(assertionIssuer).trimmed();
        static const QRegularExpression printable(QStringLiteral("^[\\x21-\\x7e]{1,200}$"));
        if (!printable.match(o.engine.assertionIssuer).hasMatch())
            return fail(ErrorCode::Invalid,
                        QStringLiteral("expected a URL or name of 1 to 200 printable characters without spaces, got "
                                       "\"%1\"")
                            .arg(o.engine.assertionIssuer.left(200)),
                        QStringLiteral("--assertion-issuer"));
    }
    if (parser.isSet(assertionKeyDays)) {
        bool ok = false;
        o.engine.assertionKeyDays = parser.value(assertionKeyDays).toInt(&ok);
        if (!ok || o.engine.assertionKeyDays < 1 || o.engine.assertionKeyDays > 365)
            return fail(ErrorCode::Invalid, QStringLiteral("expected a number of days from 1 to 365"),
                        QStringLiteral("--assertion-key-days"));
    }
    o.allowedHosts = parser.values(allowHost);
    if (parser.isSet(maxConnections)) {
        bool ok = false;
        o.connections.maxConnections = parser.value(maxConnections).toInt(&ok);
        if (!ok || o.connections.maxConnections < 1 || o.connections.maxConnections > 1'000'000)
            return fail(ErrorCode::Invalid, QStringLiteral("expected a number from 1 to 1000000"),
                        QStringLiteral("--max-connections"));
    }
    for (const auto &[option, target] :
         {std::pair{&headerTimeout, &o.connections.headerTimeoutMs},
          std::pair{&idleTimeout, &o.connections.idleTimeoutMs}, std::pair{&gitTimeout, &o.gitTimeoutMs}}) {
        if (!parser.isSet(*option))
            continue;
        const std::optional<qint64> ms = parseDuration(parser.value(*option));
        if (!ms || *ms < 1000 || *ms > 86'400'000)
            return fail(ErrorCode::Invalid,
                        QStringLiteral("expected a duration from 1s to 1d such as 10s or 5m, got \"%1\"")
                            .arg(parser.value(*option)),
                        QStringLiteral("--") + option->names().constFirst());
        *target = int(*ms);
    }
    // Read as the desktop's Settings view reads them (app/wiring/enginesettings.h).
    auto chosen = wiring::checkEngineSettings(
        {parser.value(appLimit), parser.value(maxRuns), parser.value(approvalPolicy), parser.value(approvalTtl),
         parser.value(auditSinks),
         parser.isSet(edge) ? parser.value(edge) : environment.value(QStringLiteral("PANDO_EDGE"))},
        QStringLiteral("--"));
    if (!chosen)
        return std::unexpected(chosen.error());
    chosen->applyTo(o);
    auto site = edgeSite.read(parser);
    if (!site)
        return std::unexpected(site.error());
    o.edgeSite = *site;
    // Pando hands its certificates to the Caddy edge only: the others serve no tls: auto name of
    // Pando's making (Traefik and Cloudflare get their own; the in-process edge serves no names).
    if (o.edgeSite.certificates == adapters::caddy::CertificateSource::Pando && o.edge != wiring::EdgeChoice::Auto &&
        o.edge != wiring::EdgeChoice::Caddy)
        return fail(ErrorCode::Invalid, QStringLiteral("pando goes with the Caddy edge (--edge caddy or auto)"),
                    QStringLiteral("--edge-certificates"));
    if (auto read = traefik.read(parser, environment, o); !read)
        return std::unexpected(read.error());
    if (auto read = cloudflare.read(parser, environment, o); !read)
        return std::unexpected(read.error());
    if (parser.isSet(tlsCert) != parser.isSet(tlsKey))
        return fail(ErrorCode::Invalid, QStringLiteral("--tls-cert and --tls-key go together"),
                    parser.isSet(tlsCert) ? QStringLiteral("--tls-key") : QStringLiteral("--tls-cert"),
                    QStringLiteral("give both files, or --tls alone for a certificate pandod makes"));
    if (parser.isSet(tlsName) && parser.isSet(tlsCert))
        return fail(ErrorCode::Invalid, QStringLiteral("--tls-name names a certificate pandod makes, not a given one"),
                    QStringLiteral("--tls-name"));
    o.rotateSecretsKey = parser.isSet(rotateKey);
    o.resetAdmin = parser.value(resetAdmin);
    o.passwordFile = parser.value(passwordFile);
    if (parser.isSet(passwordFile) && !parser.isSet(resetAdmin))
        return fail(ErrorCode::Invalid, QStringLiteral("--password-file goes with --reset-admin"),
                    QStringLiteral("--password-file"));
    if (parser.isSet(resetAdmin) && parser.isSet(rotateKey))
        return fail(ErrorCode::Invalid, QStringLiteral("--reset-admin and --rotate-secrets-key are separate runs"),
                    QStringLiteral("--reset-admin"));
    o.tls = parser.isSet(tls) || parser.isSet(tlsCert) || parser.isSet(tlsName);
    o.insecureHttp = parser.isSet(insecureHttp);
    // Bearer tokens and passwords in the clear, to anyone on the network path: only on purpose.
    if (!o.tls && !o.insecureHttp && !o.listenAddress.isLoopback())
        return fail(ErrorCode::Invalid,
                    QStringLiteral("plain HTTP on %1 sends tokens and passwords across the network in the clear")
                        .arg(o.listenAddress.toString()),
                    QStringLiteral("--listen"),
                    QStringLiteral("add --tls (pandod makes a certificate clients pin), or --insecure-http if a "
                                   "proxy in front terminates TLS"));
    o.tlsNames = parser.values(tlsName);
    o.tlsCertificate = parser.value(tlsCert);
    o.tlsKey = parser.value(tlsKey);
    if (parser.isSet(install))
        o.engine.installId = parser.value(install);
    o.dockerSocket = parser.value(docker);
    for (const QString &mapping : parser.values(serviceImage)) {
        const qsizetype eq = mapping.indexOf(u'=');
        const QString kind = mapping.left(eq).section(u':', 0, 0);
        if (eq <= 0 || eq == mapping.size() - 1 || !core::serviceKinds().contains(kind))
            return fail(ErrorCode::Invalid,
                        QStringLiteral("expected KIND[:VERSION]=IMAGE with a kind of %1, got \"%2\"")
                            .arg(core::serviceKinds().join(QStringLiteral(", ")), mapping),
                        QStringLiteral("--service-image"));
        o.serviceImages.insert(mapping.left(eq), mapping.mid(eq + 1));
    }
    o.runtimes.dockerSocket = o.dockerSocket;
    o.runtimes.defaultRuntime = parser.value(runtime);
    if (!o.runtimes.defaultRuntime.isEmpty() && o.runtimes.defaultRuntime != QLatin1String("docker") &&
        o.runtimes.defaultRuntime != QLatin1String("incus"))
        return fail(ErrorCode::Invalid,
                    QStringLiteral("expected docker or incus, got \"%1\"").arg(o.runtimes.defaultRuntime),
                    QStringLiteral("--runtime"));
    using Incus = wiring::RuntimeWiringOptions::Incus;
    const QString incusMode = parser.value(incus);
    if (incusMode == QLatin1String("on"))
        o.runtimes.incus = Incus::On;
    else if (incusMode == QLatin1String("off"))
        o.runtimes.incus = Incus::Off;
    else if (!incusMode.isEmpty() && incusMode != QLatin1String("auto"))
        return fail(ErrorCode::Invalid, QStringLiteral("expected auto, on or off, got \"%1\"").arg(incusMode),
                    QStringLiteral("--incus"));
    o.runtimes.incusConnection.socket = parser.value(incusSocket);
    o.runtimes.incusConnection.url = parser.value(incusUrl);
    o.runtimes.incusConnection.clientCert = parser.value(incusCert);
    o.runtimes.incusConnection.clientKey = parser.value(incusKey);
    o.runtimes.incusConnection.serverCert = parser.value(incusServerCert);
    if (!o.runtimes.incusConnection.url.isEmpty()) {
        if (!o.runtimes.incusConnection.url.startsWith(QLatin1String("https://")))
            return fail(ErrorCode::Invalid, QStringLiteral("a remote Incus is reached over https://"),
                        QStringLiteral("--incus-url"));
        if (o.runtimes.incusConnection.clientCert.isEmpty() || o.runtimes.incusConnection.clientKey.isEmpty())
            return fail(ErrorCode::Invalid,
                        QStringLiteral("a remote Incus needs --incus-client-cert and --incus-client-key"),
                        QStringLiteral("--incus-url"));
    }
    if ((parser.isSet(incusSocket) || parser.isSet(incusUrl)) && o.runtimes.incus == Incus::Off)
        return fail(ErrorCode::Invalid, QStringLiteral("--incus off contradicts --incus-socket/--incus-url"),
                    QStringLiteral("--incus"));
    if (parser.isSet(incusSocket) || parser.isSet(incusUrl))
        o.runtimes.incus = Incus::On;
    o.auditSinks = parser.value(auditSinks);
    // Apps may not take the API's own port.
    o.engine.policy.deniedRoutePorts.append(o.listenPort);
    return o;
}

} // namespace pando::daemon
