// SourceRepositoriesModel and the Sources view's "Repositories" list against a real API server
// (fake adapters) through RemoteSession, the install's forge APIs answered by the local stand-in
// for the forges' REST APIs (tests/adapters/forge/forge_api_standin.py; no forge on the internet
// is reached): the repositories a GitHub token connection sees, loaded on demand; a connection
// without an API says why, hint included; "Create app…" opens the New app dialog filled in with
// the repository's clone URL, default branch and name. An OAuth application is authorized through
// the browser (the test plays it: the stand-in's page, then the loopback address the model
// listens on), refused there, and given up on.

#include "adapters/forge/rest/forgerest.h"
#include "app/desktop/session/remotesession.h"
#include "app/desktop/shell/desktopstate.h"
#include "qml/sources/sourcerepositoriesmodel.h"
#include "qml/sources/sourcesmodel.h"
#include "tests/adapters/forge/forgestandin.h"
#include "tests/app/desktop/session/screenshots.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"
#include "tests/support/component.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QNetworkAccessManager>
#include <QNetworkReply>
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

const QByteArray Token = "ghp_desktop-Repos-Standin-2600";

QObject *named(QObject *root, const char *name)
{
    return root->findChild<QObject *>(QString::fromLatin1(name));
}

// An item below root by its objectName, through the visual tree: a ListView's delegates have no
// QObject parent for findChild to follow.
QQuickItem *namedItem(QQuickItem *root, const QString &name)
{
    if (!root)
        return nullptr;
    if (root->objectName() == name)
        return root;
    for (QQuickItem *child : root->childItems())
        if (QQuickItem *found = namedItem(child, name))
            return found;
    return nullptr;
}

} // namespace

class TestSourceRepositoriesModel : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<test::ForgeStandIn> m_standIn;
    test::TestInstall m_install;
    std::unique_ptr<RemoteSession> m_admin;

private Q_SLOTS:
    void initTestCase()
    {
        PANDO_REQUIRE_COMPONENT(test::ForgeStandIn::available(),
                                u"Debian's python3 with python3-jwt (runs the stand-in for the forges' APIs)"_s);
        m_standIn = std::make_unique<test::ForgeStandIn>(Token);
        QVERIFY2(m_standIn->start(), "the stand-in for the forges' APIs did not start");
        const QString base = m_standIn->base();
        m_install.forgeApis = [base](const adapters::ForgeAccount &account) {
            return adapters::forgerest::makeApi(account, {.apiBase = base + u"/github"_s, .requestTimeoutMs = 5000});
        };
        m_install.forgeOAuth =
            adapters::forgerest::makeOAuth({.apiBase = base + u"/github"_s, .requestTimeoutMs = 5000});
        QVERIFY2(m_install.start(), qPrintable(m_install.error));
        const core::Actor system = core::Actor::system(u"test"_s);
        core::sourceconn::ConnectionInput github;
        github.name = u"github"_s;
        github.scope = adapters::ForgeScope{adapters::ForgeKind::GitHub, u"https://github.com"_s, {}};
        github.auth = core::sourceconn::AuthKind::Token;
        github.secret = Token;
        auto added = m_install.engine->addConnection(github, system);
        QVERIFY2(added, qPrintable(added ? QString() : added.error().text()));
        core::sourceconn::ConnectionInput plain = github;
        plain.name = u"plain"_s;
        plain.scope = adapters::ForgeScope{adapters::ForgeKind::Generic, u"https://git.example.com"_s, {}};
        plain.username = u"me"_s;
        added = m_install.engine->addConnection(plain, system);
        QVERIFY2(added, qPrintable(added ? QString() : added.error().text()));

        m_admin = std::make_unique<RemoteSession>(QUrl(m_install.baseUrl()), m_install.token);
        m_admin->open();
        QString why;
        QVERIFY2(test::awaitConnected(*m_admin, &why), qPrintable(why));
    }

    void appNames_data()
    {
        QTest::addColumn<QString>("fullName");
        QTest::addColumn<QString>("appName");
        QTest::newRow("owner/name") << u"acme/api"_s << u"api"_s;
        QTest::newRow("subgroup") << u"acme/platform/Web_Shop"_s << u"web-shop"_s;
        QTest::newRow("dots and .git") << u"acme/site.example.git"_s << u"site-example"_s;
        QTest::newRow("edges") << u"acme/--Tools--"_s << u"tools"_s;
    }

    void appNames()
    {
        QFETCH(QString, fullName);
        QFETCH(QString, appName);
        QCOMPARE(SourceRepositoriesModel::appNameFor(fullName), appName);
    }

    void listsOnDemand()
    {
        SourceRepositoriesModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(m_admin.get());
        model.setConnection(u"github"_s);
        // Nothing is asked of the forge until the view asks.
        QTest::qWait(200);
        QVERIFY(!model.isLoaded());
        QCOMPARE(m_standIn->requests(u"github"_s).size(), 0);

        model.load();
        QVERIFY(model.isLoading());
        QTRY_VERIFY(model.isLoaded());
        QVERIFY(!model.isLoading());
        QVERIFY2(model.error().isEmpty(), qPrintable(model.error()));
        QCOMPARE(model.rowCount(), 3);
        const QModelIndex web = model.index(1);
        QCOMPARE(web.data(SourceRepositoriesModel::FullNameRole).toString(), u"acme/web"_s);
        QCOMPARE(web.data(SourceRepositoriesModel::CloneUrlRole).toString(), u"https://github.com/acme/web.git"_s);
        QCOMPARE(web.data(SourceRepositoriesModel::DefaultBranchRole).toString(), u"trunk"_s);
        QCOMPARE(web.data(SourceRepositoriesModel::PrivateRole).toBool(), false);
        QCOMPARE(web.data(SourceRepositoriesModel::VisibilityTextRole).toString(),
                 SourceRepositoriesModel::tr("public"));
        QCOMPARE(web.data(SourceRepositoriesModel::AppNameRole).toString(), u"web"_s);
        QCOMPARE(model.index(0).data(SourceRepositoriesModel::PrivateRole).toBool(), true);

        // Another connection: the list empties until it is asked for; a generic host has no API.
        model.setConnection(u"plain"_s);
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(!model.isLoaded());
        model.load();
        QTRY_VERIFY(!model.isLoading());
        QVERIFY(!model.isLoaded());
        QVERIFY2(model.error().contains(u"generic git host"_s) && model.error().contains(u"--kind github"_s),
                 qPrintable(model.error()));
        QCOMPARE(model.rowCount(), 0);

        // The forge refusing the token: said, the token nowhere.
        model.setConnection(u"github"_s);
        m_standIn->failFor(u"github"_s, u"*"_s, 401);
        model.load();
        QTRY_VERIFY(!model.isLoading());
        QVERIFY2(model.error().contains(u"refused the token"_s), qPrintable(model.error()));
        QVERIFY(!model.error().contains(QString::fromLatin1(Token)));
        m_standIn->reset();
    }

    void createAppFromRepository()
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
        QTRY_COMPARE(state.sources()->rowCount(), 2);
        QObject *list = named(window, "sourcesList");
        QVERIFY(list);
        list->setProperty("currentIndex", 0); // "github", the list's first
        QTRY_VERIFY(named(window, "sourceRepositories") &&
                    named(window, "sourceRepositories")->property("visible").toBool());
        QMetaObject::invokeMethod(named(window, "loadRepositoriesButton"), "clicked");
        QTRY_VERIFY(named(window, "repositoryList") && named(window, "repositoryList")->property("visible").toBool());
        QTRY_COMPARE(named(window, "repositoryList")->property("count").toInt(), 3);

        QQuickItem *first = nullptr; // acme/api
        QVERIFY(QMetaObject::invokeMethod(named(window, "repositoryList"), "itemAtIndex",
                                          Q_RETURN_ARG(QQuickItem *, first), Q_ARG(int, 0)));
        QQuickItem *create = namedItem(first, u"createAppFromRepository"_s);
        QVERIFY(create);
        QMetaObject::invokeMethod(create, "clicked");
        QTRY_COMPARE(state.currentView(), DesktopState::View::Apps);
        QObject *dialog = named(window, "createAppDialog");
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->property("opened").toBool());
        QCOMPARE(named(window, "nameField")->property("text").toString(), u"api"_s);
        QCOMPARE(named(window, "repoField")->property("text").toString(), u"https://github.com/acme/api.git"_s);
        QCOMPARE(named(window, "refField")->property("text").toString(), u"main"_s);
        // The repository's branches, listed through the connection, fill the ref in one click.
        QTRY_VERIFY(named(window, "branchesButton")->property("visible").toBool());
        QObject *menu = named(window, "branchesMenu");
        QVERIFY(menu);
        QTRY_COMPARE(menu->property("count").toInt(), 3);
        QQuickItem *release = nullptr;
        QVERIFY(QMetaObject::invokeMethod(menu, "itemAt", Q_RETURN_ARG(QQuickItem *, release), Q_ARG(int, 2)));
        QVERIFY(release);
        QCOMPARE(release->property("text").toString(), u"release"_s);
        QVERIFY(QMetaObject::invokeMethod(release, "triggered"));
        QCOMPARE(named(window, "refField")->property("text").toString(), u"release"_s);
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));

        QMetaObject::invokeMethod(dialog, "close");
        window->close();
        DesktopState::setInstance(nullptr);
    }

    void oauthAppAuthorizedInTheBrowser()
    {
        const QByteArray secret = "desktop-Client-Secret-6061";
        m_standIn->oauthApp(u"Iv1.desk"_s, secret, 3600);
        SourcesModel model;
        model.setSession(m_admin.get());
        QTRY_VERIFY(model.isLoaded());
        QNetworkAccessManager browser;
        QByteArray page;
        // The browser: the forge's page sends it back to the model's loopback address.
        model.setUrlOpener([&](const QUrl &url) {
            const QString back = test::ForgeStandIn::authorizationRedirect(QString::fromUtf8(url.toEncoded()));
            QNetworkReply *reply = browser.get(QNetworkRequest(QUrl(back)));
            connect(reply, &QNetworkReply::finished, reply, [reply, &page] {
                page = reply->readAll();
                reply->deleteLater();
            });
        });
        model.addOAuthApp(u"gh-oauth"_s, u"github"_s, u"https://github.com"_s, u"acme"_s, u"Iv1.desk"_s,
                          QString::fromLatin1(secret));
        QVERIFY(model.isBusy());
        QTRY_VERIFY2(!model.isBusy(), qPrintable(model.outcome()));
        QVERIFY2(!model.hasFailed(), qPrintable(model.outcome()));
        QVERIFY2(model.outcome().startsWith(u"Added gh-oauth"_s), qPrintable(model.outcome()));
        QTRY_VERIFY(page.contains("Pando is authorized"));
        QTRY_COMPARE(model.authOf(u"gh-oauth"_s), u"oauth"_s);
        QVERIFY(model.authorizeUrl().isEmpty());
        bool shown = false;
        for (int row = 0; row < model.rowCount(); ++row) {
            const QModelIndex index = model.index(row);
            if (index.data(SourcesModel::NameRole).toString() == u"gh-oauth"_s)
                shown = index.data(SourcesModel::AuthTextRole).toString() == u"OAuth app Iv1.desk"_s;
        }
        QVERIFY(shown);

        // The user chooses Deny on the forge's page: said, and nothing changes.
        m_standIn->oauthApp(u"Iv1.desk"_s, secret, 3600, true);
        page.clear();
        model.authorize(u"gh-oauth"_s);
        QTRY_VERIFY(!model.isBusy());
        QVERIFY(model.hasFailed());
        QVERIFY2(model.outcome().contains(u"refused on the forge's page"_s), qPrintable(model.outcome()));

        // Given up on while the browser is away: nothing waits any more.
        model.setUrlOpener([](const QUrl &) {});
        model.authorize(u"gh-oauth"_s);
        QTRY_VERIFY(!model.authorizeUrl().isEmpty());
        QVERIFY(model.authorizeUrl().contains(u"/github/login/oauth/authorize?"_s));
        model.cancelAuthorization();
        QVERIFY(!model.isBusy());
        QVERIFY(model.authorizeUrl().isEmpty());
        QVERIFY(!model.hasFailed());

        model.remove(u"gh-oauth"_s);
        QTRY_VERIFY(!model.isBusy());
        QTRY_COMPARE(model.authOf(u"gh-oauth"_s), QString());
    }

    void cleanupTestCase() { m_admin.reset(); }
};

QTEST_MAIN(TestSourceRepositoriesModel)
#include "tst_sourcerepositoriesmodel.moc"
