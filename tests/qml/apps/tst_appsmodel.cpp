// AppsModel and DesktopState against a real API server (fake adapters) through RemoteSession: rows
// appear, change and go as apps are created, deployed and removed through the API, and the tray's
// overall state follows; AppCreator makes apps from the form's fields and from spec files, with
// bad input refused by field and nothing created; Remove takes an app away from its row.

#include "app/desktop/session/remotesession.h"
#include "app/desktop/shell/desktopstate.h"
#include "app/desktop/shell/trayicon.h"
#include "qml/apps/appcreator.h"
#include "qml/apps/appsmodel.h"
#include "qml/states/statestyle.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

class TestAppsModel : public QObject {
    Q_OBJECT

private:
    test::TestInstall m_install;
    std::unique_ptr<RemoteSession> m_session;

    QString cell(const AppsModel &model, const QString &app, int role)
    {
        const int row = model.rowOf(app);
        return row < 0 ? u"<no row>"_s : model.index(row).data(role).toString();
    }

    // An app whose health probe reaches the API server itself: the fake runtime's containers
    // "listen" on 127.0.0.1, so the deploy's health step needs something to answer there.
    QByteArray appSpec(const QString &name) const
    {
        return u"name: %1\nsource:\n  repo: https://git.example/%1.git\n  ref: main\nrun:\n  port: %2\n"
               u"health:\n  path: /api/v1/health\n"_s.arg(name)
                   .arg(m_install.port)
                   .toUtf8();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_install.start(), qPrintable(m_install.error));
        m_session = std::make_unique<RemoteSession>(QUrl(m_install.baseUrl()), m_install.token);
        m_session->open();
        QString why;
        QVERIFY2(test::awaitConnected(*m_session, &why), qPrintable(why));
    }

    void rowsFollowTheApi()
    {
        AppsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(m_session.get());
        QTRY_VERIFY(model.isLoaded());
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(model.isEngineReachable());

        // Created through the API, not through the model: the rows come from the event stream.
        auto hello = test::awaitObject([&](auto done) { m_session->createApp(appSpec(u"hello"_s), done); });
        QVERIFY2(hello, qPrintable(hello ? QString() : hello.error().text()));
        QTRY_COMPARE(model.rowCount(), 1);
        auto alpha = test::awaitObject([&](auto done) { m_session->createApp(appSpec(u"alpha"_s), done); });
        QVERIFY2(alpha, qPrintable(alpha ? QString() : alpha.error().text()));
        QTRY_COMPARE(model.rowCount(), 2);
        QCOMPARE(cell(model, u"alpha"_s, Qt::DisplayRole), u"alpha"_s);
        QCOMPARE(model.rowOf(u"alpha"_s), 0); // sorted by name
        QCOMPARE(model.index(model.rowOf(u"hello"_s)).data(AppsModel::StateRole).toInt(), int(DisplayState::Neutral));
        QCOMPARE(cell(model, u"hello"_s, AppsModel::LastDeployTextRole), AppsModel::tr("never deployed"));
        QCOMPARE(cell(model, u"hello"_s, AppsModel::RefRole), u"main"_s);

        // Selected rows keep their selection and their live values.
        model.setSelectedRow(model.rowOf(u"hello"_s));
        QCOMPARE(model.selected().value(u"name"_s).toString(), u"hello"_s);

        // Deploy from the model: progress shows in the row, then the finished deploy.
        QStringList progress;
        connect(&model, &QAbstractItemModel::dataChanged, this, [&] {
            const QString now = cell(model, u"hello"_s, AppsModel::ProgressRole);
            if (!now.isEmpty() && (progress.isEmpty() || progress.last() != now))
                progress.append(now);
        });
        model.deploy(model.rowOf(u"hello"_s));
        QVERIFY(model.index(model.rowOf(u"hello"_s)).data(AppsModel::BusyRole).toBool());
        QTRY_COMPARE_WITH_TIMEOUT(cell(model, u"hello"_s, AppsModel::LastDeployStatusRole), u"succeeded"_s, 20000);
        QTRY_COMPARE(model.index(model.rowOf(u"hello"_s)).data(AppsModel::StateRole).toInt(),
                     int(DisplayState::Healthy));
        QCOMPARE(model.index(model.rowOf(u"hello"_s)).data(AppsModel::BusyRole).toBool(), false);
        QCOMPARE(cell(model, u"hello"_s, AppsModel::StatusRole), u"running"_s);
        QVERIFY(!cell(model, u"hello"_s, AppsModel::LastDeployIdRole).isEmpty());
        QVERIFY(!cell(model, u"hello"_s, AppsModel::UrlRole).isEmpty());
        QCOMPARE(model.selected().value(u"status"_s).toString(), u"running"_s);
        // At least one step (fetch, build, ...) was shown while the deploy ran.
        QVERIFY2(progress.size() >= 2, qPrintable(progress.join(u" → "_s)));

        // Removed through the API: the row goes, and the selection with it.
        const int before = model.rowCount();
        auto removed = test::awaitDone([&](auto done) { m_session->removeApp(u"hello"_s, done); });
        QVERIFY2(removed, qPrintable(removed ? QString() : removed.error().text()));
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), before - 1, 20000);
        QCOMPARE(model.rowOf(u"hello"_s), -1);
        QCOMPARE(model.selectedRow(), -1);
    }

    // An answer asked for before app.removed can arrive after it (answers and the event stream
    // travel apart): it must not bring the removed app's row back. The removal's event is told
    // here while the answers are still on their way, as it can be when the remove job ends.
    void answersOlderThanARemovalDoNotBringTheRowBack()
    {
        AppsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(m_session.get());
        QTRY_VERIFY(model.isLoaded());
        auto app = test::awaitObject([&](auto done) { m_session->createApp(appSpec(u"fleeting"_s), done); });
        QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
        QTRY_VERIFY(model.rowOf(u"fleeting"_s) >= 0);
        const auto tell = [&](const QString &type) {
            Q_EMIT m_session->eventReceived(QJsonObject{{u"type"_s, type}, {u"app"_s, u"fleeting"_s}});
        };

        // A whole reload asked for before the removal.
        model.refresh();
        QVERIFY(model.isLoading());
        tell(u"app.removed"_s);
        QCOMPARE(model.rowOf(u"fleeting"_s), -1);
        QTRY_VERIFY(!model.isLoading());
        QCOMPARE(model.rowOf(u"fleeting"_s), -1);

        // One app's reload (an event about it) asked for before the removal; an answer asked for
        // after it, when it was created again, is shown.
        tell(u"app.created"_s);
        QTRY_VERIFY(model.rowOf(u"fleeting"_s) >= 0);
        tell(u"deploy.queued"_s);
        tell(u"app.removed"_s);
        QCOMPARE(model.rowOf(u"fleeting"_s), -1);
        model.refresh();
        QTRY_VERIFY(!model.isLoading());
        QVERIFY(model.rowOf(u"fleeting"_s) >= 0); // asked after the removal: the API's truth again
        tell(u"deploy.queued"_s);
        tell(u"app.removed"_s);
        QVERIFY(test::awaitObject([&](auto done) { m_session->app(u"fleeting"_s, done); }).has_value());
        QTest::qWait(100); // the reload's answer, asked first, is in by now
        QCOMPARE(model.rowOf(u"fleeting"_s), -1);

        QVERIFY(test::awaitDone([&](auto done) { m_session->removeApp(u"fleeting"_s, done); }));
        QTRY_VERIFY_WITH_TIMEOUT(!test::awaitObject([&](auto done) { m_session->app(u"fleeting"_s, done); }), 20000);
    }

    // A redeploy succeeds at the switch and retires the old version after it: the row said
    // "in progress · retiring the old version", with Deploy and Remove disabled, until a refresh.
    void redeployEndsIdleWithoutARefresh()
    {
        AppsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(m_session.get());
        QTRY_VERIFY(model.isLoaded());
        auto app = test::awaitObject([&](auto done) { m_session->createApp(appSpec(u"again"_s), done); });
        QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
        QTRY_VERIFY(model.rowOf(u"again"_s) >= 0);
        QString previous;
        for (int round = 0; round < 2; ++round) {
            model.deploy(model.rowOf(u"again"_s));
            QTRY_VERIFY_WITH_TIMEOUT(cell(model, u"again"_s, AppsModel::LastDeployIdRole) != previous &&
                                         cell(model, u"again"_s, AppsModel::LastDeployStatusRole) == u"succeeded"_s,
                                     20000);
            previous = cell(model, u"again"_s, AppsModel::LastDeployIdRole);
            // Every step, retire included, has finished within a moment of the switch.
            QTRY_COMPARE_WITH_TIMEOUT(model.index(model.rowOf(u"again"_s)).data(AppsModel::BusyRole).toBool(), false,
                                      5000);
            QTRY_COMPARE_WITH_TIMEOUT(cell(model, u"again"_s, AppsModel::ProgressRole), QString(), 5000);
            QCOMPARE(cell(model, u"again"_s, AppsModel::StatusTextRole), AppsModel::tr("running"));
        }
        // The order the engine sends, whatever the timing: deploy.succeeded at the switch, then
        // the retire step running and done. Retiring is said, but the app is not busy with it.
        const auto step = [&](const QString &status) {
            Q_EMIT m_session->eventReceived(
                QJsonObject{{u"type"_s, u"deploy.step"_s},
                            {u"app"_s, u"again"_s},
                            {u"deploy"_s, previous},
                            {u"data"_s, QJsonObject{{u"name"_s, u"retire"_s}, {u"status"_s, status}}}});
        };
        const auto busy = [&] {
            return model.index(model.rowOf(u"again"_s)).data(AppsModel::BusyRole).toBool();
        };
        step(u"running"_s);
        QCOMPARE(busy(), false);
        QCOMPARE(cell(model, u"again"_s, AppsModel::ProgressRole), AppsModel::tr("retiring the old version"));
        QCOMPARE(cell(model, u"again"_s, AppsModel::StatusTextRole), AppsModel::tr("running"));
        step(u"succeeded"_s);
        QCOMPARE(busy(), false);
        QCOMPARE(cell(model, u"again"_s, AppsModel::ProgressRole), QString());
        QVERIFY(test::awaitDone([&](auto done) { m_session->removeApp(u"again"_s, done); }));
        QTRY_COMPARE_WITH_TIMEOUT(model.rowOf(u"again"_s), -1, 20000);
    }

    void failedDeployShowsWhyAndTurnsTheTrayRed()
    {
        DesktopState state(m_session.get());
        AppsModel &model = *state.apps();
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QTRY_VERIFY(model.isLoaded());
        QTRY_COMPARE(state.overall(), DisplayState::Healthy);

        auto app = test::awaitObject([&](auto done) { m_session->createApp(appSpec(u"buildfails"_s), done); });
        QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
        QTRY_VERIFY(model.rowOf(u"buildfails"_s) >= 0);
        auto queued = test::awaitObject([&](auto done) { m_session->deploy(u"buildfails"_s, {}, done); });
        QVERIFY2(queued, qPrintable(queued ? QString() : queued.error().text()));
        QTRY_COMPARE_WITH_TIMEOUT(cell(model, u"buildfails"_s, AppsModel::LastDeployStatusRole), u"failed"_s, 20000);
        QTRY_COMPARE(state.overall(), DisplayState::Failed);
        QVERIFY2(cell(model, u"buildfails"_s, AppsModel::LastDeployErrorRole).contains(u"RUN step exited with 1"_s),
                 qPrintable(cell(model, u"buildfails"_s, AppsModel::LastDeployErrorRole)));
        QCOMPARE(StateStyle::shapeOf(state.overall()), u"noSign"_s); // the tray's icon draws this mark
        QCOMPARE(state.overallText(), DesktopState::tr("%n app(s) failing", nullptr, 1));

        // The tray's menu lists it, most recently deployed first.
        TrayIcon tray(&state);
        QCOMPARE(tray.recentApps().value(0), u"buildfails"_s);

        auto removed = test::awaitDone([&](auto done) { m_session->removeApp(u"buildfails"_s, done); });
        QVERIFY2(removed, qPrintable(removed ? QString() : removed.error().text()));
        QTRY_COMPARE_WITH_TIMEOUT(state.overall(), DisplayState::Healthy, 20000);
    }

    void refusedDeployStaysOnTheRow()
    {
        auto app = test::awaitObject([&](auto done) { m_session->createApp(appSpec(u"guarded"_s), done); });
        QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
        // A viewer reads the apps it holds a grant on (docs/security.md, "Reading").
        QVERIFY(m_install.engine->addGrant(core::authz::ObjectKind::App, u"guarded"_s, u"viewer"_s, u"viewer"_s,
                                           core::Actor::system(u"test"_s)));
        // A viewer may look but not deploy: the API's refusal lands on the row, and nothing runs.
        RemoteSession viewer(QUrl(m_install.baseUrl()), m_install.tokens.value(u"viewer"_s));
        viewer.open();
        QString why;
        QVERIFY2(test::awaitConnected(viewer, &why), qPrintable(why));
        AppsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(&viewer);
        QTRY_VERIFY(model.rowOf(u"guarded"_s) >= 0);
        model.deploy(model.rowOf(u"guarded"_s));
        QTRY_VERIFY(!cell(model, u"guarded"_s, AppsModel::ActionErrorRole).isEmpty());
        QCOMPARE(model.index(model.rowOf(u"guarded"_s)).data(AppsModel::BusyRole).toBool(), false);
        QCOMPARE(cell(model, u"guarded"_s, AppsModel::LastDeployIdRole), QString());
    }

    void createFromTheFormAndFromAFile()
    {
        AppsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(m_session.get());
        QTRY_VERIFY(model.isLoaded());
        AppCreator creator;
        creator.setSession(m_session.get());
        QSignalSpy created(&creator, &AppCreator::created);

        // What the form can tell at once never reaches the server.
        creator.createFromRepository(u"formapp"_s, u"  "_s, u"main"_s, 8080, false);
        QCOMPARE(creator.errorField(), u"source.repo"_s);
        creator.createFromRepository(u"formapp"_s, u"https://git.example/formapp.git"_s, u"main"_s, 65536, false);
        QCOMPARE(creator.errorField(), u"run.port"_s);
        // The server judges the name, and says which field it was.
        creator.createFromRepository(u"Bad Name!"_s, u"https://git.example/x.git"_s, u"main"_s, 8080, false);
        QTRY_VERIFY(!creator.isBusy());
        QCOMPARE(creator.errorField(), u"name"_s);
        QVERIFY2(!creator.error().isEmpty(), "a refusal says why");
        QVERIFY(created.isEmpty());

        // Created and deployed at once; the list selects it when it appears.
        creator.createFromRepository(u"formapp"_s, u"https://git.example/formapp.git"_s, u"main"_s, int(m_install.port),
                                     true);
        model.selectApp(u"formapp"_s);
        QTRY_COMPARE(created.size(), 1);
        QCOMPARE(created.first().at(0).toString(), u"formapp"_s);
        QCOMPARE(created.first().at(1).toBool(), true);
        QVERIFY2(creator.error().isEmpty(), qPrintable(creator.error()));
        QTRY_COMPARE(model.selected().value(u"name"_s).toString(), u"formapp"_s);
        // Its first deploy was queued. The form's spec has the default health check, which the
        // fake's address does not answer: cancelled, so that it holds up no worker.
        QTRY_VERIFY(!cell(model, u"formapp"_s, AppsModel::LastDeployIdRole).isEmpty());
        const QString deployId = cell(model, u"formapp"_s, AppsModel::LastDeployIdRole);
        discardResult(test::awaitDone([&](auto done) { m_session->cancelDeploy(deployId, done); }),
                      "the status below is what counts: the deploy may end before the cancel lands");
        QTRY_COMPARE_WITH_TIMEOUT(test::awaitObject([&](auto done) { m_session->deployDetail(deployId, done); })
                                      ->value(u"status"_s)
                                      .toString(),
                                  u"cancelled"_s, 20000);
        auto app = test::awaitObject([&](auto done) { m_session->app(u"formapp"_s, done); });
        QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
        QCOMPARE(app->value(u"spec"_s).toObject().value(u"source"_s).toObject().value(u"repo"_s).toString(),
                 u"https://git.example/formapp.git"_s);

        // From an image: what the form can tell at once, then an app whose spec names the image.
        creator.createFromImage(u"imageapp"_s, u" "_s, 0, false);
        QCOMPARE(creator.errorField(), u"source.image"_s);
        creator.createFromImage(u"imageapp"_s, u"Not An Image"_s, 0, false);
        QTRY_VERIFY(!creator.isBusy());
        QVERIFY2(creator.errorField().startsWith(u"source.image"_s), qPrintable(creator.error()));
        creator.createFromImage(u"imageapp"_s, u"ghcr.io/acme/web:2.1"_s, 8080, false);
        QTRY_COMPARE(created.size(), 2);
        QCOMPARE(created.last().at(0).toString(), u"imageapp"_s);
        auto imageApp = test::awaitObject([&](auto done) { m_session->app(u"imageapp"_s, done); });
        QVERIFY2(imageApp, qPrintable(imageApp ? QString() : imageApp.error().text()));
        QCOMPARE(imageApp->value(u"spec"_s).toObject().value(u"source"_s).toObject(),
                 QJsonObject({{u"image"_s, u"ghcr.io/acme/web:2.1"_s}, {u"pull"_s, u"auto"_s}}));

        // From a file: a spec with a mistake names the file and the field; then a good one.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString bad = dir.filePath(u"bad.yaml"_s);
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("name: fileapp\nsource:\n  repo: https://git.example/fileapp.git\nrun:\n  port: eighty\n");
        f.close();
        creator.createFromFile(QUrl::fromLocalFile(bad).toString(), false);
        QTRY_VERIFY(!creator.isBusy());
        QVERIFY2(creator.error().startsWith(u"bad.yaml: "_s), qPrintable(creator.error()));
        QVERIFY2(creator.error().contains(u"run.port"_s), qPrintable(creator.error()));
        QVERIFY(test::awaitObject([&](auto done) { m_session->app(u"fileapp"_s, done); }).error().code ==
                ErrorCode::NotFound);
        creator.createFromFile(dir.filePath(u"missing.yaml"_s), false);
        QVERIFY2(creator.error().contains(u"missing.yaml"_s), qPrintable(creator.error()));
        const QString good = dir.filePath(u"good.yaml"_s);
        QFile g(good);
        QVERIFY(g.open(QIODevice::WriteOnly));
        g.write(appSpec(u"fileapp"_s));
        g.close();
        creator.createFromFile(good, false);
        QTRY_COMPARE(created.size(), 3);
        QCOMPARE(created.last().at(1).toBool(), false);
        QTRY_VERIFY(model.rowOf(u"fileapp"_s) >= 0);
        QCOMPARE(cell(model, u"fileapp"_s, AppsModel::LastDeployIdRole), QString());

        // Remove from the row: it is busy while the teardown runs, then gone.
        model.remove(model.rowOf(u"fileapp"_s));
        QTRY_COMPARE_WITH_TIMEOUT(model.rowOf(u"fileapp"_s), -1, 20000);
        QVERIFY(test::awaitObject([&](auto done) { m_session->app(u"fileapp"_s, done); }).error().code ==
                ErrorCode::NotFound);
    }

    void refusedRemoveStaysOnTheRow()
    {
        // A viewer reads the apps it holds a grant on (docs/security.md, "Reading").
        QVERIFY(m_install.engine->addGrant(core::authz::ObjectKind::App, u"formapp"_s, u"viewer"_s, u"viewer"_s,
                                           core::Actor::system(u"test"_s)));
        RemoteSession viewer(QUrl(m_install.baseUrl()), m_install.tokens.value(u"viewer"_s));
        viewer.open();
        QString why;
        QVERIFY2(test::awaitConnected(viewer, &why), qPrintable(why));
        AppsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(&viewer);
        QTRY_VERIFY(model.rowOf(u"formapp"_s) >= 0);
        model.remove(model.rowOf(u"formapp"_s));
        QTRY_VERIFY(!cell(model, u"formapp"_s, AppsModel::ActionErrorRole).isEmpty());
        QCOMPARE(model.index(model.rowOf(u"formapp"_s)).data(AppsModel::BusyRole).toBool(), false);
        QVERIFY(test::awaitObject([&](auto done) { m_session->app(u"formapp"_s, done); }).has_value());
    }

    void lostConnectionSaysSo()
    {
        RemoteSession nowhere(QUrl(u"http://127.0.0.1:1"_s), u"nothing"_s);
        AppsModel model;
        model.setSession(&nowhere);
        QVERIFY(!model.isEngineReachable());
        nowhere.open();
        QTRY_VERIFY(nowhere.state() != Session::State::Disconnected);
        QTRY_VERIFY_WITH_TIMEOUT(!nowhere.failure().message.isEmpty(), 20000);
        QVERIFY2(model.engineText().contains(nowhere.failure().message), qPrintable(model.engineText()));
    }

    // An app whose container runs but whose health path answers 503: a failure in the row, with
    // the word "unhealthy" and what the probe got; healthy again when it answers.
    void unhealthyAppShowsWhy()
    {
        QTcpServer server;
        bool failing = false;
        connect(&server, &QTcpServer::newConnection, &server, [&] {
            while (QTcpSocket *socket = server.nextPendingConnection()) {
                connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
                connect(socket, &QTcpSocket::readyRead, socket, [&failing, socket] {
                    socket->readAll();
                    socket->write(failing ? "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n"
                                          : "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                    socket->disconnectFromHost();
                });
            }
        });
        QVERIFY(server.listen(QHostAddress::LocalHost, 0));
        test::TestInstall install;
        install.healthTickMs = 50;
        QVERIFY2(install.start(), qPrintable(install.error));
        RemoteSession session(QUrl(install.baseUrl()), install.token);
        session.open();
        QString why;
        QVERIFY2(test::awaitConnected(session, &why), qPrintable(why));
        AppsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(&session);
        QTRY_VERIFY(model.isLoaded());
        const QByteArray spec = u"name: sick\nsource:\n  repo: https://git.example/sick.git\nrun:\n  port: %1\n"
                                u"  restart: never\nhealth:\n  every: 100ms\n  failures: 1\n"_s.arg(server.serverPort())
                                    .toUtf8();
        QVERIFY(test::awaitObject([&](auto done) { session.createApp(spec, done); }));
        QTRY_VERIFY(model.rowOf(u"sick"_s) >= 0);
        model.deploy(model.rowOf(u"sick"_s));
        QTRY_COMPARE_WITH_TIMEOUT(cell(model, u"sick"_s, AppsModel::StatusRole), u"running"_s, 20000);
        failing = true;
        QTRY_COMPARE_WITH_TIMEOUT(cell(model, u"sick"_s, AppsModel::StatusRole), u"unhealthy"_s, 5000);
        QCOMPARE(model.index(model.rowOf(u"sick"_s)).data(AppsModel::StateRole).toInt(), int(DisplayState::Failed));
        QCOMPARE(cell(model, u"sick"_s, AppsModel::StatusTextRole), AppsModel::tr("unhealthy"));
        QCOMPARE(cell(model, u"sick"_s, AppsModel::StatusReasonRole), u"GET / answered 503"_s);
        failing = false;
        QTRY_COMPARE_WITH_TIMEOUT(cell(model, u"sick"_s, AppsModel::StatusRole), u"running"_s, 5000);
        QCOMPARE(cell(model, u"sick"_s, AppsModel::StatusReasonRole), QString());
    }

    void cleanupTestCase() { m_session.reset(); }
};

QTEST_MAIN(TestAppsModel)
#include "tst_appsmodel.moc"
