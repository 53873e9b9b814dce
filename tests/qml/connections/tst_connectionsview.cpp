// The Connections and Settings views rendered offscreen at 1280×800 (saved under the build dir and
// checked to be more than blank): Connections with this computer and a remote install paired
// through a real link, and with installs whose access lasts, ends within a week, has ended and is
// not known (the texts and colours a user sees, against a set clock), Settings with this computer's engine serving
// teammates over TLS, a pairing link made and a teammate connected; and the window's Main.qml loading both without a
// warning.

#include "app/desktop/session/inprocesssession.h"
#include "app/desktop/session/remotesession.h"
#include "app/desktop/shell/desktopstate.h"
#include "qml/connections/connectionsmodel.h"
#include "qml/settings/embeddedserver.h"
#include "qml/states/statestyle.h"
#include "tests/app/desktop/session/screenshots.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"
#include "tests/app/server/pipelinefakes.h"

#include <QApplication>
#include <QDir>
#include <QImage>
#include <QLocale>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QScopeGuard>
#include <QSet>
#include <QSettings>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTest>
#include <QTranslator>
#include <QtQml/qqmlextensionplugin.h>
#include <algorithm>

Q_IMPORT_QML_PLUGIN(Pando_ConnectionsPlugin)
Q_IMPORT_QML_PLUGIN(Pando_SettingsPlugin)
Q_IMPORT_QML_PLUGIN(Pando_ShellPlugin)

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

namespace {

InProcessOptions fakeOptions(const QString &dataDir)
{
    InProcessOptions options;
    options.engine.dataDir = dataDir;
    options.engine.reconcileIntervalMs = 0;
    options.engine.healthTickMs = 0; // no probes of the containers unless a test asks
    options.engine.workers = 1;
    options.userName = u"owner"_s;
    options.runtime = std::make_shared<test::FakeRuntime>();
    options.router = std::make_shared<test::FakeRouter>();
    options.source = std::make_shared<test::FakeSource>();
    options.installPipelines = [](core::Engine &engine) -> Status {
        engine.setPipelines(std::make_unique<test::FakePipelineService>(*engine.events()));
        return {};
    };
    return options;
}

} // namespace

// The Connections view alone in a window, given the model as "model".
const char ConnectionsWindow[] = R"(import QtQuick
import QtQuick.Controls
import Pando.Connections
ApplicationWindow {
    id: w
    required property ConnectionsModel model
    width: 1280
    height: 800
    ConnectionsView {
        anchors.fill: parent
        connectionsModel: w.model
    }
})";

class TestConnectionsView : public QObject {
    Q_OBJECT

    QTemporaryDir m_home;
    QTemporaryDir m_data;
    std::unique_ptr<InProcessSession> m_local;
    std::unique_ptr<QSettings> m_settings;
    std::unique_ptr<EmbeddedServer> m_server;
    std::unique_ptr<ConnectionsModel> m_connections;
    std::unique_ptr<RemoteSession> m_teammate;
    QTranslator m_english; // the plural forms, as pando-desktop loads them

    // Every visible item under item whose objectName is name, top to bottom as the user reads them (a
    // list's delegates are not created, nor kept among its children, in the model's order).
    static void collect(QQuickItem *item, const QString &name, QList<QQuickItem *> &found)
    {
        collectUnordered(item, name, found);
        std::ranges::stable_sort(found, {}, [](const QQuickItem *it) { return it->mapToScene({0, 0}).y(); });
    }

    static void collectUnordered(QQuickItem *item, const QString &name, QList<QQuickItem *> &found)
    {
        if (item->objectName() == name && item->isVisible())
            found.append(item);
        for (QQuickItem *child : item->childItems())
            collectUnordered(child, name, found);
    }

    // Shows the view (a QML snippet around it) at 1280×800 and saves the screenshot; inspect looks
    // at the window before it closes.
    void shoot(const QByteArray &qml, const QVariantMap &properties, const QString &name,
               const std::function<bool()> &ready = {}, const std::function<void(QQuickWindow *)> &inspect = {})
    {
        QStringList warnings;
        QQmlApplicationEngine engine;
        engine.addImportPath(u"qrc:/qt/qml"_s);
        connect(&engine, &QQmlEngine::warnings, this, [&warnings](const QList<QQmlError> &list) {
            for (const QQmlError &e : list)
                warnings.append(e.toString());
        });
        engine.setInitialProperties(properties);
        engine.loadData(qml);
        QVERIFY2(!engine.rootObjects().isEmpty(), qPrintable(warnings.join(u'\n')));
        auto *window = qobject_cast<QQuickWindow *>(engine.rootObjects().first());
        QVERIFY(window);
        window->resize(1280, 800);
        window->show();
        QVERIFY(QTest::qWaitForWindowExposed(window));
        if (ready)
            QTRY_VERIFY_WITH_TIMEOUT(ready(), 15000);
        QTest::qWait(300);
        const QImage image = window->grabWindow();
        QCOMPARE(image.size(), QSize(1280, 800) * window->devicePixelRatio());
        const QString path = QDir(test::screenshotDir()).filePath(name);
        QVERIFY(QDir().mkpath(test::screenshotDir()));
        QVERIFY(image.save(path));
        qInfo("screenshot: %s", qPrintable(path));
        QVERIFY2(test::distinctColours(image) > 16, qPrintable(name + u" rendered blank"_s));
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));
        if (inspect)
            inspect(window);
        window->close();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_english.load(u":/i18n/pando_en.qm"_s));
        QCoreApplication::installTranslator(&m_english);
        QStandardPaths::setTestModeEnabled(true);
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_home.filePath(u"config"_s));
        QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
        QQuickStyle::setStyle(u"Fusion"_s);

        m_local = std::make_unique<InProcessSession>(fakeOptions(m_data.path()));
        m_local->open();
        QString why;
        QVERIFY2(test::awaitConnected(*m_local, &why, 60000), qPrintable(why));
        m_settings = std::make_unique<QSettings>(m_home.filePath(u"embedded.ini"_s), QSettings::IniFormat);
        m_server = std::make_unique<EmbeddedServer>(m_local.get(), m_settings.get());
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        const int port = probe.serverPort();
        probe.close();
        m_server->setAddress(u"127.0.0.1"_s);
        m_server->setPort(port);
        m_server->setEnabled(true);
        QTRY_VERIFY_WITH_TIMEOUT(m_server->isRunning() || !m_server->error().isEmpty(), 20000);
        QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
        QTRY_VERIFY_WITH_TIMEOUT(m_server->accounts().contains(u"owner"_s), 15000);
        m_server->makePairingLink(u"owner"_s);
        QTRY_VERIFY_WITH_TIMEOUT(!m_server->pairingLink().isEmpty(), 15000);
        const QString firstLink = m_server->pairingLink();

        // A teammate pairs with it (through the Connections model) and stays connected.
        m_connections = std::make_unique<ConnectionsModel>(m_settings.get(), m_home.filePath(u"tokens"_s));
        m_connections->addFromLink(firstLink, u"Ada's desktop"_s);
        QTRY_COMPARE_WITH_TIMEOUT(m_connections->rowCount(), 2, 20000);
        m_teammate = std::make_unique<RemoteSession>(m_connections->installAt(1)->url, m_connections->tokenAt(1));
        m_teammate->setPinnedFingerprint(m_connections->installAt(1)->fingerprint);
        m_teammate->open();
        QVERIFY2(test::awaitConnected(*m_teammate, &why, 20000), qPrintable(why));
        // A fresh link to show (the first one is spent).
        m_server->makePairingLink(u"owner"_s);
        QTRY_VERIFY_WITH_TIMEOUT(m_server->pairingLink() != firstLink, 15000);
    }

    void connectionsViewScreenshot()
    {
        m_connections->addFromLink(u"pando://pando.lan/pair?fp=abc"_s);
        shoot(ConnectionsWindow, {{u"model"_s, QVariant::fromValue(m_connections.get())}},
              u"desktop-connections.png"_s);
        QVERIFY(!m_connections->error().isEmpty());
    }

    void connectionsViewShowsAccess()
    {
        constexpr qint64 DayMs = 24LL * 60 * 60 * 1000;
        const QLocale previous;
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedKingdom));
        const auto restore = qScopeGuard([previous] { QLocale::setDefault(previous); });
        // Noon local time, so the date is the same in every time zone.
        const qint64 now = QDateTime(QDate(2027, 1, 10), QTime(12, 0)).toMSecsSinceEpoch();
        QTemporaryDir dir;
        QSettings settings(dir.filePath(u"access.ini"_s), QSettings::IniFormat);
        ConnectionStore store(settings, dir.filePath(u"tokens"_s));
        const auto save = [&store](const QString &name, qint64 expiresMs) {
            auto saved = store.add(RemoteInstall{{},
                                                 name,
                                                 QUrl(u"https://%1.lan:7443"_s.arg(name.toLower())),
                                                 QString(64, u'a'),
                                                 u"member"_s,
                                                 expiresMs},
                                   u"pando_x"_s);
            return bool(saved);
        };
        QVERIFY(save(u"Lasting"_s, QDateTime(QDate(2027, 3, 3), QTime(12, 0)).toMSecsSinceEpoch()));
        QVERIFY(save(u"Ending"_s, now + 3 * DayMs + 60 * 60 * 1000));
        QVERIFY(save(u"Ended"_s, now - DayMs));
        QVERIFY(save(u"Older"_s, 0)); // saved before the desktop kept the expiry
        ConnectionsModel model(&settings, dir.filePath(u"tokens"_s));
        model.setClock([now] { return now; });

        shoot(
            ConnectionsWindow, {{u"model"_s, QVariant::fromValue(&model)}}, u"desktop-connections-access.png"_s, {},
            [](QQuickWindow *window) {
                QList<QQuickItem *> labels;
                collect(window->contentItem(), u"accessText"_s, labels);
                QStringList texts;
                for (QQuickItem *label : std::as_const(labels))
                    texts.append(label->property("text").toString());
                const QString ask = u" — ask its administrator for a new pairing link"_s;
                // This computer and the older install show none.
                QCOMPARE(texts, (QStringList{u"access until 3 Mar 2027"_s, u"access ends in 3 days"_s + ask,
                                             u"access expired"_s + ask}));
                QVERIFY(labels.at(0)->property("color").value<QColor>() != StateStyle::colourOf(DisplayState::Waiting));
                QCOMPARE(labels.at(1)->property("color").value<QColor>(), StateStyle::colourOf(DisplayState::Waiting));
                QCOMPARE(labels.at(2)->property("color").value<QColor>(), StateStyle::colourOf(DisplayState::Failed));
            });
    }

    void settingsViewScreenshot()
    {
        EmbeddedServer *server = m_server.get();
        shoot(R"(import QtQuick
import QtQuick.Controls
import Pando.Settings
ApplicationWindow {
    id: w
    required property EmbeddedServer server
    width: 1280
    height: 800
    SettingsView {
        anchors.fill: parent
        server: w.server
    }
})",
              {{u"server"_s, QVariant::fromValue(server)}}, u"desktop-settings.png"_s,
              [server] { return server->connected()->rowCount() == 1; });
    }

    void settingsViewOff()
    {
        QSettings settings(m_home.filePath(u"off.ini"_s), QSettings::IniFormat);
        EmbeddedServer off(m_local.get(), &settings);
        QVERIFY(!off.isEnabled());
        shoot(R"(import QtQuick
import QtQuick.Controls
import Pando.Settings
ApplicationWindow {
    id: w
    required property EmbeddedServer server
    width: 1280
    height: 800
    SettingsView {
        anchors.fill: parent
        server: w.server
    }
})",
              {{u"server"_s, QVariant::fromValue(&off)}}, u"desktop-settings-off.png"_s);
    }

    void mainWindowLoadsBothViews()
    {
        DesktopState state(m_local.get());
        DesktopState::setInstance(&state);
        QVERIFY(state.connections());
        QVERIFY(state.embeddedServer());
        QVERIFY(state.embeddedServer()->isAvailable());
        QStringList warnings;
        QQmlApplicationEngine engine;
        QQuickWindow *window = test::openMainWindow(engine, warnings);
        QVERIFY2(window, qPrintable(warnings.join(u'\n')));
        QTest::qWait(200);
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));
        window->close();
    }

    void cleanupTestCase()
    {
        m_teammate.reset();
        m_connections.reset();
        m_server.reset();
        m_local.reset();
    }
};

QTEST_MAIN(TestConnectionsView)
#include "tst_connectionsview.moc"
