// The app detail's "Deploy on push" tab (AppHookModel, AppHookTab.qml) against this computer's
// own engine (InProcessSession over a temporary data directory, the real GitSource reading a
// real git repository made with GitFixture; runtime and router are fakes): the model says what
// an app with source.autodeploy follows and how, and that it has no secret yet; a secret Pando
// makes is 40 hex characters, shown once (the next read does not carry it) and copied to the
// clipboard; a chosen one too short is refused at "secret"; a push signed as GitHub signs it,
// sent to the webhook's address, shows as a row that ends deployed with its deploy, and a push to
// a branch the app does not follow as ignored, with why. Through a remote session the address is
// the install's own. The tab is opened in the whole window by its tab button, shows the address,
// makes a new secret through its confirm dialog, and is saved as a screenshot.

#include "adapters/source/generic/gitsource.h"
#include "app/desktop/session/inprocesssession.h"
#include "app/desktop/session/remotesession.h"
#include "app/desktop/shell/desktopstate.h"
#include "qml/apps/apphookmodel.h"
#include "qml/apps/apppreviewsmodel.h"
#include "tests/app/desktop/session/screenshots.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"
#include "tests/support/gitfixture.h"
#include "tests/support/githubpull.h"

#include <QAbstractItemModelTester>
#include <QClipboard>
#include <QGuiApplication>
#include <QJsonDocument>
#include <QMessageAuthenticationCode>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QQmlApplicationEngine>
#include <QQmlContext>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>
#include <QUuid>
#include <QtQml/qqmlextensionplugin.h>

Q_IMPORT_QML_PLUGIN(Pando_ShellPlugin)

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

#define VERIFY_OK(r) QVERIFY2(r, qPrintable(r ? QString() : test::describe(r.error())))

namespace {

QQuickItem *named(QObject *root, const char *name)
{
    return root->findChild<QQuickItem *>(QString::fromLatin1(name));
}

// A push as GitHub sends it (docs/autodeploy.md): signed with the secret in X-Hub-Signature-256.
struct Push {
    QByteArray body;
    QList<std::pair<QByteArray, QByteArray>> headers;
};

Push githubPush(const QByteArray &secret, const QString &repo, const QString &ref, const QString &after)
{
    const QJsonObject body{
        {u"ref"_s, ref},
        {u"before"_s, QString(40, u'0')},
        {u"after"_s, after},
        {u"created"_s, false},
        {u"deleted"_s, false},
        {u"repository"_s, QJsonObject{{u"full_name"_s, u"acme/shop"_s}, {u"clone_url"_s, repo}, {u"html_url"_s, repo}}},
        {u"pusher"_s, QJsonObject{{u"name"_s, u"alice"_s}, {u"email"_s, u"alice@example.com"_s}}},
    };
    Push push;
    push.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    const QByteArray signature =
        QMessageAuthenticationCode::hash(push.body, secret, QCryptographicHash::Sha256).toHex();
    push.headers = {{"Content-Type", "application/json"},
                    {"X-GitHub-Event", "push"},
                    {"X-GitHub-Delivery", QUuid::createUuid().toString(QUuid::WithoutBraces).toUtf8()},
                    {"X-Hub-Signature-256", "sha256=" + signature}};
    return push;
}

} // namespace

class TestAppHookModel : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    test::GitFixture m_git;
    QString m_repo;
    QString m_first;
    QString m_second;
    std::unique_ptr<InProcessSession> m_session;
    QByteArray m_secret; // the shop's webhook secret, once made
    QNetworkAccessManager m_network;

    QByteArray spec(const QString &name, const QString &autodeploy) const
    {
        // Nothing answers the fake runtime's health probe: a deploy ends after a second.
        return u"name: %1\nsource:\n  repo: %2\n  ref: main\n  autodeploy: %3\nrun:\n  port: 8080\n"
               u"health:\n  timeout: 1s\n"_s.arg(name, m_repo, autodeploy)
                   .toUtf8();
    }

    // POSTs the push to url as a forge does: the HTTP status (-1 with no answer) and the body.
    std::pair<int, QByteArray> deliver(const QString &url, const Push &push)
    {
        QNetworkRequest request{QUrl(url)};
        for (const auto &[name, value] : push.headers)
            request.setRawHeader(name, value);
        std::unique_ptr<QNetworkReply> reply(m_network.post(request, push.body));
        QSignalSpy finished(reply.get(), &QNetworkReply::finished);
        if (!reply->isFinished() && !finished.wait(20000))
            return {-1, "no answer"};
        return {reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), reply->readAll()};
    }

    // The row of the delivery whose commit starts with commit; -1 when none.
    static int rowOf(const AppHookModel &model, const QString &commit)
    {
        for (int row = 0; row < model.rowCount(); ++row)
            if (commit.startsWith(model.index(row).data(AppHookModel::CommitRole).toString()))
                return row;
        return -1;
    }

    std::unique_ptr<AppHookModel> loaded(Session *session, const QString &app)
    {
        auto model = std::make_unique<AppHookModel>();
        model->setSession(session);
        model->setApp(app);
        [&] {
            QTRY_VERIFY_WITH_TIMEOUT(model->isLoaded() && !model->isLoading(), 10000);
        }();
        return model;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QVERIFY(QDir().mkpath(test::screenshotDir()));
        QVERIFY2(m_git.isValid(), "git is needed (Debian's git)");
        QVERIFY(!m_git.createRepository(u"shop"_s).isEmpty());
        m_first = m_git.commit(u"shop"_s, u"main"_s, {{u"Dockerfile"_s, test::GitFile{"FROM scratch\n"}}});
        m_second = m_git.commit(u"shop"_s, u"main"_s, {{u"README"_s, test::GitFile{"two\n"}}});
        QVERIFY2(!m_first.isEmpty() && !m_second.isEmpty(), qPrintable(m_git.errorString()));
        m_repo = m_git.url(u"shop"_s);

        InProcessOptions options;
        options.engine.dataDir = m_dir.filePath(u"data"_s);
        options.engine.reconcileIntervalMs = 0;
        options.engine.healthTickMs = 0;
        options.engine.workers = 1;
        options.userName = u"owner"_s;
        options.runtime = std::make_shared<test::FakeRuntime>();
        options.router = std::make_shared<test::FakeRouter>();
        options.source = std::make_shared<adapters::git::GitSource>(m_dir.filePath(u"cache/git"_s));
        options.services = std::make_shared<test::FakeServiceProvisioner>();
        options.installPipelines = [](core::Engine &) -> Status {
            return {};
        };
        m_session = std::make_unique<InProcessSession>(std::move(options));
        m_session->open();
        QString why;
        QVERIFY2(test::awaitConnected(*m_session, &why), qPrintable(why));

        VERIFY_OK(test::awaitObject([&](auto done) { m_session->createApp(spec(u"shop"_s, u"push"_s), done); }));
        VERIFY_OK(test::awaitObject(
            [&](auto done) { m_session->createApp(spec(u"tagged"_s, u"{on: push, tags: \"v*\"}"_s), done); }));
        VERIFY_OK(test::awaitObject([&](auto done) { m_session->createApp(spec(u"quiet"_s, u"off"_s), done); }));
    }

    void readsWhatTheAppFollows()
    {
        AppHookModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(m_session.get());
        model.setApp(u"shop"_s);
        QTRY_VERIFY_WITH_TIMEOUT(model.isLoaded() && !model.isLoading(), 10000);
        QVERIFY2(model.error().isEmpty(), qPrintable(model.error()));
        QCOMPARE(model.mode(), u"push"_s);
        QCOMPARE(model.follows(), AppHookModel::tr("branch %1").arg(u"main"_s));
        QCOMPARE(model.hookPath(), u"/api/v1/hooks/shop"_s);
        // This computer's engine answers on loopback only: the path, and how a forge reaches it.
        QCOMPARE(model.hookUrl(), u"/api/v1/hooks/shop"_s);
        QVERIFY2(model.hookHint().contains(u"teammates"_s), qPrintable(model.hookHint()));
        QVERIFY(!model.isSecretSet());
        QCOMPARE(model.secretText(), AppHookModel::tr("none yet"));
        QVERIFY(model.pollText().isEmpty());
        QCOMPARE(model.rowCount(), 0);

        auto tagged = loaded(m_session.get(), u"tagged"_s);
        QCOMPARE(tagged->mode(), u"push"_s);
        QCOMPARE(tagged->follows(), AppHookModel::tr("tags matching %1").arg(u"v*"_s));
        auto quiet = loaded(m_session.get(), u"quiet"_s);
        QCOMPARE(quiet->mode(), u"off"_s);
        QCOMPARE(quiet->modeText(), AppHookModel::tr("off"));

        // An app that is not there: the install's words, naming it.
        auto missing = loaded(m_session.get(), u"nosuchapp"_s);
        QVERIFY2(missing->error().contains(u"nosuchapp"_s), qPrintable(missing->error()));
    }

    void aSecretIsShownOnce()
    {
        AppHookModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(m_session.get());
        model.setApp(u"shop"_s);
        QTRY_VERIFY_WITH_TIMEOUT(model.isLoaded(), 10000);

        // A chosen secret too short: refused at "secret", nothing changes.
        model.setSecret(u"short"_s);
        QVERIFY(model.isBusy());
        QTRY_VERIFY_WITH_TIMEOUT(!model.isBusy(), 10000);
        QCOMPARE(model.errorField(), u"secret"_s);
        QVERIFY2(model.error().contains(u"16 to 256"_s), qPrintable(model.error()));
        QVERIFY(!model.error().contains(u"short"_s));
        model.refresh();
        QTRY_VERIFY(!model.isLoading());
        QVERIFY(!model.isSecretSet());
        QCOMPARE(model.errorField(), u"secret"_s); // a read does not hide the refusal

        // A chosen one that fits: set by the desktop's user, not shown back.
        model.setSecret(u"a-secret-of-our-own-42"_s);
        QTRY_VERIFY_WITH_TIMEOUT(!model.isBusy() && model.isSecretSet(), 10000);
        QVERIFY2(model.error().isEmpty(), qPrintable(model.error()));
        QVERIFY(model.newSecret().isEmpty());
        QVERIFY2(
            model.secretText().startsWith(AppHookModel::tr("set by %1 at %2").arg(u"owner"_s, QString()).trimmed()),
            qPrintable(model.secretText()));

        // One Pando makes: 40 hex characters, here until the tab goes.
        QSignalSpy shown(&model, &AppHookModel::newSecretChanged);
        model.makeSecret();
        QTRY_VERIFY_WITH_TIMEOUT(!model.newSecret().isEmpty(), 10000);
        const QString secret = model.newSecret();
        QVERIFY2(QRegularExpression(u"^[0-9a-f]{40}$"_s).match(secret).hasMatch(), qPrintable(secret));
        QTRY_VERIFY(!model.isLoading());
        QVERIFY(model.isSecretSet());
        model.copyNewSecret();
        QCOMPARE(QGuiApplication::clipboard()->text(), secret);
        model.copyHookUrl();
        QCOMPARE(QGuiApplication::clipboard()->text(), u"/api/v1/hooks/shop"_s);
        m_secret = secret.toLatin1();

        // Shown once: neither another look at the webhook nor the install's answer carries it.
        auto again = loaded(m_session.get(), u"shop"_s);
        QVERIFY(again->isSecretSet());
        QVERIFY(again->newSecret().isEmpty());
        auto hook = test::awaitObject([&](auto done) { m_session->appHook(u"shop"_s, 5, done); });
        VERIFY_OK(hook);
        QVERIFY(!hook->contains(u"secret"_s));
        QVERIFY(!QJsonDocument(*hook).toJson().contains(m_secret));
        QVERIFY(hook->value(u"secret_set_by"_s).toString().startsWith(u"user:owner/"_s));

        // Done: the tab lets go of it.
        model.forgetNewSecret();
        QVERIFY(model.newSecret().isEmpty());
        QCOMPARE(shown.count(), 2);
    }

    void deliveriesShowWhatBecameOfThem()
    {
        QVERIFY(!m_secret.isEmpty());
        AppHookModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(m_session.get());
        model.setApp(u"shop"_s);
        QTRY_VERIFY_WITH_TIMEOUT(model.isLoaded(), 10000);
        QCOMPARE(model.rowCount(), 0);

        // Pushed: the branch is at m_second already, and m_first is what deploys. The row comes
        // with the deploy's events, and settles as deployed.
        const QString url = u"http://127.0.0.1:%1%2"_s.arg(m_session->port()).arg(model.hookPath());
        auto [status, body] = deliver(url, githubPush(m_secret, m_repo, u"refs/heads/main"_s, m_first));
        QVERIFY2(status == 202, body.constData());
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(model.index(0).data(AppHookModel::OutcomeRole).toString(), u"deployed"_s, 20000);
        const QModelIndex pushed = model.index(0);
        QCOMPARE(pushed.data(AppHookModel::ForgeRole).toString(), u"github"_s);
        QCOMPARE(pushed.data(AppHookModel::EventRole).toString(), u"push"_s);
        QCOMPARE(pushed.data(AppHookModel::RefRole).toString(), u"refs/heads/main"_s);
        QCOMPARE(pushed.data(AppHookModel::CommitRole).toString(), m_first.left(12));
        QCOMPARE(pushed.data(AppHookModel::PusherRole).toString(), u"alice"_s);
        QCOMPARE(pushed.data(AppHookModel::OutcomeStateRole).toInt(), int(DisplayState::Healthy));
        QCOMPARE(pushed.data(AppHookModel::OutcomeTextRole).toString(), AppHookModel::tr("deployed"));
        QVERIFY(!pushed.data(AppHookModel::ReceivedRole).toString().isEmpty());
        const QString deployId = pushed.data(AppHookModel::DeployIdRole).toString();
        QVERIFY(!deployId.isEmpty());
        QCOMPARE(pushed.data(AppHookModel::SummaryRole).toString(), AppHookModel::tr("deploy %1").arg(deployId));
        auto deploy = test::awaitObject([&](auto done) { m_session->deployDetail(deployId, done); });
        VERIFY_OK(deploy);
        QCOMPARE(deploy->value(u"commit"_s).toString(), m_first);

        // A push to another branch deploys nothing and raises no event: read again, it says why.
        QTest::qWait(5); // newest first, by the time it came
        std::tie(status, body) = deliver(url, githubPush(m_secret, m_repo, u"refs/heads/dev"_s, m_second));
        QVERIFY2(status == 200, body.constData());
        model.refresh();
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 2, 10000);
        const QModelIndex ignored = model.index(0);
        QCOMPARE(ignored.data(AppHookModel::OutcomeRole).toString(), u"ignored"_s);
        QCOMPARE(ignored.data(AppHookModel::OutcomeStateRole).toInt(), int(DisplayState::Neutral));
        QCOMPARE(ignored.data(AppHookModel::CommitRole).toString(), m_second.left(12));
        QVERIFY(ignored.data(AppHookModel::DeployIdRole).toString().isEmpty());
        const QString why = ignored.data(AppHookModel::SummaryRole).toString();
        QVERIFY2(why.contains(u"refs/heads/dev"_s) && why.contains(u"main"_s), qPrintable(why));
        QCOMPARE(rowOf(model, m_first), 1);

        // A wrong signature is refused and leaves no row.
        std::tie(status, body) =
            deliver(url, githubPush("not-the-secret-at-all", m_repo, u"refs/heads/main"_s, m_second));
        QVERIFY2(status == 401, body.constData());
        QVERIFY2(body.contains("X-Hub-Signature-256"), body.constData());
        model.refresh();
        QTRY_VERIFY(!model.isLoading());
        QCOMPARE(model.rowCount(), 2);
    }

    // Through a session attached to the same engine's API as a remote one: the address is the
    // install's own, and a forge's delivery to it arrives.
    void aRemoteSessionGivesTheWholeAddress()
    {
        QFile tokenFile(m_dir.filePath(u"data/desktop-token"_s));
        QVERIFY(tokenFile.open(QIODevice::ReadOnly));
        RemoteSession remote(m_session->baseUrl(), QString::fromUtf8(tokenFile.readAll()).trimmed());
        remote.open();
        QString why;
        QVERIFY2(test::awaitConnected(remote, &why), qPrintable(why));
        auto model = loaded(&remote, u"shop"_s);
        QCOMPARE(model->hookUrl(), u"http://127.0.0.1:%1/api/v1/hooks/shop"_s.arg(m_session->port()));
        QVERIFY(!model->hookHint().isEmpty());
        // Registering on the forge offers the address the session reaches the install at; the
        // install refuses it (loopback) at "url", and an app read through no connection at
        // "source.connection", each said in the model's error.
        QCOMPARE(model->publicBase(), u"http://127.0.0.1:%1"_s.arg(m_session->port()));
        model->registerOnForge(model->publicBase());
        QTRY_VERIFY_WITH_TIMEOUT(!model->isBusy() && !model->error().isEmpty(), 10000);
        QCOMPARE(model->errorField(), u"url"_s);
        model->registerOnForge(u"https://pando.example.com"_s);
        QTRY_VERIFY_WITH_TIMEOUT(!model->isBusy() && model->errorField() == u"source.connection"_s, 10000);
        QVERIFY2(model->error().contains(u"no connection"_s), qPrintable(model->error()));
        QVERIFY(model->registered().isEmpty());
        const int before = model->rowCount();
        const auto [status, body] =
            deliver(model->hookUrl(), githubPush(m_secret, m_repo, u"refs/heads/other"_s, m_second));
        QVERIFY2(status == 200, body.constData());
        model->refresh();
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), before + 1, 10000);
    }

    void theTabInTheWindow()
    {
        DesktopState state(m_session.get());
        DesktopState::setInstance(&state);
        QStringList warnings;
        QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
        QQuickStyle::setStyle(u"Fusion"_s);
        QQmlApplicationEngine engine;
        QQuickWindow *window = test::openMainWindow(engine, warnings);
        QVERIFY2(window, qPrintable(warnings.join(u'\n')));

        QTRY_VERIFY_WITH_TIMEOUT(state.apps()->rowOf(u"shop"_s) >= 0, 10000);
        state.apps()->selectApp(u"shop"_s);
        QQuickItem *tabButton = nullptr;
        QTRY_VERIFY((tabButton = named(window, "hookTab")) && tabButton->isVisible() && tabButton->width() > 20);
        QTest::mouseClick(window, Qt::LeftButton, {},
                          tabButton->mapToScene(QPointF(tabButton->width() / 2, tabButton->height() / 2)).toPoint());
        QTRY_VERIFY(tabButton->property("checked").toBool());
        QQuickItem *address = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((address = named(window, "hookUrlField")) && address->isVisible(), 10000);
        QTRY_COMPARE(address->property("text").toString(), u"/api/v1/hooks/shop"_s);
        QVERIFY(named(window, "hookHint")->isVisible());
        QVERIFY(!named(window, "hookOff")->isVisible());
        // No pull request has a preview: the tab says how one comes.
        QTRY_VERIFY_WITH_TIMEOUT(named(window, "noPreviews") && named(window, "noPreviews")->isVisible(), 10000);
        QVERIFY(!named(window, "forgeHints")->isVisible()); // folded until a secret waits to be pasted
        auto *tab = named(window, "hookLoader")->property("item").value<QObject *>();
        QVERIFY(tab);
        auto *model = tab->property("hookModel").value<AppHookModel *>();
        QVERIFY(model);

        // New secret: asked first, then shown once with its warning.
        QQuickItem *make = named(window, "newHookSecretButton");
        QTRY_VERIFY(make->property("enabled").toBool());
        QMetaObject::invokeMethod(make, "clicked");
        // A popup is no child of the view it is declared in: found by its id.
        QObject *dialog = qmlContext(tab)->objectForName(u"newSecretDialog"_s);
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->property("opened").toBool());
        QMetaObject::invokeMethod(dialog, "accept");
        QQuickItem *revealed = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((revealed = named(window, "newHookSecret")) && revealed->isVisible(), 10000);
        // Where to paste it opens with it.
        QVERIFY(named(window, "forgeHints")->isVisible());
        const QString secret = named(window, "newHookSecretField")->property("text").toString();
        QVERIFY2(QRegularExpression(u"^[0-9a-f]{40}$"_s).match(secret).hasMatch(), qPrintable(secret));
        m_secret = secret.toLatin1();

        // A push signed with it shows in the list, newest first.
        const QString url = u"http://127.0.0.1:%1/api/v1/hooks/shop"_s.arg(m_session->port());
        const auto [status, body] = deliver(url, githubPush(m_secret, m_repo, u"refs/heads/main"_s, m_second));
        QVERIFY2(status == 202, body.constData());
        QTRY_VERIFY_WITH_TIMEOUT(rowOf(*model, m_second) == 0 &&
                                     model->index(0).data(AppHookModel::OutcomeRole).toString() == u"deployed"_s,
                                 20000);
        QTRY_VERIFY(named(window, "deliveriesList")->isVisible());
        QVERIFY(!named(window, "noDeliveries")->isVisible());

        QTest::qWait(300);
        const QImage image = window->grabWindow();
        QVERIFY(!test::saveScreenshot(image, u"desktop-app-hook"_s).isEmpty());
        QVERIFY2(test::distinctColours(image) > 16, "the deploy-on-push tab rendered blank");
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));
        window->close();
        DesktopState::setInstance(nullptr);
    }

    // Previews (docs/autodeploy.md): a pull request signed as GitHub signs it, sent to the webhook
    // over HTTP, makes a preview the model lists with its branch, commit and state; removing it
    // from the model takes its row away, and the hook's row of a closed request says removed.
    void previewsLiveWithTheirPullRequest()
    {
        const QString head = m_git.commit(u"shop"_s, u"feature-x"_s, {{u"PAGE"_s, test::GitFile{"search\n"}}});
        QVERIFY2(!head.isEmpty(), qPrintable(m_git.errorString()));
        const QByteArray spec = u"name: web\nsource:\n  repo: %1\n  ref: main\n  autodeploy: push\n"
                                u"run:\n  port: 8080\nhealth:\n  timeout: 1s\npreview:\n  ttl: 24h\n"_s.arg(m_repo)
                                    .toUtf8();
        VERIFY_OK(test::awaitObject([&](auto done) { m_session->createApp(spec, done); }));
        auto made = test::awaitObject([&](auto done) { m_session->newHookSecret(u"web"_s, {}, done); });
        VERIFY_OK(made);
        const QByteArray secret = made->value(u"secret"_s).toString().toLatin1();
        QVERIFY(!secret.isEmpty());

        AppPreviewsModel previews;
        QAbstractItemModelTester tester(&previews, QAbstractItemModelTester::FailureReportingMode::QtTest);
        previews.setSession(m_session.get());
        previews.setApp(u"web"_s);
        QTRY_VERIFY_WITH_TIMEOUT(previews.isLoaded(), 10000);
        QCOMPARE(previews.rowCount(), 0);

        test::GitHubPull pull;
        pull.number = 3;
        pull.sha = head;
        pull.baseRepo = m_repo;
        const QString url = u"http://127.0.0.1:%1/api/v1/hooks/web"_s.arg(m_session->port());
        const test::GitHubDelivery opened = test::githubPullDelivery(secret, pull);
        auto [status, body] = deliver(url, Push{opened.body, opened.headers});
        QVERIFY2(status == 202, body.constData());
        QTRY_COMPARE_WITH_TIMEOUT(previews.rowCount(), 1, 20000);
        const QModelIndex row = previews.index(0);
        QCOMPARE(row.data(AppPreviewsModel::NumberRole).toInt(), 3);
        QCOMPARE(row.data(AppPreviewsModel::PreviewAppRole).toString(), u"web-pr-3"_s);
        QCOMPARE(row.data(AppPreviewsModel::BranchRole).toString(), u"feature-x"_s);
        QCOMPARE(row.data(AppPreviewsModel::CommitRole).toString(), head.left(12));
        QCOMPARE(row.data(AppPreviewsModel::TitleRole).toString(), pull.title);
        QVERIFY2(!row.data(AppPreviewsModel::ExpiresTextRole).toString().isEmpty(), "when the preview goes is said");
        // Its deploy built the pull request's head. The preview app exists a moment before its
        // deploy is queued: read again until it names one (a loaded machine showed the gap).
        QTRY_VERIFY_WITH_TIMEOUT(!previews.index(0).data(AppPreviewsModel::StatusTextRole).toString().isEmpty(), 20000);
        QString deployId;
        QTRY_VERIFY_WITH_TIMEOUT(!(deployId = test::awaitObject([&](auto done) { m_session->app(u"web-pr-3"_s, done); })
                                                  .value_or(QJsonObject())
                                                  .value(u"last_deploy"_s)
                                                  .toObject()
                                                  .value(u"id"_s)
                                                  .toString())
                                      .isEmpty(),
                                 20000);
        auto deploy = test::awaitObject([&](auto done) { m_session->deployDetail(deployId, done); });
        VERIFY_OK(deploy);
        QCOMPARE(deploy->value(u"commit"_s).toString(), head);

        previews.remove(3);
        QTRY_COMPARE_WITH_TIMEOUT(previews.rowCount(), 0, 20000);
        QVERIFY2(previews.error().isEmpty(), qPrintable(previews.error()));

        // Closed after: nothing is left to remove, and the delivery says so.
        pull.action = u"closed"_s;
        const test::GitHubDelivery closed = test::githubPullDelivery(secret, pull);
        std::tie(status, body) = deliver(url, Push{closed.body, closed.headers});
        QVERIFY2(status == 200, body.constData());
        QVERIFY2(body.contains("no preview"), body.constData());
        auto hook = loaded(m_session.get(), u"web"_s);
        QCOMPARE(hook->index(0).data(AppHookModel::OutcomeRole).toString(), u"ignored"_s);
        QVERIFY(test::awaitDone([&](auto done) { m_session->removeApp(u"web"_s, done); }));
    }

    void cleanupTestCase() { m_session.reset(); }
};

QTEST_MAIN(TestAppHookModel)
#include "tst_apphookmodel.moc"
