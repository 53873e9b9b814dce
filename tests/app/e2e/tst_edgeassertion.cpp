// Identity assertions through a real edge: pandod and Debian's Caddy 2.6 in processes of their
// own, Caddy configured the way the edge must be for an app that wants assertions (the JSON
// below: forward_auth to GET /api/v1/edge/auth, Host rewritten for pandod's host check, the
// answer's X-Pando-Assertion copied, Pando's credentials stripped before the app). A stand-in
// app echoes the headers it gets. What a user relies on: only signed-in people with access
// reach the app; the app gets a header it can verify and never the person's Pando credential;
// a forged or replayed header is refused at the edge.

#include "core/assertion/assertion.h"
#include "tests/support/component.h"
#include "tests/support/gitfixture.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::test;

namespace {

struct Answer {
    int status = 0;
    QJsonObject json;
};

int freePort()
{
    QTcpServer probe;
    return probe.listen(QHostAddress::LocalHost, 0) ? probe.serverPort() : 0;
}

// The app: answers every request with the request's headers as a JSON object.
constexpr auto EchoApp = R"py(
import http.server, json, sys
class Echo(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps(dict(self.headers.items())).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Echo).serve_forever()
)py";

// The edge's route for app `shop` on `listen`, as the Caddy edge must serve an app that wants
// identity assertions (docs/edge.md, "Identity assertions").
QJsonObject edgeConfig(int listen, int pandod, int app)
{
    const QJsonObject forwardAuth{
        {u"handler"_s, u"reverse_proxy"_s},
        {u"upstreams"_s, QJsonArray{QJsonObject{{u"dial"_s, u"127.0.0.1:%1"_s.arg(pandod)}}}},
        {u"rewrite"_s, QJsonObject{{u"method"_s, u"GET"_s}, {u"uri"_s, u"/api/v1/edge/auth?app=shop"_s}}},
        // pandod answers only to the names it knows: the app's Host would be refused with 421.
        {u"headers"_s,
         QJsonObject{
             {u"request"_s,
              QJsonObject{{u"set"_s, QJsonObject{{u"Host"_s, QJsonArray{u"{http.reverse_proxy.upstream.hostport}"_s}},
                                                 {u"X-Forwarded-Method"_s, QJsonArray{u"{http.request.method}"_s}},
                                                 {u"X-Forwarded-Uri"_s, QJsonArray{u"{http.request.uri}"_s}}}}}}}},
        // 2xx: the request goes on with Pando's header (replacing any the client sent, which
        // pandod refused anyway); any other answer goes back to the client as it is.
        {u"handle_response"_s,
         QJsonArray{QJsonObject{
             {u"match"_s, QJsonObject{{u"status_code"_s, QJsonArray{2}}}},
             {u"routes"_s,
              QJsonArray{QJsonObject{
                  {u"handle"_s,
                   QJsonArray{QJsonObject{
                       {u"handler"_s, u"headers"_s},
                       {u"request"_s,
                        QJsonObject{
                            {u"set"_s,
                             QJsonObject{{u"X-Pando-Assertion"_s,
                                          QJsonArray{u"{http.reverse_proxy.header.X-Pando-Assertion}"_s}}}}}}}}}}}}}}}};
    // The person's Pando credential stays with Pando: the pando_session cookie and a Pando bearer
    // token are cut from what the app gets (an app's own cookies and Authorization stay).
    const QJsonObject toApp{
        {u"handler"_s, u"reverse_proxy"_s},
        {u"upstreams"_s, QJsonArray{QJsonObject{{u"dial"_s, u"127.0.0.1:%1"_s.arg(app)}}}},
        {u"headers"_s,
         QJsonObject{
             {u"request"_s,
              QJsonObject{
                  {u"replace"_s,
                   QJsonObject{
                       {u"Cookie"_s, QJsonArray{QJsonObject{{u"search_regexp"_s, u"(^|;\\s*)pando_session=[^;]*"_s},
                                                            {u"replace"_s, u""_s}}}},
                       {u"Authorization"_s,
                        QJsonArray{QJsonObject{{u"search_regexp"_s, u"^[Bb]earer\\s+pando(sess)?_\\S*$"_s},
                                               {u"replace"_s, u""_s}}}}}}}}}}};
    return QJsonObject{
        {u"admin"_s, QJsonObject{{u"disabled"_s, true}}},
        {u"apps"_s,
         QJsonObject{
             {u"http"_s,
              QJsonObject{
                  {u"servers"_s,
                   QJsonObject{{u"shop"_s,
                                QJsonObject{{u"listen"_s, QJsonArray{u"127.0.0.1:%1"_s.arg(listen)}},
                                            {u"automatic_https"_s, QJsonObject{{u"disable"_s, true}}},
                                            {u"routes"_s, QJsonArray{QJsonObject{
                                                              {u"handle"_s, QJsonArray{forwardAuth, toApp}}}}}}}}}}}}}};
}

} // namespace

class TestEdgeAssertion : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;
    GitFixture m_git;
    QNetworkAccessManager m_network;
    QProcess m_pandod, m_caddy, m_app;
    int m_pandodPort = 0, m_edgePort = 0, m_appPort = 0;
    QString m_owner;    // a login session of the app's owner
    QString m_outsider; // a login session of a member without a grant on it

    Answer send(const QByteArray &method, const QString &url, const QList<std::pair<QByteArray, QByteArray>> &headers,
                const QByteArray &body = {})
    {
        QNetworkRequest request{QUrl(url)};
        for (const auto &[name, value] : headers)
            request.setRawHeader(name, value);
        const std::unique_ptr<QNetworkReply> reply(m_network.sendCustomRequest(request, method, body));
        if (!reply->isFinished())
            QSignalSpy(reply.get(), &QNetworkReply::finished).wait(15000);
        return Answer{reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(),
                      QJsonDocument::fromJson(reply->readAll()).object()};
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
    Answer viaEdge(QList<std::pair<QByteArray, QByteArray>> headers)
    {
        headers.emplaceBack("Host", "shop.example.com");
        return send("GET", u"http://127.0.0.1:%1/orders?page=2"_s.arg(m_edgePort), headers);
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
        m_pandodPort = freePort();
        m_edgePort = freePort();
        m_appPort = freePort();

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

        const QString config = m_tmp.filePath(u"caddy.json"_s);
        QFile file(config);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QJsonDocument(edgeConfig(m_edgePort, m_pandodPort, m_appPort)).toJson());
        file.close();
        m_caddy.setProcessChannelMode(QProcess::MergedChannels);
        m_caddy.start(caddy, {u"run"_s, u"--config"_s, config});
        QVERIFY(m_caddy.waitForStarted(5000));
        QVERIFY2(waitFor([&] { return viaEdge({}).status != 0; }), m_caddy.readAll().constData());
    }

    void cleanupTestCase()
    {
        for (QProcess *process : {&m_caddy, &m_app, &m_pandod}) {
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
};

QTEST_GUILESS_MAIN(TestEdgeAssertion)
#include "tst_edgeassertion.moc"
