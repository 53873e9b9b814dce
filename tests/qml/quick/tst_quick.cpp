// Qt Quick Tests of the desktop views: each tst_<view>.qml in this folder drives one view as a user
// does (clicks and keys on named items, waiting for what becomes visible) against its own fresh
// install — a real API server over fake adapters, reached through RemoteSession exactly as the
// window reaches a remote install. The setup object gives each QML file's engine that install,
// behind the Desktop singleton, and the Fixture singleton (module Pando.Test) for the scene.

#include "quickfixture.h"

#include <QApplication>
#include <QPointer>
#include <QQmlEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtQuickTest/quicktest.h>

Q_IMPORT_QML_PLUGIN(Pando_AppsPlugin)
Q_IMPORT_QML_PLUGIN(Pando_ApprovalsPlugin)
Q_IMPORT_QML_PLUGIN(Pando_ConnectionsPlugin)
Q_IMPORT_QML_PLUGIN(Pando_DeploysPlugin)
Q_IMPORT_QML_PLUGIN(Pando_LogsPlugin)
Q_IMPORT_QML_PLUGIN(Pando_RunsPlugin)
Q_IMPORT_QML_PLUGIN(Pando_SettingsPlugin)
Q_IMPORT_QML_PLUGIN(Pando_ShellPlugin)
Q_IMPORT_QML_PLUGIN(Pando_StatesPlugin)

using namespace Qt::StringLiterals;

namespace {

// The one fixture; each engine's Fixture singleton is this object (owned by C++).
QPointer<pando::test::QuickFixture> s_fixture;

} // namespace

class QuickSetup : public QObject {
    Q_OBJECT

public:
    QuickSetup() { s_fixture = &m_fixture; }

public Q_SLOTS:
    void applicationAvailable()
    {
        QQuickStyle::setStyle(u"Fusion"_s);
        // Not qmlRegisterSingletonInstance: that one may serve only one engine, and each QML
        // file gets its own.
        qmlRegisterSingletonType<pando::test::QuickFixture>(
            "Pando.Test", 1, 0, "Fixture", [](QQmlEngine *, QJSEngine *) -> pando::test::QuickFixture * {
                QJSEngine::setObjectOwnership(s_fixture, QJSEngine::CppOwnership);
                return s_fixture;
            });
    }

    void qmlEngineAvailable(QQmlEngine *engine)
    {
        engine->addImportPath(u"qrc:/qt/qml"_s);
        QString why;
        if (!m_fixture.restart(engine, &why))
            qFatal("the test install did not start: %s", qPrintable(why));
    }

    void cleanupTestCase() { m_fixture.stop(); }

private:
    pando::test::QuickFixture m_fixture;
};

// Not QUICK_TEST_MAIN_WITH_SETUP: that one makes a QGuiApplication, and the Deploys view's chart
// (Qt Charts draws through Graphics View) needs a QApplication.
int main(int argc, char **argv)
{
    // Settings, the connections store and anything else written under the home directory go to a
    // directory of this run's own.
    QTemporaryDir home;
    if (!home.isValid())
        qFatal("no temporary directory");
    for (const char *name : {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"})
        qputenv(name, home.filePath(QString::fromLatin1(name)).toLocal8Bit());
    QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
    QApplication app(argc, argv);
    QuickSetup setup;
    return quick_test_main_with_setup(argc, argv, "desktop_quick", QUICK_TEST_SOURCE_DIR, &setup);
}

#include "tst_quick.moc"
