// Apps on names and paths through a real Caddy (Debian's caddy), reached with curl --resolve as a
// browser would: HTTPS with certificates from the install's own CA (its root handed out by the
// edge), plain HTTP for tls: off, HTTP redirected to HTTPS, a path prefix routed to its app, a
// moved address redirecting (or dropped), a claimed address refused with everything still
// serving, and the addresses kept when the next Pando adopts the running Caddy.

#include "adapters/routing/caddy/caddyedge.h"
#include "tests/adapters/caddy/edgetesting.h"
#include "tests/support/component.h"
#include "tests/support/curlget.h"
#include "tests/support/httpbackend.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::test;
using pando::adapters::Address;
using pando::adapters::AddressChange;
using pando::adapters::TlsMode;
using pando::adapters::caddy::CaddyEdge;
using pando::adapters::caddy::CaddyEdgeOptions;

namespace {} // namespace

#define PANDO_VERIFY_ANSWER(answer, code, text)                                                                        \
    do {                                                                                                               \
        const CurlAnswer a_ = (answer);                                                                                \
        QVERIFY2(a_.status == (code) && a_.body == (text), qPrintable(a_.describe()));                                 \
    } while (false)

class TestCaddyAddresses : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;
    int m_http = 0;
    int m_https = 0;

    CaddyEdgeOptions options() const
    {
        CaddyEdgeOptions o{.stateDir = m_dir->filePath(u"edge"_s)};
        o.site.listenHost = u"127.0.0.1"_s;
        o.site.httpPort = m_http;
        o.site.httpsPort = m_https;
        return o;
    }
    QString https(const QString &hostAndPath) const
    {
        return u"https://%1"_s.arg(hostAndPath).replace(u"$"_s, QString::number(m_https));
    }
    QString http(const QString &hostAndPath) const
    {
        return u"http://%1"_s.arg(hostAndPath).replace(u"$"_s, QString::number(m_http));
    }

    // The install CA's root, as people export it, in a file curl trusts.
    QString caFile(CaddyEdge &edge) const
    {
        const QByteArray pem = edge.installCa();
        const QString file = m_dir->filePath(u"install-ca.pem"_s);
        QFile f(file);
        if (pem.isEmpty() || !f.open(QIODevice::WriteOnly))
            return {};
        f.write(pem);
        return file;
    }

    static Address internal(const QString &host, const QString &path = u"/"_s)
    {
        return Address{host, path, TlsMode::Internal};
    }

private Q_SLOTS:
    void init()
    {
        PANDO_REQUIRE_COMPONENT(!CaddyEdge::findCaddy().isEmpty(), u"caddy (Debian's caddy package)"_s);
        PANDO_REQUIRE_COMPONENT(!QStandardPaths::findExecutable(u"curl"_s).isEmpty(), u"curl"_s);
        m_dir = std::make_unique<QTemporaryDir>();
        m_http = unusedPort();
        m_https = unusedPort();
    }
    void cleanup()
    {
        if (m_dir)
            discardResult(CaddyEdge(options()).stop(), "a test that stopped it already leaves nothing to stop");
    }

    void namesAndPathsOverHttps()
    {
        HttpBackend shop("shop"), blog("blog"), api("api");
        CaddyEdge edge(options());
        PANDO_VERIFY_OK(edge.start());
        for (const auto &[app, backend] : {std::pair{u"shop"_s, &shop}, {u"blog"_s, &blog}, {u"api"_s, &api}}) {
            PANDO_VERIFY_OK(edge.ensure(app, 0));
            PANDO_VERIFY_OK(edge.setBackend(app, u"127.0.0.1"_s, backend->port()));
        }
        PANDO_VERIFY_OK(edge.setAddresses(u"shop"_s, {{internal(u"shop.test"_s, u"/store"_s)}}));
        PANDO_VERIFY_OK(edge.setAddresses(u"blog"_s, {{internal(u"blog.test"_s)}}));
        PANDO_VERIFY_OK(edge.setAddresses(u"api"_s, {{internal(u"shop.test"_s, u"/api"_s)}}));
        QCOMPARE(edge.route(u"api"_s)->addresses, QList<Address>{internal(u"shop.test"_s, u"/api"_s)});

        const QString ca = caFile(edge);
        QVERIFY2(!ca.isEmpty(), "the edge has no install CA root after serving tls: internal");
        // Caddy issues from its CA for each name, in the background: until a name's certificate
        // is there its handshake fails (a loaded machine showed shop.test's come after blog's).
        QTRY_COMPARE_WITH_TIMEOUT(curlGet(https(u"blog.test:$/"_s), ca).status, 200, 15000);
        QTRY_COMPARE_WITH_TIMEOUT(curlGet(https(u"shop.test:$/store"_s), ca).status, 200, 15000);
        PANDO_VERIFY_ANSWER(curlGet(https(u"blog.test:$/any/page"_s), ca), 200, "blog");
        PANDO_VERIFY_ANSWER(curlGet(https(u"shop.test:$/store"_s), ca), 200, "shop");
        PANDO_VERIFY_ANSWER(curlGet(https(u"shop.test:$/store/cart"_s), ca), 200, "shop");
        PANDO_VERIFY_ANSWER(curlGet(https(u"shop.test:$/api/v1/items"_s), ca), 200, "api");
        // A path no app holds, on a name the edge serves: a 404 that says so.
        const CurlAnswer none = curlGet(https(u"shop.test:$/storefront"_s), ca);
        QCOMPARE(none.status, 404);
        QVERIFY(none.body.contains("no app is served at this address"));
        // Plain HTTP goes to HTTPS.
        const CurlAnswer plain = curlGet(http(u"shop.test:$/store?x=1"_s));
        QCOMPARE(plain.status, 308);
        QCOMPARE(plain.location, https(u"shop.test:$/store?x=1"_s));
        // Nobody else's root: the certificate is the install CA's, not one anybody trusts.
        QVERIFY(curlGet(https(u"blog.test:$/"_s)).status == 0);

        const auto certificates = edge.certificates();
        QCOMPARE(certificates.size(), 2);
        for (const auto &certificate : certificates) {
            QVERIFY2(certificate.issuer.contains(u"Pando install CA"_s), qPrintable(certificate.issuer));
            QVERIFY(certificate.notAfter > QDateTime::currentDateTimeUtc());
            QVERIFY2(certificate.error.isEmpty(), qPrintable(certificate.error));
        }
        const auto status = edge.status();
        QCOMPARE(status.httpPort, m_http);
        QCOMPARE(status.httpsPort, m_https);
    }

    void plainHttpWhenTlsIsOff()
    {
        HttpBackend site("site");
        CaddyEdge edge(options());
        PANDO_VERIFY_OK(edge.start());
        PANDO_VERIFY_OK(serveApp(edge, u"site"_s, site.port(), Address{u"site.lan"_s, u"/"_s, TlsMode::Off}));
        PANDO_VERIFY_ANSWER(curlGet(http(u"site.lan:$/"_s)), 200, "site");
        QVERIFY(edge.certificates().isEmpty());
    }

    void movedAddressesRedirectOrGo()
    {
        HttpBackend blog("blog");
        CaddyEdge edge(options());
        PANDO_VERIFY_OK(edge.start());
        PANDO_VERIFY_OK(serveApp(edge, u"blog"_s, blog.port(), internal(u"blog.test"_s)));
        const QString ca = caFile(edge);
        QTRY_COMPARE_WITH_TIMEOUT(curlGet(https(u"blog.test:$/"_s), ca).status, 200, 15000);

        // Moved: the old name answers with a redirect to the new one, keeping the path.
        PANDO_VERIFY_OK(edge.setAddresses(u"blog"_s, {{internal(u"journal.test"_s)}}));
        QCOMPARE(edge.route(u"blog"_s)->moved.size(), 1);
        const CurlAnswer old = curlGet(https(u"blog.test:$/post/7?draft=0"_s), ca);
        QCOMPARE(old.status, 308);
        QCOMPARE(old.location, https(u"journal.test:$/post/7?draft=0"_s));
        QTRY_COMPARE_WITH_TIMEOUT(curlGet(https(u"journal.test:$/"_s), ca).status, 200, 15000);
        PANDO_VERIFY_ANSWER(curlGet(https(u"journal.test:$/post/7"_s), ca), 200, "blog");

        // Moved again: every earlier name leads to the newest one.
        PANDO_VERIFY_OK(edge.setAddresses(u"blog"_s, {{internal(u"diary.test"_s)}}));
        QCOMPARE(curlGet(https(u"blog.test:$/"_s), ca).location, https(u"diary.test:$/"_s));
        QCOMPARE(curlGet(https(u"journal.test:$/"_s), ca).location, https(u"diary.test:$/"_s));

        // Dropped: the old names go (no certificate is served for them any more).
        PANDO_VERIFY_OK(edge.setAddresses(u"blog"_s, AddressChange{{internal(u"log.test"_s)}, false}));
        QVERIFY(edge.route(u"blog"_s)->moved.isEmpty());
        QCOMPARE(curlGet(http(u"diary.test:$/"_s)).status, 404);
    }

    void aClaimedAddressIsRefusedAndAllKeepsServing()
    {
        HttpBackend shop("shop"), other("other");
        CaddyEdge edge(options());
        PANDO_VERIFY_OK(edge.start());
        PANDO_VERIFY_OK(edge.ensure(u"shop"_s, 0));
        PANDO_VERIFY_OK(edge.ensure(u"other"_s, 0));
        PANDO_VERIFY_OK(edge.setBackend(u"shop"_s, u"127.0.0.1"_s, shop.port()));
        PANDO_VERIFY_OK(edge.setBackend(u"other"_s, u"127.0.0.1"_s, other.port()));
        PANDO_VERIFY_OK(edge.setAddresses(u"shop"_s, {{internal(u"shop.test"_s)}}));
        const QString ca = caFile(edge);
        QTRY_COMPARE_WITH_TIMEOUT(curlGet(https(u"shop.test:$/"_s), ca).status, 200, 15000);

        const QByteArray configBefore = [this] {
            QFile f(m_dir->filePath(u"edge/caddy.json"_s));
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        }();
        auto refused = edge.setAddresses(u"other"_s, {{internal(u"shop.test"_s, u"/admin"_s)}});
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Conflict);
        QVERIFY2(refused.error().message.contains(u"shop"_s), qPrintable(refused.error().message));
        QVERIFY(edge.route(u"other"_s)->addresses.isEmpty());
        PANDO_VERIFY_ANSWER(curlGet(https(u"shop.test:$/admin"_s), ca), 200, "shop");
        QFile after(m_dir->filePath(u"edge/caddy.json"_s));
        QVERIFY(after.open(QIODevice::ReadOnly));
        QCOMPARE(after.readAll(), configBefore);
    }

    void addressesSurviveTheNextPando()
    {
        HttpBackend blog("blog");
        {
            CaddyEdge edge(options());
            PANDO_VERIFY_OK(edge.start());
            PANDO_VERIFY_OK(serveApp(edge, u"blog"_s, blog.port(), internal(u"blog.test"_s)));
            PANDO_VERIFY_OK(edge.setAddresses(u"blog"_s, {{internal(u"journal.test"_s)}}));
        }
        CaddyEdge next(options());
        PANDO_VERIFY_OK(next.start());
        const auto route = next.route(u"blog"_s);
        QVERIFY(route);
        QCOMPARE(route->addresses, QList<Address>{internal(u"journal.test"_s)});
        QCOMPARE(route->moved.size(), 1);
        QCOMPARE(route->moved.first().from, internal(u"blog.test"_s));
        QTRY_COMPARE_WITH_TIMEOUT(curlGet(https(u"journal.test:$/"_s), caFile(next)).status, 200, 15000);

        // Started afresh (after a reboot, say) from what was written down.
        PANDO_VERIFY_OK(next.stop());
        CaddyEdge fresh(options());
        PANDO_VERIFY_OK(fresh.start());
        QCOMPARE(fresh.route(u"blog"_s)->addresses, QList<Address>{internal(u"journal.test"_s)});
        PANDO_VERIFY_ANSWER(curlGet(https(u"journal.test:$/x"_s), caFile(fresh)), 200, "blog");
        QVERIFY(QFileInfo(m_dir->filePath(u"edge/routes.json"_s)).permissions() ==
                (QFile::ReadOwner | QFile::WriteOwner | QFile::ReadUser | QFile::WriteUser));
    }

    // An app for people signed in never answers unchecked: not before the edge knows where Pando
    // answers (503), not while Pando does not (502), and not after the next Pando or a fresh start.
    void signInOnlyStaysCheckedAcrossRestarts()
    {
        HttpBackend ledger("ledger");
        const int nobody = unusedPort(); // where "pandod" is said to listen: nothing answers there
        int stable = 0;
        {
            CaddyEdge edge(options());
            PANDO_VERIFY_OK(edge.start());
            PANDO_VERIFY_OK(serveApp(edge, u"ledger"_s, ledger.port(), internal(u"ledger.test"_s)));
            // Each name's certificate comes from the install CA in the background (see above).
            QTRY_COMPARE_WITH_TIMEOUT(curlGet(https(u"ledger.test:$/"_s), caFile(edge)).status, 200, 15000);
            PANDO_VERIFY_ANSWER(curlGet(https(u"ledger.test:$/"_s), caFile(edge)), 200, "ledger");
            PANDO_VERIFY_OK(edge.setAddresses(u"ledger"_s, AddressChange{{internal(u"ledger.test"_s)}, true, true}));
            stable = edge.route(u"ledger"_s)->port;
            QCOMPARE(curlGet(u"http://127.0.0.1:%1/"_s.arg(stable)).status, 503);
            QCOMPARE(curlGet(https(u"ledger.test:$/"_s), caFile(edge)).status, 503);
            PANDO_VERIFY_OK(edge.setIdentityCheck({u"127.0.0.1:%1"_s.arg(nobody), {}, {}}));
            QCOMPARE(curlGet(u"http://127.0.0.1:%1/"_s.arg(stable)).status, 502);
        }
        // The next Pando adopts it as it serves, where to ask included: a change keeps asking there.
        {
            CaddyEdge next(options());
            PANDO_VERIFY_OK(next.start());
            QVERIFY(next.route(u"ledger"_s)->signIn);
            PANDO_VERIFY_OK(next.setAddresses(
                u"ledger"_s, AddressChange{{internal(u"ledger.test"_s), internal(u"books.test"_s)}, true, true}));
            QCOMPARE(curlGet(u"http://127.0.0.1:%1/"_s.arg(stable)).status, 502);
            // Its first answer, once the name's certificate is there, is already checked.
            CurlAnswer books;
            QTRY_VERIFY_WITH_TIMEOUT((books = curlGet(https(u"books.test:$/"_s), caFile(next))).status != 0, 15000);
            QCOMPARE(books.status, 502);
            PANDO_VERIFY_OK(next.stop());
        }
        // Started afresh from what was written down: checked, and unanswered until told again.
        CaddyEdge fresh(options());
        PANDO_VERIFY_OK(fresh.start());
        QVERIFY(fresh.route(u"ledger"_s)->signIn);
        QCOMPARE(curlGet(u"http://127.0.0.1:%1/"_s.arg(stable)).status, 503);
        // Asked to serve it to anyone again, it does.
        PANDO_VERIFY_OK(fresh.setAddresses(u"ledger"_s, AddressChange{{internal(u"ledger.test"_s)}, true, false}));
        PANDO_VERIFY_ANSWER(curlGet(u"http://127.0.0.1:%1/"_s.arg(stable)), 200, "ledger");
    }
};

QTEST_GUILESS_MAIN(TestCaddyAddresses)
#include "tst_caddyaddresses.moc"
