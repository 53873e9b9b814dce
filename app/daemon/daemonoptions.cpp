#include "daemonoptions.h"

#include <QCommandLineParser>
#include <QDir>
#include <QRegularExpression>
#include <QStandardPaths>

namespace pando::daemon {

std::optional<qint64> parseDuration(const QString &text)
{
    static const QRegularExpression pattern(QStringLiteral("^([0-9]{1,9})(s|m|h|d)$"));
    const QRegularExpressionMatch match = pattern.match(text.trimmed());
    if (!match.hasMatch())
        return std::nullopt;
    const qint64 n = match.captured(1).toLongLong();
    const QString unit = match.captured(2);
    const qint64 unitMs = unit == QLatin1String("s")   ? 1000
                          : unit == QLatin1String("m") ? 60'000
                          : unit == QLatin1String("h") ? 3'600'000
                                                       : 86'400'000;
    return n * unitMs;
}

Result<DaemonOptions> parseOptions(const QStringList &arguments)
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
        QStringLiteral("sqlite:///path or postgres://user:pass@host:port/db (default: SQLite in the data dir)."),
        QStringLiteral("url"));
    const QCommandLineOption workers(QStringLiteral("workers"), QStringLiteral("Deploys run in parallel (default 2)."),
                                     QStringLiteral("n"));
    const QCommandLineOption reconcile(QStringLiteral("reconcile-interval"),
                                       QStringLiteral("Milliseconds between reconciler passes (default 5000)."),
                                       QStringLiteral("ms"));
    const QCommandLineOption docker(QStringLiteral("docker-socket"), QStringLiteral("The Docker Engine's unix socket."),
                                    QStringLiteral("path"));
    const QCommandLineOption install(
        QStringLiteral("install-id"),
        QStringLiteral("Names this install's containers apart from another install's on the same engine."),
        QStringLiteral("id"));
    const QCommandLineOption maxRuns(QStringLiteral("max-runs"),
                                     QStringLiteral("Pipeline runs at once, all pipelines together (default 4)."),
                                     QStringLiteral("n"));
    const QCommandLineOption auditSinks(QStringLiteral("audit-sinks"),
                                        QStringLiteral("A JSON file of syslog/HTTPS sinks the audit log is pushed to."),
                                        QStringLiteral("file"));
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
    parser.addOptions({dataDir, listen, database, workers, reconcile, docker, install, maxRuns, auditSinks, appLimit,
                       approvalPolicy, approvalTtl, tls, tlsName, tlsCert, tlsKey});
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
        const int colon = value.lastIndexOf(QLatin1Char(':'));
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
    const QString dbUrl = parser.isSet(database)
                              ? parser.value(database)
                              : QStringLiteral("sqlite://") + o.engine.dataDir + QStringLiteral("/pando.db");
    auto db = core::DatabaseConfig::fromUrl(dbUrl);
    if (!db) {
        Error e = db.error();
        e.where = QStringLiteral("--database");
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
    if (parser.isSet(maxRuns)) {
        bool ok = false;
        o.maxRuns = parser.value(maxRuns).toInt(&ok);
        if (!ok || o.maxRuns < 1 || o.maxRuns > 256)
            return fail(ErrorCode::Invalid, QStringLiteral("expected a number from 1 to 256"),
                        QStringLiteral("--max-runs"));
    }
    if (parser.isSet(appLimit)) {
        bool ok = false;
        o.appLimit = parser.value(appLimit).toInt(&ok);
        if (!ok || o.appLimit < 0 || o.appLimit > 100000)
            return fail(ErrorCode::Invalid, QStringLiteral("expected a number from 0 to 100000"),
                        QStringLiteral("--app-limit"));
    }
    if (parser.isSet(approvalPolicy)) {
        auto loaded = core::policy::loadPolicy(parser.value(approvalPolicy));
        if (!loaded) {
            Error e = loaded.error();
            e.where = QStringLiteral("--approval-policy ") + e.where;
            return std::unexpected(e);
        }
        o.engine.approvalPolicy = *loaded;
    }
    if (parser.isSet(approvalTtl)) {
        const std::optional<qint64> ttl = parseDuration(parser.value(approvalTtl));
        if (!ttl || *ttl < 60'000)
            return fail(ErrorCode::Invalid,
                        QStringLiteral("expected a duration of at least a minute such as 30m, 24h or 7d, got \"%1\"")
                            .arg(parser.value(approvalTtl)),
                        QStringLiteral("--approval-ttl"));
        o.engine.approvalTtlMs = *ttl;
    }
    if (parser.isSet(tlsCert) != parser.isSet(tlsKey))
        return fail(ErrorCode::Invalid, QStringLiteral("--tls-cert and --tls-key go together"),
                    parser.isSet(tlsCert) ? QStringLiteral("--tls-key") : QStringLiteral("--tls-cert"),
                    QStringLiteral("give both files, or --tls alone for a certificate pandod makes"));
    if (parser.isSet(tlsName) && parser.isSet(tlsCert))
        return fail(ErrorCode::Invalid, QStringLiteral("--tls-name names a certificate pandod makes, not a given one"),
                    QStringLiteral("--tls-name"));
    o.tls = parser.isSet(tls) || parser.isSet(tlsCert) || parser.isSet(tlsName);
    o.tlsNames = parser.values(tlsName);
    o.tlsCertificate = parser.value(tlsCert);
    o.tlsKey = parser.value(tlsKey);
    if (parser.isSet(install))
        o.engine.installId = parser.value(install);
    o.dockerSocket = parser.value(docker);
    o.auditSinks = parser.value(auditSinks);
    // Apps may not take the API's own port.
    o.engine.policy.deniedRoutePorts.append(o.listenPort);
    return o;
}

} // namespace pando::daemon
