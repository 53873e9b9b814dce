// The Deploys tab against a real API server (fake adapters) through RemoteSession: the history
// and the step timeline follow a deploy live, a failed build opens on its failing step with the
// reason, the durations chart plots finished deploys and fits its axes, and DeploysView rendered
// offscreen at 1280×800 is saved under the build directory.

#include "app/desktop/session/remotesession.h"
#include "qml/deploys/deploydurations.h"
#include "qml/deploys/deploysmodel.h"
#include "qml/deploys/deploystepsmodel.h"
#include "tests/app/desktop/session/screenshots.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"
#include "tests/support/laterclock.h"

#include <QAbstractItemModelTester>
#include <QChart>
#include <QDateTimeAxis>
#include <QDir>
#include <QImage>
#include <QQmlEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickView>
#include <QScatterSeries>
#include <QSet>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTest>
#include <QValueAxis>
#include <QtQml/qqmlextensionplugin.h>

Q_IMPORT_QML_PLUGIN(Pando_DeploysPlugin)

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

class TestDeploysModel : public QObject {
    Q_OBJECT

private:
    test::LaterClock m_clock;
    test::TestInstall m_install;
    std::unique_ptr<RemoteSession> m_session;

    QByteArray appSpec(const QString &name) const
    {
        return u"name: %1\nsource:\n  repo: https://git.example/%1.git\n  ref: main\nrun:\n  port: %2\n"
               u"health:\n  path: /api/v1/health\n"_s.arg(name)
                   .arg(m_install.port)
                   .toUtf8();
    }

    // The viewer's session, given a viewer grant on app (docs/security.md, "Reading"); null when
    // either fails.
    std::unique_ptr<RemoteSession> viewerOf(const QString &app)
    {
        if (!m_install.engine->addGrant(core::authz::ObjectKind::App, app, u"viewer"_s, u"viewer"_s,
                                        core::Actor::system(u"test"_s)))
            return nullptr;
        auto viewer = std::make_unique<RemoteSession>(QUrl(m_install.baseUrl()), m_install.tokens.value(u"viewer"_s));
        viewer->open();
        QString why;
        if (!test::awaitConnected(*viewer, &why)) {
            qWarning("the viewer's session: %s", qPrintable(why));
            return nullptr;
        }
        return viewer;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_install.clock = &m_clock;
        QVERIFY2(m_install.start(), qPrintable(m_install.error));
        m_session = std::make_unique<RemoteSession>(QUrl(m_install.baseUrl()), m_install.token);
        m_session->open();
        QString why;
        QVERIFY2(test::awaitConnected(*m_session, &why), qPrintable(why));
    }

    void splitsTheHint()
    {
        const auto [reason, hint] = splitHint(u"no Dockerfile (hint: add one or set build.image)"_s);
        QCOMPARE(reason, u"no Dockerfile"_s);
        QCOMPARE(hint, u"add one or set build.image"_s);
        QCOMPARE(splitHint(u"plain reason"_s).second, QString());
        QCOMPARE(DisplayState::ofDeployStep(u"waiting"_s), DisplayState::Waiting);
        QCOMPARE(DisplayState::ofDeploy(u"rejected"_s), DisplayState::Failed);
    }

    void stepsArriveLive()
    {
        auto app = test::awaitObject([&](auto done) { m_session->createApp(appSpec(u"hello"_s), done); });
        QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));

        DeploysModel deploys;
        QAbstractItemModelTester deploysTester(&deploys, QAbstractItemModelTester::FailureReportingMode::QtTest);
        deploys.setSession(m_session.get());
        deploys.setApp(u"hello"_s);
        DeployStepsModel steps;
        QAbstractItemModelTester stepsTester(&steps, QAbstractItemModelTester::FailureReportingMode::QtTest);
        steps.setSession(m_session.get());
        // The timeline is pointed at the deploy as soon as the event stream announces it, so every
        // step after that reaches it as a deploy.step event while the deploy runs.
        connect(m_session.get(), &Session::eventReceived, &steps, [&](const QJsonObject &event) {
            if (event.value(u"type"_s).toString() == u"deploy.queued"_s &&
                event.value(u"app"_s).toString() == u"hello"_s)
                steps.setDeployId(event.value(u"deploy"_s).toString());
        });
        QTRY_VERIFY(!deploys.isLoading());
        QCOMPARE(deploys.rowCount(), 0);

        // What the timeline showed while the deploy ran: a step in progress, at some point.
        QStringList seen;
        auto record = [&] {
            for (int i = 0; i < steps.rowCount(); ++i) {
                const QString s = steps.index(i).data(DeployStepsModel::NameRole).toString() + u':' +
                                  steps.index(i).data(DeployStepsModel::StatusRole).toString();
                if (!seen.contains(s))
                    seen.append(s);
            }
        };
        connect(&steps, &QAbstractItemModel::rowsInserted, this, record);
        connect(&steps, &QAbstractItemModel::dataChanged, this, record);

        auto queued = test::awaitObject([&](auto done) { m_session->deploy(u"hello"_s, {}, done); });
        QVERIFY2(queued, qPrintable(queued ? QString() : queued.error().text()));
        const QString id = queued->value(u"id"_s).toString();
        QTRY_COMPARE(deploys.rowCount(), 1);
        QTRY_COMPARE(deploys.selectedId(), id);
        QCOMPARE(steps.deployId(), id);
        QTRY_COMPARE_WITH_TIMEOUT(steps.status(), u"succeeded"_s, 20000);
        QTRY_COMPARE(deploys.index(0).data(DeploysModel::StatusRole).toString(), u"succeeded"_s);
        QCOMPARE(deploys.index(0).data(DeploysModel::StateRole).toInt(), int(DisplayState::Healthy));
        QCOMPARE(deploys.index(0).data(DeploysModel::RefRole).toString(), u"main"_s);

        QVERIFY(steps.rowOf(u"fetch"_s) >= 0);
        QVERIFY(steps.rowOf(u"build"_s) > steps.rowOf(u"fetch"_s));
        QVERIFY(steps.rowOf(u"health"_s) > steps.rowOf(u"build"_s));
        for (int i = 0; i < steps.rowCount(); ++i) {
            QCOMPARE(steps.index(i).data(DeployStepsModel::StatusRole).toString(), u"succeeded"_s);
            QVERIFY(steps.index(i).data(DeployStepsModel::DurationMsRole).toLongLong() >= 0);
            const double fraction = steps.index(i).data(DeployStepsModel::FractionRole).toDouble();
            QVERIFY2(fraction >= 0.0 && fraction <= 1.0, qPrintable(QString::number(fraction)));
        }
        // A detail loaded after the end shows only finished steps: a running one came from an event.
        QVERIFY2(std::any_of(seen.cbegin(), seen.cend(), [](const QString &s) { return s.endsWith(u":running"_s); }),
                 qPrintable(seen.join(u", "_s)));
        QCOMPARE(steps.reason(), QString());
        QCOMPARE(steps.selectedRow(), -1); // nothing failed or waits: nothing to point at
    }

    void runningStepTicks()
    {
        DeployStepsModel steps;
        QAbstractItemModelTester tester(&steps, QAbstractItemModelTester::FailureReportingMode::QtTest);
        qint64 now = 10'000;
        steps.setClock([&now] { return now; });
        steps.setDeployId(u"d-tick"_s);
        steps.setSession(m_session.get());
        // A deploy.step event for the deploy shown, as the event stream delivers it.
        Q_EMIT m_session->eventReceived(QJsonObject{{u"type"_s, u"deploy.step"_s},
                                                    {u"app"_s, u"x"_s},
                                                    {u"deploy"_s, u"d-tick"_s},
                                                    {u"data"_s, QJsonObject{{u"seq"_s, 1},
                                                                            {u"name"_s, u"build"_s},
                                                                            {u"status"_s, u"running"_s},
                                                                            {u"started_ms"_s, 4'000},
                                                                            {u"finished_ms"_s, 0}}}});
        QCOMPARE(steps.rowCount(), 1);
        QCOMPARE(steps.index(0).data(DeployStepsModel::DurationMsRole).toLongLong(), 6'000);
        QCOMPARE(steps.selectedRow(), 0);
        QSignalSpy ticked(&steps, &QAbstractItemModel::dataChanged);
        now = 12'500;
        QVERIFY(ticked.wait(2000));
        QCOMPARE(steps.index(0).data(DeployStepsModel::DurationMsRole).toLongLong(), 8'500);
    }

    // A detail asked for while a step ran can answer after the step's end arrived as an event:
    // the late report must not show the ended step as running again.
    void anEndedStepStaysEnded()
    {
        DeployStepsModel steps;
        QAbstractItemModelTester tester(&steps, QAbstractItemModelTester::FailureReportingMode::QtTest);
        steps.setDeployId(u"d-late"_s);
        steps.setSession(m_session.get());
        const auto report = [&](const QString &status, qint64 finished) {
            Q_EMIT m_session->eventReceived(QJsonObject{{u"type"_s, u"deploy.step"_s},
                                                        {u"app"_s, u"x"_s},
                                                        {u"deploy"_s, u"d-late"_s},
                                                        {u"data"_s, QJsonObject{{u"seq"_s, 1},
                                                                                {u"name"_s, u"fetch"_s},
                                                                                {u"status"_s, status},
                                                                                {u"started_ms"_s, 4'000},
                                                                                {u"finished_ms"_s, finished}}}});
        };
        report(u"running"_s, 0);
        QCOMPARE(steps.index(0).data(DeployStepsModel::StatusRole).toString(), u"running"_s);
        report(u"succeeded"_s, 5'000);
        report(u"running"_s, 0);
        QCOMPARE(steps.rowCount(), 1);
        QCOMPARE(steps.index(0).data(DeployStepsModel::StatusRole).toString(), u"succeeded"_s);
        QCOMPARE(steps.index(0).data(DeployStepsModel::DurationMsRole).toLongLong(), 1'000);
    }

    // The selected build step shows each line as the build prints it (the deploy's log follow),
    // before the build is over, and each line once when it is.
    void aRunningBuildShowsItsLinesAsPrinted()
    {
        auto app = test::awaitObject([&](auto done) { m_session->createApp(appSpec(u"slowbuild"_s), done); });
        QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
        auto queued = test::awaitObject([&](auto done) { m_session->deploy(u"slowbuild"_s, {}, done); });
        QVERIFY2(queued, qPrintable(queued ? QString() : queued.error().text()));

        DeployStepsModel steps;
        QAbstractItemModelTester tester(&steps, QAbstractItemModelTester::FailureReportingMode::QtTest);
        steps.setSession(m_session.get());
        steps.setDeployId(queued->value(u"id"_s).toString());
        QTRY_VERIFY_WITH_TIMEOUT(steps.rowOf(u"build"_s) >= 0, 10000);
        steps.setSelectedRow(steps.rowOf(u"build"_s));
        const QString first = u"Step 1/2 : FROM pando/busybox:latest"_s;
        QTRY_COMPARE_WITH_TIMEOUT(steps.selectedLog(), QStringList{first}, 10000);
        QCOMPARE(steps.index(steps.rowOf(u"build"_s)).data(DeployStepsModel::StatusRole).toString(), u"running"_s);

        m_install.runtime->releaseBuild();
        QTRY_COMPARE_WITH_TIMEOUT(steps.status(), u"succeeded"_s, 20000);
        QTRY_COMPARE(steps.selectedLog(), QStringList({first, u"Step 2/2 : COPY . /srv"_s}));
        QTest::qWait(300); // a late read after the step's end adds nothing
        QCOMPARE(steps.selectedLog().size(), 2);
        QCOMPARE(steps.selectedLogError(), QString());
    }

    void failedBuildOpensOnTheBuildStep()
    {
        auto app = test::awaitObject([&](auto done) { m_session->createApp(appSpec(u"buildfails"_s), done); });
        QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
        auto queued = test::awaitObject([&](auto done) { m_session->deploy(u"buildfails"_s, {}, done); });
        QVERIFY2(queued, qPrintable(queued ? QString() : queued.error().text()));

        DeploysModel deploys;
        QAbstractItemModelTester tester(&deploys, QAbstractItemModelTester::FailureReportingMode::QtTest);
        deploys.setSession(m_session.get());
        deploys.setApp(u"buildfails"_s);
        QTRY_COMPARE_WITH_TIMEOUT(deploys.index(0).data(DeploysModel::StatusRole).toString(), u"failed"_s, 20000);
        QCOMPARE(deploys.index(0).data(DeploysModel::FailedStepRole).toString(), u"build"_s);
        QVERIFY(deploys.index(0).data(DeploysModel::ReasonRole).toString().contains(u"RUN step exited with 1"_s));

        // Opened afterwards, as a user clicking the failed deploy: the build step is selected.
        DeployStepsModel steps;
        QAbstractItemModelTester stepsTester(&steps, QAbstractItemModelTester::FailureReportingMode::QtTest);
        steps.setSession(m_session.get());
        steps.setDeployId(deploys.selectedId());
        QTRY_VERIFY(steps.rowOf(u"build"_s) >= 0);
        QTRY_COMPARE(steps.selectedRow(), steps.rowOf(u"build"_s));
        QCOMPARE(steps.failedStep(), u"build"_s);
        QCOMPARE(steps.state(), int(DisplayState::Failed));
        QVERIFY2(steps.reason().contains(u"RUN step exited with 1"_s), qPrintable(steps.reason()));
        QCOMPARE(steps.index(steps.rowOf(u"build"_s)).data(DeployStepsModel::StateRole).toInt(),
                 int(DisplayState::Failed));
    }

    void redeployAPreviousVersion()
    {
        // hello was deployed once (stepsArriveLive): deploy its commit again from the history.
        DeploysModel deploys;
        QAbstractItemModelTester tester(&deploys, QAbstractItemModelTester::FailureReportingMode::QtTest);
        deploys.setSession(m_session.get());
        deploys.setApp(u"hello"_s);
        QTRY_COMPARE(deploys.rowCount(), 1);
        const QString first = deploys.index(0).data(DeploysModel::IdRole).toString();
        const QString commit = deploys.index(0).data(DeploysModel::CommitRole).toString();
        QVERIFY(!commit.isEmpty());
        QCOMPARE(deploys.selectedCommit(), commit);
        deploys.redeploy(0);
        QTRY_COMPARE(deploys.rowCount(), 2);
        // The new deploy is selected, asked for by commit, and it succeeds.
        QTRY_VERIFY(deploys.selectedId() != first);
        QCOMPARE(deploys.selectedRow(), 0);
        QCOMPARE(deploys.index(0).data(DeploysModel::RefRole).toString(), commit);
        QTRY_COMPARE_WITH_TIMEOUT(deploys.index(0).data(DeploysModel::StatusRole).toString(), u"succeeded"_s, 20000);
        QCOMPARE(deploys.index(0).data(DeploysModel::CommitRole).toString(), commit);
        QVERIFY(deploys.actionError().isEmpty());

        // A viewer's redeploy is refused with the reason, and nothing is queued.
        auto viewer = viewerOf(u"hello"_s);
        QVERIFY(viewer);
        DeploysModel seen;
        seen.setSession(viewer.get());
        seen.setApp(u"hello"_s);
        QTRY_COMPARE(seen.rowCount(), 2);
        seen.redeploy(1);
        QTRY_VERIFY(!seen.actionError().isEmpty());
        QTest::qWait(200);
        QCOMPARE(deploys.rowCount(), 2);
    }

    // A deploy that has not ended can be cancelled from its row; one that ended cannot, and a
    // viewer's cancel is refused with the reason.
    void cancelARunningDeploy()
    {
        // Its health check waits on a path nobody answers, for a minute: time enough to cancel it.
        const QByteArray spec = u"name: stuck\nsource:\n  repo: https://git.example/stuck.git\nrun:\n  port: %1\n"
                                u"health:\n  path: /no-such-path\n  timeout: 60s\n"_s.arg(m_install.port)
                                    .toUtf8();
        auto app = test::awaitObject([&](auto done) { m_session->createApp(spec, done); });
        QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
        DeploysModel deploys;
        deploys.setSession(m_session.get());
        deploys.setApp(u"stuck"_s);
        QTRY_VERIFY(!deploys.isLoading());
        auto queued = test::awaitObject([&](auto done) { m_session->deploy(u"stuck"_s, {}, done); });
        QVERIFY2(queued, qPrintable(queued ? QString() : queued.error().text()));
        QTRY_COMPARE(deploys.rowCount(), 1);
        deploys.setSelectedRow(0);
        QTRY_COMPARE(deploys.index(0).data(DeploysModel::StatusRole).toString(), u"running"_s);
        QVERIFY(deploys.selectedCancellable());

        auto viewer = viewerOf(u"stuck"_s);
        QVERIFY(viewer);
        DeploysModel seen;
        seen.setSession(viewer.get());
        seen.setApp(u"stuck"_s);
        QTRY_COMPARE(seen.rowCount(), 1);
        seen.cancel(0);
        QTRY_VERIFY(!seen.actionError().isEmpty());
        QCOMPARE(deploys.index(0).data(DeploysModel::StatusRole).toString(), u"running"_s);

        deploys.cancel(0);
        QTRY_COMPARE_WITH_TIMEOUT(deploys.index(0).data(DeploysModel::StatusRole).toString(), u"cancelled"_s, 20000);
        QVERIFY(deploys.actionError().isEmpty());
        QVERIFY(!deploys.selectedCancellable());
        deploys.cancel(0); // ended: refused, and said
        QTRY_VERIFY(deploys.actionError().contains(u"already cancelled"_s));
    }

    void durationsChart()
    {
        // Newest first, as DeploysModel: a running deploy and a queued one are not plotted.
        QStandardItemModel model;
        auto add = [&model](DisplayState::Value state, qint64 createdMs, qint64 durationMs) {
            auto *item = new QStandardItem;
            item->setData(int(state), DeploysModel::StateRole);
            item->setData(createdMs, DeploysModel::CreatedMsRole);
            item->setData(durationMs, DeploysModel::DurationMsRole);
            model.appendRow(item);
        };
        const qint64 t0 = 1'700'000'000'000;
        add(DisplayState::Progress, t0 + 300'000, 1'000);
        add(DisplayState::Failed, t0 + 200'000, 4'000);
        add(DisplayState::Healthy, t0 + 100'000, 12'000);
        add(DisplayState::Healthy, t0, 8'000);

        QChart chart;
        auto *ok = new QScatterSeries;
        auto *bad = new QScatterSeries;
        auto *time = new QDateTimeAxis;
        auto *seconds = new QValueAxis;
        chart.addSeries(ok);
        chart.addSeries(bad);
        chart.addAxis(time, Qt::AlignBottom);
        chart.addAxis(seconds, Qt::AlignLeft);
        for (QXYSeries *s : {static_cast<QXYSeries *>(ok), static_cast<QXYSeries *>(bad)}) {
            s->attachAxis(time);
            s->attachAxis(seconds);
        }
        DeployDurations durations;
        durations.setSucceeded(ok);
        durations.setFailed(bad);
        durations.setModel(&model);
        QCOMPARE(durations.points(), 3);
        QCOMPARE(ok->points(), QList<QPointF>({QPointF(t0, 8.0), QPointF(t0 + 100'000, 12.0)}));
        QCOMPARE(bad->points(), QList<QPointF>({QPointF(t0 + 200'000, 4.0)}));
        QVERIFY(time->min().toMSecsSinceEpoch() < t0);
        QVERIFY(time->max().toMSecsSinceEpoch() > t0 + 200'000);
        QCOMPARE(seconds->min(), 0.0);
        QVERIFY(seconds->max() > 12.0);
        QCOMPARE(seconds->labelFormat(), u"%.0f s"_s);
        QCOMPARE(time->format(), u"hh:mm:ss"_s); // 200 s apart

        // The running deploy finishes: it is plotted at once.
        model.item(0)->setData(int(DisplayState::Healthy), DeploysModel::StateRole);
        QCOMPARE(durations.points(), 4);
        QCOMPARE(ok->points().last(), QPointF(t0 + 300'000, 1.0));
        model.removeRows(0, 4);
        QCOMPARE(durations.points(), 0);
        QVERIFY(ok->points().isEmpty() && bad->points().isEmpty());
    }

    void screenshot()
    {
        // Two more failed deploys of the app shown: the durations chart has points to draw.
        for (int i = 0; i < 2; ++i) {
            auto queued = test::awaitObject([&](auto done) { m_session->deploy(u"buildfails"_s, {}, done); });
            QVERIFY2(queued, qPrintable(queued ? QString() : queued.error().text()));
            const QString id = queued->value(u"id"_s).toString();
            QTRY_COMPARE_WITH_TIMEOUT(
                test::awaitObject([&](auto done) { m_session->deployDetail(id, done); })->value(u"status"_s).toString(),
                u"failed"_s, 20000);
        }
        QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
        QQuickStyle::setStyle(u"Fusion"_s);
        QQuickView view;
        QStringList warnings;
        connect(view.engine(), &QQmlEngine::warnings, this, [&](const QList<QQmlError> &list) {
            for (const QQmlError &e : list)
                warnings.append(e.toString());
        });
        view.engine()->addImportPath(u"qrc:/qt/qml"_s);
        view.setInitialProperties(
            {{u"session"_s, QVariant::fromValue<QObject *>(m_session.get())}, {u"app"_s, u"buildfails"_s}});
        view.setResizeMode(QQuickView::SizeRootObjectToView);
        view.setSource(QUrl(u"qrc:/qt/qml/Pando/Deploys/DeploysView.qml"_s));
        QVERIFY2(view.status() == QQuickView::Ready, qPrintable(warnings.join(u'\n')));
        view.resize(1280, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTest::qWait(1500); // the history and the timeline load over the API
        const QImage image = view.grabWindow();
        QVERIFY2(!test::saveScreenshot(image, u"desktop-deploys"_s).isEmpty(), "the screenshot could not be saved");
        QCOMPARE(image.size() / image.devicePixelRatio(), QSize(1280, 800));
        const int colours = test::distinctColours(image);
        QVERIFY2(colours > 16, qPrintable(u"only %1 colours"_s.arg(colours)));
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));
        auto *chart = view.rootObject()->findChild<QQuickItem *>(u"durationsChart"_s);
        QVERIFY(chart);
        QVERIFY(chart->isVisible());
    }

    // Last: it moves the install's clock on. A step whose output was removed after the install's
    // retention says so, instead of showing no output.
    void removedOutputSaysWhy()
    {
        DeploysModel deploys;
        deploys.setSession(m_session.get());
        deploys.setApp(u"buildfails"_s);
        QTRY_COMPARE_WITH_TIMEOUT(deploys.index(0).data(DeploysModel::StatusRole).toString(), u"failed"_s, 20000);
        m_clock.advance(91LL * 24 * 60 * 60 * 1000);
        auto swept = m_install.engine->sweepDeployLogs();
        QVERIFY2(swept && swept->removed >= 1, qPrintable(swept ? QString() : swept.error().text()));

        DeployStepsModel steps;
        steps.setSession(m_session.get());
        steps.setDeployId(deploys.selectedId());
        QTRY_COMPARE(steps.selectedRow(), steps.rowOf(u"build"_s));
        QTRY_VERIFY(!steps.selectedLogError().isEmpty());
        QVERIFY2(steps.selectedLogError().contains(u"was removed on"_s), qPrintable(steps.selectedLogError()));
        QVERIFY(steps.selectedLog().isEmpty());
    }

    void cleanupTestCase() { m_session.reset(); }
};

QTEST_MAIN(TestDeploysModel)
#include "tst_deploysmodel.moc"
