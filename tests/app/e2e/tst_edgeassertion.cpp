// Identity assertions through a real edge: pandod and Debian's Caddy 2.6 in processes of their
// own, Caddy driven by Pando's Caddy edge (adapters/routing/caddy) for an app whose spec says
// route.auth: pando, checking each request with pandod's GET /api/v1/edge/auth. A stand-in app
// echoes the headers (and body) it gets. What a user relies on: only signed-in people with access
// reach the app, on its address and its stable port alike; a browser is sent to a sign-in page on
// the app's own host and comes back signed in; the app gets a header it can verify and never the
// person's Pando credential; a forged or replayed header is refused at the edge; and while pandod
// does not answer, nobody gets through unchecked.

#include "adapters/routing/caddy/caddyedge.h"
#include "core/assertion/assertion.h"
#include "tests/support/component.h"
#include "tests/support/gitfixture.h"
#include "tests/support/ports.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::test;

#define VERIFY_OK(r) QVERIFY2(r, qPrintable(r ? QString() : r.error().text()))

namespace {

struct Answer {
    int status = 0;
    QJsonObject json;
    QByteArray body;
    QByteArray location;
    QByteArray setCookie;
};

// The app: answers every request with the request's headers as a JSON object.
constexpr auto EchoApp = R"py(
import http.server, json, sys
class Echo(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.do_GET(self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode())
    def do_GET(self, received=""):
        seen = dict(self.headers.items())
        seen["_body"] = received
        body = json.dumps(seen).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Echo).serve_forever()
)py";

} // namespace

class TestEdgeAssertion : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;
    GitFixture m_git;
    QNetworkAccessManager m_network;
    QProcess m_pandod, m_app;
    std::unique_ptr<adapters::caddy::CaddyEdge> m_edge;
    int m_pandodPort = 0, m_edgePort = 0, m_appPort = 0, m_routePort = 0;
    QString m_owner;    // a login session of the app's owner
    QString m_outsider; // a login session of a member without a grant on it

    Answer send(const QByteArray &method, const QString &url, const QList<std::pair<QByteArray, QByteArray>> &headers,
                const QByteArray &body = {})
    {
        QNetworkRequest request{QUrl(url)};
        for (const auto &[name, value] : headers)
            request.setRawHeader(name, value);
        // What the test sends, as it says: no redirect followed, no cookie kept or added.
        request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
        request.setAttribute(QNetworkRequest::CookieLoadControlAttribute, QNetworkRequest::Manual);
        request.setAttribute(QNetworkRequest::CookieSaveControlAttribute, QNetworkRequest::Manual);
        request.setTransferTimeout(15000);
        const std::unique_ptr<QNetworkReply> reply(m_network.sendCustomRequest(request, method, body));
        if (!reply->isFinished())
            QSignalSpy(reply.get(), &QNetworkReply::finished).wait(15000);
        Answer answer{reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(),
                      {},
                      reply->readAll(),
                      reply->rawHeader("Location"),
                      reply->rawHeader("Set-Cookie")};
        answer.json = QJsonDocument::fromJson(answer.body).object();
        return answer;
    }
    Answer api(const QByteArray &method, const QString &path, const QString &token, const QByteArray &body = {},
               const QByteArray &type = "application/json")
    {
        QList<std::pair<QByteArray, QByteArray>> headers{{"Content-Type", type}};
        if (!token.isEmpty())
            headers.emplaceBack("Authorization", "Bearer " + token.toUtf8());
        return send(method, u"http://127.0.0.1:%1%2"_s.arg(m_pandodPort).arg(path), headers, body);
    }
    // A request to the app through the edge, under the app's own name.
    Answer viaEdge(QList<std::pair<QByteArray, QByteArray>> headers, const QString &target = u"/orders?page=2"_s,
                   const QByteArray &method = "GET", const QByteArray &body = {})
    {
        headers.emplaceBack("Host", "shop.example.com");
        return send(method, u"http://127.0.0.1:%1%2"_s.arg(m_edgePort).arg(target), headers, body);
    }
    QString login(const QString &username)
    {
        const Answer session =
            api("POST", u"/api/v1/sessions"_s, {},
                QJsonDocument(QJsonObject{{u"username"_s, username}, {u"password"_s, u"long enough pass"_s}}).toJson());
        return session.json.value(u"token"_s).toString();
    }
    static bool waitFor(const std::function<bool()> &ready)
    {
        for (int i = 0; i < 200; ++i) {
            if (ready())
                return true;
            QTest::qWait(50);
        }
        return false;
    }

private Q_SLOTS:
    void initTestCase()
    {
        const QString caddy = QStandardPaths::findExecutable(u"caddy"_s);
        PANDO_REQUIRE_COMPONENT(!caddy.isEmpty(), u"caddy (Debian's caddy)"_s);
        PANDO_REQUIRE_COMPONENT(QFile::exists(u"/usr/bin/python3"_s), u"python3"_s);
        PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), u"git"_s);
        m_pandodPort = unusedPort();
        m_edgePort = unusedPort();
        m_appPort = unusedPort();

        m_app.start(u"/usr/bin/python3"_s, {u"-c"_s, QString::fromLatin1(EchoApp), QString::number(m_appPort)});
        QVERIFY(m_app.waitForStarted(5000));

        const QString dataDir = m_tmp.filePath(u"data"_s);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"PANDO_EDGE"_s, u"in-process"_s); // the apps' own routes are not what is tested
        m_pandod.setProcessEnvironment(env);
        m_pandod.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        m_pandod.start(binaryDir() + u"/app/daemon/pandod"_s,
                       {u"--data-dir"_s, dataDir, u"--listen"_s, u"127.0.0.1:%1"_s.arg(m_pandodPort),
                        u"--reconcile-interval"_s, u"60000"_s, u"--assertion-issuer"_s, u"https://pando.example"_s});
        QVERIFY(m_pandod.waitForStarted(5000));
        QVERIFY2(waitFor([&] { return api("GET", u"/api/v1/health"_s, {}).status == 200; }), "pandod does not answer");

        // The first administrator, a member who owns the app, and one who holds no grant on it.
        QFile initial(dataDir + u"/initial-admin-token"_s);
        QVERIFY(initial.open(QIODevice::ReadOnly));
        const QString initialToken = QString::fromUtf8(initial.readAll()).trimmed();
        QCOMPARE(api("POST", u"/api/v1/bootstrap"_s, {},
                     QJsonDocument(QJsonObject{{u"token"_s, initialToken},
                                               {u"username"_s, u"root"_s},
                                               {u"password"_s, u"long enough pass"_s}})
                         .toJson())
                     .status,
                 201);
        const QString root = login(u"root"_s);
        QVERIFY(!root.isEmpty());
        for (const char *name : {"olivia", "mallory"})
            QCOMPARE(api("POST", u"/api/v1/users"_s, root,
                         QJsonDocument(QJsonObject{{u"username"_s, QString::fromLatin1(name)},
                                                   {u"password"_s, u"long enough pass"_s},
                                                   {u"role"_s, u"member"_s}})
                             .toJson())
                         .status,
                     201);
        m_owner = login(u"olivia"_s);
        m_outsider = login(u"mallory"_s);
        const QString repo = m_git.createRepository(u"shop"_s);
        QVERIFY(!m_git.commit(u"shop"_s, u"main"_s, {{u"README"_s, GitFile{"shop\n"}}}).isEmpty());
        // An administrator may name a file:// repository; the app is then olivia's.
        const QByteArray spec = "name: shop\nsource:\n  repo: " + repo.toUtf8() + "\n  ref: main\nrun:\n  port: 8080\n";
        const Answer created = api("POST", u"/api/v1/apps"_s, root, spec, "application/yaml");
        QVERIFY2(created.status == 201, QJsonDocument(created.json).toJson().constData());
        QCOMPARE(api("POST", u"/api/v1/apps/shop/grants"_s, root, R"({"user":"olivia","role":"owner"})").status, 201);

        // The edge serves shop (route.auth: pando) at shop.example.com over plain HTTP, and
        // asks this pandod.
        adapters::caddy::EdgeSite site;
        site.listenHost = u"127.0.0.1"_s;
        site.httpPort = m_edgePort;
        site.httpsPort = unusedPort();
        m_edge = std::make_unique<adapters::caddy::CaddyEdge>(
            adapters::caddy::CaddyEdgeOptions{.stateDir = m_tmp.filePath(u"edge"_s), .site = site});
        const Status started = m_edge->start();
        VERIFY_OK(started);
        const auto route = m_edge->ensure(u"shop"_s, 0);
        VERIFY_OK(route);
        m_routePort = route->port;
        const Status backed = m_edge->setBackend(u"shop"_s, u"127.0.0.1"_s, m_appPort);
        VERIFY_OK(backed);
        const adapters::Address address{u"shop.example.com"_s, u"/"_s, adapters::TlsMode::Off};
        const Status addressed = m_edge->setAddresses(u"shop"_s, adapters::AddressChange{{address}, true, true});
        VERIFY_OK(addressed);
        // Until it knows where pandod answers, nobody reaches the app.
        QCOMPARE(viaEdge({{"Authorization", "Bearer " + m_owner.toUtf8()}}).status, 503);
        const Status checked =
            m_edge->setIdentityCheck(adapters::IdentityCheck{u"127.0.0.1:%1"_s.arg(m_pandodPort), {}, {}});
        VERIFY_OK(checked);
    }

    void cleanupTestCase()
    {
        if (m_edge)
            discardResult(m_edge->stop(), "the test is over");
        for (QProcess *process : {&m_app, &m_pandod}) {
            if (process->state() == QProcess::NotRunning)
                continue;
            ::kill(pid_t(process->processId()), SIGTERM);
            if (!process->waitForFinished(15000))
                process->kill();
        }
    }

    void nobodySignedInIsStoppedAtTheEdge()
    {
        const Answer answer = viaEdge({});
        QCOMPARE(answer.status, 401);
        // Pando's answer, not the app's: the app never saw the request.
        QCOMPARE(answer.json.value(u"error"_s).toObject().value(u"code"_s).toString(), u"unauthorized"_s);
        QCOMPARE(viaEdge({{"Authorization", "Bearer pando_notatokennotatokennotatokennotatokennotat"}}).status, 401);
    }

    void aMemberWithoutAGrantIsRefused()
    {
        const Answer answer = viaEdge({{"Authorization", "Bearer " + m_outsider.toUtf8()}});
        QCOMPARE(answer.status, 403);
        QCOMPARE(answer.json.value(u"error"_s).toObject().value(u"code"_s).toString(), u"forbidden"_s);
    }

    void theAppGetsAnAssertionAndNoCredential()
    {
        core::assertion::AssertionVerifier verifier;
        QVERIFY(verifier.setKeys(api("GET", u"/.well-known/jwks.json"_s, {}).json));

        // By bearer token, with an app's own cookie beside.
        Answer seen = viaEdge({{"Authorization", "Bearer " + m_owner.toUtf8()}, {"Cookie", "theme=dark"}});
        QCOMPARE(seen.status, 200);
        auto claims = verifier.verify(seen.json.value(u"X-Pando-Assertion"_s).toString().toLatin1(), u"shop"_s);
        QVERIFY2(claims, qPrintable(claims ? QString() : claims.error().text()));
        QCOMPARE(claims->name, u"olivia"_s);
        QCOMPARE(claims->grants, QStringList{u"owner"_s});
        QCOMPARE(claims->issuer, u"https://pando.example"_s);
        QCOMPARE(seen.json.value(u"Host"_s).toString(), u"shop.example.com"_s);
        QCOMPARE(seen.json.value(u"Cookie"_s).toString(), u"theme=dark"_s);
        QVERIFY2(!QJsonDocument(seen.json).toJson().contains(m_owner.toUtf8()), "the app got the session token");

        // By the pando_session cookie among the app's own.
        seen = viaEdge({{"Cookie", "theme=dark; pando_session=" + m_owner.toUtf8() + "; lang=de"}});
        QCOMPARE(seen.status, 200);
        QVERIFY(verifier.verify(seen.json.value(u"X-Pando-Assertion"_s).toString().toLatin1(), u"shop"_s));
        QCOMPARE(seen.json.value(u"Cookie"_s).toString(), u"theme=dark; lang=de"_s);
        QVERIFY2(!QJsonDocument(seen.json).toJson().contains(m_owner.toUtf8()), "the app got the session token");
    }

    void forgedAndReplayedHeadersAreRefusedAtTheEdge()
    {
        const QByteArray bearer = "Bearer " + m_owner.toUtf8();
        const Answer seen = viaEdge({{"Authorization", bearer}});
        QCOMPARE(seen.status, 200);
        const QByteArray genuine = seen.json.value(u"X-Pando-Assertion"_s).toString().toLatin1();
        QVERIFY(!genuine.isEmpty());

        // The outsider replays the owner's assertion (as an app it was sent to could).
        Answer refused = viaEdge({{"Authorization", "Bearer " + m_outsider.toUtf8()}, {"X-Pando-Assertion", genuine}});
        QCOMPARE(refused.status, 400);
        QString message = refused.json.value(u"error"_s).toObject().value(u"message"_s).toString();
        QVERIFY2(message.contains(u"replayed"_s), qPrintable(message));

        // A forged one: the owner's claims, alg none.
        const QByteArray none = QByteArray(R"({"alg":"none","typ":"JWT"})")
                                    .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals) +
                                '.' + genuine.split('.').value(1) + '.';
        refused = viaEdge({{"X-Pando-Assertion", none}});
        QCOMPARE(refused.status, 400);
        message = refused.json.value(u"error"_s).toObject().value(u"message"_s).toString();
        QVERIFY2(message.contains(u"forged"_s), qPrintable(message));
    }

    // The app's stable loopback port is checked as its address is: no way round the edge's check.
    void theStablePortIsCheckedToo()
    {
        const QString url = u"http://127.0.0.1:%1/orders"_s.arg(m_routePort);
        QCOMPARE(send("GET", url, {}).status, 401);
        const Answer seen = send("GET", url, {{"Authorization", "Bearer " + m_owner.toUtf8()}});
        QCOMPARE(seen.status, 200);
        QVERIFY(!seen.json.value(u"X-Pando-Assertion"_s).toString().isEmpty());
    }

    // The check is a request of its own: what the person sends reaches the app whole.
    void aPostsBodyReachesTheApp()
    {
        const QByteArray order = R"({"item":"tea","count":3})";
        const Answer seen =
            viaEdge({{"Authorization", "Bearer " + m_owner.toUtf8()}, {"Content-Type", "application/json"}},
                    u"/orders"_s, "POST", order);
        QCOMPARE(seen.status, 200);
        QCOMPARE(seen.json.value(u"_body"_s).toString().toUtf8(), order);
    }

    // A person in a browser: sent to the sign-in page on the app's host, signed in there, and
    // back where they were, with a session cookie that is the app host's.
    void aBrowserSignsInOnTheAppsHost()
    {
        const QByteArray html = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8";
        const Answer away = viaEdge({{"Accept", html}});
        QCOMPARE(away.status, 302);
        QCOMPARE(away.location, QByteArray("/.pando/sign-in?next=%2Forders%3Fpage%3D2"));

        const Answer form = viaEdge({{"Accept", html}}, QString::fromLatin1(away.location));
        QCOMPARE(form.status, 200);
        QVERIFY2(form.body.contains("<form method=\"post\""), form.body.constData());
        QVERIFY(form.body.contains("name=\"password\""));
        QVERIFY(form.body.contains("value=\"/orders?page=2\""));

        const QByteArray origin = "http://shop.example.com:" + QByteArray::number(m_edgePort);
        const QList<std::pair<QByteArray, QByteArray>> posted{
            {"Content-Type", "application/x-www-form-urlencoded"}, {"Origin", origin}, {"Accept", html}};
        // A wrong password: the form again, saying so; no cookie.
        Answer refused = viaEdge(posted, QString::fromLatin1(away.location), "POST",
                                 "next=%2Forders%3Fpage%3D2&username=olivia&password=not+it");
        QCOMPARE(refused.status, 401);
        QVERIFY(refused.body.contains("role=\"alert\""));
        QVERIFY(refused.setCookie.isEmpty());
        // Another site's form is refused, whatever it holds.
        QList<std::pair<QByteArray, QByteArray>> foreign = posted;
        foreign[1].second = "https://evil.example";
        refused = viaEdge(foreign, QString::fromLatin1(away.location), "POST",
                          "next=%2F&username=olivia&password=long+enough+pass");
        QCOMPARE(refused.status, 403);
        QVERIFY(refused.setCookie.isEmpty());
        // A next that leads off the host is not followed.
        const Answer offHost = viaEdge(posted, QString::fromLatin1(away.location), "POST",
                                       "next=%2F%2Fevil.example%2F&username=olivia&password=long+enough+pass");
        QCOMPARE(offHost.status, 303);
        QCOMPARE(offHost.location, QByteArray("/"));

        const Answer signedIn = viaEdge(posted, QString::fromLatin1(away.location), "POST",
                                        "next=%2Forders%3Fpage%3D2&username=olivia&password=long+enough+pass");
        QCOMPARE(signedIn.status, 303);
        QCOMPARE(signedIn.location, QByteArray("/orders?page=2"));
        QVERIFY2(signedIn.setCookie.startsWith("pando_session="), signedIn.setCookie.constData());
        QVERIFY(signedIn.setCookie.contains("HttpOnly"));
        QVERIFY(signedIn.setCookie.contains("SameSite=Lax"));
        QVERIFY(!signedIn.setCookie.contains("Domain=")); // the app host's alone
        const QByteArray cookie = signedIn.setCookie.split(';').constFirst();

        core::assertion::AssertionVerifier verifier;
        QVERIFY(verifier.setKeys(api("GET", u"/.well-known/jwks.json"_s, {}).json));
        const Answer back = viaEdge({{"Accept", html}, {"Cookie", cookie}});
        QCOMPARE(back.status, 200);
        const auto claims = verifier.verify(back.json.value(u"X-Pando-Assertion"_s).toString().toLatin1(), u"shop"_s);
        QVERIFY2(claims, qPrintable(claims ? QString() : claims.error().text()));
        QCOMPARE(claims->name, u"olivia"_s);
        QVERIFY(!back.json.value(u"Cookie"_s).toString().contains(u"pando_session"_s));

        // Signed in but not allowed: a page that says so, not JSON, with a way to change who.
        const Answer notYours = viaEdge({{"Accept", html}, {"Authorization", "Bearer " + m_outsider.toUtf8()}});
        QCOMPARE(notYours.status, 403);
        QVERIFY(notYours.body.contains("<h1>"));
        QVERIFY2(notYours.body.contains("href=\"/.pando/sign-out?next=%2Forders%3Fpage%3D2\""),
                 notYours.body.constData());

        // Signing out: a page with a button (a link or an image elsewhere cannot sign anyone out),
        // whose form only the app's own host may send; it ends the session, not just the cookie.
        const Answer outPage = viaEdge({{"Accept", html}, {"Cookie", cookie}}, u"/.pando/sign-out?next=%2Forders"_s);
        QCOMPARE(outPage.status, 200);
        QVERIFY2(outPage.body.contains("<form method=\"post\" action=\"/.pando/sign-out?next=%2Forders\""),
                 outPage.body.constData());
        QList<std::pair<QByteArray, QByteArray>> out{{"Content-Type", "application/x-www-form-urlencoded"},
                                                     {"Origin", "https://evil.example"},
                                                     {"Cookie", cookie}};
        const Answer forged = viaEdge(out, u"/.pando/sign-out"_s, "POST", "next=%2Forders");
        QCOMPARE(forged.status, 403);
        QVERIFY(forged.setCookie.isEmpty());
        QCOMPARE(viaEdge({{"Accept", html}, {"Cookie", cookie}}).status, 200); // still signed in
        out[1].second = origin;
        const Answer signedOut = viaEdge(out, u"/.pando/sign-out"_s, "POST", "next=%2Forders");
        QCOMPARE(signedOut.status, 303);
        QCOMPARE(signedOut.location, QByteArray("/.pando/sign-in?next=%2Forders"));
        QVERIFY2(signedOut.setCookie.startsWith("pando_session=;"), signedOut.setCookie.constData());
        QVERIFY(signedOut.setCookie.contains("Max-Age=0"));
        // The cookie kept elsewhere (another tab, a copy) opens nothing any more.
        const Answer ended = viaEdge({{"Accept", html}, {"Cookie", cookie}});
        QCOMPARE(ended.status, 302);
        QVERIFY(!ended.json.contains(u"X-Pando-Assertion"_s));
    }

    // Last: with pandod gone nobody is let through, signed in or not.
    void nobodyGetsThroughWhilePandoIsDown()
    {
        ::kill(pid_t(m_pandod.processId()), SIGTERM);
        QVERIFY(m_pandod.waitForFinished(15000));
        const Answer answer = viaEdge({{"Authorization", "Bearer " + m_owner.toUtf8()}});
        QCOMPARE(answer.status, 502);
        QVERIFY(!answer.json.contains(u"X-Pando-Assertion"_s));
    }
};

QTEST_GUILESS_MAIN(TestEdgeAssertion)
#include "tst_edgeassertion.moc"
