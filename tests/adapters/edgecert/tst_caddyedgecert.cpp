// Pando gets the edge's certificates (EdgeCertifier) and Debian's Caddy, configured by the Caddy
// edge, only serves them: against Pebble on loopback with its DNS stub, two names are issued by
// HTTP-01 (Caddy answering the challenges Pando hands it) and served over HTTPS to curl and
// QSslSocket trusting only Pebble's issuing root; Caddy gets no certificate of its own for them;
// a name Pebble refuses has its error while the others serve; a new Pando and a Caddy started
// afresh serve the same certificate without a new order (the CA is gone by then); Pebble's
// short-lived certificates are renewed once a third of their life is left, and a renewal that
// fails is reported while the certificate held serves on.

#include "adapters/edgecert/acme/edgecertifier.h"
#include "adapters/routing/caddy/caddyedge.h"
#include "tests/adapters/caddy/edgetesting.h"
#include "tests/support/component.h"
#include "tests/support/curlget.h"
#include "tests/support/httpbackend.h"
#include "tests/support/pebble.h"

#include <QFile>
#include <QFileInfo>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::test;
using pando::adapters::Address;
using pando::adapters::CertificateState;
using pando::adapters::TlsMode;
using pando::adapters::caddy::CaddyEdge;
using pando::adapters::caddy::CaddyEdgeOptions;
using pando::adapters::caddy::CertificateSource;
using pando::adapters::edgecert::EdgeCertifier;
using pando::adapters::edgecert::EdgeCertifierOptions;

namespace {

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The certificate the edge presents for host on 127.0.0.1:port, checked against root alone; null
// when the handshake fails.
QSslCertificate servedCertificate(const QString &host, int port, const QString &root)
{
    QSslSocket socket;
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setCaCertificates(QSslCertificate::fromPath(root));
    socket.setSslConfiguration(tls);
    socket.connectToHostEncrypted(u"127.0.0.1"_s, quint16(port), host);
    socket.setPeerVerifyName(host);
    if (!socket.waitForEncrypted(5000))
        return QSslCertificate();
    return socket.peerCertificate();
}

} // namespace

class TestCaddyEdgeCert : public QObject {
    Q_OBJECT

    std::unique_ptr<PebbleSite> m_site;

    CaddyEdgeOptions caddyOptions() const
    {
        CaddyEdgeOptions o = m_site->edgeOptions();
        o.site.certificates = CertificateSource::Pando;
        return o;
    }
    EdgeCertifierOptions certifierOptions() const
    {
        EdgeCertifierOptions o;
        o.acme = {.directoryUrl = m_site->pebble->directoryUrl(),
                  .caRootFile = m_site->pebble->listenerRootFile(),
                  .contactEmail = u"ops@example.com"_s,
                  .pollIntervalMs = 200};
        o.stateDir = m_site->dir->filePath(u"edge/certificates"_s);
        o.checkIntervalMs = 500;
        return o;
    }
    QString https(const QString &host, const QString &path = u"/"_s) const { return m_site->url(host, path); }

private Q_SLOTS:
    void init()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(Pebble::available(&why), why);
        PANDO_REQUIRE_COMPONENT(!CaddyEdge::findCaddy().isEmpty(), u"caddy (Debian's caddy package)"_s);
        m_site = std::make_unique<PebbleSite>();
    }
    void cleanup()
    {
        if (m_site)
            discardResult(CaddyEdge(caddyOptions()).stop(), "a test that stopped it already leaves nothing to stop");
        m_site.reset();
    }

    void issuesServesAndKeepsAcrossRestarts()
    {
        QVERIFY2(m_site->startPebble({.refuse = {u"refused.example.com"_s}}), qPrintable(m_site->pebble->error()));
        const QString root = m_site->pebble->issuingRootFile();
        QVERIFY2(!root.isEmpty(), qPrintable(m_site->pebble->error()));
        HttpBackend shop("shop"), blog("blog"), refused("refused");
        QByteArray shopChain;
        {
            auto caddy = std::make_shared<CaddyEdge>(caddyOptions());
            PANDO_VERIFY_OK(caddy->start());
            EdgeCertifier edge(caddy, certifierOptions());
            PANDO_VERIFY_OK(edge.start());
            PANDO_VERIFY_OK(
                serveApp(edge, u"shop"_s, shop.port(), Address{u"shop.example.com"_s, u"/"_s, TlsMode::Auto}));
            PANDO_VERIFY_OK(
                serveApp(edge, u"blog"_s, blog.port(), Address{u"blog.example.com"_s, u"/"_s, TlsMode::Auto}));
            PANDO_VERIFY_OK(
                serveApp(edge, u"bad"_s, refused.port(), Address{u"refused.example.com"_s, u"/"_s, TlsMode::Auto}));

            QTRY_COMPARE_WITH_TIMEOUT(curlGet(https(u"shop.example.com"_s), root).body, QByteArray("shop"), 60000);
            QTRY_COMPARE_WITH_TIMEOUT(curlGet(https(u"blog.example.com"_s, u"/feed"_s), root).body, QByteArray("blog"),
                                      30000);
            const QSslCertificate served = servedCertificate(u"blog.example.com"_s, m_site->https, root);
            QVERIFY(!served.isNull());
            QCOMPARE(served.subjectAlternativeNames().values(QSsl::DnsEntry), QStringList{u"blog.example.com"_s});

            // The state shown is Pando's store's: Pebble's issuer and the served certificate's expiry.
            const auto blogState = certificateOf(edge, u"blog.example.com"_s);
            QVERIFY(blogState);
            QVERIFY2(blogState->issuer.contains(u"Pebble"_s), qPrintable(blogState->issuer));
            QCOMPARE(blogState->notAfter, served.expiryDate());
            QVERIFY2(blogState->error.isEmpty(), qPrintable(blogState->error));

            // The refused name: its error with the step and the CA's problem; the others serve.
            QTRY_VERIFY_WITH_TIMEOUT(!certificateOf(edge, u"refused.example.com"_s)->error.isEmpty(), 30000);
            const auto bad = certificateOf(edge, u"refused.example.com"_s);
            QVERIFY(!bad->notAfter.isValid());
            QVERIFY2(bad->error.contains(u"ACME newOrder"_s) && bad->error.contains(u"rejectedIdentifier"_s),
                     qPrintable(bad->error));
            QCOMPARE(curlGet(https(u"refused.example.com"_s), root).status, 0);
            QCOMPARE(curlGet(https(u"shop.example.com"_s), root).body, QByteArray("shop"));
            // Plain HTTP still goes to HTTPS; the challenges are gone once answered.
            QCOMPARE(curlGet(u"http://shop.example.com:%1/x"_s.arg(m_site->http)).status, 308);

            // Caddy was told to get none of these names' certificates itself.
            const QByteArray config = readFile(m_site->dir->filePath(u"edge/caddy.json"_s));
            QVERIFY(!config.contains(R"("module":"acme")"));
            QVERIFY(config.contains("skip_certificates"));
            QVERIFY(!config.contains("acme-challenge"));
            QVERIFY(!QFileInfo::exists(m_site->dir->filePath(u"edge/data/certificates"_s)));
            // Pando's store: private files in a private directory.
            const QString store = m_site->dir->filePath(u"edge/certificates"_s);
            QCOMPARE(QFileInfo(store).permissions() & 0x7700, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner |
                                                                  QFile::ReadUser | QFile::WriteUser | QFile::ExeUser);
            for (const QString &name : {u"account.key"_s, u"shop.example.com.key"_s, u"shop.example.com.crt"_s})
                QCOMPARE(QFileInfo(store + u'/' + name).permissions() & 0x7777,
                         QFile::ReadOwner | QFile::WriteOwner | QFile::ReadUser | QFile::WriteUser);
            shopChain = readFile(store + u"/shop.example.com.crt"_s);
            QVERIFY(!shopChain.isEmpty());
        }

        // A new Pando (new objects, Caddy still running) with the CA gone: the same certificate,
        // and no order tried (an order would fail now and leave its error).
        m_site->pebble->stop();
        {
            auto caddy = std::make_shared<CaddyEdge>(caddyOptions());
            PANDO_VERIFY_OK(caddy->start());
            EdgeCertifier edge(caddy, certifierOptions());
            PANDO_VERIFY_OK(edge.start());
            edge.certifyNow();
            const auto shopState = certificateOf(edge, u"shop.example.com"_s);
            QVERIFY(shopState && shopState->notAfter > QDateTime::currentDateTimeUtc());
            QVERIFY2(shopState->error.isEmpty(), qPrintable(shopState->error));
            QCOMPARE(readFile(m_site->dir->filePath(u"edge/certificates/shop.example.com.crt"_s)), shopChain);
            QCOMPARE(curlGet(https(u"shop.example.com"_s), root).body, QByteArray("shop"));
            PANDO_VERIFY_OK(caddy->stop());
        }
        // A Caddy started afresh (after a reboot) serves them from the configuration it was left.
        {
            auto caddy = std::make_shared<CaddyEdge>(caddyOptions());
            PANDO_VERIFY_OK(caddy->start());
            QCOMPARE(curlGet(https(u"shop.example.com"_s), root).body, QByteArray("shop"));
            QCOMPARE(servedCertificate(u"shop.example.com"_s, m_site->https, root).toPem(),
                     QSslCertificate::fromData(shopChain).first().toPem());
            QCOMPARE(certificateOf(*caddy, u"shop.example.com"_s)->notAfter,
                     QSslCertificate::fromData(shopChain).first().expiryDate());
        }
    }

    void renewsAThirdBeforeExpiry()
    {
        // Certificates that live 24 s: renewed once less than 8 s are left.
        QVERIFY2(m_site->startPebble({.validitySeconds = 24}), qPrintable(m_site->pebble->error()));
        const QString root = m_site->pebble->issuingRootFile();
        HttpBackend shop("shop");
        auto caddy = std::make_shared<CaddyEdge>(caddyOptions());
        PANDO_VERIFY_OK(caddy->start());
        EdgeCertifier edge(caddy, certifierOptions());
        PANDO_VERIFY_OK(edge.start());
        PANDO_VERIFY_OK(serveApp(edge, u"shop"_s, shop.port(), Address{u"shop.example.com"_s, u"/"_s, TlsMode::Auto}));
        QTRY_VERIFY_WITH_TIMEOUT(!servedCertificate(u"shop.example.com"_s, m_site->https, root).isNull(), 60000);
        const QDateTime first = servedCertificate(u"shop.example.com"_s, m_site->https, root).expiryDate();
        QTRY_VERIFY_WITH_TIMEOUT(servedCertificate(u"shop.example.com"_s, m_site->https, root).expiryDate() > first,
                                 40000);
        const QDateTime renewed = servedCertificate(u"shop.example.com"_s, m_site->https, root).expiryDate();
        // Not before a third of the first one's life was left.
        QVERIFY2(first.secsTo(renewed) >= 16 - 2, qPrintable(u"%1 → %2"_s.arg(first.toString(), renewed.toString())));
        QCOMPARE(certificateOf(edge, u"shop.example.com"_s)->notAfter, renewed);
        QCOMPARE(curlGet(https(u"shop.example.com"_s), root).body, QByteArray("shop"));

        // The CA gone at the next renewal: its error is recorded, and the certificate held serves on.
        m_site->pebble->stop();
        QTRY_VERIFY_WITH_TIMEOUT(!certificateOf(edge, u"shop.example.com"_s)->error.isEmpty(), 30000);
        const auto failed = certificateOf(edge, u"shop.example.com"_s);
        QVERIFY2(failed->error.contains(u"ACME "_s) && failed->error.contains(u"did not answer"_s),
                 qPrintable(failed->error));
        QCOMPARE(failed->notAfter, renewed);
        QCOMPARE(servedCertificate(u"shop.example.com"_s, m_site->https, root).expiryDate(), renewed);
        QCOMPARE(curlGet(https(u"shop.example.com"_s), root).body, QByteArray("shop"));
    }
};

QTEST_GUILESS_MAIN(TestCaddyEdgeCert)
#include "tst_caddyedgecert.moc"
