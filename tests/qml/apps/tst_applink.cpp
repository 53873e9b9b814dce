// AppLink, the Apps view's link to an app, against a real API server (fake adapters) whose app
// route leads to a real HTTP backend: through a RemoteSession, Open starts a port-forward over
// the tunnel route and opens http://127.0.0.1:LOCALPORT/ (which answers with the backend's
// reply), says it goes through the server and reuses the forward; an app the user may not read is
// refused with the server's words; through this computer's own engine (InProcessSession) Open
// opens the app's own URL; and a teammate's session pinned to that engine's embedded TLS server
// opens the app through a forward over it. The browser is a URL handler registered by the test.

#include "app/desktop/session/inprocesssession.h"
#include "app/desktop/session/remotesession.h"
#include "qml/apps/applink.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"
#include "tests/app/server/pipelinefakes.h"
#include "tests/support/httpbackend.h"

#include <QDesktopServices>
#include <QFile>
#include <QGuiApplication>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTest>

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

// Stands in for the browser: QDesktopServices hands it every http URL.
class Browser : public QObject {
    Q_OBJECT
public:
    QList<QUrl> opened;
public Q_SLOTS:
    void open(const QUrl &url) { opened.append(url); }
};

class TestAppLink : public QObject {
    Q_OBJECT

private:
    test::TestInstall m_install;
    std::unique_ptr<test::HttpBackend> m_backend;
    Browser m_browser;

    // A plain HTTP request to url, answered through whatever listens there.
    QByteArray fetch(const QUrl &url, const QByteArray &body)
    {
        QTcpSocket socket;
        QByteArray answer;
        connect(&socket, &QTcpSocket::readyRead, this, [&] { answer += socket.readAll(); });
        socket.connectToHost(QHostAddress::LocalHost, quint16(url.port()));
        if (!socket.waitForConnected(5000))
            return "no connection";
        socket.write("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + QByteArray::number(body.size()) +
                     "\r\n\r\n" + body);
        (void)QTest::qWaitFor([&] { return answer.endsWith(body); }, 10000);
        return answer;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QDesktopServices::setUrlHandler(u"http"_s, &m_browser, "open");
        QVERIFY2(m_install.start(), qPrintable(m_install.error));
        m_backend = std::make_unique<test::HttpBackend>("web");
        auto created = m_install.engine->createApp(test::helloSpec(u"web"_s), core::Actor::system(u"test"_s));
        QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
        // The fake router routes nothing itself: the stable port is where the backend listens.
        QVERIFY(m_install.router->remove(u"web"_s));
        QVERIFY(m_install.router->ensure(u"web"_s, m_backend->port()));
        QVERIFY(m_install.router->setBackend(u"web"_s, u"127.0.0.1"_s, m_backend->port()));
    }

    void remoteSessionOpensThroughAForward()
    {
        RemoteSession session(QUrl(m_install.baseUrl()), m_install.tokens.value(u"operator"_s));
        session.open();
        QString why;
        QVERIFY2(test::awaitConnected(session, &why), qPrintable(why));
        auto app = test::awaitObject([&](auto done) { session.app(u"web"_s, done); });
        QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));

        AppLink link;
        QSignalSpy opened(&link, &AppLink::opened);
        link.setSession(&session);
        link.setApp(u"web"_s);
        link.setUrl(app->value(u"url"_s).toString());
        QVERIFY(link.isForwarded());
        QCOMPARE(link.through(), session.displayName());
        QCOMPARE(link.text(), AppLink::tr("Open through %1").arg(session.displayName()));
        QVERIFY2(link.toolTip().contains(link.url()), qPrintable(link.toolTip()));

        m_browser.opened.clear();
        link.open();
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 15000);
        QVERIFY2(link.error().isEmpty(), qPrintable(link.error()));
        const QUrl local = opened.first().first().toUrl();
        QCOMPARE(local.host(), u"127.0.0.1"_s);
        QVERIFY(local.port() > 0);
        QVERIFY(local.port() != m_backend->port());
        QCOMPARE(m_browser.opened, QList<QUrl>{local});
        QCOMPARE(link.text(), AppLink::tr("%1 through %2").arg(local.toString(), session.displayName()));

        // What the browser would get there is the app's answer, carried through the server.
        const QByteArray answer = fetch(local, "through the tunnel");
        QVERIFY2(answer.contains("X-Backend: web") && answer.endsWith("through the tunnel"), answer.constData());

        // A second click reuses the forward.
        link.open();
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 2, 15000);
        QCOMPARE(opened.at(1).first().toUrl(), local);
    }

    void refusalIsShown()
    {
        RemoteSession session(QUrl(m_install.baseUrl()), m_install.tokens.value(u"member2"_s));
        session.open();
        QString why;
        QVERIFY2(test::awaitConnected(session, &why), qPrintable(why));
        AppLink link;
        link.setSession(&session);
        link.setApp(u"web"_s);
        link.setUrl(u"http://127.0.0.1:1/"_s);
        QSignalSpy opened(&link, &AppLink::opened);
        link.open();
        QVERIFY(link.isOpening());
        QTRY_VERIFY_WITH_TIMEOUT(!link.isOpening(), 15000);
        QCOMPARE(opened.count(), 0);
        QVERIFY2(!link.error().isEmpty(), "no error for a refused app");
    }

    void thisComputerOpensTheAppsOwnUrl()
    {
        QTemporaryDir dir;
        auto session = startLocal(dir.path(), std::make_shared<test::FakeRouter>());
        QVERIFY(session);
        auto app = test::awaitObject([&](auto done) { session->createApp(test::helloSpec(u"mine"_s), done); });
        QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
        const QString url = app->value(u"url"_s).toString();
        QVERIFY(!url.isEmpty());

        AppLink link;
        QSignalSpy opened(&link, &AppLink::opened);
        link.setSession(session.get());
        link.setApp(u"mine"_s);
        link.setUrl(url);
        QVERIFY(!link.isForwarded());
        QCOMPARE(link.text(), url);
        link.open();
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 15000);
        QCOMPARE(opened.first().first().toUrl(), QUrl(url));
    }

    // The whole teammate story: this computer's engine serves teammates over TLS (the embedded
    // server), a teammate's RemoteSession pins its certificate, and the teammate's link opens the
    // app through a forward over that TLS connection.
    void teammateOfAnEmbeddedServerOpensTheApp()
    {
        QTemporaryDir dir;
        auto router = std::make_shared<test::FakeRouter>();
        auto local = startLocal(dir.path(), router);
        QVERIFY(local);
        auto created = test::awaitObject([&](auto done) { local->createApp(test::helloSpec(u"shared"_s), done); });
        QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
        QVERIFY(router->remove(u"shared"_s));
        QVERIFY(router->ensure(u"shared"_s, m_backend->port()));
        QVERIFY(router->setBackend(u"shared"_s, u"127.0.0.1"_s, m_backend->port()));

        std::optional<Result<InProcessSession::Serving>> serving;
        local->serveTeammates(QHostAddress::LocalHost, 0, {u"pando.test"_s},
                              [&](const Result<InProcessSession::Serving> &r) { serving = r; });
        QTRY_VERIFY_WITH_TIMEOUT(serving.has_value(), 20000);
        QVERIFY2(*serving, qPrintable(*serving ? QString() : (*serving).error().text()));

        // The desktop's owner stands in for a paired teammate: the token differs, the pinning not.
        QFile tokenFile(dir.filePath(u"desktop-token"_s));
        QVERIFY(tokenFile.open(QIODevice::ReadOnly));
        RemoteSession teammate(QUrl(u"https://127.0.0.1:%1"_s.arg((*serving)->port)),
                               QString::fromUtf8(tokenFile.readAll()).trimmed());
        teammate.setPinnedFingerprint((*serving)->fingerprint);
        teammate.open();
        QString why;
        QVERIFY2(test::awaitConnected(teammate, &why), qPrintable(why));
        auto app = test::awaitObject([&](auto done) { teammate.app(u"shared"_s, done); });
        QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));

        AppLink link;
        QSignalSpy opened(&link, &AppLink::opened);
        link.setSession(&teammate);
        link.setApp(u"shared"_s);
        link.setUrl(app->value(u"url"_s).toString());
        QVERIFY(link.isForwarded());
        QCOMPARE(link.through(), u"127.0.0.1:%1"_s.arg((*serving)->port));
        link.open();
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 15000);
        QVERIFY2(link.error().isEmpty(), qPrintable(link.error()));
        const QByteArray answer = fetch(opened.first().first().toUrl(), "from a teammate");
        QVERIFY2(answer.contains("X-Backend: web") && answer.endsWith("from a teammate"), answer.constData());
    }

    void cleanupTestCase() { QDesktopServices::unsetUrlHandler(u"http"_s); }

private:
    // This computer's engine over fakes, with router as its router; null when it did not connect.
    std::unique_ptr<InProcessSession> startLocal(const QString &dataDir, std::shared_ptr<test::FakeRouter> router)
    {
        InProcessOptions options;
        options.engine.dataDir = dataDir;
        options.engine.reconcileIntervalMs = 0;
        options.engine.healthTickMs = 0;
        options.engine.workers = 1;
        options.userName = u"owner"_s;
        options.runtime = std::make_shared<test::FakeRuntime>();
        options.router = std::move(router);
        options.source = std::make_shared<test::FakeSource>();
        options.services = std::make_shared<test::FakeServiceProvisioner>();
        options.installPipelines = [](core::Engine &engine) -> Status {
            engine.setPipelines(std::make_unique<test::FakePipelineService>(*engine.events()));
            return {};
        };
        auto session = std::make_unique<InProcessSession>(std::move(options));
        session->open();
        QString why;
        if (!test::awaitConnected(*session, &why)) {
            qWarning("this computer's engine did not connect: %s", qPrintable(why));
            return nullptr;
        }
        return session;
    }
};

QTEST_MAIN(TestAppLink)
#include "tst_applink.moc"
