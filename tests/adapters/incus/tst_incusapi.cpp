// incusapi against a real incusd: the envelope, errors, background operations (wait, time out,
// cancel) and a remote reached over HTTPS with a client certificate, untrusted then trusted.
#include "adapters/kit/incusapi/incusclient.h"
#include "adapters/runtime/incus/incusruntime.h"
#include "tests/adapters/incus/incusharness.h"
#include "tests/support/component.h"

#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRandomGenerator>
#include <QSslCertificate>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

using namespace pando;
using namespace pando::adapters;
using pando::adapters::incusapi::IncusClient;

class TestIncusApi : public QObject {
    Q_OBJECT

private:
    IncusClient m_client;
    QString m_run;
    QString m_instance; // a running instance the operation tests exec in

    static httpkit::Request json(QByteArray method, const QString &path, const QJsonObject &body)
    {
        httpkit::Request r;
        r.method = std::move(method);
        r.path = path;
        r.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
        return r;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(test::IncusHarness::available(&why), why);
        m_run = QString::number(QRandomGenerator::global()->generate() % 1000000);
        auto base = test::IncusHarness::ensureBaseImage();
        QVERIFY2(base, qPrintable(base ? QString() : base.error().text()));
        incus::IncusRuntime runtime;
        ContainerSpec spec;
        spec.name = QStringLiteral("pando-api-") + m_run;
        spec.image = *base;
        spec.command = {QStringLiteral("sleep"), QStringLiteral("600")};
        spec.labels = {{QStringLiteral("dev.pando.test"), m_run}};
        auto id = runtime.run(spec);
        QVERIFY2(id, qPrintable(id ? QString() : id.error().text()));
        m_instance = *id;
    }

    void cleanupTestCase()
    {
        if (!m_instance.isEmpty())
            discardResult(incus::IncusRuntime().remove(m_instance), "clean-up: a leftover shows in the next test");
    }

    void server()
    {
        auto server = m_client.server();
        QVERIFY2(server, qPrintable(server ? QString() : server.error().text()));
        QVERIFY(server->serverVersion.startsWith(QLatin1String("6.")));
        QVERIFY(server->drivers.contains(QStringLiteral("lxc")));
        QCOMPARE(server->auth, QStringLiteral("trusted"));
        QVERIFY(server->apiExtensions.contains(QStringLiteral("instances")));
    }

    void errorsCarryIncusWords()
    {
        auto missing = m_client.instance(QStringLiteral("no-such-instance-") + m_run);
        QVERIFY(!missing);
        QCOMPARE(missing.error().code, ErrorCode::NotFound);
        QVERIFY2(missing.error().text().contains(QStringLiteral("not found"), Qt::CaseInsensitive),
                 qPrintable(missing.error().text()));
        QVERIFY(missing.error().where.contains(QStringLiteral("/1.0/instances/no-such-instance")));

        // Incus's own refusal of a name reaches the caller as it said it.
        incusapi::InstancesPost bad;
        bad.name = QStringLiteral("bad_name");
        bad.sourceFingerprint = QString(64, u'0');
        auto refused = m_client.createInstance(bad, 10000);
        QVERIFY(!refused);
        QVERIFY2(refused.error().text().contains(QStringLiteral("name"), Qt::CaseInsensitive),
                 qPrintable(refused.error().text()));

        IncusClient nowhere(incusapi::Connection{.socket = QStringLiteral("/nonexistent/incus.socket")});
        auto unreachable = nowhere.server();
        QVERIFY(!unreachable);
        QCOMPARE(unreachable.error().code, ErrorCode::Unavailable);
        QVERIFY(unreachable.error().text().contains(QStringLiteral("/nonexistent/incus.socket")));
        QVERIFY(unreachable.error().hint.contains(QStringLiteral("incusd")));
    }

    void instanceNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("valid");
        QTest::newRow("simple") << QStringLiteral("pando-web-d1") << true;
        QTest::newRow("63") << QString(63, u'a') << true;
        QTest::newRow("64") << QString(64, u'a') << false;
        QTest::newRow("digit first") << QStringLiteral("9lives") << false;
        QTest::newRow("hyphen first") << QStringLiteral("-web") << false;
        QTest::newRow("hyphen last") << QStringLiteral("web-") << false;
        QTest::newRow("underscore") << QStringLiteral("a_b") << false;
        QTest::newRow("slash") << QStringLiteral("a/b") << false;
        QTest::newRow("unicode") << QStringLiteral("caf\u00e9") << false;
    }

    void instanceNames()
    {
        QFETCH(QString, name);
        QFETCH(bool, valid);
        const Status status = incusapi::checkInstanceName(name);
        QCOMPARE(status.has_value(), valid);
        if (!valid)
            QVERIFY(status.error().where.contains(name));
    }

    void operationsFinishTimeOutAndCancel()
    {
        auto done = m_client.exec(
            m_instance, {QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("echo out; echo err >&2; exit 4")},
            10000);
        QVERIFY2(done, qPrintable(done ? QString() : done.error().text()));
        QCOMPARE(done->exitCode, 4);
        QCOMPARE(done->out, QByteArray("out\n"));
        QCOMPARE(done->err, QByteArray("err\n"));

        // An operation that does not end in time: Timeout, and the call returns once Incus has
        // settled it, so nothing it does happens after the caller moved on.
        QElapsedTimer timer;
        timer.start();
        auto slow = m_client.exec(
            m_instance, {QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("sleep 2; touch /tmp/slow-done")},
            300);
        QVERIFY(!slow);
        QCOMPARE(slow.error().code, ErrorCode::Timeout);
        QVERIFY2(slow.error().where.contains(QStringLiteral("incus operation")), qPrintable(slow.error().where));
        auto after = m_client.exec(m_instance, {QStringLiteral("ls"), QStringLiteral("/tmp/slow-done")}, 10000);
        QVERIFY(after);
        QCOMPARE(after->exitCode, 0);
        QVERIFY(timer.elapsed() < 30000);

        CancelToken cancel;
        cancel.cancel();
        auto cancelled = m_client.exec(m_instance, {QStringLiteral("sleep"), QStringLiteral("1")}, 10000, &cancel);
        QVERIFY(!cancelled);
        QCOMPARE(cancelled.error().code, ErrorCode::Cancelled);
    }

    void remoteOverHttps()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // A free port for Incus's HTTPS listener.
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost));
        const quint16 port = probe.serverPort();
        probe.close();
        const QString address = QStringLiteral("127.0.0.1:%1").arg(port);
        auto listen = m_client.call(
            json("PATCH", QStringLiteral("/1.0"),
                 {{QStringLiteral("config"), QJsonObject{{QStringLiteral("core.https_address"), address}}}}));
        QVERIFY2(listen, qPrintable(listen ? QString() : listen.error().text()));
        auto stopListening = qScopeGuard([this] {
            discardResult(m_client.call(json("PATCH", QStringLiteral("/1.0"),
                                             {{QStringLiteral("config"),
                                               QJsonObject{{QStringLiteral("core.https_address"), QString()}}}})),
                          "clean-up: a listener left on shows in the next test");
        });

        // The server's certificate, pinned; a client certificate of our own.
        auto info = m_client.get(QStringLiteral("/1.0"));
        QVERIFY(info);
        const QByteArray serverPem = info->toObject()
                                         .value(QLatin1String("environment"))
                                         .toObject()
                                         .value(QLatin1String("certificate"))
                                         .toString()
                                         .toUtf8();
        QVERIFY(serverPem.contains("BEGIN CERTIFICATE"));
        const QString serverCert = dir.filePath(QStringLiteral("server.crt"));
        QFile f(serverCert);
        QVERIFY(f.open(QIODevice::WriteOnly) && f.write(serverPem) == serverPem.size());
        f.close();
        const QString cert = dir.filePath(QStringLiteral("client.crt"));
        const QString key = dir.filePath(QStringLiteral("client.key"));
        QProcess openssl;
        openssl.start(QStringLiteral("openssl"),
                      {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"), QStringLiteral("ec"),
                       QStringLiteral("-pkeyopt"), QStringLiteral("ec_paramgen_curve:P-256"), QStringLiteral("-nodes"),
                       QStringLiteral("-keyout"), key, QStringLiteral("-out"), cert, QStringLiteral("-days"),
                       QStringLiteral("1"), QStringLiteral("-subj"), QStringLiteral("/CN=pando-test")});
        QVERIFY(openssl.waitForFinished(30000));
        QCOMPARE(openssl.exitCode(), 0);

        IncusClient remote(incusapi::Connection{.url = QStringLiteral("https://") + address,
                                                .clientCert = cert,
                                                .clientKey = key,
                                                .serverCert = serverCert});
        // Not trusted yet: the server says so, and listing instances is refused.
        auto untrusted = remote.server();
        QVERIFY2(untrusted, qPrintable(untrusted ? QString() : untrusted.error().text()));
        QCOMPARE(untrusted->auth, QStringLiteral("untrusted"));
        incus::IncusRuntime remoteRuntime(incus::IncusOptions{.connection = remote.connection()});
        auto ping = remoteRuntime.ping();
        QVERIFY(!ping);
        QCOMPARE(ping.error().code, ErrorCode::Forbidden);
        QVERIFY(ping.error().hint.contains(QStringLiteral("trust")));
        auto refused = remote.instances();
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Forbidden);

        // A server presenting another certificate than the pinned one is not talked to.
        IncusClient impostor(incusapi::Connection{
            .url = QStringLiteral("https://") + address, .clientCert = cert, .clientKey = key, .serverCert = cert});
        auto mismatch = impostor.server();
        QVERIFY(!mismatch);
        QCOMPARE(mismatch.error().code, ErrorCode::Unavailable);

        // Trusted: the same client now sees the instances, this test's among them.
        const QList<QSslCertificate> certs = QSslCertificate::fromPath(cert);
        QCOMPARE(certs.size(), 1);
        const QString name = QStringLiteral("pando-test-") + m_run;
        auto trusted = m_client.call(
            json("POST", QStringLiteral("/1.0/certificates"),
                 {{QStringLiteral("type"), QStringLiteral("client")},
                  {QStringLiteral("name"), name},
                  {QStringLiteral("certificate"), QString::fromLatin1(certs.first().toDer().toBase64())}}));
        QVERIFY2(trusted, qPrintable(trusted ? QString() : trusted.error().text()));
        const QString fingerprint =
            QString::fromLatin1(QCryptographicHash::hash(certs.first().toDer(), QCryptographicHash::Sha256).toHex());
        auto untrust = qScopeGuard([this, fingerprint] {
            httpkit::Request del;
            del.method = "DELETE";
            del.path = QStringLiteral("/1.0/certificates/") + fingerprint;
            discardResult(m_client.call(del), "clean-up: a leftover shows in the next test");
        });
        QVERIFY(remoteRuntime.ping());
        auto listed = remote.instances();
        QVERIFY2(listed, qPrintable(listed ? QString() : listed.error().text()));
        bool found = false;
        for (const incusapi::Instance &i : *listed)
            found = found || i.name == m_instance;
        QVERIFY(found);
    }
};

QTEST_GUILESS_MAIN(TestIncusApi)
#include "tst_incusapi.moc"
