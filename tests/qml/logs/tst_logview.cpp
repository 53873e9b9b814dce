// The Logs tab against a real API server (fake adapters; the fake runtime's container wrote one
// line before anyone looked and writes another while followed) through RemoteSession:
// AppLogSource fills a LogModel from one follow stream, history then live; styled text for both palettes; copy; and
// LogView rendered offscreen at 1280×800, saved under the build directory.

#include "app/desktop/session/remotesession.h"
#include "qml/logs/applogsource.h"
#include "tests/app/desktop/session/screenshots.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"

#include <QAbstractItemModelTester>
#include <QClipboard>
#include <QDir>
#include <QGuiApplication>
#include <QImage>
#include <QQmlEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickView>
#include <QSet>
#include <QSignalSpy>
#include <QTest>
#include <QtQml/qqmlextensionplugin.h>

Q_IMPORT_QML_PLUGIN(Pando_LogsPlugin)

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

class TestLogView : public QObject {
    Q_OBJECT

private:
    test::TestInstall m_install;
    std::unique_ptr<RemoteSession> m_session;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(m_install.start(), qPrintable(m_install.error));
        m_session = std::make_unique<RemoteSession>(QUrl(m_install.baseUrl()), m_install.token);
        m_session->open();
        QString why;
        QVERIFY2(test::awaitConnected(*m_session, &why), qPrintable(why));
        const QByteArray spec = u"name: hello\nsource:\n  repo: https://git.example/hello.git\n  ref: main\nrun:\n"
                                u"  port: %1\nhealth:\n  path: /api/v1/health\n"_s.arg(m_install.port)
                                    .toUtf8();
        auto app = test::awaitObject([&](auto done) { m_session->createApp(spec, done); });
        QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
        auto queued = test::awaitObject([&](auto done) { m_session->deploy(u"hello"_s, {}, done); });
        QVERIFY2(queued, qPrintable(queued ? QString() : queued.error().text()));
        QTRY_COMPARE_WITH_TIMEOUT(
            test::awaitObject([&](auto done) { m_session->app(u"hello"_s, done); })->value(u"status"_s).toString(),
            u"running"_s, 20000);
    }

    void fillsFromTailThenFollow()
    {
        AppLogSource source;
        QAbstractItemModelTester tester(source.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(source.model()->coalesceInterval(), 30);
        source.setSession(m_session.get());
        source.setApp(u"hello"_s);
        // One stream: the line written before the view opened, then the live one, each once.
        QTRY_VERIFY(source.model()->rowCount() >= 1);
        QCOMPARE(source.model()->index(0).data(LogModel::TextRole).toString(), u"hello from the fake"_s);
        QCOMPARE(source.model()->index(0).data(LogModel::LineNumberRole).toLongLong(), 1);
        QCOMPARE(source.model()->index(0).data(LogModel::TimeRole).toDateTime().toMSecsSinceEpoch(), 1'700'000'000'000);
        QTRY_COMPARE_WITH_TIMEOUT(source.model()->rowCount(), 2, 10000);
        QCOMPARE(source.model()->index(1).data(LogModel::TextRole).toString(), u"hello again from the fake"_s);
        QCOMPARE(source.model()->index(1).data(LogModel::StreamRole).toInt(), int(LogModel::Stderr));
        // The fake's container "stops" after its line: the stream says so.
        QTRY_VERIFY_WITH_TIMEOUT(!source.status().isEmpty(), 10000);

        source.model()->setSearchTerm(u"fake"_s);
        QTRY_COMPARE(source.model()->matchCount(), 2);
        QCOMPARE(source.model()->matchOrdinal(1), 2);

        // Copy puts the rows on the clipboard.
        QCOMPARE(source.copyRows(0, 1), 2);
        QCOMPARE(QGuiApplication::clipboard()->text().trimmed(), u"hello from the fake\nhello again from the fake"_s);

        // Another app: the model starts over.
        source.setApp(u"nosuchapp"_s);
        QCOMPARE(source.model()->rowCount(), 0);
        QTRY_VERIFY_WITH_TIMEOUT(!source.status().isEmpty(), 10000);
    }

    void styledTextFollowsThePalette()
    {
        AppLogSource source;
        const QVariantList spans{QVariantMap{{u"start"_s, 0}, {u"length"_s, 5}, {u"fg"_s, 1}, {u"bold"_s, true}},
                                 QVariantMap{{u"start"_s, 6}, {u"length"_s, 3}, {u"fg"_s, u"#123456"_s}, {u"bg"_s, 4}}};
        const QString light = source.styledText(u"error a<b done"_s, spans);
        QCOMPARE(light,
                 u"<font color=\"%1\"><b>error</b></font>&nbsp;<font color=\"#123456\">a&lt;b</font>&nbsp;done"_s.arg(
                     AppLogSource::paletteColour(1, false)));
        source.setDark(true);
        const QString dark = source.styledText(u"error a<b done"_s, spans);
        QVERIFY(dark.contains(AppLogSource::paletteColour(1, true)));
        QVERIFY(AppLogSource::paletteColour(1, true) != AppLogSource::paletteColour(1, false));

        // Backgrounds and search hits are drawn behind the text, by character.
        const QVariantList behind = source.highlights(spans, {QVariantMap{{u"start"_s, 10}, {u"length"_s, 4}}});
        QCOMPARE(behind.size(), 2);
        QCOMPARE(behind.at(0).toMap().value(u"start"_s).toInt(), 6);
        QCOMPARE(behind.at(0).toMap().value(u"color"_s).toString(), AppLogSource::paletteColour(4, true));
        QCOMPARE(behind.at(1).toMap().value(u"start"_s).toInt(), 10);
        QCOMPARE(behind.at(1).toMap().value(u"length"_s).toInt(), 4);
        QVERIFY(source.highlights({}, {}).isEmpty());
    }

    void screenshot()
    {
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
            {{u"session"_s, QVariant::fromValue<QObject *>(m_session.get())}, {u"app"_s, u"hello"_s}});
        view.setResizeMode(QQuickView::SizeRootObjectToView);
        view.setSource(QUrl(u"qrc:/qt/qml/Pando/Logs/LogView.qml"_s));
        QVERIFY2(view.status() == QQuickView::Ready, qPrintable(warnings.join(u'\n')));
        view.resize(1280, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto *model = qobject_cast<LogModel *>(view.rootObject()->property("logModel").value<QObject *>());
        QVERIFY(model);
        QTRY_COMPARE(model->rowCount(), 2); // the tail and the follow arrive over the API
        // A search: its hits are drawn behind the words, in the match colour.
        model->setSearchTerm(u"fake"_s);
        QTRY_COMPARE(model->matchCount(), 2);
        QTest::qWait(200);
        const QImage image = view.grabWindow();
        int amber = 0;
        const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
        for (int y = 0; y < rgb.height(); ++y)
            for (int x = 0; x < rgb.width(); ++x)
                amber += rgb.pixel(x, y) == qRgb(0xff, 0xd5, 0x4f);
        QVERIFY2(amber > 100, qPrintable(u"%1 pixels of the match colour"_s.arg(amber)));
        QVERIFY2(!test::saveScreenshot(image, u"desktop-logs"_s).isEmpty(), "the screenshot could not be saved");
        QCOMPARE(image.size() / image.devicePixelRatio(), QSize(1280, 800));
        const int colours = test::distinctColours(image);
        QVERIFY2(colours > 16, qPrintable(u"only %1 colours"_s.arg(colours)));
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));
    }

    void cleanupTestCase() { m_session.reset(); }
};

QTEST_MAIN(TestLogView)
#include "tst_logview.moc"
