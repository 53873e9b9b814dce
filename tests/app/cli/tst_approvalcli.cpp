// `pando approvals …` and `pando deploy --wait` on a deploy the host policy holds, against a real
// engine and API server with fake adapters: who may decide (grants, roles, never the requester),
// what the commands print, and the errors bad input gets.

#include "tests/app/server/fakes.h"
#include "tests/support/clirun.h"
#include "tests/support/component.h"
#include "tests/support/vocabtesting.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryFile>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;

using Run = test::CliRun;

class TestApprovalCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void approveThroughTheCli();
    void waitingDeployEndsWhenRejected();
    void updatesAreGatedBySpecgate();
    void badInput();

private:
    QProcessEnvironment environment(const QString &user) const;
    Run pando(const QString &user, const QStringList &args);
    // Creates app name as user (who then owns it) and queues a deploy; returns the deploy id.
    QString createAndDeploy(const QString &user, const QString &name);
    // A spec file for app name from repo, answering its probe on this API.
    QString specFile(const QString &name, const QString &repo);
    core::DeployView waitHeld(const QString &deployId);

    test::TestInstall m_install;
    QString m_binary;
    QTemporaryDir m_config;
    QList<std::shared_ptr<QTemporaryFile>> m_files;
};

void TestApprovalCli::initTestCase()
{
    m_binary = test::pandoBinary();
    QVERIFY2(QFile::exists(m_binary), qPrintable(u"no pando binary at "_s + m_binary));
    m_install.approvalPolicy =
        core::policy::parsePolicy(R"({"apps": ["gated-*"], "changes": {"newSourceRepo": true}})").value();
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
}

QProcessEnvironment TestApprovalCli::environment(const QString &user) const
{
    return test::cliEnvironment(m_install.baseUrl(), m_install.tokens.value(user), m_config.path());
}

Run TestApprovalCli::pando(const QString &user, const QStringList &args)
{
    return test::runCli(args, environment(user));
}

QString TestApprovalCli::specFile(const QString &name, const QString &repo)
{
    auto file = std::make_shared<QTemporaryFile>();
    if (!file->open())
        return {};
    // The fake runtime's containers answer on 127.0.0.1:<run.port>: this API answers the probe.
    file->write(u"name: %1\nsource:\n  repo: %2\nrun:\n  port: %3\nhealth:\n  path: /api/v1/health\n"_s.arg(name, repo)
                    .arg(m_install.port)
                    .toUtf8());
    file->flush();
    m_files << file;
    return file->fileName();
}

QString TestApprovalCli::createAndDeploy(const QString &user, const QString &name)
{
    const QString spec = specFile(name, u"https://git.example/%1.git"_s.arg(name));
    const Run created = pando(user, {u"apps"_s, u"create"_s, u"-f"_s, spec});
    if (created.code != 0) {
        qWarning("apps create: %s", qPrintable(created.err));
        return {};
    }
    const Run deployed = pando(user, {u"deploy"_s, name, u"--json"_s});
    return QJsonDocument::fromJson(deployed.out.toUtf8()).object().value(u"id"_s).toString();
}

core::DeployView TestApprovalCli::waitHeld(const QString &deployId)
{
    core::DeployView view;
    for (int i = 0; i < 1200; ++i) {
        if (auto v = m_install.engine->deployView(deployId)) {
            view = *v;
            if (view.record.status != core::DeployStatus::Queued && view.record.status != core::DeployStatus::Running)
                break;
        }
        QTest::qWait(25);
    }
    return view;
}

void TestApprovalCli::approveThroughTheCli()
{
    const QString deployId = createAndDeploy(u"member"_s, u"gated-web"_s);
    QVERIFY(!deployId.isEmpty());
    const core::DeployView held = waitHeld(deployId);
    QVERIFY2(held.record.status == core::DeployStatus::AwaitingApproval,
             qPrintable(core::toString(held.record.status) + u": "_s + held.record.error));
    const QString id = held.record.approvalId;
    // A viewer reads the approvals of the apps it holds a grant on (docs/security.md, "Reading").
    QVERIFY(m_install.engine->addGrant(core::authz::ObjectKind::App, u"gated-web"_s, u"viewer"_s, u"viewer"_s,
                                       core::Actor::system(u"test"_s)));

    Run list = pando(u"viewer"_s, {u"approvals"_s, u"list"_s});
    QVERIFY2(list.code == 0, qPrintable(list.err));
    QVERIFY2(list.out.contains(id) && list.out.contains(u"pending"_s) && list.out.contains(u"deploy/"_s + deployId) &&
                 list.out.contains(u"user:member"_s),
             qPrintable(list.out));
    Run show = pando(u"viewer"_s, {u"approvals"_s, u"show"_s, id});
    QVERIFY2(show.code == 0, qPrintable(show.err));
    QVERIFY2(show.out.contains(u"plan:"_s) && show.out.contains(u"\"commit\""_s) &&
                 show.out.contains(u"pando approvals approve "_s + id),
             qPrintable(show.out));

    // The requester, a member without a grant on the app and a viewer are all refused.
    Run own = pando(u"member"_s, {u"approvals"_s, u"approve"_s, id});
    QCOMPARE(own.code, 1);
    QVERIFY2(own.err.contains(u"may not approve it"_s), qPrintable(own.err));
    Run stranger = pando(u"member2"_s, {u"approvals"_s, u"approve"_s, id});
    QCOMPARE(stranger.code, 1);
    QVERIFY2(stranger.err.contains(u"approvals.write"_s), qPrintable(stranger.err));
    QCOMPARE(pando(u"viewer"_s, {u"approvals"_s, u"approve"_s, id}).code, 1);
    QCOMPARE(m_install.engine->approvals().find(id).value()->status, u"pending"_s);

    Run approved = pando(u"operator"_s, {u"approvals"_s, u"approve"_s, id, u"--reason"_s, u"checked the plan"_s});
    QVERIFY2(approved.code == 0, qPrintable(approved.err));
    QVERIFY2(approved.out.contains(u"approved "_s + id), qPrintable(approved.out));
    QTRY_COMPARE_WITH_TIMEOUT(m_install.engine->deployView(deployId)->record.status, core::DeployStatus::Succeeded,
                              20000);

    // Decided once: the second approval is a conflict, and the list shows it used.
    Run again = pando(u"admin"_s, {u"approvals"_s, u"approve"_s, id});
    QCOMPARE(again.code, 1);
    QVERIFY2(again.err.contains(u"used"_s) || again.err.contains(u"approved"_s), qPrintable(again.err));
    Run all = pando(u"viewer"_s, {u"approvals"_s, u"list"_s, u"--all"_s, u"--json"_s});
    const QJsonArray approvals = QJsonDocument::fromJson(all.out.toUtf8()).object().value(u"approvals"_s).toArray();
    QCOMPARE(approvals.size(), 1);
    QCOMPARE(approvals.first().toObject().value(u"status"_s).toString(), u"used"_s);
    QCOMPARE(approvals.first().toObject().value(u"decided_by"_s).toString().section(u'/', 0, 0), u"user:operator"_s);
    QVERIFY(pando(u"viewer"_s, {u"approvals"_s, u"list"_s}).out.contains(u"nothing waits for approval"_s));
}

void TestApprovalCli::waitingDeployEndsWhenRejected()
{
    const QString first = createAndDeploy(u"member"_s, u"gated-api"_s);
    QVERIFY(!first.isEmpty());
    // Follow a second deploy with --wait while someone else rejects it.
    QProcess waiting;
    waiting.setProcessEnvironment(environment(u"member"_s));
    QSignalSpy finished(&waiting, &QProcess::finished);
    waiting.start(m_binary, {u"deploy"_s, u"gated-api"_s, u"--wait"_s});
    QString approvalId;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            auto pending = m_install.engine->approvals().list(u"pending"_s);
            if (!pending)
                return false;
            // Both deploys' requests may be made in the same millisecond: tell them by deploy.
            for (const core::ApprovalRecord &approval : std::as_const(*pending))
                if (approval.object != u"deploy/"_s + first)
                    approvalId = approval.id;
            return !approvalId.isEmpty();
        }(),
        20000);
    // Give the waiting CLI a moment to print the step it is held at.
    QTest::qWait(300);
    Run rejected = pando(u"admin"_s, {u"approvals"_s, u"reject"_s, approvalId, u"--reason"_s, u"freeze"_s});
    QVERIFY2(rejected.code == 0, qPrintable(rejected.err));
    // It may have ended already, while the event loop ran for the reject command.
    const bool ended = !finished.isEmpty() || finished.wait(20000);
    const QString out = QString::fromUtf8(waiting.readAllStandardOutput());
    const QString err = QString::fromUtf8(waiting.readAllStandardError());
    if (!ended)
        waiting.kill();
    QVERIFY2(ended, qPrintable(out + err));
    QCOMPARE(waiting.exitCode(), 1);
    QVERIFY2(out.contains(u"approval"_s) && out.contains(u"pando approvals approve "_s + approvalId), qPrintable(out));
    QVERIFY2(err.contains(u"did not run"_s) && err.contains(u"rejected by user:admin"_s) && err.contains(u"freeze"_s),
             qPrintable(err));
}

void TestApprovalCli::updatesAreGatedBySpecgate()
{
    // An app outside the policy's names: a member may point it elsewhere, and the deploy that
    // runs the new repository waits for sign-off with that reason.
    const QString plain = createAndDeploy(u"member"_s, u"plain"_s);
    QVERIFY(!plain.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(m_install.engine->deployView(plain)->record.status, core::DeployStatus::Succeeded, 20000);
    Run updated = pando(u"member"_s, {u"apps"_s, u"update"_s, u"plain"_s, u"-f"_s,
                                      specFile(u"plain"_s, u"https://git.example/fork.git"_s)});
    QVERIFY2(updated.code == 0, qPrintable(updated.err));
    QVERIFY2(updated.out.contains(u"updated app plain"_s), qPrintable(updated.out));
    Run deployed = pando(u"member"_s, {u"deploy"_s, u"plain"_s, u"--json"_s});
    const QString moved = QJsonDocument::fromJson(deployed.out.toUtf8()).object().value(u"id"_s).toString();
    const core::DeployView held = waitHeld(moved);
    QCOMPARE(held.record.status, core::DeployStatus::AwaitingApproval);
    const core::ApprovalRecord approval = *m_install.engine->approvals().find(held.record.approvalId).value();
    QVERIFY2(approval.summary.contains(u"fork.git"_s), qPrintable(approval.summary));
    QVERIFY(m_install.engine->decideApproval(approval.id, core::Approver{core::Actor{u"user:operator"_s, {}, {}}},
                                             false, {}));

    // An app under the policy: only an operator or admin may stage a new repository.
    const QString fork = specFile(u"gated-web"_s, u"https://git.example/fork.git"_s);
    Run refused = pando(u"member"_s, {u"apps"_s, u"update"_s, u"gated-web"_s, u"-f"_s, fork});
    QCOMPARE(refused.code, 1);
    QVERIFY2(refused.err.contains(u"operator"_s), qPrintable(refused.err));
    QVERIFY(m_install.engine->app(u"gated-web"_s)->spec.source.repo.endsWith(u"gated-web.git"_s));
    QCOMPARE(pando(u"operator"_s, {u"apps"_s, u"update"_s, u"gated-web"_s, u"-f"_s, fork}).code, 0);
    QCOMPARE(m_install.engine->app(u"gated-web"_s)->spec.source.repo, u"https://git.example/fork.git"_s);

    // The spec must keep the app's name.
    Run renamed = pando(u"operator"_s, {u"apps"_s, u"update"_s, u"gated-web"_s, u"-f"_s,
                                        specFile(u"other"_s, u"https://git.example/other.git"_s)});
    QCOMPARE(renamed.code, 1);
    QVERIFY2(renamed.err.contains(u"cannot be renamed"_s) || renamed.err.contains(u"not \"gated-web\""_s),
             qPrintable(renamed.err));
    QCOMPARE(pando(u"operator"_s, {u"apps"_s, u"update"_s, u"nosuch"_s, u"-f"_s, fork}).code, 1);
}

void TestApprovalCli::badInput()
{
    Run status = pando(u"admin"_s, {u"approvals"_s, u"list"_s, u"--status"_s, u"bogus"_s});
    QCOMPARE(status.code, 1);
    QVERIFY2(status.err.contains(u"query.status"_s) && status.err.contains(u"bogus"_s), qPrintable(status.err));
    Run both = pando(u"admin"_s, {u"approvals"_s, u"list"_s, u"--status"_s, u"pending"_s, u"--all"_s});
    QCOMPARE(both.code, 1);
    Run missing = pando(u"admin"_s, {u"approvals"_s, u"approve"_s, u"a0000000000000000"_s});
    QCOMPARE(missing.code, 1);
    QVERIFY2(missing.err.contains(u"no approval a0000000000000000"_s), qPrintable(missing.err));
    Run noId = pando(u"admin"_s, {u"approvals"_s, u"approve"_s});
    QCOMPARE(noId.code, 2);
}

QTEST_GUILESS_MAIN(TestApprovalCli)
#include "tst_approvalcli.moc"
