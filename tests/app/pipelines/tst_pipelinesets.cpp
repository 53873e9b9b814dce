// Pipelines that set pipelines and read vars from var sources, on real parts as the trust test's
// (Docker tasks, git repositories, the wiring pandod uses): a set_pipeline step sets itself and
// the pipelines it created and nothing else, and what it stops setting is archived; var_sources
// are read when a run reads the pipeline, from a Vault stand-in answering Vault's documented API.

#include "tests/app/pipelines/pipelinetrustfixture.h"
#include "tests/support/vaultstandin.h"

#include <QTest>

using namespace pando;
using namespace pando::core;
using namespace pando::core::pipelines;
using namespace pando::test;

class TestPipelineSets : public PipelineTrustFixture {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { startEngine(); }
    void cleanupTestCase() { stopEngine(); }
    void varSourcesAreReadWhenARunReadsThePipeline();
    void setPipelineSetsItselfAndTheOnesItCreated();
    void instancedPipelines();
    void archivedPipelines();
};

// var_sources as Concourse documents them: a vault source (a stand-in answering Vault's documented
// API) logging in with an AppRole whose ids are in Pando's secrets, its namespace from a dummy
// source; the values reach the task, a vault one masked in the output.
void TestPipelineSets::varSourcesAreReadWhenARunReadsThePipeline()
{
    test::VaultStandIn vault;
    vault.addAppRole(QStringLiteral("ci-role"), QStringLiteral("ci-s3cret-id"));
    vault.setNamespace(QStringLiteral("platform"));
    vault.mount(QStringLiteral("secret/"), 2);
    vault.put(QStringLiteral("secret/ci/main/db"),
              QJsonObject{{QStringLiteral("password"), QStringLiteral("pa55-from-vault")}});
    const QByteArray sources =
        "var_sources:\n"
        "- name: vault\n  type: vault\n  config:\n    url: " +
        vault.url().toUtf8() +
        "\n    path_prefix: /secret/ci\n    namespace: ((settings:ns))\n"
        "    auth_backend: approle\n"
        "    auth_params: {role_id: ((role-id)), secret_id: ((secret-id))}\n"
        "- name: settings\n  type: dummy\n  config: {vars: {ns: platform, greeting: hello-dummy}}\n";
    const auto pipeline = [&](const QByteArray &var) -> QByteArray {
        return sources +
               oneJob("j", "      - task: use\n        params: {PASS: ((vault:" + var +
                               ")), GREETING: ((settings:greeting))}\n        config: {platform: linux, " + Image +
                               ", run: {path: sh, args: [\"-c\", \"test \\\"${PASS#pa55-}\\\" = from-vault && "
                               "echo \\\"$GREETING\\\" pass=$PASS\"]}}\n");
    };
    setPipeline(QStringLiteral("vaulty"), pipeline("db.password"));
    QVERIFY(
        service().setSecret(QStringLiteral("vaulty"), QStringLiteral("role-id"), QStringLiteral("ci-role"), Actor{}));
    QVERIFY(service().setSecret(QStringLiteral("vaulty"), QStringLiteral("secret-id"), QStringLiteral("ci-s3cret-id"),
                                Actor{}));
    RunRecord run = runJob(QStringLiteral("vaulty"), QStringLiteral("j"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));
    const QString output = outputOf(run.id).join(u'\n');
    QVERIFY2(output.contains(QLatin1String("hello-dummy pass=")), qPrintable(output));
    QVERIFY2(!output.contains(QLatin1String("pa55-from-vault")), qPrintable(output));
    QVERIFY(vault.requests().contains(QStringLiteral("POST /v1/auth/approle/login")));

    // A var Vault does not hold errors the run, naming it and where it is used.
    setPipeline(QStringLiteral("vaulty"), pipeline("db.user"));
    run = runJob(QStringLiteral("vaulty"), QStringLiteral("j"));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY2(run.error.contains(QLatin1String("var \"db\" has no field \"user\"")), qPrintable(run.error));
    setPipeline(QStringLiteral("vaulty"), pipeline("elsewhere.password"));
    run = runJob(QStringLiteral("vaulty"), QStringLiteral("j"));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY2(run.error.contains(QLatin1String("var \"elsewhere\" is not in var source \"vault\"")),
             qPrintable(run.error));

    // A wrong secret id: the login's refusal, without the id.
    QVERIFY(service().setSecret(QStringLiteral("vaulty"), QStringLiteral("secret-id"), QStringLiteral("not-the-id"),
                                Actor{}));
    setPipeline(QStringLiteral("vaulty"), pipeline("db.password"));
    run = runJob(QStringLiteral("vaulty"), QStringLiteral("j"));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY2(run.error.contains(QLatin1String("invalid role or secret ID")), qPrintable(run.error));
    QVERIFY2(!run.error.contains(QLatin1String("not-the-id")), qPrintable(run.error));
}

// set_pipeline as Concourse documents it: self, and another pipeline from a file of a get with
// vars; what a run may set is its own pipeline and those it created, never one a person set or
// one secrets wait for, and no secret is handed to storage through vars.
void TestPipelineSets::setPipelineSetsItselfAndTheOnesItCreated()
{
    const QByteArray child = oneJob(
        "greet", "      - task: say\n        params: {GREETING: ((greeting))}\n        config: {platform: linux, " +
                     Image + ", run: {path: sh, args: [\"-c\", \"echo said-$GREETING\"]}}\n");
    const QString repo = m_fx->git().createRepository(QStringLiteral("setter-ci"));
    const QByteArray resources =
        "resources:\n  - name: repo\n    type: git\n    source: {uri: \"" + repo.toUtf8() + "\", branch: main}\n";
    const auto parent = [&](const QByteArray &steps) -> QByteArray {
        return resources + oneJob("set", "      - get: repo\n" + steps);
    };
    const QByteArray self = parent("      - set_pipeline: self\n        file: repo/ci/self.yml\n"
                                   "      - task: after\n        config: {platform: linux, " +
                                   Image + ", run: {path: echo, args: [second-config]}}\n");
    QVERIFY(!m_fx->git()
                 .commit(QStringLiteral("setter-ci"), QStringLiteral("main"),
                         {{QStringLiteral("ci/child.yml"), GitFile{child}},
                          {QStringLiteral("ci/broken.yml"), GitFile{"jobs: []\n"}},
                          {QStringLiteral("ci/self.yml"), GitFile{self}},
                          {QStringLiteral("ci/common.yml"), GitFile{"greeting: from-file\nregion: eu\n"}}})
                 .isEmpty());
    setPipeline(QStringLiteral("setter"),
                parent("      - set_pipeline: setter-child\n        file: repo/ci/child.yml\n"
                       "        var_files: [repo/ci/common.yml]\n        vars: {greeting: hello-from-vars}\n"));
    RunRecord run = runJob(QStringLiteral("setter"), QStringLiteral("set"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));
    QVERIFY2(outputOf(run.id).join(u'\n').contains(QLatin1String("created pipeline setter-child (version 1)")),
             qPrintable(outputOf(run.id).join(u'\n')));
    auto made = service().pipeline(QStringLiteral("setter-child"));
    QVERIFY(made);
    QCOMPARE(made->record.setBy, QStringLiteral("setter"));
    QVERIFY(!made->record.paused); // as Concourse: what a set_pipeline step creates runs
    // vars: wins over the var file, key by key; the child runs with them.
    run = runJob(QStringLiteral("setter-child"), QStringLiteral("greet"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));
    QVERIFY2(outputOf(run.id).join(u'\n').contains(QLatin1String("said-hello-from-vars")),
             qPrintable(outputOf(run.id).join(u'\n')));
    // Set again unchanged, it says so.
    run = runJob(QStringLiteral("setter"), QStringLiteral("set"));
    QVERIFY2(outputOf(run.id).join(u'\n').contains(QLatin1String("pipeline setter-child is unchanged (version 1)")),
             qPrintable(outputOf(run.id).join(u'\n')));

    // self: the next run reads the new config.
    setPipeline(QStringLiteral("setter"), parent("      - set_pipeline: self\n        file: repo/ci/self.yml\n"));
    run = runJob(QStringLiteral("setter"), QStringLiteral("set"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));
    QCOMPARE(service().pipeline(QStringLiteral("setter"))->record.configVersion, 3);
    run = runJob(QStringLiteral("setter"), QStringLiteral("set"));
    QVERIFY2(outputOf(run.id).join(u'\n').contains(QLatin1String("second-config")),
             qPrintable(outputOf(run.id).join(u'\n')));

    // A pipeline a person set is not the step's to replace.
    setPipeline(QStringLiteral("by-hand"), child);
    setPipeline(QStringLiteral("setter"), parent("      - set_pipeline: by-hand\n        file: repo/ci/child.yml\n"));
    run = runJob(QStringLiteral("setter"), QStringLiteral("set"));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY2(run.error.contains(QLatin1String("pipeline by-hand was not created by pipeline setter")),
             qPrintable(run.error));
    QCOMPARE(service().pipeline(QStringLiteral("by-hand"))->record.configVersion, 1);
    // Nor is one an operator granted a secret to before it exists.
    QVERIFY(service().setSecret({}, QStringLiteral("awaited-key"), QStringLiteral("v4lue-kept"), Actor{}));
    QVERIFY(service().setSecretAccess(QStringLiteral("awaited-key"), SecretAccess{false, {QStringLiteral("awaited")}},
                                      Actor{}));
    setPipeline(QStringLiteral("setter"), parent("      - set_pipeline: awaited\n        file: repo/ci/child.yml\n"));
    run = runJob(QStringLiteral("setter"), QStringLiteral("set"));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY2(run.error.contains(QLatin1String("secrets are kept for pipeline awaited")), qPrintable(run.error));
    QVERIFY(!service().pipeline(QStringLiteral("awaited")));
    // A secret handed on in vars: would be stored with the pipeline: refused.
    QVERIFY(service().setSecret(QStringLiteral("setter"), QStringLiteral("token"), QStringLiteral("t0ken-not-stored"),
                                Actor{}));
    setPipeline(QStringLiteral("setter"), parent("      - set_pipeline: setter-child\n        file: repo/ci/child.yml\n"
                                                 "        vars: {greeting: ((token))}\n"));
    run = runJob(QStringLiteral("setter"), QStringLiteral("set"));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY2(run.error.contains(QLatin1String("hold a secret's value")), qPrintable(run.error));
    QVERIFY(!service().pipeline(QStringLiteral("setter-child"))->record.varsYaml.contains(QLatin1String("t0ken")));
    // A child file that does not parse: the step errors with the file and the place in it.
    setPipeline(QStringLiteral("setter"),
                parent("      - set_pipeline: setter-child\n        file: repo/ci/broken.yml\n"));
    run = runJob(QStringLiteral("setter"), QStringLiteral("set"));
    QCOMPARE(toString(run.status), QStringLiteral("errored"));
    QVERIFY2(run.error.contains(QLatin1String("repo/ci/broken.yml: jobs: ")), qPrintable(run.error));
}

// Concourse's instanced pipelines: one pipeline file set once per branch, by hand (fly -p
// NAME/KEY:VALUE) and by a set_pipeline step's instance_vars across a list; each instance is a
// pipeline of its own whose instance vars are vars of its config.
void TestPipelineSets::instancedPipelines()
{
    const QByteArray preview = oneJob("greet", "      - task: say\n        config: {platform: linux, " + Image +
                                                   ", run: {path: echo, args: [preview-of-((branch))]}}\n");
    const QString repo = m_fx->git().createRepository(QStringLiteral("instances-ci"));
    QVERIFY(!m_fx->git()
                 .commit(QStringLiteral("instances-ci"), QStringLiteral("main"),
                         {{QStringLiteral("ci/preview.yml"), GitFile{preview}}})
                 .isEmpty());
    setPipeline(
        QStringLiteral("instancer"),
        "resources:\n  - name: repo\n    type: git\n    source: {uri: \"" + repo.toUtf8() + "\", branch: main}\n" +
            oneJob("set", "      - get: repo\n      - set_pipeline: preview\n        file: repo/ci/preview.yml\n"
                          "        across:\n        - var: branch\n          values: [feature-a, \"feature,b\"]\n"
                          "        instance_vars: {branch: ((.:branch))}\n"));
    RunRecord run = runJob(QStringLiteral("instancer"), QStringLiteral("set"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));
    const QString output = outputOf(run.id).join(u'\n');
    QVERIFY2(output.contains(QLatin1String("created pipeline preview/branch:feature-a (version 1)")),
             qPrintable(output));
    // A value that would not read back bare is quoted in the name.
    auto quoted = service().pipeline(QStringLiteral("preview/branch:\"feature,b\""));
    QVERIFY2(quoted, qPrintable(output));
    QCOMPARE(quoted->record.setBy, QStringLiteral("instancer"));
    run = runJob(QStringLiteral("preview/branch:feature-a"), QStringLiteral("greet"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));
    QVERIFY2(outputOf(run.id).join(u'\n').contains(QLatin1String("preview-of-feature-a")),
             qPrintable(outputOf(run.id).join(u'\n')));

    // By hand, as fly -p preview/branch:main; the instance's var is the config's.
    setPipeline(QStringLiteral("preview/branch:main"), preview);
    QVERIFY(service().pipeline(QStringLiteral("preview/branch:main"))->record.varsYaml.contains(QLatin1String("main")));
    // One instance has one name: another spelling of it is refused with the one to use.
    auto respelt = service().setPipeline(QStringLiteral("preview/region:eu,branch:main"), preview, {}, false, Actor{});
    QVERIFY(!respelt);
    QVERIFY2(respelt.error().message.contains(QLatin1String("preview/branch:main,region:eu")),
             qPrintable(respelt.error().text()));
    // A var given another value than the instance's is refused; nothing is set.
    auto clash =
        service().setPipeline(QStringLiteral("preview/branch:other"), preview, "branch: main\n", false, Actor{});
    QVERIFY(!clash);
    QCOMPARE(clash.error().where, QStringLiteral("vars"));
    QVERIFY(!service().pipeline(QStringLiteral("preview/branch:other")));
    // An instance keeps the name its vars give it.
    auto renamed = service().renamePipeline(QStringLiteral("preview/branch:main"), QStringLiteral("other"), Actor{});
    QVERIFY(!renamed);
    QCOMPARE(renamed.error().code, ErrorCode::Invalid);
    QVERIFY(service().pipeline(QStringLiteral("preview/branch:main")));
    for (const QString &bad : {QStringLiteral("preview/branch"), QStringLiteral("preview/branch:"),
                               QStringLiteral("preview/1x:y"), QStringLiteral("-x/branch:main")}) {
        auto refused = service().setPipeline(bad, preview, {}, false, Actor{});
        QVERIFY2(!refused, qPrintable(bad));
        QCOMPARE(refused.error().code, ErrorCode::Invalid);
    }
}

namespace {

QStringList namesOf(const Result<QList<PipelineView>> &views)
{
    QStringList names;
    if (views)
        for (const PipelineView &view : *views)
            names << view.record.name;
    return names;
}

} // namespace

// Concourse's archiving: by hand (fly archive-pipeline), and of what a set_pipeline step stopped
// setting: when a later run of its job succeeds without setting it, when the job leaves the
// config (a job renamed with old_name keeps it), and with the pipeline that set it.
void TestPipelineSets::archivedPipelines()
{
    const Actor alice{QStringLiteral("alice"), QStringLiteral("user"), {}};
    const QByteArray child = oneJob("greet", "      - task: say\n        config: {platform: linux, " + Image +
                                                 ", run: {path: echo, args: [greeted]}}\n");
    const QString repo = m_fx->git().createRepository(QStringLiteral("archive-ci"));
    QVERIFY(!m_fx->git()
                 .commit(QStringLiteral("archive-ci"), QStringLiteral("main"),
                         {{QStringLiteral("ci/child.yml"), GitFile{child}}})
                 .isEmpty());
    const QByteArray resources =
        "resources:\n  - name: repo\n    type: git\n    source: {uri: \"" + repo.toUtf8() + "\", branch: main}\n";
    const auto setting = [](const QStringList &children) {
        QByteArray steps = "      - get: repo\n";
        for (const QString &name : children)
            steps += "      - set_pipeline: " + name.toUtf8() + "\n        file: repo/ci/child.yml\n";
        return steps;
    };
    setPipeline(QStringLiteral("archiver"),
                resources + oneJob("set", setting({QStringLiteral("arch-a"), QStringLiteral("arch-b")})));
    RunRecord run = runJob(QStringLiteral("archiver"), QStringLiteral("set"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));
    QCOMPARE(service().pipeline(QStringLiteral("arch-b"))->record.setByJob, QStringLiteral("set"));
    run = runJob(QStringLiteral("arch-b"), QStringLiteral("greet"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));

    // The next run sets arch-a alone: arch-b is archived once it succeeds.
    setPipeline(QStringLiteral("archiver"), resources + oneJob("set", setting({QStringLiteral("arch-a")})));
    run = runJob(QStringLiteral("archiver"), QStringLiteral("set"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));
    // Archived as the run's end is told (just after it is recorded).
    QTRY_VERIFY_WITH_TIMEOUT(service().pipeline(QStringLiteral("arch-b"))->record.archivedMs > 0, 10000);
    auto b = service().pipeline(QStringLiteral("arch-b"));
    QVERIFY(b && b->record.paused);
    QCOMPARE(b->record.pausedReason, QStringLiteral("run %1 of job set of pipeline archiver succeeded without "
                                                    "setting it")
                                         .arg(run.number));
    QVERIFY(b->record.configYaml.isEmpty() && b->record.varsYaml.isEmpty() && b->jobs.isEmpty());
    QVERIFY(!service().pipeline(QStringLiteral("arch-a"))->record.archivedMs);
    // Hidden from the list unless asked for; its runs are kept.
    QVERIFY(!namesOf(service().pipelines()).contains(QStringLiteral("arch-b")));
    QVERIFY(namesOf(service().pipelines(true)).contains(QStringLiteral("arch-b")));
    QCOMPARE(service().runs(QStringLiteral("arch-b"), {}, 10)->size(), 1);
    // Nothing of it runs, and nothing but a set brings it back.
    auto trigger = service().triggerJob(QStringLiteral("arch-b"), QStringLiteral("greet"), alice);
    QVERIFY(!trigger);
    QCOMPARE(trigger.error().code, ErrorCode::Conflict);
    QVERIFY2(trigger.error().message.contains(QLatin1String("pipeline arch-b is archived")),
             qPrintable(trigger.error().text()));
    QVERIFY(trigger.error().hint.contains(QLatin1String("pando pipelines set arch-b")));
    for (const Status &refused :
         {service().unpause(QStringLiteral("arch-b"), alice), service().pause(QStringLiteral("arch-b"), alice),
          service().archivePipeline(QStringLiteral("arch-b"), alice)}) {
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Conflict);
    }
    QVERIFY(!service().jobs(QStringLiteral("arch-b")));
    QVERIFY(!service().webhook(QStringLiteral("arch-b"), QStringLiteral("repo"), QStringLiteral("x"), {}));

    // Set again by the step, it comes back running with its config.
    setPipeline(QStringLiteral("archiver"),
                resources + oneJob("set", setting({QStringLiteral("arch-a"), QStringLiteral("arch-b")})));
    run = runJob(QStringLiteral("archiver"), QStringLiteral("set"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));
    b = service().pipeline(QStringLiteral("arch-b"));
    QVERIFY(b && !b->record.archivedMs && !b->record.paused);
    QCOMPARE(b->jobs, QStringList{QStringLiteral("greet")});
    run = runJob(QStringLiteral("arch-b"), QStringLiteral("greet"));
    QVERIFY2(run.status == RunStatus::Succeeded, qPrintable(toString(run.status) + u' ' + run.error));

    // A job renamed with old_name keeps what it set; a job gone takes it to the archive.
    setPipeline(QStringLiteral("archiver"), resources + "jobs:\n  - name: publish\n    old_name: set\n    plan:\n" +
                                                setting({QStringLiteral("arch-a"), QStringLiteral("arch-b")}));
    QCOMPARE(service().pipeline(QStringLiteral("arch-a"))->record.setByJob, QStringLiteral("publish"));
    QVERIFY(!service().pipeline(QStringLiteral("arch-a"))->record.archivedMs);
    setPipeline(QStringLiteral("archiver"), resources + oneJob("other", "      - get: repo\n"));
    for (const QString &name : {QStringLiteral("arch-a"), QStringLiteral("arch-b")}) {
        const auto gone = service().pipeline(name);
        QVERIFY(gone && gone->record.archivedMs > 0);
        QCOMPARE(gone->record.pausedReason, QStringLiteral("job publish of pipeline archiver, which set it, is gone"));
    }

    // A person's set brings one back paused, as a new pipeline; archiving the pipeline that set
    // it archives it again, with its parent.
    auto back =
        service().setPipeline(QStringLiteral("arch-a"), child, {}, SetPipelineOptions{.startPaused = true}, alice);
    QVERIFY2(back, qPrintable(back ? QString() : back.error().text()));
    QVERIFY(!back->created && back->changed);
    QVERIFY(!back->pipeline.record.archivedMs && back->pipeline.record.paused);
    QCOMPARE(back->pipeline.record.pausedReason,
             QStringLiteral("set by alice after it was archived; it starts paused"));
    QVERIFY(service().archivePipeline(QStringLiteral("archiver"), alice));
    QCOMPARE(service().pipeline(QStringLiteral("archiver"))->record.pausedReason, QStringLiteral("archived by alice"));
    QCOMPARE(service().pipeline(QStringLiteral("arch-a"))->record.pausedReason,
             QStringLiteral("pipeline archiver, which set it, was archived"));
    for (const QString &name : {QStringLiteral("archiver"), QStringLiteral("arch-a"), QStringLiteral("arch-b")})
        QVERIFY(service().removePipeline(name, alice));
}

QTEST_GUILESS_MAIN(TestPipelineSets)
#include "tst_pipelinesets.moc"
