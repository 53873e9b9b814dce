// The Activity view against a real API server (fake adapters) through RemoteSession: creating and
// deploying apps shows as lines newest first with their states, a failed deploy with its step and
// reason, step-level events stay out; the feed keeps its last ActivityModel::Limit lines; and
// ActivityView rendered offscreen at 1280×800 is saved under the build directory.

#include "app/desktop/session/remotesession.h"
#include "qml/activity/activitymodel.h"
#include "tests/app/desktop/session/screenshots.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QImage>
#include <QQmlEngine>
#include <QQuickStyle>
#include <QQuickView>
#include <QTest>
#include <QtQml/qqmlextensionplugin.h>

Q_IMPORT_QML_PLUGIN(Pando_ActivityPlugin)

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

class TestActivityModel : public QObject {
    Q_OBJECT

private:
    test::TestInstall m_install;
    std::unique_ptr<RemoteSession> m_session;

    QByteArray appSpec(const QString &name) const
    {
        return u"name: %1\nsource:\n  repo: https://git.example/%1.git\n  ref: main\nrun:\n  port: %2\n"
               u"health:\n  path: /api/v1/health\n"_s.arg(name)
                   .arg(m_install.port)
                   .toUtf8();
    }
    static QStringList titles(const ActivityModel &model)
    {
        QStringList out;
        for (int i = 0; i < model.rowCount(); ++i)
            out.append(model.index(i).data(ActivityModel::TitleRole).toString());
        return out;
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

    void linesFollowTheInstall()
    {
        ActivityModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(m_session.get());
        QCOMPARE(model.rowCount(), 0);

        auto app = test::awaitObject([&](auto done) { m_session->createApp(appSpec(u"hello"_s), done); });
        QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
        auto queued = test::awaitObject([&](auto done) { m_session->deploy(u"hello"_s, {}, done); });
        QVERIFY2(queued, qPrintable(queued ? QString() : queued.error().text()));
        QTRY_COMPARE_WITH_TIMEOUT(titles(model).value(0), u"hello: deploy succeeded"_s, 20000);
        // Newest first; the steps in between are the Deploys tab's, not the feed's.
        QCOMPARE(titles(model),
                 QStringList({u"hello: deploy succeeded"_s, u"hello: deploy queued"_s, u"hello was created"_s}));
        QCOMPARE(model.index(0).data(ActivityModel::StateRole).toInt(), int(DisplayState::Healthy));
        QCOMPARE(model.index(0).data(ActivityModel::TargetRole).toString(), queued->value(u"id"_s).toString());
        QCOMPARE(model.index(0).data(ActivityModel::AppRole).toString(), u"hello"_s);
        QVERIFY(!model.index(0).data(ActivityModel::TimeTextRole).toString().isEmpty());

        auto broken = test::awaitObject([&](auto done) { m_session->createApp(appSpec(u"buildfails"_s), done); });
        QVERIFY2(broken, qPrintable(broken ? QString() : broken.error().text()));
        QVERIFY(test::awaitObject([&](auto done) { m_session->deploy(u"buildfails"_s, {}, done); }));
        QTRY_VERIFY2_WITH_TIMEOUT(titles(model).value(0) == u"buildfails: deploy failed"_s,
                                  qPrintable(titles(model).join(u" / "_s)), 20000);
        QCOMPARE(model.index(0).data(ActivityModel::StateRole).toInt(), int(DisplayState::Failed));
        const QString detail = model.index(0).data(ActivityModel::DetailRole).toString();
        QVERIFY2(detail.startsWith(u"build failed: "_s) && detail.contains(u"RUN step exited with 1"_s),
                 qPrintable(detail));

        auto removed = test::awaitDone([&](auto done) { m_session->removeApp(u"buildfails"_s, done); });
        QVERIFY2(removed, qPrintable(removed ? QString() : removed.error().text()));
        QTRY_COMPARE_WITH_TIMEOUT(titles(model).value(0), u"buildfails was removed"_s, 20000);

        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void keepsItsLastLines()
    {
        ActivityModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(m_session.get());
        for (int i = 0; i < ActivityModel::Limit + 5; ++i)
            Q_EMIT m_session->eventReceived(QJsonObject{{u"type"_s, u"app.created"_s}, {u"app"_s, u"a%1"_s.arg(i)}});
        // And what is not the feed's: ignored.
        Q_EMIT m_session->eventReceived(QJsonObject{{u"type"_s, u"deploy.step"_s}, {u"app"_s, u"x"_s}});
        QCOMPARE(model.rowCount(), ActivityModel::Limit);
        QCOMPARE(titles(model).first(), u"a%1 was created"_s.arg(ActivityModel::Limit + 4));
        QCOMPARE(titles(model).last(), u"a5 was created"_s);
    }

    void screenshot()
    {
        ActivityModel model;
        model.setSession(m_session.get());
        Q_EMIT m_session->eventReceived(
            QJsonObject{{u"type"_s, u"deploy.failed"_s},
                        {u"app"_s, u"shop"_s},
                        {u"deploy"_s, u"d1"_s},
                        {u"data"_s, QJsonObject{{u"step"_s, u"health"_s}, {u"error"_s, u"GET / answered 502"_s}}}});
        Q_EMIT m_session->eventReceived(QJsonObject{{u"type"_s, u"deploy.succeeded"_s}, {u"app"_s, u"blog"_s}});
        QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
        QQuickStyle::setStyle(u"Fusion"_s);
        QQuickView view;
        QStringList warnings;
        connect(view.engine(), &QQmlEngine::warnings, this, [&](const QList<QQmlError> &list) {
            for (const QQmlError &e : list)
                warnings.append(e.toString());
        });
        view.engine()->addImportPath(u"qrc:/qt/qml"_s);
        view.setInitialProperties({{u"activityModel"_s, QVariant::fromValue<QObject *>(&model)}});
        view.setResizeMode(QQuickView::SizeRootObjectToView);
        view.setSource(QUrl(u"qrc:/qt/qml/Pando/Activity/ActivityView.qml"_s));
        QVERIFY2(view.status() == QQuickView::Ready, qPrintable(warnings.join(u'\n')));
        view.resize(1280, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTest::qWait(200);
        const QImage image = view.grabWindow();
        QVERIFY2(!test::saveScreenshot(image, u"desktop-activity"_s).isEmpty(), "the screenshot could not be saved");
        QCOMPARE(image.size() / image.devicePixelRatio(), QSize(1280, 800));
        // The failed line's red mark is on screen.
        int red = 0;
        const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
        for (int y = 0; y < rgb.height(); ++y)
            for (int x = 0; x < rgb.width(); ++x)
                red += qRed(rgb.pixel(x, y)) > 180 && qGreen(rgb.pixel(x, y)) < 90 && qBlue(rgb.pixel(x, y)) < 90;
        QVERIFY2(red > 20, qPrintable(u"%1 red pixels"_s.arg(red)));
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));
    }

    void cleanupTestCase() { m_session.reset(); }
};

QTEST_MAIN(TestActivityModel)
#include "tst_activitymodel.moc"
