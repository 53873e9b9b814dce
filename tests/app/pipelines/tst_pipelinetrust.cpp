// What a pipeline's author can do to the install and to other pipelines, on real parts: the
// host task runner, the Docker engine for container tasks, git repositories for resources and
// task files, through the wiring pandod uses. Each case is an attack that worked before its fix:
// commands on the host without an administrator's say-so, another pipeline's cache restored,
// a symlink planted in a cache or an output, a pipeline paused by a broken task file, a short
// webhook token, a var that expands without bound.

#include "core/pipelines/service/localpipelineservice.h"
#include "tests/app/pipelines/pipelinetrustfixture.h"

#include <QDirIterator>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTest>

using namespace pando;
using namespace pando::core;
using namespace pando::core::pipelines;
using namespace pando::test;

class TestPipelineTrust : public PipelineTrustFixture {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void hostExecutionIsOffUntilAnAdministratorAllowsIt();
    void aTaskFileNeverPicksTheHost();
    void aShellTypeWithoutImageIsRefusedLikeAHostTask();
    void aPipelinesOwnGitTypeCannotPlantAnotherPipelinesGet();
    void taskCachesArePerPipelineUnlessShared();
    void aLinkPlantedInACacheIsNotMounted();
    void anOutputSwappedForALinkIsNotRead();
    void aBrokenTaskFileDoesNotPauseThePipeline();
    void aTaskFileReadsOnlyTheVarsItsStepGives();
    void privilegedTasksNeedTheHostExecutionMark();
    void webhookTokensAreLongAndTheRouteTellsNothing();
    void shellTypesGetTheirDirectoryInDollarOne();
    void resourcesAreToldTheBuild();
    void secretsStayOutOfArgv();
    void varsExpandWithinLimits();
    void installWideSecretsAreReadOnlyByThePipelinesGrantedThem();
    void secretsStoredBeforeAccessListsKeepTheirPipelines();
};

void TestPipelineTrust::initTestCase()
{
    startEngine();
}

void TestPipelineTrust::cleanupTestCase()
{
    stopEngine();
}

void TestPipelineTrust::hostExecutionIsOffUntilAnAdministratorAllowsIt()
{
    // A task without image_resource used to run on the host as pandod's user, for anyone who
    // could set a pipeline.
    const QString marker = m_tmp.filePath(QStringLiteral("host-task-ran"));
    setPipeline(QStringLiteral("hosty"),
                oneJob("j", "      - task: sneaky\n        config: {run: {path: sh, args: [\"-c\", \"touch " +
                                marker.toUtf8() + "\"]}}\n"));
    auto enabled = service().hostExecution();
    QVERIFY(enabled);
    QVERIFY2(!*enabled, "host execution is off on a new install");

    RunRecord run = runJob(QStringLiteral("hosty"), QStringLiteral("j"));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY2(run.error.contains(QLatin1String("task sneaky")) &&
                 run.error.contains(QLatin1String("host execution is off for this install")),
             qPrintable(run.error));
    QVERIFY2(!QFileInfo::exists(marker), "the refused task did not run");

    // The install's setting alone lets no pipeline onto the host.
    QVERIFY(service().setHostExecution(true, Actor{QStringLiteral("user:admin")}));
    run = runJob(QStringLiteral("hosty"), QStringLiteral("j"));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY2(run.error.contains(QLatin1String("pipeline hosty is not allowed")), qPrintable(run.error));
    QVERIFY(!QFileInfo::exists(marker));

    // With an administrator's mark on the pipeline, it runs there.
    QVERIFY(service().setPipelineHostExecution(QStringLiteral("hosty"), true, Actor{QStringLiteral("user:admin")}));
    QVERIFY(service().pipeline(QStringLiteral("hosty"))->record.hostExecution);
    run = runJob(QStringLiteral("hosty"), QStringLiteral("j"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + QLatin1Char(' ') + run.error));
    QVERIFY(QFileInfo::exists(marker));

    // Turning the setting off again stops every marked pipeline.
    QVERIFY(QFile::remove(marker));
    QVERIFY(service().setHostExecution(false, Actor{QStringLiteral("user:admin")}));
    run = runJob(QStringLiteral("hosty"), QStringLiteral("j"));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY(!QFileInfo::exists(marker));
}

void TestPipelineTrust::aTaskFileNeverPicksTheHost()
{
    // Whoever can push to a watched repository writes its task files: one without an image
    // must not reach the host, even in a pipeline an administrator allowed onto it.
    const QString marker = m_tmp.filePath(QStringLiteral("task-file-ran"));
    const QString repo = m_fx->git().createRepository(QStringLiteral("tasks"));
    QVERIFY(
        !m_fx->git()
             .commit(QStringLiteral("tasks"), QStringLiteral("main"),
                     {{QStringLiteral("ci/t.yml"), GitFile{"platform: linux\nrun: {path: sh, args: [\"-c\", \"touch " +
                                                           marker.toUtf8() + "\"]}\n"}}})
             .isEmpty());
    setPipeline(QStringLiteral("filey"),
                "resources:\n  - name: repo\n    type: git\n    source: {uri: \"" + repo.toUtf8() +
                    "\", branch: main}\n" +
                    oneJob("j", "      - get: repo\n      - task: from-file\n        file: repo/ci/t.yml\n"));
    QVERIFY(service().setHostExecution(true, Actor{}));
    QVERIFY(service().setPipelineHostExecution(QStringLiteral("filey"), true, Actor{}));
    const RunRecord run = runJob(QStringLiteral("filey"), QStringLiteral("j"));
    QVERIFY(service().setHostExecution(false, Actor{}));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY2(run.error.contains(QLatin1String("a task file never runs on the host")), qPrintable(run.error));
    QVERIFY(!QFileInfo::exists(marker));
}

void TestPipelineTrust::aShellTypeWithoutImageIsRefusedLikeAHostTask()
{
    const QString marker = m_tmp.filePath(QStringLiteral("shell-type-ran"));
    setPipeline(
        QStringLiteral("shelly"),
        "resource_types:\n  - name: probe\n    commands:\n      check: 'touch " + marker.toUtf8() +
            "; echo \"[{\\\"v\\\": \\\"1\\\"}]\"'\n      in: 'echo \"{\\\"version\\\": {\\\"v\\\": \\\"1\\\"}}\"'\n"
            "resources:\n  - name: thing\n    type: probe\n" +
            oneJob("j", "      - get: thing\n"));
    const RunRecord run = runJob(QStringLiteral("shelly"), QStringLiteral("j"));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY2(run.error.contains(QLatin1String("resource type probe (no image:)")), qPrintable(run.error));
    QVERIFY(!QFileInfo::exists(marker));
}

// The statuses of a run's steps by name.
static QHash<QString, QString> statuses(const RunTree &tree)
{
    QHash<QString, QString> out;
    std::function<void(const QList<RunTreeNode> &)> walk = [&](const QList<RunTreeNode> &nodes) {
        for (const RunTreeNode &n : nodes) {
            out.insert(n.step.name, toString(n.step.status));
            walk(n.children);
        }
    };
    walk(tree.roots);
    return out;
}

void TestPipelineTrust::aPipelinesOwnGitTypeCannotPlantAnotherPipelinesGet()
{
    const QString repo = m_fx->git().createRepository(QStringLiteral("shared"));
    const QString commit = m_fx->git().commit(QStringLiteral("shared"), QStringLiteral("main"),
                                              {{QStringLiteral("README"), GitFile{"the real tree\n"}}});
    QVERIFY(!commit.isEmpty());
    const QByteArray source = "source: {uri: \"" + repo.toUtf8() + "\", branch: main}\n";
    // The attacker declares a type named git whose `in` writes a tree of its choosing, and pins
    // the commit the victim will get, so that everything the old cache key held matched.
    setPipeline(QStringLiteral("attacker"),
                "resource_types:\n  - name: git\n    image: pando/busybox:latest\n    commands:\n"
                "      check: 'echo \"[{\\\"ref\\\": \\\"" +
                    commit.toUtf8() +
                    "\\\"}]\"'\n"
                    "      in: 'd=${1:-$0}; echo planted > $d/README; echo \"{\\\"version\\\": {\\\"ref\\\": \\\"" +
                    commit.toUtf8() + "\\\"}}\"'\n" + "resources:\n  - name: repo\n    type: git\n    " + source +
                    "    version: {ref: " + commit.toUtf8() + "}\n" + oneJob("plant", "      - get: repo\n"));
    const RunRecord planted = runJob(QStringLiteral("attacker"), QStringLiteral("plant"));
    QVERIFY2(planted.status == RunStatus::Succeeded, qPrintable(toString(planted.status) + u' ' + planted.error));

    setPipeline(QStringLiteral("victim"),
                "resources:\n  - name: repo\n    type: git\n    " + source +
                    oneJob("read", "      - get: repo\n      - task: show\n        config: {platform: linux, " + Image +
                                       ", inputs: [{name: repo}], run: {path: cat, args: [repo/README]}}\n"));
    const RunRecord victim = runJob(QStringLiteral("victim"), QStringLiteral("read"));
    QVERIFY2(victim.status == RunStatus::Succeeded, qPrintable(toString(victim.status) + u' ' + victim.error));
    const QString text = outputOf(victim.id).join(u'\n');
    QVERIFY2(text.contains(QLatin1String("the real tree")) && !text.contains(QLatin1String("planted")),
             qPrintable(text));
    QCOMPARE(statuses(*service().runTree(victim.id)).value(QStringLiteral("repo")), QStringLiteral("succeeded"));
}

void TestPipelineTrust::taskCachesArePerPipelineUnlessShared()
{
    // Two pipelines with the same container task: each runs its own, even though the content
    // matches; a step that opts in to shared_cache is restored from the other's.
    const QByteArray task = "      - task: stamp\n        config: {platform: linux, " + Image +
                            ", outputs: [{name: out}], run: {path: sh, args: [\"-c\", \"echo side-effect; echo x > "
                            "out/x\"]}}\n";
    setPipeline(QStringLiteral("first"), oneJob("j", task));
    setPipeline(QStringLiteral("second"), oneJob("j", task));
    RunRecord run = runJob(QStringLiteral("first"), QStringLiteral("j"));
    QCOMPARE(toString(run.status), QStringLiteral("succeeded"));
    run = runJob(QStringLiteral("second"), QStringLiteral("j"));
    QCOMPARE(toString(run.status), QStringLiteral("succeeded"));
    QCOMPARE(statuses(*service().runTree(run.id)).value(QStringLiteral("stamp")), QStringLiteral("succeeded"));
    QVERIFY(outputOf(run.id).join(u'\n').contains(QLatin1String("side-effect")));
    // Within one pipeline an unchanged step is still skipped.
    run = runJob(QStringLiteral("second"), QStringLiteral("j"));
    QCOMPARE(statuses(*service().runTree(run.id)).value(QStringLiteral("stamp")), QStringLiteral("cached"));

    const QByteArray shared = task + "        shared_cache: true\n";
    setPipeline(QStringLiteral("third"), oneJob("j", shared));
    setPipeline(QStringLiteral("fourth"), oneJob("j", shared));
    QCOMPARE(toString(runJob(QStringLiteral("third"), QStringLiteral("j")).status), QStringLiteral("succeeded"));
    run = runJob(QStringLiteral("fourth"), QStringLiteral("j"));
    QCOMPARE(toString(run.status), QStringLiteral("succeeded"));
    QCOMPARE(statuses(*service().runTree(run.id)).value(QStringLiteral("stamp")), QStringLiteral("cached"));
}

void TestPipelineTrust::aLinkPlantedInACacheIsNotMounted()
{
    // Run 1 plants a link to a host directory inside its cache; run 2 declares that path as a
    // cache of its own. dockerd resolves a bind mount's source on the host, following the link:
    // the container got the host directory read-write.
    const QString hostDir = m_tmp.filePath(QStringLiteral("host-dir"));
    QVERIFY(QDir().mkpath(hostDir));
    const QByteArray head = "      - task: cached\n        config: {platform: linux, " + Image + ", caches: [";
    setPipeline(QStringLiteral("cachey"), oneJob("j", head + "{path: c}], run: {path: sh, args: [\"-c\", \"ln -s " +
                                                          hostDir.toUtf8() + " c/inner\"]}}\n"));
    RunRecord run = runJob(QStringLiteral("cachey"), QStringLiteral("j"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));
    setPipeline(QStringLiteral("cachey"),
                oneJob("j", head + "{path: c}, {path: c/inner}], run: {path: sh, args: [\"-c\", \"echo pwned > "
                                   "c/inner/pwned\"]}}\n"));
    run = runJob(QStringLiteral("cachey"), QStringLiteral("j"));
    QVERIFY2(!QFileInfo::exists(hostDir + QStringLiteral("/pwned")), "the container wrote into a host directory");
    QCOMPARE(toString(run.status), QStringLiteral("failed"));
    auto tree = service().runTree(run.id);
    const QString error = tree->roots.value(0).step.error;
    QVERIFY2(error.contains(QLatin1String("cache c/inner is a symbolic link")), qPrintable(error));
    // The planted link is gone: the next run starts with a clean cache.
    run = runJob(QStringLiteral("cachey"), QStringLiteral("j"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));
    QVERIFY(!QFileInfo::exists(hostDir + QStringLiteral("/pwned")));
}

// Every file below dir, recursively.
static int filesBelow(const QString &dir)
{
    int count = 0;
    QDirIterator it(dir, QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        it.next();
        ++count;
    }
    return count;
}

void TestPipelineTrust::anOutputSwappedForALinkIsNotRead()
{
    // The output was packed (from the host path the link names) before anyone looked.
    const QString hostDir = m_tmp.filePath(QStringLiteral("secret-dir"));
    QVERIFY(QDir().mkpath(hostDir));
    QFile secret(hostDir + QStringLiteral("/secret.txt"));
    QVERIFY(secret.open(QIODevice::WriteOnly));
    secret.write("host-secret\n");
    secret.close();
    setPipeline(QStringLiteral("outy"),
                oneJob("j", "      - task: swap\n        config: {platform: linux, " + Image +
                                ", outputs: [{name: out}], run: {path: sh, args: [\"-c\", \"rmdir out && ln -s " +
                                hostDir.toUtf8() + " out\"]}}\n"));
    const QString blobs = m_fx->dataDir() + QStringLiteral("/blobs");
    const int before = filesBelow(blobs);
    const RunRecord run = runJob(QStringLiteral("outy"), QStringLiteral("j"));
    QCOMPARE(toString(run.status), QStringLiteral("failed"));
    const QString error = service().runTree(run.id)->roots.value(0).step.error;
    QVERIFY2(error.contains(QLatin1String("output out is a symbolic link")), qPrintable(error));
    QCOMPARE(filesBelow(blobs), before); // nothing of the host directory was stored
}

void TestPipelineTrust::aBrokenTaskFileDoesNotPauseThePipeline()
{
    // Whoever can push to the repository can make the task file unreadable; three such runs
    // used to open the circuit breaker and pause the pipeline for everyone.
    const QString repo = m_fx->git().createRepository(QStringLiteral("broken"));
    QVERIFY(!m_fx->git()
                 .commit(QStringLiteral("broken"), QStringLiteral("main"),
                         {{QStringLiteral("ci/t.yml"), GitFile{"platform: linux\nrun: {pth: nope}\n"}}})
                 .isEmpty());
    setPipeline(QStringLiteral("breaky"),
                "resources:\n  - name: repo\n    type: git\n    source: {uri: \"" + repo.toUtf8() +
                    "\", branch: main}\n" +
                    oneJob("j", "      - get: repo\n      - task: t\n        file: repo/ci/t.yml\n"));
    for (int i = 0; i < 4; ++i) {
        const RunRecord run = runJob(QStringLiteral("breaky"), QStringLiteral("j"));
        QCOMPARE(toString(run.status), QStringLiteral("errored"));
        QVERIFY2(run.error.contains(QLatin1String("ci/t.yml")), qPrintable(run.error));
    }
    const PipelineRecord p = service().pipeline(QStringLiteral("breaky"))->record;
    QVERIFY2(!p.paused, qPrintable(p.pausedReason));
}

// A task file is whatever was pushed: its ((placeholders)) come from its step's vars: alone, so
// a pushed file cannot name a secret of the pipeline and print it.
void TestPipelineTrust::aTaskFileReadsOnlyTheVarsItsStepGives()
{
    const QString repo = m_fx->git().createRepository(QStringLiteral("varsy"));
    QVERIFY(!m_fx->git()
                 .commit(QStringLiteral("varsy"), QStringLiteral("main"),
                         {{QStringLiteral("ci/t.yml"),
                           GitFile{"platform: linux\nimage_resource: {type: registry-image, source: {repository: "
                                   "((image))}}\nparams: {KEY: ((deploy-key))}\nrun: {path: env}\n"}}})
                 .isEmpty());
    setPipeline(QStringLiteral("varsy"),
                "resources:\n  - name: repo\n    type: git\n    source: {uri: \"" + repo.toUtf8() +
                    "\", branch: main}\n" +
                    oneJob("j", "      - get: repo\n      - task: t\n        file: repo/ci/t.yml\n"
                                "        vars: {image: alpine}\n"));
    QVERIFY(service().setSecret(QStringLiteral("varsy"), QStringLiteral("deploy-key"), QStringLiteral("k3y-v4lue-55"),
                                Actor{}));
    const RunRecord run = runJob(QStringLiteral("varsy"), QStringLiteral("j"));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY2(run.error.contains(QLatin1String("undefined var \"deploy-key\": the task step's vars: do not give it")),
             qPrintable(run.error));
    QVERIFY2(!run.error.contains(QLatin1String("k3y-v4lue-55")), qPrintable(run.error));
}

// A privileged container holds the host: the install's host-execution setting and the
// administrator's mark on the pipeline decide, at set time where they can and at run time always.
void TestPipelineTrust::privilegedTasksNeedTheHostExecutionMark()
{
    // Mounting needs CAP_SYS_ADMIN, which only a privileged container has.
    const QByteArray config = oneJob("j", "      - task: mounter\n        privileged: true\n        config:\n"
                                          "          platform: linux\n          " +
                                              Image +
                                              "\n          run: {path: sh, args: [-c, \"mkdir -p /tmp/m && mount -t "
                                              "tmpfs none /tmp/m && echo mounted\"]}\n");
    auto off = service().setPipeline(QStringLiteral("privy"), config, {}, false, Actor{});
    QVERIFY(!off);
    QCOMPARE(off.error().where, QStringLiteral("jobs[0].plan[0].privileged"));
    QVERIFY2(off.error().message.contains(QLatin1String("host execution is off for this install")),
             qPrintable(off.error().text()));

    QVERIFY(service().setHostExecution(true, Actor{}));
    setPipeline(QStringLiteral("privy"), config); // new: it cannot have the mark yet
    const RunRecord unmarked = runJob(QStringLiteral("privy"), QStringLiteral("j"));
    QCOMPARE(toString(unmarked.status), QStringLiteral("errored"));
    QVERIFY2(unmarked.error.contains(QLatin1String("task mounter is privileged")), qPrintable(unmarked.error));
    // Set again without the mark: refused now that the pipeline exists.
    auto again = service().setPipeline(QStringLiteral("privy"), config + "\n", {}, false, Actor{});
    QVERIFY(!again);
    QVERIFY2(again.error().message.contains(QLatin1String("not allowed to run commands on the host")),
             qPrintable(again.error().text()));

    QVERIFY(service().setPipelineHostExecution(QStringLiteral("privy"), true, Actor{}));
    const RunRecord marked = runJob(QStringLiteral("privy"), QStringLiteral("j"));
    QVERIFY(service().setHostExecution(false, Actor{}));
    const QString stepError = service().runTree(marked.id)->roots.value(0).step.error;
    if (marked.status != core::RunStatus::Succeeded) {
        // A dockerd that itself runs without every capability (inside a container, as on some
        // CI machines) cannot start a privileged container; its refusal shows Pando asked for one.
        QVERIFY2(stepError.contains(QLatin1String("unable to apply caps")),
                 qPrintable(toString(marked.status) + u' ' + marked.error + u' ' + stepError));
        QSKIP("this machine's dockerd cannot start privileged containers (it lacks capabilities itself)");
    }
    QVERIFY(outputOf(marked.id).join(u'\n').contains(QLatin1String("mounted")));
}

void TestPipelineTrust::webhookTokensAreLongAndTheRouteTellsNothing()
{
    const QByteArray head = "resources:\n  - name: repo\n    type: time\n    source: {interval: 1h}\n"
                            "    webhook_token: ";
    const QByteArray job = oneJob("j", "      - get: repo\n");
    // Eight characters were enough; a token is now refused when the pipeline is set.
    auto shortLiteral = service().setPipeline(QStringLiteral("hooky"), head + "abcdefgh\n" + job, {}, false, Actor{});
    QVERIFY(!shortLiteral);
    QCOMPARE(shortLiteral.error().where, QStringLiteral("resources[0].webhook_token"));
    QVERIFY2(shortLiteral.error().message.contains(QLatin1String("at least 32 characters")),
             qPrintable(shortLiteral.error().text()));
    QVERIFY(service().setSecret({}, QStringLiteral("short-hook"), QStringLiteral("abcdefgh"), Actor{}));
    QVERIFY(service().setSecretAccess(QStringLiteral("short-hook"), SecretAccess{false, {QStringLiteral("hooky")}},
                                      Actor{}));
    auto shortSecret =
        service().setPipeline(QStringLiteral("hooky"), head + "((short-hook))\n" + job, {}, false, Actor{});
    QVERIFY(!shortSecret);
    QVERIFY2(shortSecret.error().message.contains(QLatin1String("the secret short-hook")),
             qPrintable(shortSecret.error().text()));
    // A var with no value waits for the run, but a webhook token is checked when it is set.
    auto unset = service().setPipeline(QStringLiteral("hooky"), head + "((no-hook-yet))\n" + job, {}, false, Actor{});
    QVERIFY(!unset);
    QCOMPARE(unset.error().where, QStringLiteral("resources[0].webhook_token"));
    QVERIFY2(unset.error().message.contains(QLatin1String("names the secret no-hook-yet, which is not set")) &&
                 unset.error().hint.contains(QLatin1String("pando secrets set no-hook-yet --pipeline hooky")),
             qPrintable(unset.error().text()));

    const QString token = QStringLiteral("0123456789abcdef0123456789abcdef");
    QVERIFY(service().setSecret({}, QStringLiteral("hook"), token, Actor{}));
    QVERIFY(service().setSecretAccess(QStringLiteral("hook"), SecretAccess{false, {QStringLiteral("hooky")}}, Actor{}));
    setPipeline(QStringLiteral("hooky"), head + "((hook))\n" + job);
    QVERIFY(service().webhook(QStringLiteral("hooky"), QStringLiteral("repo"), token, QStringLiteral("10.0.0.1")));
    // Unknown pipeline, unknown resource and a wrong token: one answer.
    const auto unknownPipeline =
        service().webhook(QStringLiteral("no-such"), QStringLiteral("repo"), token, QStringLiteral("10.0.0.2"));
    const auto unknownResource =
        service().webhook(QStringLiteral("hooky"), QStringLiteral("nope"), token, QStringLiteral("10.0.0.2"));
    const auto wrong =
        service().webhook(QStringLiteral("hooky"), QStringLiteral("repo"),
                          QStringLiteral("0123456789abcdef0123456789abcdeX"), QStringLiteral("10.0.0.2"));
    QVERIFY(!unknownPipeline && !unknownResource && !wrong);
    QCOMPARE(unknownPipeline.error().code, wrong.error().code);
    QCOMPARE(unknownPipeline.error().text(), wrong.error().text());
    QCOMPARE(unknownResource.error().text(), wrong.error().text());
    // Guessing from one address is throttled.
    for (int i = 0; i < 10; ++i)
        discardResult(service().webhook(QStringLiteral("hooky"), QStringLiteral("repo"),
                                        QStringLiteral("guess-%1").arg(i), QStringLiteral("10.0.0.2")),
                      "a guess; only the throttle's answer below matters");
    const auto throttled =
        service().webhook(QStringLiteral("hooky"), QStringLiteral("repo"), token, QStringLiteral("10.0.0.2"));
    QVERIFY(!throttled);
    QVERIFY2(throttled.error().message.contains(QLatin1String("too many failed webhook calls")),
             qPrintable(throttled.error().text()));
    // The throttle counts per network (a /24), as logins do: another network is not held up.
    QVERIFY(service().webhook(QStringLiteral("hooky"), QStringLiteral("repo"), token, QStringLiteral("10.0.1.3")));
}

void TestPipelineTrust::shellTypesGetTheirDirectoryInDollarOne()
{
    // docs/pipelines.md: in and out get the target directory as $1. A string command had it in $0.
    setPipeline(QStringLiteral("dollar"),
                "resource_types:\n  - name: probe\n    image: pando/busybox:latest\n    commands:\n"
                "      check: 'echo \"[{\\\"v\\\": \\\"1\\\"}]\"'\n"
                "      in: 'echo fetched > \"$1/file\"; echo \"{\\\"version\\\": {\\\"v\\\": \\\"1\\\"}}\"'\n"
                "resources:\n  - name: thing\n    type: probe\n" +
                    oneJob("j", "      - get: thing\n      - task: show\n        config: {platform: linux, " + Image +
                                    ", inputs: [{name: thing}], run: {path: cat, args: [thing/file]}}\n"));
    const RunRecord run = runJob(QStringLiteral("dollar"), QStringLiteral("j"));
    QVERIFY2(run.status == RunStatus::Succeeded,
             qPrintable(toString(run.status) + u' ' + run.error + u'\n' + outputOf(run.id).join(u'\n')));
    QVERIFY(outputOf(run.id).join(u'\n').contains(QLatin1String("fetched")));
}

// As Concourse tells a resource's in and out: the build's id, number, job, pipeline and team in
// their environment, and who started it by hand only where the resource asks for it.
void TestPipelineTrust::resourcesAreToldTheBuild()
{
    const QByteArray types =
        "resource_types:\n  - name: probe\n    image: pando/busybox:latest\n    commands:\n"
        "      check: 'echo \"[{\\\"v\\\": \\\"1\\\"}]\"'\n"
        "      in: 'env | grep ^BUILD_ | sort > \"$1/build\"; echo \"{\\\"version\\\": {\\\"v\\\": "
        "\\\"1\\\"}}\"'\n";
    const auto job = [](const QByteArray &name) {
        return oneJob(name, "      - get: thing\n      - task: show\n        config: {platform: linux, " + Image +
                                ", inputs: [{name: thing}], run: {path: cat, args: [thing/build]}}\n");
    };
    const Actor ada{QStringLiteral("ada"), QStringLiteral("127.0.0.1"), {}};
    setPipeline(QStringLiteral("told"), types +
                                            "resources:\n  - name: thing\n    type: probe\n"
                                            "    expose_build_created_by: true\n" +
                                            job("j"));
    RunRecord run = runJob(QStringLiteral("told"), QStringLiteral("j"), ada);
    QVERIFY2(run.status == RunStatus::Succeeded,
             qPrintable(toString(run.status) + u' ' + run.error + u'\n' + outputOf(run.id).join(u'\n')));
    QString output = outputOf(run.id).join(u'\n');
    for (const QString &line :
         QStringList{QStringLiteral("BUILD_ID=") + run.id, QStringLiteral("BUILD_NAME=%1").arg(run.number),
                     QStringLiteral("BUILD_JOB_NAME=j"), QStringLiteral("BUILD_PIPELINE_NAME=told"),
                     QStringLiteral("BUILD_TEAM_NAME=main"), QStringLiteral("BUILD_CREATED_BY=ada")})
        QVERIFY2(output.contains(line), qPrintable(line + u'\n' + output));
    // Without expose_build_created_by, nobody is named. (Another pipeline: a get of the same
    // version is restored from the first run's, metadata and all, as Concourse reuses its caches.)
    setPipeline(QStringLiteral("untold"), types + "resources:\n  - name: thing\n    type: probe\n" + job("j"));
    run = runJob(QStringLiteral("untold"), QStringLiteral("j"), ada);
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));
    output = outputOf(run.id).join(u'\n');
    QVERIFY2(output.contains(QLatin1String("BUILD_PIPELINE_NAME=untold")) &&
                 !output.contains(QLatin1String("BUILD_CREATED_BY")),
             qPrintable(output));
}

void TestPipelineTrust::secretsStayOutOfArgv()
{
    // A secret in run.args is in /proc/<pid>/cmdline for every user of the host.
    QVERIFY(service().setSecret({}, QStringLiteral("deploy-key"), QStringLiteral("k3y-in-argv-1234"), Actor{}));
    QVERIFY(service().setSecretAccess(QStringLiteral("deploy-key"), SecretAccess{true, {}}, Actor{}));
    setPipeline(QStringLiteral("argy"),
                oneJob("j", "      - task: leak\n        config: {platform: linux, " + Image +
                                ", run: {path: sh, args: [\"-c\", \"sleep 1; echo ((deploy-key))\"]}}\n"));
    RunRecord run = runJob(QStringLiteral("argy"), QStringLiteral("j"));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY2(run.error.contains(QLatin1String("run.args[1] holds a secret's value")), qPrintable(run.error));
    QVERIFY(!run.error.contains(QLatin1String("k3y-in-argv-1234")));
    // Through the environment it works.
    setPipeline(QStringLiteral("argy"),
                oneJob("j", "      - task: leak\n        params: {KEY: ((deploy-key))}\n        config: {platform: "
                            "linux, " +
                                Image +
                                ", run: {path: sh, args: [\"-c\", \"test -n \\\"$KEY\\\" && echo has-key\"]}}\n"));
    run = runJob(QStringLiteral("argy"), QStringLiteral("j"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));
    QVERIFY(outputOf(run.id).join(u'\n').contains(QLatin1String("has-key")));
}

void TestPipelineTrust::varsExpandWithinLimits()
{
    // A 100 KiB var used 200 times: 20 MiB of pipeline from a file of a few KiB.
    QByteArray vars = "big: [";
    for (int i = 0; i < 100; ++i)
        vars += (i ? ", " : "") + QByteArray(1000, 'x');
    vars += "]\n";
    QByteArray plan;
    for (int i = 0; i < 200; ++i)
        plan += "      - task: t" + QByteArray::number(i) +
                "\n        params: {A: ((big))}\n        config: {platform: "
                "linux, " +
                Image + ", run: {path: \"true\"}}\n";
    auto set = service().setPipeline(QStringLiteral("laughs"), oneJob("j", plan), vars, false, Actor{});
    QVERIFY(!set);
    QCOMPARE(set.error().code, ErrorCode::TooLarge);
    QVERIFY2(set.error().message.contains(QLatin1String("expansion limit")), qPrintable(set.error().text()));
}

void TestPipelineTrust::installWideSecretsAreReadOnlyByThePipelinesGrantedThem()
{
    // Every pipeline read every install-wide secret: one whose author wrote ((shared-key)) got it.
    QVERIFY(service().setSecret({}, QStringLiteral("shared-key"), QStringLiteral("sh4red-v4lue-77"), Actor{}));
    const QByteArray uses = oneJob("j", "      - task: use\n        params: {KEY: ((shared-key))}\n        config: "
                                        "{platform: linux, " +
                                            Image + ", run: {path: sh, args: [\"-c\", \"echo got-$KEY\"]}}\n");
    auto refused = service().setPipeline(QStringLiteral("outsider"), uses, {}, false, Actor{});
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.contains(
                 QLatin1String("the install-wide secret \"shared-key\" is not granted to pipeline outsider")),
             qPrintable(refused.error().text()));
    QVERIFY2(refused.error().hint.contains(QLatin1String("pando secrets access shared-key outsider")),
             qPrintable(refused.error().hint));
    QCOMPARE(refused.error().where, QStringLiteral("jobs[0].plan[0].params.KEY"));
    QVERIFY(!refused.error().text().contains(QLatin1String("sh4red-v4lue-77")));

    // Granted before its first set, the pipeline uses it; a grant taken back stops its next run.
    QVERIFY(service().setSecretAccess(QStringLiteral("shared-key"), SecretAccess{false, {QStringLiteral("insider")}},
                                      Actor{}));
    QCOMPARE(service().secretAccess(QStringLiteral("shared-key"))->pipelines, QStringList{QStringLiteral("insider")});
    setPipeline(QStringLiteral("insider"), uses);
    RunRecord run = runJob(QStringLiteral("insider"), QStringLiteral("j"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));
    QVERIFY(!service().setPipeline(QStringLiteral("outsider"), uses, {}, false, Actor{}));
    QVERIFY(service().setSecretAccess(QStringLiteral("shared-key"), SecretAccess{}, Actor{}));
    run = runJob(QStringLiteral("insider"), QStringLiteral("j"));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY2(run.error.contains(QLatin1String("is not granted to pipeline insider")), qPrintable(run.error));

    // A pipeline's own secret of that name is its own to read.
    QVERIFY(
        service().setSecret(QStringLiteral("insider"), QStringLiteral("shared-key"), QStringLiteral("own"), Actor{}));
    run = runJob(QStringLiteral("insider"), QStringLiteral("j"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));

    // A removed pipeline leaves the lists: a new one of that name inherits nothing.
    QVERIFY(service().setSecretAccess(QStringLiteral("shared-key"), SecretAccess{false, {QStringLiteral("insider")}},
                                      Actor{}));
    QVERIFY(service().removePipeline(QStringLiteral("insider"), Actor{}));
    QVERIFY(service().secretAccess(QStringLiteral("shared-key"))->pipelines.isEmpty());
    QVERIFY(!service().setPipeline(QStringLiteral("insider"), uses, {}, false, Actor{}));
    // Every pipeline, when an operator says so.
    QVERIFY(service().setSecretAccess(QStringLiteral("shared-key"), SecretAccess{true, {}}, Actor{}));
    setPipeline(QStringLiteral("outsider"), uses);
    QVERIFY(!service().setSecretAccess(QStringLiteral("shared-key"), SecretAccess{false, {QStringLiteral("../x")}},
                                       Actor{}));
}

void TestPipelineTrust::secretsStoredBeforeAccessListsKeepTheirPipelines()
{
    // Migration 12 marks the install-wide secrets it finds "unset"; at its next start the runner
    // grants each to the pipelines whose config uses it, and to no other.
    QVERIFY(
        service().setSecret({}, QStringLiteral("old-key"), QStringLiteral("{\"field\": \"0ld-v4lue-99\"}"), Actor{}));
    QVERIFY(service().setSecretAccess(QStringLiteral("old-key"), SecretAccess{true, {}}, Actor{}));
    setPipeline(QStringLiteral("old-user"),
                oneJob("j", "      - task: use\n        params: {KEY: ((secrets:old-key.field))}\n        config: "
                            "{platform: linux, " +
                                Image + ", run: {path: \"true\"}}\n"));
    setPipeline(QStringLiteral("old-bystander"), oneJob("j", "      - task: t\n        config: {platform: linux, " +
                                                                 Image + ", run: {path: \"true\"}}\n"));
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("legacy"));
        db.setDatabaseName(m_fx->dataDir() + QStringLiteral("/pando.db"));
        QVERIFY(db.open());
        QSqlQuery q(db);
        QVERIFY(q.exec(QStringLiteral("UPDATE secrets SET access = 'unset' WHERE name = 'old-key'")));
        QVERIFY(q.exec(QStringLiteral("DELETE FROM secret_access WHERE name = 'old-key'")));
        q.finish();
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("legacy"));
    auto *local = dynamic_cast<LocalPipelineService *>(&service());
    QVERIFY(local);
    local->stop();
    QVERIFY(local->start());
    auto access = service().secretAccess(QStringLiteral("old-key"));
    QVERIFY(access);
    QVERIFY(!access->all);
    QCOMPARE(access->pipelines, QStringList{QStringLiteral("old-user")});
}

QTEST_GUILESS_MAIN(TestPipelineTrust)
#include "tst_pipelinetrust.moc"
