// Pipelines end to end on real parts: git repositories for resources, the Docker engine for
// tasks, the state store, the scheduler and the trigger loop, through the same wiring pandod
// uses. What users rely on: a commit runs the jobs it affects in passed: order, unchanged
// steps are skipped on a re-run, hooks, attempts, timeouts and aborts behave as in Concourse,
// nothing is left running, secrets never show.

#include "adapters/kit/s3kit/s3client.h"
#include "app/wiring/pipelinewiring.h"
#include "core/engine/enginewiring.h"
#include "core/pipelines/runview/runview.h"
#include "core/pipelines/service/pipelineservice.h"
#include "core/state/pipelinerepositories.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/support/component.h"
#include "tests/support/s3server.h"

#include <QBuffer>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QScopeGuard>
#include <QTest>
#include <sys/stat.h>

using namespace pando;
using namespace pando::core;
using namespace pando::core::pipelines;
using namespace pando::test;

namespace {

// A task step in flow style, so that nesting never depends on indentation arithmetic.
// inputs/outputs: comma-separated artifact names; modifiers: "attempts: 2" etc.
QByteArray taskBody(const QByteArray &pad, const QByteArray &name, const QByteArray &script, const QByteArray &inputs,
                    const QByteArray &outputs, const QList<QByteArray> &modifiers)
{
    auto list = [](const QByteArray &names) -> QByteArray {
        QByteArrayList items;
        for (const QByteArray &n : names.split(','))
            if (!n.trimmed().isEmpty())
                items << "{name: " + n.trimmed() + "}";
        return "[" + items.join(", ") + "]";
    };
    QByteArray body = "task: " + name + "\n" + pad +
                      "config: {platform: linux, image_resource: {type: registry-image, "
                      "source: {repository: pando/busybox, tag: latest}}, inputs: " +
                      list(inputs) + ", outputs: " + list(outputs) + ", run: {path: sh, args: [\"-c\", \"" + script +
                      "\"]}}\n";
    for (const QByteArray &m : modifiers)
        body += pad + m + "\n";
    return body;
}

// "- task: ..." as a plan item at the given indentation.
QByteArray taskItem(int indent, const QByteArray &name, const QByteArray &script, const QByteArray &inputs = "repo",
                    const QByteArray &outputs = {}, const QList<QByteArray> &modifiers = {})
{
    const QByteArray pad(indent, ' ');
    return pad + "- " + taskBody(pad + "  ", name, script, inputs, outputs, modifiers);
}

// A hook's single step ("on_success:" then this) at the given indentation.
QByteArray hookStep(int indent, const QByteArray &name, const QByteArray &script)
{
    const QByteArray pad(indent, ' ');
    return pad + taskBody(pad, name, script, {}, {}, {});
}

} // namespace

class TestPipelinesDocker : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void setShowsADiffAndDryRunStoresNothing();
    void aNewPipelineCanStartPaused();
    void aPausedJobWaitsForItsUnpause();
    void aCommitRunsTheJobsInPassedOrder();
    void unchangedStepsAreSkippedOnARerun();
    void attemptsAndHooks();
    void varsWithoutAValueWaitForTheRun();
    void manualTriggerCanBeDisabled();
    void loadVarFeedsLaterSteps();
    void acrossRunsEveryCombination();
    void aReleaseTrainOnS3AndSemver();
    void anotherUserReadsInputsAndWritesOutputs();
    void timeoutErrorsAndLeavesNoContainer();
    void abortStopsTheRunningStep();
    void queuedRunsSurviveARestart();

private:
    PipelineService &service() { return *m_fx->engine().pipelines(); }
    RunRecord waitRun(const QString &id, int timeoutMs = 60000);
    std::optional<RunRecord> waitForRunOf(const QString &pipeline, const QString &job, int count,
                                          int timeoutMs = 60000);
    QStringList outputOf(const QString &runId);
    int containersOfRun(const QString &runId);

    std::unique_ptr<EngineFixture> m_fx;
    QString m_repo;
    QString m_firstCommit;
};

void TestPipelinesDocker::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), QStringLiteral("Docker Engine: ") + why);
    PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), QStringLiteral("git"));
    QVERIFY(DockerHarness::ensureBaseImage());
    m_fx = std::make_unique<EngineFixture>();
    m_repo = m_fx->git().createRepository(QStringLiteral("app"));
    m_firstCommit = m_fx->git().commit(QStringLiteral("app"), QStringLiteral("main"),
                                       {{QStringLiteral("README"), GitFile{"version one\n"}}});
    QVERIFY(!m_firstCommit.isEmpty());
    QVERIFY(m_fx->start());
    wiring::PipelineWiringOptions options;
    options.service.triggerIntervalMs = 60'000; // the test drives the trigger loop itself
    auto installed = wiring::installPipelines(m_fx->engine(), options);
    QVERIFY2(installed, qPrintable(installed ? QString() : installed.error().text()));
    QVERIFY(service().setSecret({}, QStringLiteral("token"), QStringLiteral("s3cr3t-value-42"), Actor{}));
    // An install-wide secret is read only by the pipelines it is granted to.
    QVERIFY(service().setSecretAccess(QStringLiteral("token"), SecretAccess{false, {QStringLiteral("ci")}}, Actor{}));
    // A secret holding a mapping, of which a task takes one field.
    QVERIFY(service().setSecret({}, QStringLiteral("db"),
                                QStringLiteral(R"({"user": "ci", "password": "pa55-field-77"})"), Actor{}));
    QVERIFY(service().setSecretAccess(QStringLiteral("db"), SecretAccess{false, {QStringLiteral("ci")}}, Actor{}));
}

void TestPipelinesDocker::cleanupTestCase()
{
    if (m_fx)
        m_fx->stop();
    m_fx.reset();
}

RunRecord TestPipelinesDocker::waitRun(const QString &id, int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    RunRecord run;
    while (timer.elapsed() < timeoutMs) {
        if (auto tree = service().runTree(id)) {
            run = tree->run;
            if (run.status != core::RunStatus::Queued && run.status != core::RunStatus::Running)
                return run;
        }
        QTest::qWait(50);
    }
    return run;
}

std::optional<RunRecord> TestPipelinesDocker::waitForRunOf(const QString &pipeline, const QString &job, int count,
                                                           int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < timeoutMs) {
        auto runs = service().runs(pipeline, job, 100);
        if (runs && runs->size() >= count)
            return waitRun(runs->first().id, int(timeoutMs - timer.elapsed()));
        QTest::qWait(50);
    }
    return std::nullopt;
}

QStringList TestPipelinesDocker::outputOf(const QString &runId)
{
    auto events = service().runEvents(runId, 0, 10000);
    return events ? pipelines::outputOf(*events) : QStringList();
}

int TestPipelinesDocker::containersOfRun(const QString &runId)
{
    auto containers = m_fx->docker().containers({{QStringLiteral("dev.pando.run"), runId}});
    return containers ? int(containers->size()) : -1;
}

void TestPipelinesDocker::setShowsADiffAndDryRunStoresNothing()
{
    const QByteArray config = "jobs:\n  - name: hello\n    plan:\n" + taskItem(6, "say", "echo hello", {});
    auto dry = service().setPipeline(QStringLiteral("probe"), config, {}, true, Actor{});
    QVERIFY2(dry, qPrintable(dry ? QString() : dry.error().text()));
    QVERIFY(dry->created && !dry->diff.isEmpty());
    QCOMPARE(service().pipeline(QStringLiteral("probe")).error().code, ErrorCode::NotFound);

    auto bad = service().setPipeline(QStringLiteral("probe"), "jobs:\n  - name: x\n    plan:\n      - get: nope\n", {},
                                     false, Actor{});
    QVERIFY(!bad);
    QVERIFY2(bad.error().where.startsWith(QLatin1String("jobs[0].plan[0]")), qPrintable(bad.error().text()));
    QCOMPARE(service().pipeline(QStringLiteral("probe")).error().code, ErrorCode::NotFound);
}

// As fly's set-pipeline makes it (the API's default): a new pipeline starts paused, saying who set
// it, and runs nothing, not even a trigger, until someone unpauses it; setting it again leaves its
// state as it is.
void TestPipelinesDocker::aNewPipelineCanStartPaused()
{
    const Actor alice{QStringLiteral("alice"), QStringLiteral("user"), {}};
    const SetPipelineOptions paused{.startPaused = true};
    const QByteArray config = "jobs:\n  - name: hello\n    plan:\n" + taskItem(6, "say", "echo hello", {});
    auto set = service().setPipeline(QStringLiteral("fresh"), config, {}, paused, alice);
    QVERIFY2(set, qPrintable(set ? QString() : set.error().text()));
    QVERIFY(set->created && set->pipeline.record.paused);
    QCOMPARE(set->pipeline.record.pausedReason, QStringLiteral("set by alice; new pipelines start paused"));
    auto refused = service().triggerJob(QStringLiteral("fresh"), QStringLiteral("hello"), alice);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Conflict);
    QVERIFY2(refused.error().message.contains(QLatin1String("is paused (set by alice; new pipelines start paused)")),
             qPrintable(refused.error().text()));
    QVERIFY(refused.error().hint.contains(QLatin1String("pando pipelines unpause fresh")));
    QVERIFY(service().runs(QStringLiteral("fresh"), {}, 10)->isEmpty());

    // Changed while paused, it stays paused; once unpaused, a change does not pause it again.
    const QByteArray changed = "jobs:\n  - name: hello\n    plan:\n" + taskItem(6, "say", "echo hello again", {});
    set = service().setPipeline(QStringLiteral("fresh"), changed, {}, paused, alice);
    QVERIFY(set && set->changed && set->pipeline.record.paused);
    QVERIFY(service().unpause(QStringLiteral("fresh"), alice));
    set = service().setPipeline(QStringLiteral("fresh"), config, {}, paused, alice);
    QVERIFY(set && set->changed && !set->pipeline.record.paused);
    auto triggered = service().triggerJob(QStringLiteral("fresh"), QStringLiteral("hello"), alice);
    QVERIFY2(triggered, qPrintable(triggered ? QString() : triggered.error().text()));
    const RunRecord run = waitRun(triggered->run.id);
    QVERIFY2(run.status == core::RunStatus::Succeeded, qPrintable(run.error));
    QVERIFY(service().removePipeline(QStringLiteral("fresh"), alice));
}

// Concourse's pause-job: a paused job takes no trigger and a new version queues nothing for it,
// while the pipeline's other jobs go on; unpaused, it runs with what was found meanwhile.
void TestPipelinesDocker::aPausedJobWaitsForItsUnpause()
{
    const Actor alice{QStringLiteral("alice"), QStringLiteral("user"), {}};
    const QString repo = m_fx->git().createRepository(QStringLiteral("held"));
    QVERIFY(
        !m_fx->git()
             .commit(QStringLiteral("held"), QStringLiteral("main"), {{QStringLiteral("README"), GitFile{"held\n"}}})
             .isEmpty());
    const QByteArray config = "resources:\n  - name: repo\n    type: git\n    source: { uri: \"" + repo.toUtf8() +
                              "\", branch: main }\n    check_every: 1h\n"
                              "jobs:\n  - name: unit\n    plan:\n      - get: repo\n        trigger: true\n" +
                              taskItem(6, "say", "cat repo/README") +
                              "  - name: lint\n    plan:\n      - get: repo\n        trigger: true\n" +
                              taskItem(6, "say", "echo linted");
    // Set paused, or the check a new pipeline gets at once could queue unit before it is paused.
    auto set =
        service().setPipeline(QStringLiteral("held"), config, {}, SetPipelineOptions{.startPaused = true}, alice);
    QVERIFY2(set, qPrintable(set ? QString() : set.error().text()));

    auto paused = service().setJobPaused(QStringLiteral("held"), QStringLiteral("unit"), true, alice);
    QVERIFY2(paused, qPrintable(paused ? QString() : paused.error().text()));
    QVERIFY(paused->pause);
    QCOMPARE(paused->pause->reason, QStringLiteral("paused by alice"));
    QVERIFY(service().unpause(QStringLiteral("held"), alice));
    QCOMPARE(service().pipeline(QStringLiteral("held"))->pausedJobs.keys(), QStringList{QStringLiteral("unit")});
    auto refused = service().triggerJob(QStringLiteral("held"), QStringLiteral("unit"), alice);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Conflict);
    QVERIFY2(refused.error().message.contains(QLatin1String("job unit of pipeline held is paused (paused by alice)")),
             qPrintable(refused.error().text()));
    QVERIFY(refused.error().hint.contains(QLatin1String("pando jobs unpause held/unit")));
    auto unknown = service().setJobPaused(QStringLiteral("held"), QStringLiteral("nope"), true, alice);
    QVERIFY(!unknown);
    QCOMPARE(unknown.error().code, ErrorCode::NotFound);

    // The check finds the commit: lint runs with it, unit is queued nothing.
    QVERIFY(static_cast<LocalPipelineService &>(service()).triggerOnce());
    const auto lint = waitForRunOf(QStringLiteral("held"), QStringLiteral("lint"), 1);
    QVERIFY(lint && lint->status == core::RunStatus::Succeeded);
    QVERIFY(service().runs(QStringLiteral("held"), QStringLiteral("unit"), 10)->isEmpty());

    // Unpaused, it runs with the version found while it was paused, as a check would have started it.
    auto unpaused = service().setJobPaused(QStringLiteral("held"), QStringLiteral("unit"), false, alice);
    QVERIFY2(unpaused, qPrintable(unpaused ? QString() : unpaused.error().text()));
    QVERIFY(!unpaused->pause);
    const auto unit = waitForRunOf(QStringLiteral("held"), QStringLiteral("unit"), 1);
    QVERIFY(unit);
    QVERIFY2(unit->status == core::RunStatus::Succeeded, qPrintable(unit->error));
    QCOMPARE(unit->trigger, QStringLiteral("resource:repo"));
    QVERIFY2(outputOf(unit->id).join(u'\n').contains(QLatin1String("held")),
             qPrintable(outputOf(unit->id).join(u'\n')));
    auto jobs = service().jobs(QStringLiteral("held"));
    QVERIFY(jobs && jobs->size() == 2);
    QCOMPARE(jobs->at(0).name, QStringLiteral("unit"));
    QVERIFY(!jobs->at(0).pause && jobs->at(0).lastRun && !jobs->at(0).nextRun);
    QCOMPARE(jobs->at(0).lastRun->id, unit->id);
    QVERIFY(service().removePipeline(QStringLiteral("held"), alice));
}

void TestPipelinesDocker::aCommitRunsTheJobsInPassedOrder()
{
    const QByteArray config =
        "resources:\n"
        "  - name: repo\n    type: git\n    source: { uri: ((repo_url)), branch: main }\n    check_every: 1h\n"
        "    webhook_token: ((hook_token))\n"
        "jobs:\n"
        "  - name: unit\n    plan:\n      - get: repo\n        trigger: true\n"
        "      - in_parallel:\n" +
        taskItem(10, "lint", "cat repo/README; echo lint-ok") +
        taskItem(10, "test",
                 "echo secret is $TOKEN; echo $TOKEN | base64; echo db password is $DBPASS; cp repo/README report/",
                 "repo", "report", {"params: { TOKEN: ((token)), DBPASS: ((db.password)) }"}) +
        taskItem(6, "after", "cat report/README", "report") + "    on_success:\n" +
        hookStep(6, "notify", "echo success-hook") +
        "  - name: deploy\n    plan:\n      - get: repo\n        passed: [unit]\n        trigger: true\n" +
        taskItem(6, "ship", "echo shipping $(cat repo/README)");
    const QByteArray vars = "repo_url: " + m_repo.toUtf8() + "\nhook_token: hook-token-42-0123456789abcdef0123\n";
    auto set = service().setPipeline(QStringLiteral("ci"), config, vars, false, Actor{});
    QVERIFY2(set, qPrintable(set ? QString() : set.error().text()));
    QVERIFY(set->created);
    // The stored config keeps the placeholder, never the secret.
    QVERIFY(!QJsonDocument(set->pipeline.toJson()).toJson().contains("s3cr3t-value-42"));

    // The trigger loop checks the new resource (setting a pipeline wakes it) and queues unit.
    QVERIFY(static_cast<LocalPipelineService &>(service()).triggerOnce());
    const auto unitRun = waitForRunOf(QStringLiteral("ci"), QStringLiteral("unit"), 1);
    QVERIFY(unitRun);
    QCOMPARE(service().runs(QStringLiteral("ci"), QStringLiteral("unit"), 10)->size(), 1); // once, not per check
    QCOMPARE(unitRun->trigger, QStringLiteral("resource:repo"));
    const RunRecord unit = *unitRun;
    QVERIFY2(unit.status == core::RunStatus::Succeeded,
             qPrintable(core::toString(unit.status) + QLatin1Char(' ') + unit.error + QLatin1Char('\n') +
                        outputOf(unit.id).join(QLatin1Char('\n'))));
    const QStringList out = outputOf(unit.id);
    const QString text = out.join(QLatin1Char('\n'));
    QVERIFY2(text.contains(QLatin1String("lint-ok")) && text.contains(QLatin1String("version one")), qPrintable(text));
    QVERIFY2(text.contains(QLatin1String("secret is ((redacted))")), qPrintable(text));
    QVERIFY2(!text.contains(QLatin1String("s3cr3t-value-42")), qPrintable(text));
    // The field, not only the whole mapping, is masked.
    QVERIFY2(text.contains(QLatin1String("db password is ((redacted))")), qPrintable(text));
    QVERIFY2(!text.contains(QLatin1String("pa55-field-77")), qPrintable(text));
    QVERIFY2(!text.contains(QString::fromLatin1(QByteArray("s3cr3t-value-42\n").toBase64().left(16))),
             qPrintable(text));
    QVERIFY2(text.contains(QLatin1String("success-hook")), qPrintable(text));

    auto tree = service().runTree(unit.id);
    QVERIFY(tree);
    QCOMPARE(tree->failedCount, 0);
    QVERIFY(tree->stepCount >= 6); // get, in_parallel, lint, test, after, notify

    // deploy follows unit with the version unit used.
    const auto deploy = waitForRunOf(QStringLiteral("ci"), QStringLiteral("deploy"), 1);
    QVERIFY(deploy);
    QCOMPARE(deploy->status, core::RunStatus::Succeeded);
    QCOMPARE(deploy->trigger, QStringLiteral("passed:unit"));
    QVERIFY(outputOf(deploy->id).join(QLatin1Char('\n')).contains(QLatin1String("shipping version one")));
    QCOMPARE(containersOfRun(unit.id), 0);
}

void TestPipelinesDocker::unchangedStepsAreSkippedOnARerun()
{
    auto again = service().triggerJob(QStringLiteral("ci"), QStringLiteral("unit"), Actor{});
    QVERIFY(again);
    const RunRecord rerun = waitRun(again->run.id);
    QCOMPARE(rerun.status, core::RunStatus::Succeeded);
    auto tree = service().runTree(rerun.id);
    QVERIFY2(tree->cachedCount >= 5, qPrintable(QString::number(tree->cachedCount)));
    QVERIFY2(rerun.finishedMs - rerun.startedMs < 3000,
             qPrintable(QStringLiteral("an unchanged re-run took %1 ms").arg(rerun.finishedMs - rerun.startedMs)));

    // Forced, the same run restores nothing: every step runs again, and says so.
    auto forced = service().triggerJob(QStringLiteral("ci"), QStringLiteral("unit"), Actor{}, {.force = true});
    QVERIFY(forced);
    QVERIFY(forced->run.force);
    const RunRecord forcedRun = waitRun(forced->run.id);
    QCOMPARE(forcedRun.status, core::RunStatus::Succeeded);
    QVERIFY(forcedRun.force);
    auto forcedTree = service().runTree(forcedRun.id);
    QCOMPARE(forcedTree->cachedCount, 0);
    QVERIFY2(outputOf(forcedRun.id).join(QLatin1Char('\n')).contains(QLatin1String("success-hook")),
             "the forced run did not run its steps");

    // A new commit, announced by a webhook: the get and every step that reads it run again.
    QVERIFY(!m_fx->git()
                 .commit(QStringLiteral("app"), QStringLiteral("main"),
                         {{QStringLiteral("README"), GitFile{"version two\n"}}})
                 .isEmpty());
    const QString hookToken = QStringLiteral("hook-token-42-0123456789abcdef0123");
    QCOMPARE(service().webhook(QStringLiteral("ci"), QStringLiteral("repo"), QStringLiteral("wrong"), {}).error().code,
             ErrorCode::Unauthorized);
    // An unknown resource gets the same answer as a wrong token.
    QCOMPARE(service().webhook(QStringLiteral("ci"), QStringLiteral("nope"), hookToken, {}).error().code,
             ErrorCode::Unauthorized);
    const int before = int(service().runs(QStringLiteral("ci"), QStringLiteral("unit"), 100)->size());
    QVERIFY(service().webhook(QStringLiteral("ci"), QStringLiteral("repo"), hookToken, {}));
    QVERIFY(static_cast<LocalPipelineService &>(service()).triggerOnce());
    const auto changed = waitForRunOf(QStringLiteral("ci"), QStringLiteral("unit"), before + 1);
    QVERIFY(changed);
    QCOMPARE(changed->status, core::RunStatus::Succeeded);
    QCOMPARE(changed->trigger, QStringLiteral("resource:repo"));
    // Every step that reads the repository, directly or through report, ran again; only the
    // notify hook, which reads nothing, is unchanged.
    QStringList ran, unchanged;
    std::function<void(const QList<RunTreeNode> &)> walk = [&](const QList<RunTreeNode> &nodes) {
        for (const RunTreeNode &n : nodes) {
            (n.step.status == core::RunStepStatus::Cached ? unchanged : ran) << n.step.name;
            walk(n.children);
        }
    };
    walk(service().runTree(changed->id)->roots);
    for (const char *name : {"repo", "lint", "test", "after"})
        QVERIFY2(ran.contains(QLatin1String(name)), qPrintable(ran.join(QLatin1Char(','))));
    QCOMPARE(unchanged, QStringList{QStringLiteral("notify")});
    QVERIFY(outputOf(changed->id).join(QLatin1Char('\n')).contains(QLatin1String("version two")));
    // ...and deploy follows it with version two.
    const auto deploy = waitForRunOf(QStringLiteral("ci"), QStringLiteral("deploy"), 2);
    QVERIFY(deploy);
    QVERIFY(outputOf(deploy->id).join(QLatin1Char('\n')).contains(QLatin1String("shipping version two")));
}

void TestPipelinesDocker::attemptsAndHooks()
{
    const QByteArray config = "jobs:\n  - name: flaky\n    plan:\n" +
                              taskItem(6, "fails", "echo attempt; exit 3", {}, {}, {"attempts: 2"}) +
                              "    on_failure:\n" + hookStep(6, "cleanup", "echo failure-hook") + "    ensure:\n" +
                              hookStep(6, "always", "echo ensure-hook");
    QVERIFY(service().setPipeline(QStringLiteral("flaky"), config, {}, false, Actor{}));
    auto run = service().triggerJob(QStringLiteral("flaky"), QStringLiteral("flaky"), Actor{});
    QVERIFY(run);
    const RunRecord done = waitRun(run->run.id);
    QCOMPARE(done.status, core::RunStatus::Failed);
    const QString text = outputOf(done.id).join(QLatin1Char('\n'));
    QCOMPARE(text.count(QLatin1String("attempt")), 2);
    QVERIFY2(text.contains(QLatin1String("failure-hook")) && text.contains(QLatin1String("ensure-hook")),
             qPrintable(text));
    auto tree = service().runTree(done.id);
    const RunTreeNode &fails = tree->roots.first();
    QCOMPARE(fails.step.attempt, 2);
    QCOMPARE(fails.step.exitCode, 3);
}

// As with fly and Concourse: a var nothing gives a value when the pipeline is set stays a
// placeholder, named in the answer; a run errors saying which var it lacks, and once a secret
// of that name is stored the next run reads it.
void TestPipelinesDocker::varsWithoutAValueWaitForTheRun()
{
    const QByteArray config = "jobs:\n  - name: greet\n    plan:\n" +
                              taskItem(6, "say", "test ${#GREETING} -eq 11 && test ${GREETING#hello-} = later", {}, {},
                                       {"params: {GREETING: ((greeting))}"});
    auto set = service().setPipeline(QStringLiteral("later"), config, {}, false, Actor{});
    QVERIFY2(set, qPrintable(set ? QString() : set.error().text()));
    QCOMPARE(set->undefinedVars, QStringList{QStringLiteral("greeting")});

    auto first = service().triggerJob(QStringLiteral("later"), QStringLiteral("greet"), Actor{});
    QVERIFY2(first, qPrintable(first ? QString() : first.error().text()));
    const RunRecord lacking = waitRun(first->run.id);
    QCOMPARE(lacking.status, core::RunStatus::Errored);
    QVERIFY2(lacking.error.contains(QLatin1String("undefined var \"greeting\"")), qPrintable(lacking.error));

    QVERIFY(service().setSecret(QStringLiteral("later"), QStringLiteral("greeting"), QStringLiteral("hello-later"),
                                Actor{}));
    auto second = service().triggerJob(QStringLiteral("later"), QStringLiteral("greet"), Actor{});
    QVERIFY(second);
    const RunRecord done = waitRun(second->run.id);
    QVERIFY2(done.status == core::RunStatus::Succeeded, qPrintable(done.error + outputOf(done.id).join(u'\n')));
    QVERIFY(!outputOf(done.id).join(u'\n').contains(QLatin1String("hello-later")));
}

// Concourse's documented load_var shape, run for real: a mock resource makes the files, load_var
// reads them (a trimmed text, a JSON mapping), later steps use ((.:name)) and ((.:name.field));
// a value not revealed is masked in the output, a revealed one is not.
void TestPipelinesDocker::loadVarFeedsLaterSteps()
{
    const QByteArray config =
        "resources:\n  - name: release\n    type: mock\n    source:\n      initial_version: r1\n"
        "      create_files:\n        version.txt: \"  1.4.2\\n\"\n"
        "        build.json: '{\"image\": \"pando/busybox\", \"token\": \"tok-9f8e7d6c\"}'\n"
        "jobs:\n  - name: ship\n    plan:\n      - get: release\n"
        "      - load_var: version\n        file: release/version.txt\n        reveal: true\n"
        "      - load_var: build\n        file: release/build.json\n" +
        taskItem(6, "show", "echo version=$VERSION image=$IMAGE token=$TOKEN; test $VERSION = 1.4.2", {}, {},
                 {"params: {VERSION: ((.:version)), IMAGE: ((.:build.image)), TOKEN: ((.:build.token))}"}) +
        "      - load_var: missing\n        file: release/nope.txt\n";
    auto set = service().setPipeline(QStringLiteral("loader"), config, {}, false, Actor{});
    QVERIFY2(set, qPrintable(set ? QString() : set.error().text()));
    QVERIFY(set->undefinedVars.isEmpty()); // local vars are no vars the pipeline waits for
    auto triggered = service().triggerJob(QStringLiteral("loader"), QStringLiteral("ship"), Actor{});
    QVERIFY(triggered);
    const RunRecord run = waitRun(triggered->run.id);
    const QString output = outputOf(run.id).join(u'\n');
    // The last step's file is not there: the run errors there, after the task ran.
    QCOMPARE(run.status, core::RunStatus::Errored);
    QVERIFY2(run.error.contains(QLatin1String("load_var file release/nope.txt does not exist inside release")),
             qPrintable(run.error));
    QVERIFY2(output.contains(QLatin1String("version=1.4.2 image=((redacted)) token=((redacted))")), qPrintable(output));
    QVERIFY2(!output.contains(QLatin1String("tok-9f8e7d6c")), qPrintable(output));
}

// Concourse's documented across shape, run for real: a matrix of a written list and a list a
// load_var loaded, two combinations at once; each combination's step is its own in the run.
void TestPipelinesDocker::acrossRunsEveryCombination()
{
    const QByteArray config =
        "resources:\n  - name: matrix\n    type: mock\n    source:\n      create_files:\n"
        "        targets.json: '[\"amd64\", \"arm64\"]'\n"
        "jobs:\n  - name: build\n    plan:\n      - get: matrix\n"
        "      - load_var: targets\n        file: matrix/targets.json\n        reveal: true\n"
        "      - across:\n          - var: version\n            values: [\"1.0\", \"2.0\"]\n"
        "          - var: target\n            values: ((.:targets))\n            max_in_flight: all\n"
        "        " +
        taskBody("        ", "each", "echo built $VERSION for $TARGET", {}, {},
                 {"params: {VERSION: ((.:version)), TARGET: ((.:target))}"});
    auto set = service().setPipeline(QStringLiteral("matrix"), config, {}, false, Actor{});
    QVERIFY2(set, qPrintable(set ? QString() : set.error().text()));
    auto triggered = service().triggerJob(QStringLiteral("matrix"), QStringLiteral("build"), Actor{});
    QVERIFY(triggered);
    const RunRecord run = waitRun(triggered->run.id);
    const QString output = outputOf(run.id).join(u'\n');
    QVERIFY2(run.status == core::RunStatus::Succeeded, qPrintable(run.error + output));
    for (const char *line :
         {"built 1.0 for amd64", "built 1.0 for arm64", "built 2.0 for amd64", "built 2.0 for arm64"})
        QVERIFY2(output.contains(QLatin1String(line)), qPrintable(output));
    auto tree = service().runTree(run.id);
    QVERIFY(tree);
    // get, load_var, the across step and its four tasks.
    QCOMPARE(tree->stepCount, 7);
    QCOMPARE(tree->failedCount, 0);
}

// Concourse's documented semver and s3 shapes, run for real against an S3-compatible server:
// get a version bumped for the build, package it in a container, put the artifact into the
// regexp's directory and the version back; a later job gets the artifact that passed.
void TestPipelinesDocker::aReleaseTrainOnS3AndSemver()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(S3Server::available(&why), QStringLiteral("s3rver: ") + why);
    S3Server server;
    QVERIFY2(server.start(), qPrintable(server.error()));
    adapters::s3kit::Config bucket;
    bucket.bucket = QStringLiteral("releases");
    bucket.endpoint = server.endpoint();
    bucket.credentials = {QLatin1String(S3Server::AccessKey), QLatin1String(S3Server::SecretKey), {}};
    const adapters::s3kit::S3Client client(bucket);
    QVERIFY(client.createBucket());
    const QByteArray s3 = "endpoint: " + server.endpoint().toUtf8() +
                          ", bucket: releases, access_key_id: " + S3Server::AccessKey +
                          ", secret_access_key: ((s3-secret))";
    const QByteArray config =
        "resources:\n"
        "  - name: version\n    type: semver\n"
        "    source: {driver: s3, key: app/version, initial_version: 1.0.0, " +
        s3 +
        "}\n"
        "  - name: artifact\n    type: s3\n    source: {regexp: builds/app-(.*).tgz, " +
        s3 +
        "}\n"
        "jobs:\n  - name: build\n    plan:\n"
        "      - get: version\n        params: {bump: minor}\n" +
        taskItem(6, "package", "v=$(cat version/version); mkdir -p dist; echo payload-$v > dist/app-$v.tgz", "version",
                 "dist") +
        "      - put: artifact\n        params: {file: dist/app-*.tgz}\n"
        "      - put: version\n        params: {file: version/version}\n"
        "  - name: ship\n    plan:\n      - get: artifact\n        passed: [build]\n        trigger: true\n" +
        taskItem(6, "show", "cat artifact/app-*.tgz; echo from $(cat artifact/url)", "artifact");
    auto set = service().setPipeline(QStringLiteral("train"), config, {}, false, Actor{});
    QVERIFY2(set, qPrintable(set ? QString() : set.error().text()));
    // The secret key comes from the pipeline's secrets, as a ((var)) resolved when it is used.
    QVERIFY(service().setSecret(QStringLiteral("train"), QStringLiteral("s3-secret"),
                                QLatin1String(S3Server::SecretKey), Actor{}));
    auto triggered = service().triggerJob(QStringLiteral("train"), QStringLiteral("build"), Actor{});
    QVERIFY2(triggered, qPrintable(triggered ? QString() : triggered.error().text()));
    const RunRecord run = waitRun(triggered->run.id);
    QVERIFY2(run.status == core::RunStatus::Succeeded, qPrintable(run.error + outputOf(run.id).join(u'\n')));
    // What the run stored is in the bucket, as S3 answers for it.
    QBuffer stored;
    stored.open(QIODevice::WriteOnly);
    QVERIFY(client.download(QStringLiteral("builds/app-1.1.0.tgz"), {}, stored));
    QCOMPARE(stored.data(), QByteArray("payload-1.1.0\n"));
    QBuffer version;
    version.open(QIODevice::WriteOnly);
    QVERIFY(client.download(QStringLiteral("app/version"), {}, version));
    QCOMPARE(version.data(), QByteArray("1.1.0"));

    // The artifact that passed build triggers ship, which reads it in its container.
    QVERIFY(static_cast<LocalPipelineService &>(service()).triggerOnce());
    auto shipped = waitForRunOf(QStringLiteral("train"), QStringLiteral("ship"), 1);
    QVERIFY(shipped);
    const QString output = outputOf(shipped->id).join(u'\n');
    QVERIFY2(shipped->status == core::RunStatus::Succeeded, qPrintable(shipped->error + output));
    QVERIFY2(output.contains(QLatin1String("payload-1.1.0")), qPrintable(output));
    QVERIFY2(output.contains(server.endpoint() + QLatin1String("/releases/builds/app-1.1.0.tgz")), qPrintable(output));
}

// A job with disable_manual_trigger is not started by hand: the trigger is refused naming the
// key, and nothing is queued.
void TestPipelinesDocker::manualTriggerCanBeDisabled()
{
    const QByteArray config =
        "jobs:\n  - name: guarded\n    disable_manual_trigger: true\n    plan:\n" + taskItem(6, "say", "true", {});
    QVERIFY(service().setPipeline(QStringLiteral("guarded"), config, {}, false, Actor{}));
    const auto refused = service().triggerJob(QStringLiteral("guarded"), QStringLiteral("guarded"), Actor{});
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Conflict);
    QCOMPARE(refused.error().where, QStringLiteral("jobs[0].disable_manual_trigger"));
    QVERIFY2(refused.error().message.contains(QLatin1String("not started by hand")),
             qPrintable(refused.error().text()));
    const auto runs = service().runs(QStringLiteral("guarded"), QStringLiteral("guarded"), 10);
    QVERIFY(runs && runs->isEmpty());
}

// pandod runs with umask 077, so what it makes on the host is its own; a task that runs as another
// user (run.user, or the USER of its image) still reads its inputs and writes its outputs.
void TestPipelinesDocker::anotherUserReadsInputsAndWritesOutputs()
{
    const mode_t before = ::umask(077);
    const auto restore = qScopeGuard([before] { ::umask(before); });
    const QByteArray image = "image_resource: {type: registry-image, source: {repository: pando/busybox, tag: latest}}";
    const QByteArray config =
        "resources:\n"
        "  - name: repo\n    type: git\n    source: { uri: " +
        m_repo.toUtf8() +
        ", branch: main }\n    check_every: 1h\n"
        "jobs:\n  - name: nobody\n    plan:\n      - get: repo\n"
        "      - task: write\n        config: {platform: linux, " +
        image +
        ", inputs: [{name: repo}], outputs: [{name: made}], run: {user: '65534', path: sh, args: ['-c', "
        "'id -u; cat repo/README; mkdir made/sub && echo made-by-nobody > made/sub/file']}}\n"
        "      - task: read\n        config: {platform: linux, " +
        image + ", inputs: [{name: made}], run: {user: '65534', path: sh, args: ['-c', 'cat made/sub/file']}}\n";
    auto set = service().setPipeline(QStringLiteral("nobody"), config, {}, false, Actor{});
    QVERIFY2(set, qPrintable(set ? QString() : set.error().text()));
    QVERIFY(static_cast<LocalPipelineService &>(service()).triggerOnce()); // checks repo
    auto run = service().triggerJob(QStringLiteral("nobody"), QStringLiteral("nobody"), Actor{});
    QVERIFY2(run, qPrintable(run ? QString() : run.error().text()));
    const RunRecord done = waitRun(run->run.id);
    const QString text = outputOf(done.id).join(QLatin1Char('\n'));
    QVERIFY2(done.status == core::RunStatus::Succeeded, qPrintable(done.error + QLatin1Char('\n') + text));
    QVERIFY2(text.contains(QLatin1String("65534")) && text.contains(QLatin1String("version")) &&
                 text.contains(QLatin1String("made-by-nobody")),
             qPrintable(text));
}

void TestPipelinesDocker::timeoutErrorsAndLeavesNoContainer()
{
    const QByteArray config = "jobs:\n  - name: slow\n    plan:\n" +
                              taskItem(6, "sleeps", "sleep 30", {}, {}, {"timeout: 1s"}) + "    on_error:\n" +
                              hookStep(6, "report", "echo error-hook");
    QVERIFY(service().setPipeline(QStringLiteral("slow"), config, {}, false, Actor{}));
    auto run = service().triggerJob(QStringLiteral("slow"), QStringLiteral("slow"), Actor{});
    QVERIFY(run);
    QElapsedTimer timer;
    timer.start();
    const RunRecord done = waitRun(run->run.id);
    QCOMPARE(done.status, core::RunStatus::Errored);
    QVERIFY(outputOf(done.id).join(QLatin1Char('\n')).contains(QLatin1String("error-hook")));
    QVERIFY2(timer.elapsed() < 15000, "the timeout ended the step");
    QCOMPARE(containersOfRun(done.id), 0);
}

void TestPipelinesDocker::abortStopsTheRunningStep()
{
    const QByteArray config = "jobs:\n  - name: long\n    plan:\n" +
                              taskItem(6, "sleeps", "echo started; sleep 60", {}) + "    on_abort:\n" +
                              hookStep(6, "tidy", "echo abort-hook");
    QVERIFY(service().setPipeline(QStringLiteral("long"), config, {}, false, Actor{}));
    auto run = service().triggerJob(QStringLiteral("long"), QStringLiteral("long"), Actor{});
    QVERIFY(run);
    QTRY_VERIFY_WITH_TIMEOUT(containersOfRun(run->run.id) == 1, 30000);
    // The deploy side's reconciler leaves task containers alone: they belong to their run.
    QVERIFY(m_fx->engine().reconcileOnce());
    QCOMPARE(containersOfRun(run->run.id), 1);
    QVERIFY(service().abortRun(run->run.id, Actor{}));
    const RunRecord done = waitRun(run->run.id, 30000);
    QCOMPARE(done.status, core::RunStatus::Aborted);
    QVERIFY(outputOf(done.id).join(QLatin1Char('\n')).contains(QLatin1String("abort-hook")));
    QTRY_COMPARE_WITH_TIMEOUT(containersOfRun(done.id), 0, 10000);
}

void TestPipelinesDocker::queuedRunsSurviveARestart()
{
    QVERIFY(service().pause(QStringLiteral("flaky"), Actor{}));
    // Two runs that were queued before the pause (a trigger refuses a paused pipeline), as the
    // store holds them.
    RunRecord queued;
    queued.pipeline = QStringLiteral("flaky");
    queued.job = QStringLiteral("flaky");
    queued.trigger = QStringLiteral("manual");
    queued.inputsJson = QStringLiteral("{}");
    queued.configVersion = service().pipeline(QStringLiteral("flaky"))->record.configVersion;
    RunRepository runs(core::wiringParts(m_fx->engine()).database);
    auto a = runs.enqueue(queued);
    auto b = runs.enqueue(queued);
    QVERIFY(a && b);
    // A task container a dead process left running.
    adapters::ContainerSpec leftover;
    leftover.name = QStringLiteral("pando-task-leftover-") + m_fx->installId();
    leftover.image = DockerHarness::baseImage();
    leftover.command = {QStringLiteral("/bin/sleep"), QStringLiteral("300")};
    leftover.labels = {{QStringLiteral("dev.pando.managed"), QStringLiteral("true")},
                       {QStringLiteral("dev.pando.install"), m_fx->installId()},
                       {QStringLiteral("dev.pando.kind"), QStringLiteral("task")},
                       {QStringLiteral("dev.pando.run"), QStringLiteral("r-dead")}};
    QVERIFY(m_fx->docker().run(leftover));
    const QString dataDir = m_fx->dataDir();
    m_fx->stop();
    QVERIFY(m_fx->start(dataDir));
    QVERIFY(wiring::installPipelines(m_fx->engine()));
    QCOMPARE(containersOfRun(QStringLiteral("r-dead")), 0);
    QCOMPARE(service().runTree(a->id)->run.status, core::RunStatus::Queued);
    QVERIFY(service().unpause(QStringLiteral("flaky"), Actor{}));
    QCOMPARE(waitRun(a->id).status, core::RunStatus::Failed);
    QCOMPARE(waitRun(b->id).status, core::RunStatus::Failed);
    // Each ran once: two attempts each, no more.
    QCOMPARE(outputOf(a->id).join(QLatin1Char('\n')).count(QLatin1String("attempt")), 2);
}

QTEST_GUILESS_MAIN(TestPipelinesDocker)
#include "tests/support/vocabtesting.h"
#include "tst_pipelinesdocker.moc"
