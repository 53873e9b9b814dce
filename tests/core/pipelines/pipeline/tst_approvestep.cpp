// The approve step end to end: the real JobRunner runs host tasks and asks a real
// ApprovalService (on both drivers) for sign-off. Approved by another person → the step succeeds,
// the approval is used once and later steps run; rejected → the step fails and on_failure runs;
// the requester and people off the approvers list are refused; expiry through a ManualClock
// fails the step; an abort withdraws the request; a run a dead process left waiting has its
// request withdrawn by the scheduler's recovery; and no secret reaches the approvers.
#include "adapters/taskrunner/host/hosttaskrunner.h"
#include "core/approval/approvalservice.h"
#include "core/pipelines/config/pipelineconfig.h"
#include "core/pipelines/pipeline/jobrunner.h"
#include "core/pipelines/runview/runview.h"
#include "core/pipelines/scheduler/scheduler.h"
#include "core/state/pipelinerepositories.h"
#include "tests/core/pipelines/pipeline/queuedrun.h"
#include "tests/support/component.h"
#include "tests/support/drivers.h"
#include "tests/support/pgharness.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>
#include <functional>
#include <memory>
#include <thread>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;
using namespace pando::core::pipelines;

namespace {

constexpr qint64 TwoHoursMs = 2LL * 3600 * 1000;

bool waitFor(const std::function<bool()> &condition, int timeoutMs = 20000)
{
    QElapsedTimer timer;
    timer.start();
    while (!condition()) {
        if (timer.elapsed() > timeoutMs)
            return false;
        QTest::qWait(10);
    }
    return true;
}

QByteArray hostTask(const QByteArray &name, const QByteArray &script, const QByteArray &indent = "  ")
{
    return indent + "- task: " + name + "\n" + indent + "  config: {platform: host, run: {path: sh, args: [\"-c\", \"" +
           script + "\"]}}\n";
}

// build, then the approve step (with an on_failure hook), then deploy.
QByteArray shipPipeline(const QByteArray &approveExtra = {})
{
    return "jobs:\n- name: ship\n  plan:\n" + hostTask("build", "echo built") +
           "  - approve: ship-to-prod\n"
           "    message: \"Ship ((version)) with key ((token))?\"\n"
           "    approvers: [bob, role:operator]\n"
           "    timeout: 2h\n" +
           approveExtra +
           "    on_failure:\n"
           "      task: tell\n"
           "      config: {platform: host, run: {path: sh, args: [\"-c\", \"echo nobody approved\"]}}\n" +
           hostTask("deploy", "echo deployed");
}

// A run of the job on a thread of its own, as the scheduler would run it.
struct RunningJob {
    RunRecord run;
    CancelToken cancel;
    RunExecutor::Result result;
    std::atomic_bool done = false;
    std::thread thread;

    ~RunningJob()
    {
        if (thread.joinable()) {
            cancel.cancel(); // a failed check must not leave the run waiting forever
            thread.join();
        }
    }
};

} // namespace

class TestApproveStep : public QObject {
    Q_OBJECT

    test::PostgresHarness m_pg;
    bool m_pgStarted = false;
    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<QTemporaryDir> m_work;
    std::unique_ptr<Database> m_db;
    std::unique_ptr<ManualClock> m_clock;
    std::unique_ptr<AuditLog> m_audit;
    std::unique_ptr<EventBus> m_bus;
    std::unique_ptr<ApprovalService> m_approvals;
    std::unique_ptr<adapters::host::HostTaskRunner> m_host;
    std::unique_ptr<BlobStore> m_blobs;
    std::unique_ptr<Workspace> m_workspace;
    std::unique_ptr<JobRunner> m_runner;

    const Approver alice{Actor{u"user:alice"_s, u"10.0.0.1"_s, {}}, accounts::Role::Admin};
    const Approver bob{Actor{u"user:bob"_s, u"10.0.0.2"_s, {}}, accounts::Role::Member};
    const Approver carol{Actor{u"user:carol"_s, u"10.0.0.3"_s, {}}, accounts::Role::Member};
    const Approver dave{Actor{u"user:dave/token:t1"_s, u"10.0.0.4"_s, {}}, accounts::Role::Operator};

    JobRunnerDeps deps(ApprovalService *approvals)
    {
        return JobRunnerDeps{*m_db,
                             *m_clock,
                             *m_bus,
                             *m_host,
                             *m_host,
                             *m_blobs,
                             *m_workspace,
                             [](const QString &) -> std::shared_ptr<adapters::ResourceType> { return nullptr; },
                             [](const QString &, const QString &name) -> std::optional<QString> {
                                 if (name == u"token")
                                     return u"s3cr3t-value"_s;
                                 return std::nullopt;
                             },
                             QByteArray("test-secret-key"),
                             m_work->filePath(u"caches"_s),
                             u"test-install"_s,
                             approvals};
    }

    // Stores the pipeline, queues a run of its job by alice and claims it.
    RunRecord queue(const QByteArray &yaml, const QString &owner = u"test-owner"_s)
    {
        // The hooks' tasks say platform: host, on the test's host runner.
        RunRecord run = test::queueShipRun(*m_db, *m_clock, yaml, u"version: 1.2.3\n"_s, owner);
        test::allowHostExecution(*m_db);
        return run;
    }

    void start(RunningJob &job, JobRunner &runner)
    {
        job.thread = std::thread([&job, &runner] {
            job.result = runner.execute(job.run, job.cancel);
            job.done = true;
        });
    }

    // The one pending request, once the run asked for it.
    ApprovalRecord pending()
    {
        ApprovalRecord found;
        const bool asked = waitFor([&] {
            auto list = m_approvals->list(u"pending"_s);
            if (!list || list->size() != 1)
                return false;
            found = list->first();
            return true;
        });
        if (!asked)
            qWarning("no pending approval appeared");
        return found;
    }

    RunStepRecord stepNamed(const QString &runId, const QString &name)
    {
        const QList<RunStepRecord> steps = RunRepository(*m_db).steps(runId).value();
        for (const RunStepRecord &s : steps)
            if (s.name == name)
                return s;
        return {};
    }

    bool finished(RunningJob &job)
    {
        if (!waitFor([&] { return job.done.load(); }))
            return false;
        job.thread.join();
        return true;
    }

private Q_SLOTS:
    void initTestCase_data() { test::addDriverRows(); }

    void initTestCase()
    {
        qRegisterMetaType<Event>();
        m_pgStarted = m_pg.start();
    }

    void init()
    {
        PANDO_FRESH_DATABASE(url, m_pg, m_pgStarted, m_tmp);
        m_db = std::make_unique<Database>(DatabaseConfig::fromUrl(url).value());
        auto opened = m_db->open();
        QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
        m_work = std::make_unique<QTemporaryDir>();
        QVERIFY(m_work->isValid());
        m_clock = std::make_unique<ManualClock>();
        m_audit = std::make_unique<AuditLog>(*m_db, *m_clock);
        m_bus = std::make_unique<EventBus>();
        m_approvals = std::make_unique<ApprovalService>(*m_db, *m_audit, m_bus.get(), *m_clock);
        m_host = std::make_unique<adapters::host::HostTaskRunner>();
        m_blobs = std::make_unique<BlobStore>(m_work->filePath(u"blobs"_s));
        m_workspace = std::make_unique<Workspace>(m_work->filePath(u"runs"_s));
        m_runner = std::make_unique<JobRunner>(deps(m_approvals.get()));
    }

    void cleanup()
    {
        m_runner.reset();
        m_workspace.reset();
        m_blobs.reset();
        m_host.reset();
        m_approvals.reset();
        m_bus.reset();
        m_audit.reset();
        m_clock.reset();
        m_db.reset();
        m_work.reset();
        m_tmp.reset();
    }

    void approvedByAnotherPersonRunsLaterSteps()
    {
        RunningJob job;
        job.run = queue(shipPipeline());
        start(job, *m_runner);
        const ApprovalRecord asked = pending();
        QVERIFY(!asked.id.isEmpty());

        // What approvers are shown: the message with vars resolved and the secret masked, where
        // the run is, and who may decide.
        QCOMPARE(asked.kind, u"pipeline-step"_s);
        QCOMPARE(asked.object, u"run/%1/step/ship-to-prod"_s.arg(job.run.id));
        QCOMPARE(asked.requester, u"user:alice"_s);
        QCOMPARE(asked.approvers, (QStringList{u"bob"_s, u"role:operator"_s}));
        QCOMPARE(asked.expiresMs, asked.createdMs + TwoHoursMs);
        QVERIFY2(asked.summary.startsWith(u"Ship 1.2.3 with key ((redacted))?"_s), qPrintable(asked.summary));
        QVERIFY2(asked.summary.contains(u"pipeline app, job ship, run #1"_s), qPrintable(asked.summary));
        const QJsonObject plan = QJsonDocument::fromJson(asked.planJson.toUtf8()).object();
        QCOMPARE(plan.value(u"pipeline"_s).toString(), u"app"_s);
        QCOMPARE(plan.value(u"job"_s).toString(), u"ship"_s);
        QCOMPARE(plan.value(u"run"_s).toString(), job.run.id);
        QCOMPARE(plan.value(u"number"_s).toInt(), 1);
        QCOMPARE(plan.value(u"step"_s).toString(), u"ship-to-prod"_s);
        QVERIFY(plan.value(u"inputs"_s).isObject());
        QVERIFY(!asked.summary.contains(u"s3cr3t"_s));
        QVERIFY(!asked.planJson.contains(u"s3cr3t"_s));

        // The step waits, and says how to settle it.
        QVERIFY(
            waitFor([&] { return stepNamed(job.run.id, u"ship-to-prod"_s).status == core::RunStepStatus::Waiting; }));
        const RunStepRecord waiting = stepNamed(job.run.id, u"ship-to-prod"_s);
        QCOMPARE(waiting.kind, u"approve"_s);
        QCOMPARE(waiting.hash, asked.id);
        QCOMPARE(stepNamed(job.run.id, u"build"_s).status, core::RunStepStatus::Succeeded);
        QVERIFY(stepNamed(job.run.id, u"deploy"_s).stepId.isEmpty());
        const QJsonObject shown = toJson(waiting).value(u"approval"_s).toObject();
        QCOMPARE(shown.value(u"id"_s).toString(), asked.id);
        QCOMPARE(shown.value(u"status"_s).toString(), u"pending"_s);
        QCOMPARE(shown.value(u"approve"_s).toString(), u"pando approvals approve "_s + asked.id);
        QVERIFY(!toJson(waiting).contains(u"hash"_s));
        // The run is listed as waiting, not just running.
        const auto listed = RunRepository(*m_db).list(u"app"_s, {}, 10);
        QVERIFY(listed && !listed->isEmpty());
        QCOMPARE(listed->first().id, job.run.id);
        QVERIFY(listed->first().waiting);
        QCOMPARE(toJson(listed->first()).value(u"waiting"_s).toBool(), true);
        QVERIFY(RunRepository(*m_db).find(job.run.id)->waiting);
        // The step's row is written just before its events: a follower may read one first.
        QStringList notes;
        QVERIFY(waitFor([&] {
            notes = outputOf(RunRepository(*m_db).events(job.run.id, 0, 1000).value(), waiting.stepId);
            return notes.join(u'\n').contains(u"approve with: pando approvals approve "_s + asked.id);
        }));
        QVERIFY(!notes.join(u'\n').contains(u"s3cr3t"_s));

        // The requester may not approve their own run, nor may someone off the list.
        auto own = m_approvals->approve(asked.id, alice, u"me"_s);
        QVERIFY(!own);
        QCOMPARE(own.error().code, ErrorCode::Forbidden);
        auto offList = m_approvals->approve(asked.id, carol, u"sure"_s);
        QVERIFY(!offList);
        QCOMPARE(offList.error().code, ErrorCode::Forbidden);
        QTest::qWait(300);
        QVERIFY(!job.done);

        auto approved = m_approvals->approve(asked.id, bob, u"ship it"_s);
        QVERIFY2(approved, qPrintable(approved ? QString() : approved.error().text()));
        QVERIFY(finished(job));
        QCOMPARE(job.result.outcome, Outcome::Succeeded);

        const RunStepRecord step = stepNamed(job.run.id, u"ship-to-prod"_s);
        QCOMPARE(step.status, core::RunStepStatus::Succeeded);
        QVERIFY(!RunRepository(*m_db).find(job.run.id)->waiting);
        QCOMPARE(step.error, u"approved by user:bob: ship it"_s);
        QCOMPARE(toJson(step).value(u"approval"_s).toObject().value(u"status"_s).toString(), u"approved"_s);
        QCOMPARE(stepNamed(job.run.id, u"deploy"_s).status, core::RunStepStatus::Succeeded);
        QVERIFY(stepNamed(job.run.id, u"tell"_s).stepId.isEmpty());

        // Used once: the run consumed it, nothing can again.
        QCOMPARE(m_approvals->find(asked.id)->value().status, u"used"_s);
        auto again = m_approvals->consume(asked.id);
        QVERIFY(!again);
        QCOMPARE(again.error().code, ErrorCode::Conflict);
    }

    void aRoleOnTheListMayApprove()
    {
        RunningJob job;
        job.run = queue(shipPipeline());
        start(job, *m_runner);
        const ApprovalRecord asked = pending();
        QVERIFY(!asked.id.isEmpty());
        auto approved = m_approvals->approve(asked.id, dave, {});
        QVERIFY2(approved, qPrintable(approved ? QString() : approved.error().text()));
        QVERIFY(finished(job));
        QCOMPARE(job.result.outcome, Outcome::Succeeded);
        QCOMPARE(stepNamed(job.run.id, u"ship-to-prod"_s).error, u"approved by user:dave/token:t1"_s);
    }

    void rejectedFailsAndRunsOnFailure()
    {
        RunningJob job;
        job.run = queue(shipPipeline());
        start(job, *m_runner);
        const ApprovalRecord asked = pending();
        QVERIFY(!asked.id.isEmpty());
        auto rejected = m_approvals->reject(asked.id, bob, u"not on a Friday"_s);
        QVERIFY2(rejected, qPrintable(rejected ? QString() : rejected.error().text()));
        QVERIFY(finished(job));
        QCOMPARE(job.result.outcome, Outcome::Failed);

        const RunStepRecord step = stepNamed(job.run.id, u"ship-to-prod"_s);
        QCOMPARE(step.status, core::RunStepStatus::Failed);
        QCOMPARE(step.error, u"rejected by user:bob: not on a Friday"_s);
        QCOMPARE(toJson(step).value(u"approval"_s).toObject().value(u"status"_s).toString(), u"rejected"_s);
        QCOMPARE(stepNamed(job.run.id, u"tell"_s).status, core::RunStepStatus::Succeeded);
        QVERIFY(stepNamed(job.run.id, u"deploy"_s).stepId.isEmpty());
        // A rejected request cannot be used.
        QCOMPARE(m_approvals->consume(asked.id).error().code, ErrorCode::Conflict);
    }

    void expiryFailsTheStep()
    {
        RunningJob job;
        job.run = queue(shipPipeline());
        start(job, *m_runner);
        const ApprovalRecord asked = pending();
        QVERIFY(!asked.id.isEmpty());
        m_clock->advance(TwoHoursMs - 1);
        QCOMPARE(m_approvals->expire()->size(), 0);
        QTest::qWait(300);
        QVERIFY(!job.done);
        m_clock->advance(1);
        // The engine's sweep (the waiting step would also sweep on its slow poll).
        QVERIFY(m_approvals->expire());
        QVERIFY(finished(job));
        QCOMPARE(job.result.outcome, Outcome::Failed);
        const RunStepRecord step = stepNamed(job.run.id, u"ship-to-prod"_s);
        QCOMPARE(step.status, core::RunStepStatus::Failed);
        QCOMPARE(step.error, u"no decision within 2h"_s);
        QCOMPARE(toJson(step).value(u"approval"_s).toObject().value(u"status"_s).toString(), u"expired"_s);
        QCOMPARE(stepNamed(job.run.id, u"tell"_s).status, core::RunStepStatus::Succeeded);
        QCOMPARE(m_approvals->find(asked.id)->value().status, u"expired"_s);
        // Too late to approve now.
        QCOMPARE(m_approvals->approve(asked.id, bob, {}).error().code, ErrorCode::Conflict);
    }

    void tryGoesOnAfterARejection()
    {
        RunningJob job;
        job.run = queue("jobs:\n- name: ship\n  plan:\n  - try:\n      approve: optional-check\n" +
                        hostTask("after", "echo after"));
        start(job, *m_runner);
        const ApprovalRecord asked = pending();
        QVERIFY(!asked.id.isEmpty());
        QVERIFY(asked.approvers.isEmpty());
        QCOMPARE(asked.expiresMs, asked.createdMs + ApproveStep::DefaultTimeoutMs);
        QVERIFY2(asked.summary.startsWith(u"Continue past optional-check?"_s), qPrintable(asked.summary));
        // With no approvers list any other person decides; alice still may not approve her own.
        QCOMPARE(m_approvals->approve(asked.id, alice, {}).error().code, ErrorCode::Forbidden);
        QVERIFY(m_approvals->reject(asked.id, carol, u"no"_s));
        QVERIFY(finished(job));
        QCOMPARE(job.result.outcome, Outcome::Succeeded);
        QCOMPARE(stepNamed(job.run.id, u"optional-check"_s).status, core::RunStepStatus::Failed);
        QCOMPARE(stepNamed(job.run.id, u"after"_s).status, core::RunStepStatus::Succeeded);
    }

    void abortWithdrawsTheRequest()
    {
        RunningJob job;
        job.run = queue(shipPipeline("    on_abort:\n      task: aborted\n      config: {platform: host, run: {path: "
                                     "sh, args: [\"-c\", \"echo aborted\"]}}\n"));
        start(job, *m_runner);
        const ApprovalRecord asked = pending();
        QVERIFY(!asked.id.isEmpty());
        job.cancel.cancel();
        QVERIFY(finished(job));
        QCOMPARE(job.result.outcome, Outcome::Aborted);
        const RunStepRecord step = stepNamed(job.run.id, u"ship-to-prod"_s);
        QCOMPARE(step.status, core::RunStepStatus::Aborted);
        QCOMPARE(step.error, u"withdrawn: the run was aborted"_s);
        QCOMPARE(toJson(step).value(u"approval"_s).toObject().value(u"status"_s).toString(), u"withdrawn"_s);
        QCOMPARE(stepNamed(job.run.id, u"aborted"_s).status, core::RunStepStatus::Succeeded);
        const ApprovalRecord after = m_approvals->find(asked.id)->value();
        QCOMPARE(after.status, u"rejected"_s);
        QCOMPARE(after.reason, u"the run was aborted"_s);
        // The runner acting for the requester withdrew it.
        QCOMPARE(after.decidedBy, u"user:alice/system:pipelines"_s);
        QCOMPARE(m_approvals->approve(asked.id, bob, {}).error().code, ErrorCode::Conflict);
    }

    void noApprovalServiceErrors()
    {
        JobRunner runner(deps(nullptr));
        RunningJob job;
        job.run = queue(shipPipeline());
        start(job, runner);
        QVERIFY(finished(job));
        QCOMPARE(job.result.outcome, Outcome::Errored);
        QVERIFY2(job.result.error.contains(u"needs the approval service"_s), qPrintable(job.result.error));
        QCOMPARE(stepNamed(job.run.id, u"ship-to-prod"_s).status, core::RunStepStatus::Errored);
        QCOMPARE(m_approvals->list()->size(), 0);
    }

    void restartWithdrawsAnInterruptedRunsRequest()
    {
        // What a process that died while its run waited leaves behind: the run running under its
        // owner, the step waiting, the request pending. (It asked exactly as execute() would.)
        const RunRecord run = queue(shipPipeline(), u"s-dead-process"_s);
        auto asked =
            m_approvals->request(u"pipeline-step"_s, u"run/%1/step/ship-to-prod"_s.arg(run.id),
                                 Actor{run.actor, u"engine"_s, {}}, u"Ship?"_s, u"{}"_s, TwoHoursMs, {u"bob"_s});
        QVERIFY(asked);
        RunStepRecord waiting;
        waiting.runId = run.id;
        waiting.stepId = u"jobs[0].plan[1].approve"_s;
        waiting.name = u"ship-to-prod"_s;
        waiting.kind = u"approve"_s;
        waiting.status = core::RunStepStatus::Waiting;
        waiting.hash = asked->id;
        waiting.startedMs = m_clock->nowMs();
        QVERIFY(RunRepository(*m_db).upsertStep(waiting));

        SchedulerOptions options;
        options.workers = 1;
        options.shutdownGraceMs = 0;
        Scheduler scheduler(*m_db, *m_clock, *m_bus, *m_runner, options);
        QVERIFY(scheduler.start());
        scheduler.shutdown();

        const RunRecord settled = RunRepository(*m_db).find(run.id).value();
        QCOMPARE(settled.status, core::RunStatus::Errored);
        const ApprovalRecord after = m_approvals->find(asked->id)->value();
        QCOMPARE(after.status, u"rejected"_s);
        QCOMPARE(after.reason, u"the run was interrupted: Pando stopped while it waited"_s);
        QCOMPARE(after.decidedBy, u"user:alice/system:pipelines"_s);
        const RunStepRecord step = stepNamed(run.id, u"ship-to-prod"_s);
        QCOMPARE(step.status, core::RunStepStatus::Errored);
        QCOMPARE(toJson(step).value(u"approval"_s).toObject().value(u"status"_s).toString(), u"withdrawn"_s);
    }
};

QTEST_GUILESS_MAIN(TestApproveStep)
#include "tests/support/vocabtesting.h"
#include "tst_approvestep.moc"
