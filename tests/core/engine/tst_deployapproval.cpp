// Deploys the host policy holds for sign-off, end to end on real parts (git, Docker, SQLite):
// the deploy stops at its plan boundary with the plan shown and nothing started; another person
// approves and it goes on, using the approval once; a rejection, an expiry and a cancel end it
// with the old version still serving; a decision the engine did not act on before it stopped is
// acted on when it starts again.

#include "core/engine/enginewiring.h"
#include "enginefixture.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"
#include "tests/support/vocabtesting.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QSqlQuery>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::test;

class TestDeployApproval : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void ungatedAppDeploysStraightAway();
    void egressChangeIsHeld();
    void waitsAtPlanThenApprovedGoesOn();
    void rejectedKeepsTheServingVersion();
    void expiryEndsTheDeploy();
    void cancelWithdrawsTheRequest();
    void newerDeploySupersedesAWaitingOne();
    void decisionSurvivesARestart();

private:
    bool startEngine();
    // Queues a deploy of app as alice and waits until it stops at the approval step.
    core::DeployView deployUntilHeld(const QString &app);
    QStringList stepNames(const core::DeployView &view);

    std::unique_ptr<EngineFixture> m_fx;
    QString m_repo;
    QString m_dataDir;
    const core::Actor alice{u"user:alice"_s, u"10.0.0.1"_s, {}};
    const core::Actor aliceToken{u"user:alice/token:t00112233"_s, u"10.0.0.1"_s, {}};
    const core::Actor bob{u"user:bob"_s, u"10.0.0.2"_s, {}};
};

bool TestDeployApproval::startEngine()
{
    return m_fx->start(m_dataDir, [](core::EngineOptions &options) {
        auto policy =
            core::policy::parsePolicy(R"({"apps": ["gated*"], "environments": ["prod"], "changes": {"egress": true}})");
        Q_ASSERT(policy);
        options.approvalPolicy = *policy;
        options.approvalTtlMs = 60 * 60 * 1000;
        options.approvalSweepMs = 100;
    });
}

void TestDeployApproval::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), QStringLiteral("Docker Engine: ") + why);
    PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), QStringLiteral("git"));
    auto base = DockerHarness::ensureBaseImage();
    QVERIFY2(base, qPrintable(base ? QString() : base.error().text()));
    m_fx = std::make_unique<EngineFixture>();
    QVERIFY(m_fx->git().isValid());
    m_repo = m_fx->git().createRepository(u"hello"_s);
    QVERIFY(!m_repo.isEmpty());
    QVERIFY(!m_fx->git().commit(u"hello"_s, u"main"_s, helloApp("v1")).isEmpty());
    m_dataDir = m_fx->dataDir(); // empty until the first start picks one
    QVERIFY(startEngine());
    m_dataDir = m_fx->dataDir();
    for (const QString &name :
         {u"gated"_s, u"gated-expiry"_s, u"gated-cancel"_s, u"gated-restart"_s, u"gated-super"_s}) {
        auto created = m_fx->engine().createApp(helloSpec(name, m_repo), alice);
        QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    }
    // Not matched by name, but by its environment label.
    auto labelled = m_fx->engine().createApp(helloSpec(u"shop"_s, m_repo, u"labels:\n  environment: prod\n"_s), alice);
    QVERIFY2(labelled, qPrintable(labelled ? QString() : labelled.error().text()));
    auto free = m_fx->engine().createApp(helloSpec(u"scratch"_s, m_repo), alice);
    QVERIFY2(free, qPrintable(free ? QString() : free.error().text()));
}

void TestDeployApproval::cleanupTestCase()
{
    m_fx.reset();
}

QStringList TestDeployApproval::stepNames(const core::DeployView &view)
{
    QStringList names;
    for (const core::StepRecord &step : view.steps)
        names << step.name + u':' + core::toString(step.status);
    return names;
}

core::DeployView TestDeployApproval::deployUntilHeld(const QString &app)
{
    auto deploy = m_fx->engine().deploy(app, {}, alice);
    if (!deploy) {
        qWarning("deploy refused: %s", qPrintable(deploy.error().text()));
        return {};
    }
    return m_fx->waitDeploy(deploy->id);
}

void TestDeployApproval::ungatedAppDeploysStraightAway()
{
    auto deploy = m_fx->engine().deploy(u"scratch"_s, {}, alice);
    QVERIFY(deploy);
    const core::DeployView view = m_fx->waitDeploy(deploy->id);
    QCOMPARE(view.record.status, core::DeployStatus::Succeeded);
    QVERIFY(view.record.approvalId.isEmpty());
    QVERIFY(!stepNames(view).join(u' ').contains(u"approval"_s));
    QCOMPARE(m_fx->engine().approvals().list()->size(), 0);
}

void TestDeployApproval::egressChangeIsHeld()
{
    // scratch serves with the default egress; a revision that closes it needs sign-off even
    // though the app itself is not under approval.
    QVERIFY(!m_fx->engine().app(u"scratch"_s)->record.currentDeploy.isEmpty());
    auto updated =
        m_fx->engine().updateApp(u"scratch"_s, helloSpec(u"scratch"_s, m_repo, u"network:\n  egress: none\n"_s), alice);
    QVERIFY2(updated, qPrintable(updated ? QString() : updated.error().text()));
    core::DeployView held = deployUntilHeld(u"scratch"_s);
    QCOMPARE(held.record.status, core::DeployStatus::AwaitingApproval);
    auto approval = m_fx->engine().approvals().find(held.record.approvalId);
    QVERIFY2(approval && approval->has_value(), "the held deploy has an approval request");
    const QJsonObject plan = QJsonDocument::fromJson((*approval)->planJson.toUtf8()).object();
    QCOMPARE(plan.value(u"egress"_s).toString(), u"none"_s);
    QCOMPARE(plan.value(u"serving"_s).toObject().value(u"egress"_s).toString(), u"all"_s);
    QCOMPARE(plan.value(u"reasons"_s).toArray(), QJsonArray{u"egress changes from all to none"_s});

    QVERIFY(m_fx->engine().decideApproval(held.record.approvalId, core::Approver{bob}, true, {}));
    const core::DeployView done = m_fx->waitDeploy(held.record.id);
    QVERIFY2(done.record.status == core::DeployStatus::Succeeded, qPrintable(done.record.error));
    // Cut off from the network, it is still reached through its route.
    QCOMPARE(httpGet(QUrl(m_fx->engine().app(u"scratch"_s)->url)).status, 200);

    // The same spec again changes nothing the policy watches.
    auto again = m_fx->engine().deploy(u"scratch"_s, {}, alice);
    QVERIFY(again);
    QCOMPARE(m_fx->waitDeploy(again->id).record.status, core::DeployStatus::Succeeded);
}

void TestDeployApproval::waitsAtPlanThenApprovedGoesOn()
{
    // Events are published on the deploy's thread: kept on this one through a queued connection,
    // where a QSignalSpy would append on that thread while this one reads.
    QList<core::EventType> published;
    QObject receiver;
    connect(
        m_fx->engine().events(), &core::EventBus::published, &receiver,
        [&published](const core::Event &event) { published.append(event.type); }, Qt::QueuedConnection);
    core::DeployView held = deployUntilHeld(u"gated"_s);
    QCOMPARE(held.record.status, core::DeployStatus::AwaitingApproval);
    QCOMPARE(stepNames(held),
             (QStringList{u"fetch:succeeded"_s, u"detect:succeeded"_s, u"plan:succeeded"_s, u"approval:waiting"_s}));
    QVERIFY2(held.steps.last().detail.contains(u"pando approvals approve "_s + held.record.approvalId),
             qPrintable(held.steps.last().detail));
    // Nothing of the new version exists while it waits.
    auto containers = m_fx->docker().containers(m_fx->installLabels(u"gated"_s));
    QVERIFY(containers);
    QCOMPARE(containers->size(), 0);
    QCOMPARE(m_fx->engine().app(u"gated"_s)->status, core::AppStatus::AwaitingApproval);

    // The request shows the plan: what runs, at which commit, and why it needs sign-off.
    auto request = m_fx->engine().approvals().find(held.record.approvalId);
    QVERIFY(request && request->has_value());
    const core::ApprovalRecord approval = **request;
    QCOMPARE(approval.status, u"pending"_s);
    QCOMPARE(approval.kind, u"deploy"_s);
    QCOMPARE(approval.object, u"deploy/"_s + held.record.id);
    QCOMPARE(approval.requester, alice.name);
    const QJsonObject plan = QJsonDocument::fromJson(approval.planJson.toUtf8()).object();
    QCOMPARE(plan.value(u"commit"_s).toString(), held.record.commit);
    QCOMPARE(plan.value(u"port"_s).toInt(), 8080);
    QVERIFY2(plan.value(u"reasons"_s).toArray().first().toString().contains(u"gated"_s), qPrintable(approval.planJson));
    QVERIFY(approval.expiresMs > approval.createdMs);
    QTRY_VERIFY(published.contains(core::EventType::ApprovalRequested));

    // The requester may not approve, not even through one of their tokens.
    auto own =
        m_fx->engine().decideApproval(approval.id, core::Approver{aliceToken, core::accounts::Role::Admin}, true, {});
    QVERIFY(!own);
    QCOMPARE(own.error().code, ErrorCode::Forbidden);

    auto approved = m_fx->engine().decideApproval(approval.id, core::Approver{bob, core::accounts::Role::Operator},
                                                  true, u"plan looks right"_s);
    QVERIFY2(approved, qPrintable(approved ? QString() : approved.error().text()));
    // The old version is retired after the deploy succeeded: its step comes last, once it ran.
    const core::DeployView final = m_fx->waitRetired(held.record.id);
    QVERIFY2(final.record.status == core::DeployStatus::Succeeded, qPrintable(final.record.error));
    // fetch/detect/plan ran again for the build but are listed once; the approval step says who.
    QCOMPARE(stepNames(final), (QStringList{u"fetch:succeeded"_s, u"detect:succeeded"_s, u"plan:succeeded"_s,
                                            u"approval:succeeded"_s, u"build:succeeded"_s, u"start:succeeded"_s,
                                            u"health:succeeded"_s, u"switch:succeeded"_s, u"retire:succeeded"_s}));
    QVERIFY2(final.steps.at(3).detail.contains(u"approved by user:bob: plan looks right"_s),
             qPrintable(final.steps.at(3).detail));
    QCOMPARE(m_fx->engine().approvals().find(approval.id).value()->status, u"used"_s);
    const HttpAnswer answer = httpGet(QUrl(m_fx->engine().app(u"gated"_s)->url));
    QCOMPARE(answer.status, 200);

    // Used once: a second decision is refused.
    auto again = m_fx->engine().decideApproval(approval.id, core::Approver{bob}, true, {});
    QCOMPARE(again.error().code, ErrorCode::Conflict);

    // By environment label, too.
    core::DeployView shop = deployUntilHeld(u"shop"_s);
    QCOMPARE(shop.record.status, core::DeployStatus::AwaitingApproval);
    QVERIFY(m_fx->engine().decideApproval(shop.record.approvalId, core::Approver{bob}, true, {}));
    QCOMPARE(m_fx->waitDeploy(shop.record.id).record.status, core::DeployStatus::Succeeded);
}

void TestDeployApproval::rejectedKeepsTheServingVersion()
{
    const QString serving = m_fx->engine().app(u"gated"_s)->record.currentDeploy;
    QVERIFY(!serving.isEmpty());
    QVERIFY(!m_fx->git().commit(u"hello"_s, u"main"_s, helloApp("v2")).isEmpty());
    core::DeployView held = deployUntilHeld(u"gated"_s);
    QCOMPARE(held.record.status, core::DeployStatus::AwaitingApproval);
    // While the next version waits, the app still runs the current one.
    QCOMPARE(m_fx->engine().app(u"gated"_s)->status, core::AppStatus::Running);
    auto rejected =
        m_fx->engine().decideApproval(held.record.approvalId, core::Approver{bob}, false, u"not on a Friday"_s);
    QVERIFY2(rejected, qPrintable(rejected ? QString() : rejected.error().text()));
    const core::DeployView ended = *m_fx->engine().deployView(held.record.id);
    QCOMPARE(ended.record.status, core::DeployStatus::Rejected);
    QCOMPARE(ended.record.failedStep, u"approval"_s);
    QVERIFY2(ended.record.error.contains(u"rejected by user:bob: not on a Friday"_s), qPrintable(ended.record.error));
    QCOMPARE(ended.steps.last().status, core::DeployStepStatus::Failed);
    QCOMPARE(m_fx->engine().app(u"gated"_s)->record.currentDeploy, serving);
    const HttpAnswer answer = httpGet(QUrl(m_fx->engine().app(u"gated"_s)->url));
    QCOMPARE(answer.body.trimmed(), QByteArray("v1"));
    // A rejected approval cannot be approved afterwards.
    QCOMPARE(m_fx->engine().decideApproval(held.record.approvalId, core::Approver{bob}, true, {}).error().code,
             ErrorCode::Conflict);
}

void TestDeployApproval::expiryEndsTheDeploy()
{
    // A short time to live on a second engine over the same data dir would race this one; the
    // request's expiry is moved instead, as the clock passing it would.
    core::DeployView held = deployUntilHeld(u"gated-expiry"_s);
    QCOMPARE(held.record.status, core::DeployStatus::AwaitingApproval);
    auto db = core::wiringParts(m_fx->engine()).database.connection();
    QVERIFY(db);
    QSqlQuery q(*db);
    QVERIFY(q.prepare(u"UPDATE approvals SET expires_ms = ? WHERE id = ?"_s));
    q.addBindValue(QDateTime::currentMSecsSinceEpoch() - 1);
    q.addBindValue(held.record.approvalId);
    QVERIFY(q.exec());
    // The engine's sweep settles it on its own.
    QTRY_COMPARE_WITH_TIMEOUT(m_fx->engine().deployView(held.record.id)->record.status, core::DeployStatus::Rejected,
                              10000);
    const core::DeployView ended = *m_fx->engine().deployView(held.record.id);
    QVERIFY2(ended.record.error.contains(u"expired"_s), qPrintable(ended.record.error));
    QCOMPARE(m_fx->engine().approvals().find(held.record.approvalId).value()->status, u"expired"_s);
    QCOMPARE(m_fx->engine().app(u"gated-expiry"_s)->record.currentDeploy, QString());
}

void TestDeployApproval::cancelWithdrawsTheRequest()
{
    core::DeployView held = deployUntilHeld(u"gated-cancel"_s);
    QCOMPARE(held.record.status, core::DeployStatus::AwaitingApproval);
    auto cancelled = m_fx->engine().cancelDeploy(held.record.id, alice);
    QVERIFY2(cancelled, qPrintable(cancelled ? QString() : cancelled.error().text()));
    QCOMPARE(m_fx->engine().deployView(held.record.id)->record.status, core::DeployStatus::Cancelled);
    const core::ApprovalRecord approval = *m_fx->engine().approvals().find(held.record.approvalId).value();
    QCOMPARE(approval.status, u"rejected"_s);
    QCOMPARE(approval.reason, u"the deploy was cancelled"_s);
    QCOMPARE(m_fx->engine().decideApproval(approval.id, core::Approver{bob}, true, {}).error().code,
             ErrorCode::Conflict);
}

void TestDeployApproval::newerDeploySupersedesAWaitingOne()
{
    core::DeployView older = deployUntilHeld(u"gated-super"_s);
    QCOMPARE(older.record.status, core::DeployStatus::AwaitingApproval);
    core::DeployView newer = deployUntilHeld(u"gated-super"_s);
    QCOMPARE(newer.record.status, core::DeployStatus::AwaitingApproval);
    const core::DeployView ended = *m_fx->engine().deployView(older.record.id);
    QCOMPARE(ended.record.status, core::DeployStatus::Cancelled);
    QVERIFY2(ended.record.error.contains(u"superseded by deploy "_s + newer.record.id), qPrintable(ended.record.error));
    const core::ApprovalRecord withdrawn = *m_fx->engine().approvals().find(older.record.approvalId).value();
    QCOMPARE(withdrawn.status, u"rejected"_s);
    // Approving the old request now changes nothing; the newer one is what waits.
    QCOMPARE(m_fx->engine().decideApproval(withdrawn.id, core::Approver{bob}, true, {}).error().code,
             ErrorCode::Conflict);
    QVERIFY(m_fx->engine().decideApproval(newer.record.approvalId, core::Approver{bob}, true, {}));
    QCOMPARE(m_fx->waitDeploy(newer.record.id).record.status, core::DeployStatus::Succeeded);
}

void TestDeployApproval::decisionSurvivesARestart()
{
    core::DeployView held = deployUntilHeld(u"gated-restart"_s);
    QCOMPARE(held.record.status, core::DeployStatus::AwaitingApproval);
    // Approved in the store, then the process stops before it queues the deploy again.
    QVERIFY(m_fx->engine().approvals().approve(held.record.approvalId, core::Approver{bob}, {}));
    m_fx->stop();
    QVERIFY(startEngine());
    const core::DeployView done = m_fx->waitDeploy(held.record.id);
    QVERIFY2(done.record.status == core::DeployStatus::Succeeded, qPrintable(done.record.error));
    QCOMPARE(m_fx->engine().approvals().find(held.record.approvalId).value()->status, u"used"_s);
}

QTEST_GUILESS_MAIN(TestDeployApproval)
#include "tst_deployapproval.moc"
