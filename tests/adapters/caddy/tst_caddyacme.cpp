// Certificates from an ACME CA through the Caddy edge, against Pebble (Debian's ACME test
// server) on loopback with its own DNS stub, reached with curl --resolve trusting only Pebble's
// root: two apps on names and one on a path get certificates by the HTTP-01 challenge and by
// TLS-ALPN-01; a name the CA refuses says why in the certificate state while the others serve;
// short-lived certificates are renewed before they expire; and the certificates the edge holds
// serve after a restart with the CA gone.

#include "adapters/routing/caddy/caddyedge.h"
#include "tests/adapters/caddy/edgetesting.h"
#include "tests/support/component.h"
#include "tests/support/curlget.h"
#include "tests/support/httpbackend.h"
#include "tests/support/pebble.h"

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

class TestCaddyAcme : public QObject {
    Q_OBJECT

    std::unique_ptr<PebbleSite> m_site;

    CaddyEdgeOptions options(const QString &challenge = {}) const
    {
        CaddyEdgeOptions o = m_site->edgeOptions();
        o.site.acmeDirectory = m_site->pebble->directoryUrl();
        o.site.acmeRootFile = m_site->pebble->listenerRootFile();
        o.site.acmeEmail = u"ops@example.com"_s;
        o.site.acmeChallenge = challenge;
        o.site.renewCheckSeconds = 1;
        return o;
    }
    QString https(const QString &host, const QString &path = u"/"_s) const { return m_site->url(host, path); }
    bool startPebble(PebbleOptions pebble = {}) { return m_site->startPebble(pebble); }

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
        if (m_site && m_site->pebble)
            discardResult(CaddyEdge(options()).stop(), "a test that stopped it already leaves nothing to stop");
        m_site.reset();
    }

    void issuesByEitherChallenge_data()
    {
        QTest::addColumn<QString>("challenge");
        QTest::newRow("HTTP-01") << u"http-01"_s;
        QTest::newRow("TLS-ALPN-01") << u"tls-alpn-01"_s;
    }

    void issuesByEitherChallenge()
    {
        QFETCH(QString, challenge);
        QVERIFY2(startPebble({.refuse = {u"refused.example.com"_s}}), qPrintable(m_site->pebble->error()));
        HttpBackend shop("shop"), blog("blog"), docs("docs"), refused("refused");
        CaddyEdge edge(options(challenge));
        PANDO_VERIFY_OK(edge.start());
        const QList<std::tuple<QString, HttpBackend *, Address>> apps{
            {u"shop"_s, &shop, Address{u"shop.example.com"_s, u"/"_s, TlsMode::Auto}},
            {u"blog"_s, &blog, Address{u"blog.example.com"_s, u"/"_s, TlsMode::Auto}},
            {u"docs"_s, &docs, Address{u"www.example.com"_s, u"/docs"_s, TlsMode::Auto}},
            {u"bad"_s, &refused, Address{u"refused.example.com"_s, u"/"_s, TlsMode::Auto}}};
        for (const auto &[app, backend, address] : apps)
            PANDO_VERIFY_OK(serveApp(edge, app, backend->port(), address));
        const QString root = m_site->pebble->issuingRootFile();
        QVERIFY2(!root.isEmpty(), qPrintable(m_site->pebble->error()));

        QTRY_COMPARE_WITH_TIMEOUT(curlGet(https(u"shop.example.com"_s), root).body, QByteArray("shop"), 60000);
        QTRY_COMPARE_WITH_TIMEOUT(curlGet(https(u"blog.example.com"_s, u"/feed"_s), root).body, QByteArray("blog"),
                                  30000);
        QTRY_COMPARE_WITH_TIMEOUT(curlGet(https(u"www.example.com"_s, u"/docs/start"_s), root).body, QByteArray("docs"),
                                  30000);
        QCOMPARE(curlGet(https(u"www.example.com"_s, u"/"_s), root).status, 404);

        const auto shopCertificate = certificateOf(edge, u"shop.example.com"_s);
        QVERIFY(shopCertificate);
        QVERIFY2(shopCertificate->issuer.contains(u"Pebble"_s), qPrintable(shopCertificate->issuer));
        QVERIFY(shopCertificate->notAfter > QDateTime::currentDateTimeUtc());
        QVERIFY2(shopCertificate->error.isEmpty(), qPrintable(shopCertificate->error));

        // The name the CA refuses: no certificate, and the CA's reason, while the others serve.
        QTRY_VERIFY_WITH_TIMEOUT(!certificateOf(edge, u"refused.example.com"_s)->error.isEmpty(), 60000);
        const auto bad = certificateOf(edge, u"refused.example.com"_s);
        QVERIFY(!bad->notAfter.isValid());
        QVERIFY2(bad->error.contains(u"refused.example.com"_s) || bad->error.contains(u"rejectedIdentifier"_s) ||
                     bad->error.contains(u"policy"_s),
                 qPrintable(bad->error));
        QCOMPARE(curlGet(https(u"refused.example.com"_s), root).status, 0); // no certificate to shake hands with
        QCOMPARE(curlGet(https(u"shop.example.com"_s), root).body, QByteArray("shop"));
    }

    void renewsBeforeExpiryAndKeepsItsCertificates()
    {
        // Certificates that live 20 s: Caddy renews a third of their life before the end.
        QVERIFY2(startPebble({.validitySeconds = 20}), qPrintable(m_site->pebble->error()));
        HttpBackend shop("shop");
        {
            CaddyEdge edge(options());
            PANDO_VERIFY_OK(edge.start());
            PANDO_VERIFY_OK(
                serveApp(edge, u"shop"_s, shop.port(), Address{u"shop.example.com"_s, u"/"_s, TlsMode::Auto}));
            const QString root = m_site->pebble->issuingRootFile();
            QTRY_COMPARE_WITH_TIMEOUT(curlGet(https(u"shop.example.com"_s), root).body, QByteArray("shop"), 60000);
            const QDateTime first = certificateOf(edge, u"shop.example.com"_s)->notAfter;
            QVERIFY(first.isValid());
            QTRY_VERIFY_WITH_TIMEOUT(certificateOf(edge, u"shop.example.com"_s)->notAfter > first, 40000);
            QCOMPARE(curlGet(https(u"shop.example.com"_s), root).body, QByteArray("shop"));
            PANDO_VERIFY_OK(edge.stop());
        }
        // Started again with the CA gone: what it holds serves, and the state says so.
        const QString root = m_site->pebble->issuingRootFile();
        m_site->pebble->stop();
        CaddyEdge again(options());
        PANDO_VERIFY_OK(again.start());
        const auto kept = certificateOf(again, u"shop.example.com"_s);
        QVERIFY(kept && kept->notAfter > QDateTime::currentDateTimeUtc());
        QCOMPARE(curlGet(https(u"shop.example.com"_s), root).body, QByteArray("shop"));
    }
};

QTEST_GUILESS_MAIN(TestCaddyAcme)
#include "tst_caddyacme.moc"
