// The pando-desktop window rendered offscreen against a real API server (fake adapters): the
// empty state and the Apps view with a running and a failed app, each saved as a 1280×800
// screenshot under the build directory and checked to be more than a blank page; and the
// program's --version and --help without a display; --check opening every dialog; a saved window
// place fitted into the screen; the status line's runtimes.

#include "app/desktop/session/remotesession.h"
#include "app/desktop/shell/desktopstate.h"
#include "app/desktop/shell/windowplace.h"
#include "tests/app/desktop/session/screenshots.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"

#include <QDir>
#include <QImage>
#include <QJsonArray>
#include <QJsonObject>
#include <QLocale>
#include <QProcess>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSet>
#include <QTest>
#include <QtQml/qqmlextensionplugin.h>

Q_IMPORT_QML_PLUGIN(Pando_AppsPlugin)
Q_IMPORT_QML_PLUGIN(Pando_DeploysPlugin)
Q_IMPORT_QML_PLUGIN(Pando_LogsPlugin)
Q_IMPORT_QML_PLUGIN(Pando_ShellPlugin)

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

class TestDesktopWindow : public QObject {
    Q_OBJECT

private:
    test::TestInstall m_install;
    std::unique_ptr<RemoteSession> m_session;
    std::unique_ptr<DesktopState> m_state;
    std::unique_ptr<QQmlApplicationEngine> m_engine;
    QQuickWindow *m_window = nullptr;
    QStringList m_warnings; // what the QML engine complained about, all along

    // Renders the window now and saves it as <build>/screenshots/<name>.png.
    QImage screenshot(const QString &name)
    {
        // Let bindings settle and one frame render before grabbing.
        QTest::qWait(200);
        const QImage image = m_window->grabWindow();
        const QString path = QDir(test::screenshotDir()).filePath(name + u".png"_s);
        if (!image.save(path))
            qWarning("could not save %s", qPrintable(path));
        else
            qInfo("screenshot: %s", qPrintable(path));
        return image;
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
        QVERIFY(QDir().mkpath(test::screenshotDir()));
        QVERIFY2(m_install.start(), qPrintable(m_install.error));
        m_session = std::make_unique<RemoteSession>(QUrl(m_install.baseUrl()), m_install.token);
        m_state = std::make_unique<DesktopState>(m_session.get());
        DesktopState::setInstance(m_state.get());

        QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
        QQuickStyle::setStyle(u"Fusion"_s);
        m_engine = std::make_unique<QQmlApplicationEngine>();
        m_engine->addImportPath(u"qrc:/qt/qml"_s);
        connect(m_engine.get(), &QQmlEngine::warnings, this, [this](const QList<QQmlError> &list) {
            for (const QQmlError &e : list)
                m_warnings.append(e.toString());
        });
        m_engine->load(QUrl(u"qrc:/qt/qml/Pando/Shell/Main.qml"_s));
        QVERIFY2(!m_engine->rootObjects().isEmpty(), qPrintable(m_warnings.join(u'\n')));
        m_window = qobject_cast<QQuickWindow *>(m_engine->rootObjects().first());
        QVERIFY(m_window);
        m_window->resize(1280, 800);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window));
        QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(u'\n')));
    }

    void emptyState()
    {
        m_session->open();
        QString why;
        QVERIFY2(test::awaitConnected(*m_session, &why), qPrintable(why));
        QTRY_VERIFY(m_state->apps()->isLoaded());
        QCOMPARE(m_state->apps()->rowCount(), 0);
        const QImage image = screenshot(u"desktop-apps-empty"_s);
        QCOMPARE(image.size() / image.devicePixelRatio(), QSize(1280, 800));
        const int colours = test::distinctColours(image);
        QVERIFY2(colours > 16, qPrintable(u"only %1 colours"_s.arg(colours)));
    }

    void appsView()
    {
        for (const QString &name : {u"hello"_s, u"buildfails"_s, u"web"_s}) {
            auto app = test::awaitObject([&](auto done) { m_session->createApp(appSpec(name), done); });
            QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
        }
        AppsModel &apps = *m_state->apps();
        QTRY_COMPARE(apps.rowCount(), 3);
        apps.deploy(apps.rowOf(u"hello"_s));
        apps.deploy(apps.rowOf(u"buildfails"_s));
        QTRY_COMPARE_WITH_TIMEOUT(apps.index(apps.rowOf(u"hello"_s)).data(AppsModel::StatusRole).toString(),
                                  u"running"_s, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(
            apps.index(apps.rowOf(u"buildfails"_s)).data(AppsModel::LastDeployStatusRole).toString(), u"failed"_s,
            20000);
        apps.setSelectedRow(apps.rowOf(u"buildfails"_s));
        QTRY_COMPARE(m_state->overall(), DisplayState::Failed);
        const QImage failed = screenshot(u"desktop-apps-failed"_s);
        QVERIFY2(test::distinctColours(failed) > 16, "the apps view rendered blank");

        apps.setSelectedRow(apps.rowOf(u"hello"_s));
        const QImage running = screenshot(u"desktop-apps"_s);
        QVERIFY2(test::distinctColours(running) > 16, "the apps view rendered blank");
        QVERIFY2(running != failed, "selecting another app changed nothing on screen");
        QVERIFY2(m_warnings.isEmpty(), qPrintable(m_warnings.join(u'\n')));
    }

    // The status line says whether the runtimes answer (DESKTOP.md), and why one does not on
    // hover; the embedded server's part is this computer's only.
    void statusLineSaysWhichRuntimesAnswer()
    {
        RuntimesStatus *runtimes = m_state->runtimes();
        QTRY_COMPARE(runtimes->text(),
                     RuntimesStatus::tr("%1 reachable").arg(u"fake"_s) + u" · "_s + RuntimesStatus::tr("Edge serving"));
        QCOMPARE(runtimes->state(), DisplayState::Healthy);
        auto *mark = m_window->findChild<QQuickItem *>(u"runtimesMark"_s);
        QVERIFY(mark);
        QVERIFY(mark->isVisible());
        QCOMPARE(mark->property("word").toString(), runtimes->text());
        QCOMPARE(m_state->serverText(), QString()); // a remote install's server is not ours to show
        QCOMPARE(DesktopState::serverWords(false, {}), DesktopState::tr("Not serving teammates"));
        QCOMPARE(DesktopState::serverWords(true, {}), DesktopState::tr("Serving teammates · nobody connected"));
        QCOMPARE(DesktopState::serverWords(true, {u"ada"_s, u"bob"_s, u"ada"_s}),
                 DesktopState::tr("Serving teammates · %1 connected")
                     .arg(QLocale().createSeparatedList({u"ada"_s, u"bob"_s})));

        runtimes->apply(
            QJsonObject{{u"runtimes"_s,
                         QJsonArray{QJsonObject{{u"kind"_s, u"docker"_s}, {u"reachable"_s, true}},
                                    QJsonObject{{u"kind"_s, u"incus"_s},
                                                {u"reachable"_s, false},
                                                {u"note"_s, u"cannot reach Incus at /var/lib/incus/unix.socket"_s}}}}});
        QCOMPARE(runtimes->state(), DisplayState::Failed);
        QCOMPARE(runtimes->text(), RuntimesStatus::tr("%1 reachable").arg(u"Docker"_s) + u" · "_s +
                                       RuntimesStatus::tr("%1 unreachable").arg(u"Incus"_s) + u" · "_s +
                                       RuntimesStatus::tr("Edge serving"));
        QVERIFY2(runtimes->detail().contains(u"cannot reach Incus"_s), qPrintable(runtimes->detail()));
        QCOMPARE(mark->property("displayState").toInt(), int(DisplayState::Failed));
        runtimes->apply(fail(ErrorCode::Forbidden, u"not allowed"_s));
        QCOMPARE(runtimes->state(), DisplayState::Neutral);
        QCOMPARE(runtimes->detail(), u"not allowed"_s);

        // The edge: down is a failure with its reason on hover; an in-process one is said.
        runtimes->apply(QJsonObject{{u"runtimes"_s, QJsonArray{QJsonObject{{u"kind"_s, u"docker"_s}}}}});
        runtimes->applyEdge(QJsonObject{{u"kind"_s, u"caddy"_s},
                                        {u"running"_s, false},
                                        {u"problem"_s, u"Caddy does not answer on its admin socket"_s}});
        QCOMPARE(runtimes->state(), DisplayState::Failed);
        QVERIFY2(runtimes->text().endsWith(RuntimesStatus::tr("Edge down")), qPrintable(runtimes->text()));
        QVERIFY2(runtimes->detail().contains(u"admin socket"_s), qPrintable(runtimes->detail()));
        // A certificate the edge could not get: a failure, the name and why on hover.
        runtimes->applyEdge(QJsonObject{
            {u"kind"_s, u"caddy"_s},
            {u"running"_s, true},
            {u"certificates"_s,
             QJsonArray{QJsonObject{{u"host"_s, u"ok.example.org"_s}, {u"issuer"_s, u"R3"_s}, {u"error"_s, u""_s}},
                        QJsonObject{{u"host"_s, u"shop.example.org"_s}, {u"error"_s, u"no DNS record"_s}}}}});
        QCOMPARE(runtimes->state(), DisplayState::Failed);
        QVERIFY2(runtimes->text().endsWith(RuntimesStatus::tr("%1 · failing certificates: %n", nullptr, 1)
                                               .arg(RuntimesStatus::tr("Edge serving"))),
                 qPrintable(runtimes->text()));
        QVERIFY2(runtimes->detail().contains(u"shop.example.org: no DNS record"_s), qPrintable(runtimes->detail()));
        QVERIFY2(!runtimes->detail().contains(u"ok.example.org"_s), qPrintable(runtimes->detail()));
        runtimes->applyEdge(QJsonObject{{u"kind"_s, u"in-process"_s}, {u"running"_s, true}});
        QCOMPARE(runtimes->state(), DisplayState::Healthy);
        QVERIFY(runtimes->text().endsWith(RuntimesStatus::tr("Apps served by Pando")));
        QVERIFY(runtimes->detail().contains(u"stop answering"_s));
        m_state->refresh();
        QTRY_COMPARE(runtimes->state(), DisplayState::Healthy);

        // With the edge, the keys apps verify identity assertions with, for Settings.
        auto jwks = m_install.engine->assertionKeys();
        QVERIFY(jwks);
        const QString kid = jwks->value(u"keys"_s).toArray().first().toObject().value(u"kid"_s).toString();
        QTRY_VERIFY2(runtimes->assertionKeysText().contains(kid), qPrintable(runtimes->assertionKeysText()));
        QCOMPARE(runtimes->assertionKeysText(),
                 RuntimesStatus::tr("%n signing keys, newest first: %1", nullptr, 1).arg(kid));
    }

    // Ctrl+K's matches: a prefix first, then a word inside, then the letters in order; views,
    // apps and actions alike; nothing for letters no name has.
    void paletteFindsAppsViewsAndActions()
    {
        QCOMPARE(PaletteSearch::score(u"hel"_s, u"hello"_s), 0);
        QCOMPARE(PaletteSearch::score(u"HEL"_s, u"hello"_s), 0);
        QVERIFY(PaletteSearch::score(u"llo"_s, u"hello"_s) > 0);
        QVERIFY(PaletteSearch::score(u"hwd"_s, u"hello-world"_s) > PaletteSearch::score(u"wor"_s, u"hello-world"_s));
        QCOMPARE(PaletteSearch::score(u"xyz"_s, u"hello"_s), -1);
        QCOMPARE(PaletteSearch::score(QString(), u"hello"_s), 0);

        PaletteSearch *palette = m_state->palette();
        const auto labels = [&](const QString &query) {
            QStringList out;
            for (const QVariant &entry : palette->entries(query))
                out << entry.toMap().value(u"label"_s).toString();
            return out;
        };
        const QVariantList hello = palette->entries(u"hel"_s);
        QVERIFY(!hello.isEmpty());
        QCOMPARE(hello.first().toMap().value(u"kind"_s).toString(), u"app"_s);
        QCOMPARE(hello.first().toMap().value(u"key"_s).toString(), u"hello"_s);
        QCOMPARE(hello.first().toMap().value(u"state"_s).toInt(), int(DisplayState::Healthy));
        QCOMPARE(labels(u"pipe"_s).value(0), PaletteSearch::tr("Pipelines"));
        QCOMPARE(palette->entries(u"pipe"_s).value(0).toMap().value(u"key"_s).toInt(), 1);
        QVERIFY2(labels(u"bldf"_s).contains(u"buildfails"_s), qPrintable(labels(u"bldf"_s).join(u", "_s)));
        QVERIFY(labels(u"new"_s).contains(PaletteSearch::tr("New app…")));
        QCOMPARE(labels(u"qqqq"_s), QStringList());
        // Every app, every view and the actions when nothing is typed.
        QVERIFY(labels(QString()).size() >= 3 + 6 + 2);
    }

    void versionWithoutDisplay()
    {
        QProcess program;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char *name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
            env.remove(QString::fromLatin1(name));
        program.setProcessEnvironment(env);
        program.start(QStringLiteral(PANDO_DESKTOP_PROGRAM), {u"--version"_s});
        QVERIFY(program.waitForFinished(10000));
        QCOMPARE(program.exitCode(), 0);
        QCOMPARE(QString::fromUtf8(program.readAllStandardOutput()).trimmed(),
                 u"pando-desktop " PANDO_TEST_VERSION ""_s);

        program.start(QStringLiteral(PANDO_DESKTOP_PROGRAM), {u"--help"_s});
        QVERIFY(program.waitForFinished(10000));
        QCOMPARE(program.exitCode(), 0);
        const QString help = QString::fromUtf8(program.readAllStandardOutput());
        QVERIFY2(help.contains(u"--server <url>"_s) && help.contains(u"pando-desktop"_s), qPrintable(help));

        program.start(QStringLiteral(PANDO_DESKTOP_PROGRAM), {u"--server"_s, u"http://127.0.0.1:1"_s});
        QVERIFY(program.waitForFinished(10000));
        QCOMPARE(program.exitCode(), 2);
        QVERIFY(program.readAllStandardError().contains("--token-file"));

        // A token in argv is refused, saying what to do instead; a token file must be readable.
        program.start(QStringLiteral(PANDO_DESKTOP_PROGRAM),
                      {u"--server"_s, u"http://127.0.0.1:1"_s, u"--token"_s, u"pando_secret"_s});
        QVERIFY(program.waitForFinished(10000));
        QCOMPARE(program.exitCode(), 2);
        const QByteArray refused = program.readAllStandardError();
        QVERIFY2(refused.contains("--token-file") && !refused.contains("pando_secret"), refused.constData());
        program.start(QStringLiteral(PANDO_DESKTOP_PROGRAM),
                      {u"--server"_s, u"http://127.0.0.1:1"_s, u"--token-file"_s, u"/nonexistent/token"_s});
        QVERIFY(program.waitForFinished(10000));
        QCOMPARE(program.exitCode(), 2);
        QVERIFY(program.readAllStandardError().contains("cannot read /nonexistent/token"));
    }

    // A saved place from a larger or another monitor comes back inside the screen, never past it.
    void savedPlaceFitsTheScreen()
    {
        const QRect screen(0, 0, 1024, 700);
        QCOMPARE(fitIntoScreen(QRect(100, 50, 800, 600), screen), QRect(100, 50, 800, 600));
        QCOMPARE(fitIntoScreen(QRect(0, 0, 2560, 1440), screen), screen);
        QCOMPARE(fitIntoScreen(QRect(3000, 900, 800, 600), screen), QRect(224, 100, 800, 600));
        QCOMPARE(fitIntoScreen(QRect(-500, -40, 800, 600), screen), QRect(0, 0, 800, 600));
        // A second monitor to the left, with a panel on top.
        QCOMPARE(fitIntoScreen(QRect(-1900, 0, 1920, 1200), QRect(-1920, 32, 1920, 1048)),
                 QRect(-1920, 32, 1920, 1048));
        QVERIFY(!fitIntoScreen(QRect(), screen).isValid());
        QVERIFY(!fitIntoScreen(QRect(0, 0, 800, 600), QRect()).isValid());
    }

    // --check opens every dialog of the real window once, those of views not shown yet included:
    // the file chooser among them, which
    // crashed the app where a QML module it loads on first use was missing. It also fails when
    // no translation is loaded: under the C locale plurals read "2 app(s)".
    void checkOpensEveryDialog()
    {
        QProcess program;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"QT_QPA_PLATFORM"_s, u"offscreen"_s);
        env.insert(u"QT_QUICK_BACKEND"_s, u"software"_s);
        // No language of the user's: English plurals ("2 apps", not "2 app(s)") all the same.
        env.remove(u"LANGUAGE"_s);
        env.insert(u"LC_ALL"_s, u"C.UTF-8"_s);
        program.setProcessEnvironment(env);
        program.start(QStringLiteral(PANDO_DESKTOP_PROGRAM), {u"--check"_s});
        QVERIFY(program.waitForFinished(60000));
        const QString out = QString::fromUtf8(program.readAllStandardOutput());
        QVERIFY2(program.exitStatus() == QProcess::NormalExit && program.exitCode() == 0,
                 qPrintable(out + QString::fromUtf8(program.readAllStandardError())));
        // The Pipelines view's job menu too: views are made when first shown, --check makes them all.
        for (const QString &dialog : {u"createAppDialog"_s, u"specFileDialog"_s, u"removeDialog"_s, u"jobMenu"_s})
            QVERIFY2(out.contains(u"opened and closed "_s + dialog), qPrintable(out));
        QVERIFY2(out.contains(u"problems: 0"_s), qPrintable(out));
    }

    void cleanupTestCase()
    {
        m_engine.reset();
        m_state.reset();
        m_session.reset();
    }
};

QTEST_MAIN(TestDesktopWindow)
#include "tst_desktopwindow.moc"
