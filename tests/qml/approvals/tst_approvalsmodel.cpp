// ApprovalsModel, the tray's notifications and the Approvals view against a real API server (fake
// adapters) through RemoteSession: a deploy the install's policy holds appears as a row from the
// event stream, its requester is refused in place, another person's approval removes the row and
// the deploy goes on; the view is rendered offscreen at 1280×800 and saved under the build dir.

#include "app/desktop/session/remotesession.h"
#include "app/desktop/shell/desktopstate.h"
#include "app/desktop/shell/trayicon.h"
#include "core/policy/policy.h"
#include "qml/approvals/approvalsmodel.h"
#include "tests/app/desktop/session/screenshots.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDir>
#include <QImage>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSet>
#include <QSignalSpy>
#include <QTest>
#include <QtQml/qqmlextensionplugin.h>

Q_IMPORT_QML_PLUGIN(Pando_AppsPlugin)
Q_IMPORT_QML_PLUGIN(Pando_ApprovalsPlugin)
Q_IMPORT_QML_PLUGIN(Pando_ShellPlugin)

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

namespace {

QString planValue(const ApprovalsModel &model, const QString &label)
{
    for (const QVariant &line : model.planLines())
        if (line.toMap().value(u"label"_s).toString() == label)
            return line.toMap().value(u"value"_s).toString();
    return u"<no %1 line>"_s.arg(label);
}

} // namespace

class TestApprovalsModel : public QObject {
    Q_OBJECT

private:
    test::TestInstall m_install;
    std::unique_ptr<RemoteSession> m_session;   // the administrator: approves
    std::unique_ptr<RemoteSession> m_requester; // the operator: creates and deploys gated apps

    QByteArray appSpec(const QString &name) const
    {
        return u"name: %1\nsource:\n  repo: https://git.example/%1.git\n  ref: main\nrun:\n  port: %2\n"
               u"health:\n  path: /api/v1/health\n"_s.arg(name)
                   .arg(m_install.port)
                   .toUtf8();
    }

    // Creates the app as the operator and deploys it; the policy holds the deploy. Returns its id.
    QString heldDeploy(const QString &name)
    {
        auto app = test::awaitObject([&](auto done) { m_requester->createApp(appSpec(name), done); });
        if (!app)
            return {};
        auto queued = test::awaitObject([&](auto done) { m_requester->deploy(name, {}, done); });
        return queued ? queued->value(u"id"_s).toString() : QString();
    }

    QString deployStatus(const QString &id)
    {
        auto detail = test::awaitObject([&](auto done) { m_session->deployDetail(id, done); });
        return detail ? detail->value(u"status"_s).toString() : detail.error().text();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(QDir().mkpath(test::screenshotDir()));
        // Deploys of apps named gated-* from a repository not seen before wait for sign-off.
        auto policy = core::policy::parsePolicy(R"({"apps": ["gated-*"], "changes": {"newSourceRepo": true}})");
        QVERIFY2(policy, qPrintable(policy ? QString() : policy.error().text()));
        m_install.approvalPolicy = *policy;
        QVERIFY2(m_install.start(), qPrintable(m_install.error));
        m_session = std::make_unique<RemoteSession>(QUrl(m_install.baseUrl()), m_install.token);
        m_requester = std::make_unique<RemoteSession>(QUrl(m_install.baseUrl()), m_install.tokens.value(u"operator"_s));
        QString why;
        m_session->open();
        QVERIFY2(test::awaitConnected(*m_session, &why), qPrintable(why));
        m_requester->open();
        QVERIFY2(test::awaitConnected(*m_requester, &why), qPrintable(why));
    }

    void heldDeployIsApprovedBySomeoneElse()
    {
        ApprovalsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(m_session.get());
        QTRY_VERIFY(model.isLoaded());
        QCOMPARE(model.rowCount(), 0);

        ApprovalsModel mine; // what the requester's own desktop shows
        QAbstractItemModelTester mineTester(&mine, QAbstractItemModelTester::FailureReportingMode::QtTest);
        mine.setSession(m_requester.get());
        QTRY_VERIFY(mine.isLoaded());

        const QString deploy = heldDeploy(u"gated-web"_s);
        QVERIFY(!deploy.isEmpty());
        // Loaded already and not refreshed since: the row comes from approval.requested.
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, 20000);
        const QModelIndex row = model.index(0);
        QCOMPARE(row.data(ApprovalsModel::KindRole).toString(), u"deploy"_s);
        QCOMPARE(row.data(ApprovalsModel::ObjectRole).toString(), u"deploy/"_s + deploy);
        QVERIFY2(row.data(ApprovalsModel::RequesterRole).toString().startsWith(u"user:operator"_s),
                 qPrintable(row.data(ApprovalsModel::RequesterRole).toString()));
        QCOMPARE(row.data(ApprovalsModel::RequesterTextRole).toString(), u"operator"_s);
        QCOMPARE(row.data(ApprovalsModel::StatusRole).toString(), u"pending"_s);
        QVERIFY(!row.data(ApprovalsModel::SummaryRole).toString().isEmpty());
        QVERIFY(row.data(ApprovalsModel::CreatedMsRole).toLongLong() > 0);
        QTRY_COMPARE(deployStatus(deploy), u"awaiting-approval"_s);

        // Selecting it fetches the plan: what will run, and why it waits.
        model.setSelectedRow(0);
        QTRY_VERIFY(!model.planLines().isEmpty());
        QCOMPARE(model.selected().value(u"title"_s).toString(), ApprovalsModel::tr("Deploy of %1").arg(u"gated-web"_s));
        QCOMPARE(planValue(model, ApprovalsModel::tr("Repository")), u"https://git.example/gated-web.git"_s);
        QCOMPARE(planValue(model, ApprovalsModel::tr("Port")), QString::number(m_install.port));
        QCOMPARE(planValue(model, ApprovalsModel::tr("Serving now")), ApprovalsModel::tr("nothing (first deploy)"));
        QVERIFY2(!planValue(model, ApprovalsModel::tr("Why it waits")).startsWith(u"<no"_s),
                 qPrintable(planValue(model, ApprovalsModel::tr("Why it waits"))));

        // The requester may not approve their own request: the refusal shows on the row.
        QTRY_COMPARE(mine.rowCount(), 1);
        mine.approve(0, u"looks fine to me"_s);
        QTRY_VERIFY(!mine.index(0).data(ApprovalsModel::ActionErrorRole).toString().isEmpty());
        const QString refusal = mine.index(0).data(ApprovalsModel::ActionErrorRole).toString();
        QVERIFY2(refusal.contains(u"may not approve"_s), qPrintable(refusal));
        QCOMPARE(mine.index(0).data(ApprovalsModel::BusyRole).toBool(), false);
        QCOMPARE(deployStatus(deploy), u"awaiting-approval"_s);

        // Another person approves: the row goes from both lists and the deploy goes on.
        model.approve(0, u"checked the plan"_s);
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 0, 20000);
        QCOMPARE(model.selectedRow(), -1);
        QTRY_COMPARE_WITH_TIMEOUT(mine.rowCount(), 0, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(deployStatus(deploy), u"succeeded"_s, 30000);
        QCOMPARE(model.error(), QString());
    }

    void trayNotifiesAndOpensTheApproval()
    {
        DesktopState state(m_session.get());
        TrayIcon tray(&state);
        QSignalSpy notified(&tray, &TrayIcon::notified);
        QSignalSpy shown(&state, &DesktopState::showApprovalsRequested);
        QTRY_VERIFY(state.approvals()->isLoaded());

        const QString deploy = heldDeploy(u"gated-api"_s);
        QVERIFY(!deploy.isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(!notified.isEmpty(), 20000);
        QVERIFY2(notified.first().at(0).toString().startsWith(TrayIcon::tr("Approval requested: %1").arg(QString())),
                 qPrintable(notified.first().at(0).toString()));
        QTRY_COMPARE(state.approvals()->rowCount(), 1);
        QTRY_COMPARE(state.pendingApprovals(), 1);

        // Clicking the message (or an "Approve…" entry) selects the approval in the window.
        const QString id = state.approvals()->index(0).data(ApprovalsModel::IdRole).toString();
        state.showApproval(id);
        QCOMPARE(shown.size(), 1);
        QCOMPARE(state.approvals()->selected().value(u"id"_s).toString(), id);

        // Rejected by someone else: no row, the deploy does not run.
        notified.clear();
        state.approvals()->reject(0, u"not this week"_s);
        QTRY_COMPARE_WITH_TIMEOUT(state.approvals()->rowCount(), 0, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(deployStatus(deploy), u"rejected"_s, 20000);
        // Its end is a deploy.failed event (step "approval"): the tray says why.
        QTRY_VERIFY_WITH_TIMEOUT(!notified.isEmpty(), 20000);
        QCOMPARE(notified.last().at(0).toString(), TrayIcon::tr("Deploy of %1 failed").arg(u"gated-api"_s));
        QVERIFY2(notified.last().at(1).toString().startsWith(u"approval: "_s),
                 qPrintable(notified.last().at(1).toString()));
    }

    // A failed deploy and a held one at once: the status line and the tray turned amber and
    // said only "1 approval(s) waiting", hiding the failure.
    void statusLineNamesEveryState()
    {
        DesktopState state(m_session.get());
        QTRY_VERIFY(state.approvals()->isLoaded());
        QTRY_VERIFY(state.apps()->isLoaded());
        const int failingBefore = state.apps()->failingCount();
        QVERIFY(test::awaitObject([&](auto done) { m_requester->createApp(appSpec(u"buildfails-now"_s), done); }));
        QVERIFY(test::awaitObject([&](auto done) { m_requester->deploy(u"buildfails-now"_s, {}, done); }));
        QTRY_COMPARE_WITH_TIMEOUT(state.apps()->failingCount(), failingBefore + 1, 20000);
        QVERIFY(!heldDeploy(u"gated-status"_s).isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(state.pendingApprovals(), 1, 20000);

        QCOMPARE(state.overall(), DisplayState::Failed);
        QCOMPARE(state.overallText(), DesktopState::tr("%n app(s) failing", nullptr, failingBefore + 1) + u" · "_s +
                                          DesktopState::tr("%n approval(s) waiting", nullptr, 1));

        state.approvals()->reject(0, u"not now"_s);
        QTRY_COMPARE_WITH_TIMEOUT(state.pendingApprovals(), 0, 20000);
        QVERIFY2(!state.overallText().contains(DesktopState::tr("%n approval(s) waiting", nullptr, 1)),
                 qPrintable(state.overallText()));
    }

    void notificationsSayWhatHappened()
    {
        const auto failed = TrayIcon::notificationFor(
            QJsonObject{{u"type"_s, u"deploy.failed"_s},
                        {u"app"_s, u"web"_s},
                        {u"data"_s, QJsonObject{{u"step"_s, u"build"_s}, {u"error"_s, u"RUN step exited with 1"_s}}}});
        QCOMPARE(failed.title, TrayIcon::tr("Deploy of %1 failed").arg(u"web"_s));
        QCOMPARE(failed.body, u"build: RUN step exited with 1"_s);
        QCOMPARE(failed.app, u"web"_s);
        const auto run =
            TrayIcon::notificationFor(QJsonObject{{u"type"_s, u"run.finished"_s},
                                                  {u"data"_s, QJsonObject{{u"status"_s, u"failed"_s},
                                                                          {u"pipeline"_s, u"release"_s},
                                                                          {u"job"_s, u"test"_s},
                                                                          {u"number"_s, 4},
                                                                          {u"error"_s, u"step unit failed"_s}}}});
        QVERIFY2(run.title.contains(u"#4"_s) && run.title.contains(u"release/test"_s), qPrintable(run.title));
        QCOMPARE(run.body, u"step unit failed"_s);
        // A run that succeeded, and events nobody needs to hear about, say nothing.
        QVERIFY(TrayIcon::notificationFor(QJsonObject{{u"type"_s, u"run.finished"_s},
                                                      {u"data"_s, QJsonObject{{u"status"_s, u"succeeded"_s}}}})
                    .title.isEmpty());
        QVERIFY(TrayIcon::notificationFor(QJsonObject{{u"type"_s, u"deploy.step"_s}}).title.isEmpty());
    }

    void approvalsViewScreenshot()
    {
        DesktopState state(m_session.get());
        DesktopState::setInstance(&state);
        QStringList warnings;
        QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
        QQuickStyle::setStyle(u"Fusion"_s);
        QQmlApplicationEngine engine;
        QQuickWindow *window = test::openMainWindow(engine, warnings);
        QVERIFY2(window, qPrintable(warnings.join(u'\n')));
        QTRY_VERIFY(state.approvals()->isLoaded());

        // The empty state first, reached the way the tray reaches the view.
        state.showApproval(QString());
        QTRY_COMPARE(state.currentView(), DesktopState::View::Approvals);
        QTest::qWait(200);
        const QImage empty = window->grabWindow();
        QVERIFY(empty.save(QDir(test::screenshotDir()).filePath(u"desktop-approvals-empty.png"_s)));
        QVERIFY2(test::distinctColours(empty) > 16, "the approvals empty state rendered blank");

        const QString deploy = heldDeploy(u"gated-shot"_s);
        QVERIFY(!deploy.isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(state.approvals()->rowCount(), 1, 20000);
        state.showApproval(state.approvals()->index(0).data(ApprovalsModel::IdRole).toString());
        QTRY_VERIFY(!state.approvals()->planLines().isEmpty());
        QTest::qWait(300);
        const QImage image = window->grabWindow();
        QCOMPARE(image.size(), QSize(1280, 800) * window->devicePixelRatio());
        const QString path = QDir(test::screenshotDir()).filePath(u"desktop-approvals.png"_s);
        QVERIFY(image.save(path));
        qInfo("screenshot: %s", qPrintable(path));
        QVERIFY2(test::distinctColours(image) > 16, "the approvals view rendered blank");
        QVERIFY2(test::distinctColours(image) > test::distinctColours(empty), "the approval's detail did not render");
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));

        state.approvals()->reject(0, u"screenshot taken"_s);
        QTRY_COMPARE_WITH_TIMEOUT(state.approvals()->rowCount(), 0, 20000);
        window->close();
    }

    void cleanupTestCase()
    {
        m_requester.reset();
        m_session.reset();
    }
};

QTEST_MAIN(TestApprovalsModel)
#include "tst_approvalsmodel.moc"
