// SourcesModel and the Sources view against a real API server (fake adapters) through
// RemoteSession: an administrator adds a connection (a refused one says which field, and adds
// nothing), tests it on a repository it covers and on one it does not, and removes it; a member
// sees only the connections granted to them and may not add one. The view is shown in the whole
// window, a connection added through its form, and rendered offscreen at 1280×800.

#include "app/desktop/session/remotesession.h"
#include "app/desktop/shell/desktopstate.h"
#include "qml/sources/sourcesmodel.h"
#include "tests/app/desktop/session/screenshots.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDir>
#include <QImage>
#include <QProcess>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTest>
#include <QtQml/qqmlextensionplugin.h>

Q_IMPORT_QML_PLUGIN(Pando_ShellPlugin)

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

namespace {

const QString Token = u"ghp_desktop-Token-1234"_s;

QQuickItem *named(QObject *root, const char *name)
{
    return root->findChild<QQuickItem *>(QString::fromLatin1(name));
}

} // namespace

class TestSourcesModel : public QObject {
    Q_OBJECT

private:
    test::TestInstall m_install;
    std::unique_ptr<RemoteSession> m_admin;
    std::unique_ptr<RemoteSession> m_member;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(QDir().mkpath(test::screenshotDir()));
        QVERIFY2(m_install.start(), qPrintable(m_install.error));
        m_admin = std::make_unique<RemoteSession>(QUrl(m_install.baseUrl()), m_install.token);
        m_member = std::make_unique<RemoteSession>(QUrl(m_install.baseUrl()), m_install.tokens.value(u"member"_s));
        QString why;
        for (RemoteSession *session : {m_admin.get(), m_member.get()}) {
            session->open();
            QVERIFY2(test::awaitConnected(*session, &why), qPrintable(why));
        }
    }

    void addTestAndRemove()
    {
        SourcesModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(m_admin.get());
        QTRY_VERIFY(model.isLoaded());
        QVERIFY(model.isEmpty());

        // Refused: said beside the field, nothing added.
        model.add(u"plain"_s, u"generic"_s, u"http://git.example.com"_s, {}, u"me"_s, Token, {}, {});
        QTRY_VERIFY(!model.isBusy());
        QVERIFY(model.hasFailed());
        QCOMPARE(model.failedField(), u"url"_s);
        QVERIFY2(model.outcome().contains(u"plain http"_s), qPrintable(model.outcome()));
        QVERIFY(!model.outcome().contains(Token));

        model.add(u"github"_s, u"github"_s, u"https://github.com"_s, u"acme"_s, {}, Token, {}, {});
        QTRY_VERIFY(!model.isBusy());
        QVERIFY2(!model.hasFailed(), qPrintable(model.outcome()));
        QTRY_COMPARE(model.rowCount(), 1);
        QModelIndex row = model.index(0);
        QCOMPARE(row.data(SourcesModel::NameRole).toString(), u"github"_s);
        QCOMPARE(row.data(SourcesModel::OwnerRole).toString(), u"acme"_s);
        QCOMPARE(row.data(SourcesModel::AuthTextRole).toString(), SourcesModel::tr("token"));
        QCOMPARE(row.data(SourcesModel::CheckTextRole).toString(), SourcesModel::tr("never tested"));
        QCOMPARE(row.data(SourcesModel::StateRole).toInt(), int(DisplayState::Neutral));

        model.test(u"github"_s, u"https://github.com/acme/api.git"_s);
        QTRY_VERIFY(!model.isBusy());
        QVERIFY2(!model.hasFailed() && model.outcome().contains(u"reads https://github.com/acme/api.git"_s),
                 qPrintable(model.outcome()));
        QTRY_COMPARE(model.index(0).data(SourcesModel::StateRole).toInt(), int(DisplayState::Healthy));

        model.test(u"github"_s, u"https://github.com/other/api.git"_s);
        QTRY_VERIFY(!model.isBusy());
        QVERIFY(model.hasFailed());
        QCOMPARE(model.failedField(), u"repo"_s);
        QVERIFY2(model.outcome().contains(u"does not cover"_s), qPrintable(model.outcome()));

        // A member sees it once granted, and may not add one.
        SourcesModel theirs;
        theirs.setSession(m_member.get());
        QTRY_VERIFY(theirs.isLoaded());
        QCOMPARE(theirs.rowCount(), 0);
        QVERIFY(m_install.engine->addGrant(core::authz::ObjectKind::Connection, u"github"_s, u"member"_s, u"user"_s,
                                           core::Actor::system(u"test"_s)));
        theirs.refresh();
        QTRY_COMPARE(theirs.rowCount(), 1);
        theirs.add(u"mine"_s, u"github"_s, u"https://github.com"_s, {}, {}, Token, {}, {});
        QTRY_VERIFY(!theirs.isBusy());
        QVERIFY(theirs.hasFailed());
        QVERIFY2(theirs.outcome().contains(u"admin"_s), qPrintable(theirs.outcome()));

        model.remove(u"github"_s);
        QTRY_VERIFY(!model.isBusy());
        QVERIFY2(!model.hasFailed(), qPrintable(model.outcome()));
        QTRY_COMPARE(model.rowCount(), 0);
    }

    // A registry connection is tested on an image, or on its login alone (the fake runtime's
    // registry lets robot in with "right").
    void registryConnectionsTestImages()
    {
        SourcesModel model;
        model.setSession(m_admin.get());
        QTRY_VERIFY(model.isLoaded());
        model.add(u"ghcr"_s, u"registry"_s, u"https://ghcr.io"_s, {}, u"robot"_s, u"right"_s, {}, {});
        QTRY_VERIFY(!model.isBusy());
        QVERIFY2(!model.hasFailed(), qPrintable(model.outcome()));
        QTRY_COMPARE(model.rowCount(), 1);
        QCOMPARE(model.kindOf(u"ghcr"_s), u"registry"_s);

        model.test(u"ghcr"_s, u" ghcr.io/acme/api:1.4 "_s);
        QTRY_VERIFY(!model.isBusy());
        QVERIFY2(!model.hasFailed() && model.outcome().contains(u"reads ghcr.io/acme/api:1.4 (sha256:ffff"_s),
                 qPrintable(model.outcome()));
        model.test(u"ghcr"_s, {});
        QTRY_VERIFY(!model.isBusy());
        QVERIFY2(model.outcome().contains(u"accepts its login"_s), qPrintable(model.outcome()));
        model.test(u"ghcr"_s, u"quay.io/acme/api:1"_s);
        QTRY_VERIFY(!model.isBusy());
        QVERIFY(model.hasFailed());
        QCOMPARE(model.failedField(), u"image"_s);
        QVERIFY2(model.outcome().contains(u"does not cover"_s), qPrintable(model.outcome()));

        model.add(u"wrong"_s, u"registry"_s, u"https://registry.gitlab.com"_s, {}, u"robot"_s, u"wrong"_s, {}, {});
        QTRY_VERIFY(!model.isBusy());
        QTRY_COMPARE(model.rowCount(), 2);
        model.test(u"wrong"_s, {});
        QTRY_VERIFY(!model.isBusy());
        QVERIFY(model.hasFailed());
        QVERIFY2(model.outcome().contains(u"refused the login"_s), qPrintable(model.outcome()));
        QVERIFY(!model.outcome().contains(u"wrong\""_s));

        for (const QString &name : {u"ghcr"_s, u"wrong"_s}) {
            model.remove(name);
            QTRY_VERIFY(!model.isBusy());
        }
        QTRY_COMPARE(model.rowCount(), 0);
    }

    void sourcesViewAddsThroughItsForm()
    {
        DesktopState state(m_admin.get());
        DesktopState::setInstance(&state);
        QStringList warnings;
        QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
        QQuickStyle::setStyle(u"Fusion"_s);
        QQmlApplicationEngine engine;
        QQuickWindow *window = test::openMainWindow(engine, warnings);
        QVERIFY2(window, qPrintable(warnings.join(u'\n')));

        QMetaObject::invokeMethod(named(window, "sidebarSources"), "clicked");
        QTRY_COMPARE(state.currentView(), DesktopState::View::Sources);
        QTRY_VERIFY(named(window, "noSources") && named(window, "noSources")->isVisible());
        named(window, "sourceNameField")->setProperty("text", u"forge"_s);
        named(window, "sourceUrlField")->setProperty("text", u"https://git.example.com"_s);
        named(window, "sourceKindBox")->setProperty("currentIndex", int(SourcesModel::kinds().indexOf(u"gitea"_s)));
        named(window, "sourceTokenField")->setProperty("text", Token);
        QQuickItem *add = named(window, "addSourceButton");
        QVERIFY(add->property("enabled").toBool());
        QMetaObject::invokeMethod(add, "clicked");
        // Gitea sends a token with the account's name: refused, said beside the form.
        QTRY_VERIFY(state.sources()->hasFailed());
        QCOMPARE(state.sources()->failedField(), u"username"_s);
        QTRY_VERIFY(named(window, "sourcesOutcome")->isVisible());
        named(window, "sourceKindBox")->setProperty("currentIndex", int(SourcesModel::kinds().indexOf(u"github"_s)));
        QTRY_COMPARE(named(window, "sourceKindBox")->property("currentText").toString(), u"github"_s);
        QMetaObject::invokeMethod(add, "clicked");
        QTRY_COMPARE(state.sources()->rowCount(), 1);
        QVERIFY2(!state.sources()->hasFailed(), qPrintable(state.sources()->outcome()));
        // The form forgets the token once it was added.
        QTRY_COMPARE(named(window, "sourceTokenField")->property("text").toString(), QString());
        QTRY_VERIFY(named(window, "selectedSource")->isVisible());

        QTest::qWait(300);
        const QImage image = window->grabWindow();
        QVERIFY(!test::saveScreenshot(image, u"desktop-sources"_s).isEmpty());
        QVERIFY2(test::distinctColours(image) > 16, "the sources view rendered blank");
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));

        state.sources()->remove(u"forge"_s);
        QTRY_COMPARE(state.sources()->rowCount(), 0);
        window->close();
        DesktopState::setInstance(nullptr);
    }

    // The form's third credential: a GitHub App's ids and key, for GitHub alone.
    void sourcesViewAddsAGitHubApp()
    {
        QProcess genrsa;
        genrsa.start(u"openssl"_s, {u"genrsa"_s, u"-traditional"_s, u"2048"_s});
        QVERIFY(genrsa.waitForFinished(30000));
        const QString pem = QString::fromLatin1(genrsa.readAllStandardOutput());
        QVERIFY2(pem.startsWith(u"-----BEGIN RSA PRIVATE KEY-----"_s), "openssl made no RSA key");

        DesktopState state(m_admin.get());
        DesktopState::setInstance(&state);
        QStringList warnings;
        QQmlApplicationEngine engine;
        QQuickWindow *window = test::openMainWindow(engine, warnings);
        QVERIFY2(window, qPrintable(warnings.join(u'\n')));
        QMetaObject::invokeMethod(named(window, "sidebarSources"), "clicked");
        QTRY_COMPARE(state.currentView(), DesktopState::View::Sources);

        named(window, "sourceKindBox")->setProperty("currentIndex", int(SourcesModel::kinds().indexOf(u"gitlab"_s)));
        named(window, "appChoice")->setProperty("checked", true);
        // A GitHub App is GitHub's: the kind follows, and cannot be changed.
        QTRY_COMPARE(named(window, "sourceKindBox")->property("currentText").toString(), u"github"_s);
        QVERIFY(!named(window, "sourceKindBox")->property("enabled").toBool());
        QTRY_VERIFY(named(window, "sourceAppKeyArea")->isVisible());
        QVERIFY(!named(window, "sourceTokenField")->isVisible());
        named(window, "sourceNameField")->setProperty("text", u"acme-app"_s);
        named(window, "sourceUrlField")->setProperty("text", u"https://github.com"_s);
        named(window, "sourceAppIdField")->setProperty("text", u"812734"_s);
        named(window, "sourceInstallationField")->setProperty("text", u"41002"_s);
        named(window, "sourceAppKeyArea")->setProperty("text", u"not a key"_s);
        QQuickItem *add = named(window, "addSourceButton");
        QMetaObject::invokeMethod(add, "clicked");
        QTRY_VERIFY(state.sources()->hasFailed());
        QCOMPARE(state.sources()->failedField(), u"private_key"_s);

        named(window, "sourceAppKeyArea")->setProperty("text", pem);
        QMetaObject::invokeMethod(add, "clicked");
        QTRY_COMPARE(state.sources()->rowCount(), 1);
        QVERIFY2(!state.sources()->hasFailed(), qPrintable(state.sources()->outcome()));
        QCOMPARE(state.sources()->index(0).data(SourcesModel::AuthTextRole).toString(),
                 SourcesModel::tr("GitHub App %1, installation %2").arg(u"812734"_s, u"41002"_s));
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));

        state.sources()->remove(u"acme-app"_s);
        QTRY_COMPARE(state.sources()->rowCount(), 0);
        window->close();
        DesktopState::setInstance(nullptr);
    }

    void cleanupTestCase()
    {
        m_member.reset();
        m_admin.reset();
    }
};

QTEST_MAIN(TestSourcesModel)
#include "tst_sourcesmodel.moc"
