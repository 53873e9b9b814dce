// pandod's command line: what each flag sets, and that a wrong value is refused naming the flag
// (and, for the approval policy, the file and the key) before anything starts.

#include "app/daemon/daemonoptions.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;

class TestDaemonOptions : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    QString write(const QString &name, const QByteArray &content)
    {
        QFile file(m_dir.filePath(name));
        if (!file.open(QIODevice::WriteOnly))
            return {};
        file.write(content);
        return file.fileName();
    }
    static Result<daemon::DaemonOptions> parse(const QStringList &flags)
    {
        return daemon::parseOptions(QStringList{u"pandod"_s} + flags);
    }

private Q_SLOTS:
    void defaults()
    {
        auto o = parse({u"--data-dir"_s, m_dir.path()});
        QVERIFY2(o, qPrintable(o ? QString() : o.error().text()));
        QCOMPARE(o->listenPort, quint16(7420));
        QVERIFY(o->engine.approvalPolicy.isEmpty());
        QCOMPARE(o->engine.approvalTtlMs, 24LL * 60 * 60 * 1000);
        QVERIFY(o->engine.policy.deniedRoutePorts.contains(7420));
    }

    void approvalPolicyAndTtl()
    {
        const QString path =
            write(u"policy.json"_s, R"({"apps": ["billing-*"], "changes": {"newSourceRepo": true, "egress": true}})");
        auto o = parse({u"--data-dir"_s, m_dir.path(), u"--approval-policy"_s, path, u"--approval-ttl"_s, u"2h"_s});
        QVERIFY2(o, qPrintable(o ? QString() : o.error().text()));
        QCOMPARE(o->engine.approvalPolicy.appGlobs, QStringList{u"billing-*"_s});
        QVERIFY(o->engine.approvalPolicy.newSourceRepo);
        QCOMPARE(o->engine.approvalTtlMs, 2LL * 60 * 60 * 1000);
        QCOMPARE(daemon::parseDuration(u"7d"_s), std::optional<qint64>(7LL * 86'400'000));
        QCOMPARE(daemon::parseDuration(u"90s"_s), std::optional<qint64>(90'000));
        QVERIFY(!daemon::parseDuration(u"1h30m"_s));
        QVERIFY(!daemon::parseDuration(u"-5m"_s));
    }

    void tls()
    {
        auto plain = parse({u"--data-dir"_s, m_dir.path()});
        QVERIFY(plain && !plain->tls);
        auto made = parse({u"--data-dir"_s, m_dir.path(), u"--tls"_s, u"--tls-name"_s, u"pando.lan"_s, u"--tls-name"_s,
                           u"10.0.0.5"_s});
        QVERIFY2(made, qPrintable(made ? QString() : made.error().text()));
        QVERIFY(made->tls);
        QCOMPARE(made->tlsNames, QStringList({u"pando.lan"_s, u"10.0.0.5"_s}));
        auto given = parse({u"--data-dir"_s, m_dir.path(), u"--tls-cert"_s, u"a.crt"_s, u"--tls-key"_s, u"a.key"_s});
        QVERIFY2(given, qPrintable(given ? QString() : given.error().text()));
        QVERIFY(given->tls);
        QCOMPARE(given->tlsCertificate, u"a.crt"_s);
        QCOMPARE(given->tlsKey, u"a.key"_s);
    }

    void assertionSettings()
    {
        auto defaults = parse({u"--data-dir"_s, m_dir.path()});
        QVERIFY(defaults);
        QCOMPARE(defaults->engine.assertionIssuer, QString());
        QCOMPARE(defaults->engine.assertionKeyDays, 7);
        auto given = parse({u"--data-dir"_s, m_dir.path(), u"--assertion-issuer"_s, u"https://pando.example.com"_s,
                            u"--assertion-key-days"_s, u"30"_s});
        QVERIFY2(given, qPrintable(given ? QString() : given.error().text()));
        QCOMPARE(given->engine.assertionIssuer, u"https://pando.example.com"_s);
        QCOMPARE(given->engine.assertionKeyDays, 30);
    }

    void badValuesNameTheFlag_data()
    {
        QTest::addColumn<QStringList>("flags");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("message");
        const QString typo = write(u"typo.json"_s, R"({"apps": ["x"], "chnages": {}})");
        const QString badValue = write(u"bad.json"_s, R"({"changes": {"memoryAbove": "lots"}})");
        QTest::newRow("policy typo") << QStringList{u"--approval-policy"_s, typo}
                                     << u"--approval-policy "_s + typo + u": chnages"_s << u"unknown key"_s;
        QTest::newRow("policy value") << QStringList{u"--approval-policy"_s, badValue}
                                      << u"--approval-policy "_s + badValue + u": changes.memoryAbove"_s << u"lots"_s;
        QTest::newRow("policy missing") << QStringList{u"--approval-policy"_s, m_dir.filePath(u"none.json"_s)}
                                        << u"--approval-policy "_s + m_dir.filePath(u"none.json"_s) << u"cannot read"_s;
        QTest::newRow("ttl bare number") << QStringList{u"--approval-ttl"_s, u"5"_s} << u"--approval-ttl"_s
                                         << u"got \"5\""_s;
        QTest::newRow("ttl too short") << QStringList{u"--approval-ttl"_s, u"30s"_s} << u"--approval-ttl"_s
                                       << u"at least a minute"_s;
        QTest::newRow("workers") << QStringList{u"--workers"_s, u"0"_s} << u"--workers"_s << u"1 to 64"_s;
        QTest::newRow("listen") << QStringList{u"--listen"_s, u"localhost"_s} << u"--listen"_s << u"host:port"_s;
        QTest::newRow("app limit") << QStringList{u"--app-limit"_s, u"-1"_s} << u"--app-limit"_s << u"0 to"_s;
        QTest::newRow("max runs") << QStringList{u"--max-runs"_s, u"0"_s} << u"--max-runs"_s << u"1 to 256"_s;
        QTest::newRow("assertion key days")
            << QStringList{u"--assertion-key-days"_s, u"0"_s} << u"--assertion-key-days"_s << u"1 to 365"_s;
        QTest::newRow("assertion issuer with a space")
            << QStringList{u"--assertion-issuer"_s, u"my pando"_s} << u"--assertion-issuer"_s << u"without spaces"_s;
        QTest::newRow("audit sinks missing")
            << QStringList{u"--audit-sinks"_s, m_dir.filePath(u"none.json"_s)}
            << u"--audit-sinks "_s + m_dir.filePath(u"none.json"_s) << u"cannot read"_s;
        QTest::newRow("tls cert alone") << QStringList{u"--tls-cert"_s, u"a.crt"_s} << u"--tls-key"_s
                                        << u"go together"_s;
        // Secrets never in argv, plain HTTP never by accident.
        QTest::newRow("password in --database")
            << QStringList{u"--database"_s, u"postgres://pando:s3cr3t@127.0.0.1:5432/pando"_s} << u"--database"_s
            << u"password"_s;
        QTest::newRow("plain http on a wildcard")
            << QStringList{u"--listen"_s, u"0.0.0.0:7420"_s} << u"--listen"_s << u"in the clear"_s;
        QTest::newRow("plain http on a LAN address")
            << QStringList{u"--listen"_s, u"192.168.1.5:7420"_s} << u"--listen"_s << u"in the clear"_s;
        QTest::newRow("traefik without its directory")
            << QStringList{u"--edge"_s, u"traefik"_s} << u"--traefik-dir"_s << u"needs the directory"_s;
        QTest::newRow("traefik resolver name") << QStringList{u"--edge"_s,
                                                              u"traefik"_s,
                                                              u"--traefik-dir"_s,
                                                              u"/etc/traefik/dynamic"_s,
                                                              u"--traefik-resolver"_s,
                                                              u"le prod"_s}
                                               << u"--traefik-resolver"_s << u"\"le prod\""_s;
        QTest::newRow("traefik dir without traefik")
            << QStringList{u"--edge"_s, u"caddy"_s, u"--traefik-dir"_s, u"/etc/traefik/dynamic"_s} << u"--traefik-dir"_s
            << u"goes with --edge traefik"_s;
        QTest::newRow("unknown edge") << QStringList{u"--edge"_s, u"nginx"_s} << u"--edge"_s
                                      << u"expected auto, caddy, in-process, traefik or cloudflare"_s;
        QTest::newRow("edge certificates by nobody") << QStringList{u"--edge-certificates"_s, u"traefik"_s}
                                                     << u"--edge-certificates"_s << u"expected caddy or pando"_s;
        QTest::newRow("pando's certificates without caddy")
            << QStringList{u"--edge"_s, u"in-process"_s, u"--edge-certificates"_s, u"pando"_s}
            << u"--edge-certificates"_s << u"goes with the Caddy edge"_s;
        QTest::newRow("tls name with a given cert")
            << QStringList{u"--tls-cert"_s, u"a.crt"_s, u"--tls-key"_s, u"a.key"_s, u"--tls-name"_s, u"x"_s}
            << u"--tls-name"_s << u"pandod makes"_s;
    }

    void badValuesNameTheFlag()
    {
        QFETCH(QStringList, flags);
        QFETCH(QString, where);
        QFETCH(QString, message);
        auto o = parse(QStringList{u"--data-dir"_s, m_dir.path()} + flags);
        QVERIFY(!o);
        QCOMPARE(o.error().code, o.error().code == ErrorCode::TooLarge ? ErrorCode::TooLarge : ErrorCode::Invalid);
        QCOMPARE(o.error().where, where);
        QVERIFY2(o.error().message.contains(message), qPrintable(o.error().text()));
        QVERIFY2(!o.error().text().contains(u"s3cr3t"_s) && !o.error().hint.contains(u"s3cr3t"_s),
                 "an error never repeats the password");
    }

    void edgeCertificates()
    {
        auto caddy = parse({u"--data-dir"_s, m_dir.path()});
        QVERIFY(caddy);
        QCOMPARE(caddy->edgeSite.certificates, adapters::caddy::CertificateSource::Caddy);
        auto pando = parse({u"--data-dir"_s, m_dir.path(), u"--edge"_s, u"caddy"_s, u"--edge-certificates"_s,
                            u"pando"_s, u"--acme-ca"_s, u"https://127.0.0.1:14000/dir"_s});
        QVERIFY2(pando, qPrintable(pando ? QString() : pando.error().text()));
        QCOMPARE(pando->edgeSite.certificates, adapters::caddy::CertificateSource::Pando);
        QCOMPARE(pando->edgeSite.acmeDirectory, u"https://127.0.0.1:14000/dir"_s);
    }

    void traefikEdge()
    {
        auto flags = parse(
            {u"--data-dir"_s, m_dir.path(), u"--edge"_s, u"traefik"_s, u"--traefik-dir"_s, u"/etc/traefik/dynamic"_s});
        QVERIFY2(flags, qPrintable(flags ? QString() : flags.error().text()));
        QCOMPARE(flags->edge, wiring::EdgeChoice::Traefik);
        QCOMPARE(flags->traefikDir, u"/etc/traefik/dynamic"_s);
        QCOMPARE(flags->traefikResolver, u"pando"_s);
        QCOMPARE(flags->traefikCertificates, QString());
        auto certs = parse({u"--data-dir"_s, m_dir.path(), u"--edge"_s, u"traefik"_s, u"--traefik-dir"_s,
                            u"/etc/traefik/dynamic"_s, u"--traefik-certs"_s, u"/etc/pando/certs"_s});
        QVERIFY(certs);
        QCOMPARE(certs->traefikCertificates, u"/etc/pando/certs"_s);

        // The same from the environment, a flag winning over its variable.
        QProcessEnvironment env;
        env.insert(u"PANDO_EDGE"_s, u"traefik"_s);
        env.insert(u"PANDO_TRAEFIK_DIR"_s, u"/srv/traefik/conf.d"_s);
        env.insert(u"PANDO_TRAEFIK_RESOLVER"_s, u"letsencrypt"_s);
        auto fromEnv = daemon::parseOptions({u"pandod"_s, u"--data-dir"_s, m_dir.path()}, env);
        QVERIFY2(fromEnv, qPrintable(fromEnv ? QString() : fromEnv.error().text()));
        QCOMPARE(fromEnv->edge, wiring::EdgeChoice::Traefik);
        QCOMPARE(fromEnv->traefikDir, u"/srv/traefik/conf.d"_s);
        QCOMPARE(fromEnv->traefikResolver, u"letsencrypt"_s);
        auto both = daemon::parseOptions(
            {u"pandod"_s, u"--data-dir"_s, m_dir.path(), u"--traefik-resolver"_s, u"staging"_s}, env);
        QVERIFY(both);
        QCOMPARE(both->traefikResolver, u"staging"_s);

        // The variables alone do not make another edge refuse to start.
        env.insert(u"PANDO_EDGE"_s, u"in-process"_s);
        auto other = daemon::parseOptions({u"pandod"_s, u"--data-dir"_s, m_dir.path()}, env);
        QVERIFY(other);
        QCOMPARE(other->edge, wiring::EdgeChoice::InProcess);
    }

    void cloudflareEdge()
    {
        const QString token = u"cf-token-Hq4mZ8"_s;
        const QString tokenFile = m_dir.filePath(u"cloudflare.token"_s);
        {
            QFile file(tokenFile);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(token.toLatin1() + '\n');
        }
        QVERIFY(QFile::setPermissions(tokenFile, QFile::ReadOwner | QFile::WriteOwner));
        QProcessEnvironment env;
        env.insert(u"PANDO_EDGE"_s, u"cloudflare"_s);
        env.insert(u"PANDO_CLOUDFLARE_ACCOUNT"_s, u"0123456789abcdef0123456789abcdef"_s);
        env.insert(u"PANDO_CLOUDFLARE_TUNNEL"_s, u"f70ff985-a4ef-4643-bbbc-4a0ed4fc8415"_s);
        env.insert(u"PANDO_CLOUDFLARE_ZONE"_s, u"fedcba9876543210fedcba9876543210"_s);
        env.insert(u"PANDO_CLOUDFLARE_TOKEN_FILE"_s, tokenFile);
        const auto run = [&](const QStringList &flags, const QProcessEnvironment &environment) {
            return daemon::parseOptions(QStringList{u"pandod"_s, u"--data-dir"_s, m_dir.path()} + flags, environment);
        };
        auto fromEnv = run({}, env);
        QVERIFY2(fromEnv, qPrintable(fromEnv ? QString() : fromEnv.error().text()));
        QCOMPARE(fromEnv->edge, wiring::EdgeChoice::Cloudflare);
        QCOMPARE(fromEnv->cloudflare.accountId, u"0123456789abcdef0123456789abcdef"_s);
        QCOMPARE(fromEnv->cloudflare.tunnelId, u"f70ff985-a4ef-4643-bbbc-4a0ed4fc8415"_s);
        QCOMPARE(fromEnv->cloudflare.zoneId, u"fedcba9876543210fedcba9876543210"_s);
        QCOMPARE(fromEnv->cloudflare.apiTokenFile, tokenFile);
        QCOMPARE(fromEnv->cloudflare.apiToken, QString()); // read when the edge starts
        QCOMPARE(fromEnv->cloudflare.apiBase, u"https://api.cloudflare.com/client/v4"_s);
        QCOMPARE(fromEnv->cloudflare.stateDir, m_dir.path() + u"/cloudflare"_s);

        // A flag wins over its variable; the token itself only from the environment.
        QProcessEnvironment direct = env;
        direct.remove(u"PANDO_CLOUDFLARE_TOKEN_FILE"_s);
        direct.insert(u"PANDO_CLOUDFLARE_TOKEN"_s, token);
        auto flags = run({u"--cloudflare-api"_s, u"http://127.0.0.1:9/client/v4"_s}, direct);
        QVERIFY2(flags, qPrintable(flags ? QString() : flags.error().text()));
        QCOMPARE(flags->cloudflare.apiBase, u"http://127.0.0.1:9/client/v4"_s);
        QCOMPARE(flags->cloudflare.apiToken, token);

        struct Row {
            QStringList flags;
            QString unset;
            QString variable;
            QString value;
            QString where;
            QString says;
        };
        const QList<Row> rows{
            {{}, u"PANDO_CLOUDFLARE_ACCOUNT"_s, {}, {}, u"--cloudflare-account"_s, u"needs the account id"_s},
            {{u"--cloudflare-account"_s, u"12345"_s}, {}, {}, {}, u"--cloudflare-account"_s, u"32 lower-case hex"_s},
            {{}, {}, u"PANDO_CLOUDFLARE_TUNNEL"_s, u"tunnel-1"_s, u"PANDO_CLOUDFLARE_TUNNEL"_s, u"UUID"_s},
            {{u"--cloudflare-zone"_s, u"example.com"_s}, {}, {}, {}, u"--cloudflare-zone"_s, u"zone id"_s},
            {{u"--cloudflare-api"_s, u"ftp://api"_s}, {}, {}, {}, u"--cloudflare-api"_s, u"http(s) base URL"_s},
            {{}, u"PANDO_CLOUDFLARE_TOKEN_FILE"_s, {}, {}, u"--cloudflare-token-file"_s, u"needs an API token"_s},
            {{u"--cloudflared"_s, u"/nonexistent/cloudflared"_s}, {}, {}, {}, u"--cloudflared"_s, u"not there"_s},
            {{u"--edge"_s, u"caddy"_s, u"--cloudflare-zone"_s, u"fedcba9876543210fedcba9876543210"_s},
             {},
             {},
             {},
             u"--cloudflare-zone"_s,
             u"goes with --edge cloudflare"_s},
        };
        for (const Row &row : rows) {
            QProcessEnvironment e = env;
            if (!row.unset.isEmpty())
                e.remove(row.unset);
            if (!row.variable.isEmpty())
                e.insert(row.variable, row.value);
            auto o = run(row.flags, e);
            QVERIFY2(!o, qPrintable(row.where));
            QCOMPARE(o.error().where, row.where);
            QVERIFY2(o.error().message.contains(row.says), qPrintable(o.error().text()));
        }

        // A token file others may read is refused, naming the file, never its content.
        QVERIFY(QFile::setPermissions(tokenFile, QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup));
        auto open = run({u"--cloudflare-token-file"_s, tokenFile}, env);
        QVERIFY(!open);
        QCOMPARE(open.error().where, u"--cloudflare-token-file"_s);
        QVERIFY2(open.error().message.contains(tokenFile), qPrintable(open.error().text()));
        QVERIFY(!open.error().text().contains(token) && !open.error().hint.contains(token));
    }

    void secretsAndPlainHttpTheOtherWay()
    {
        // The database URL with its password from the environment or a private file.
        QProcessEnvironment env;
        env.insert(u"PANDO_DATABASE_URL"_s, u"postgres://pando:s3cr3t@127.0.0.1:5432/pando"_s);
        auto fromEnv = daemon::parseOptions({u"pandod"_s, u"--data-dir"_s, m_dir.path()}, env);
        QVERIFY2(fromEnv, qPrintable(fromEnv ? QString() : fromEnv.error().text()));
        QCOMPARE(fromEnv->engine.database.driver, core::DatabaseConfig::Driver::Postgres);
        const QString file = write(u"db.url"_s, "postgres://pando:s3cr3t@127.0.0.1:5432/pando\n");
        auto fromFile = parse({u"--data-dir"_s, m_dir.path(), u"--database-file"_s, file});
        QVERIFY2(fromFile, qPrintable(fromFile ? QString() : fromFile.error().text()));
        QCOMPARE(fromFile->engine.database.driver, core::DatabaseConfig::Driver::Postgres);
        // A URL without a password may stay in argv.
        QVERIFY(parse({u"--data-dir"_s, m_dir.path(), u"--database"_s, u"postgres://pando@127.0.0.1:5432/pando"_s}));
        // Plain HTTP on the network only when asked for; TLS needs nothing more.
        auto insecure = parse({u"--data-dir"_s, m_dir.path(), u"--listen"_s, u"0.0.0.0:7420"_s, u"--insecure-http"_s});
        QVERIFY2(insecure, qPrintable(insecure ? QString() : insecure.error().text()));
        QVERIFY(insecure->insecureHttp);
        QVERIFY(parse({u"--data-dir"_s, m_dir.path(), u"--listen"_s, u"0.0.0.0:7420"_s, u"--tls"_s}));
        QVERIFY(parse({u"--data-dir"_s, m_dir.path(), u"--listen"_s, u"[::1]:7420"_s}));
    }
};

QTEST_GUILESS_MAIN(TestDaemonOptions)
#include "tst_daemonoptions.moc"
