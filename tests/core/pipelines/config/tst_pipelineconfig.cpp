// The pipeline file: a full Concourse-style example read into the model, every validation error
// with the exact path it names, the reader's limits, passed: cycles, task files, task
// resolution (host argv semantics), canonical JSON and the diff `pipelines set` shows. The
// Concourse keys of jobs and steps beyond those are in tst_pipelinekeys.

#include "core/pipelines/config/canonical.h"
#include "core/pipelines/config/pipelineconfig.h"

#include "tests/core/pipelines/config/pipelinefiles.h"
#include "tests/support/component.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core::pipelines;
using pando::test::pipelineWith;

namespace {

// The full example lives next to this file, so that it reads like a user's pipeline.
QByteArray example()
{
    return pando::test::corpusFile(u"example-pipeline.yml"_s);
}

} // namespace

class TestPipelineConfig : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void fullExample()
    {
        const auto parsed = parsePipeline(example());
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        const Pipeline &p = *parsed;
        QCOMPARE(p.resourceTypes.size(), 2);
        QCOMPARE(p.resources.size(), 4);
        QCOMPARE(p.jobs.size(), 3);
        QCOMPARE(p.groups.size(), 1);

        const ResourceType *slack = p.resourceType(u"slack"_s);
        QVERIFY(slack);
        QCOMPARE(slack->kind, ResourceType::Kind::Image);
        QCOMPARE(slack->image, u"local/slack-resource:1.2"_s);
        const ResourceType *http = p.resourceType(u"http-json"_s);
        QCOMPARE(http->kind, ResourceType::Kind::Shell);
        QCOMPARE(http->check.argv, (QStringList{u"/opt/http/check"_s, u"--json"_s}));
        QVERIFY(!http->check.shell);
        QVERIFY(http->in.shell);
        QCOMPARE(http->in.argv.mid(0, 2), (QStringList{u"sh"_s, u"-c"_s}));
        QCOMPARE(http->image, u"local/curl:8"_s);

        QCOMPARE(p.resource(u"repo"_s)->checkEveryMs, 30000);
        QCOMPARE(p.resource(u"repo"_s)->webhookToken, u"abcdefgh12345678abcdefgh12345678"_s);
        QCOMPARE(p.resource(u"nightly"_s)->checkEveryMs, 0);
        QCOMPARE(p.resource(u"status"_s)->checkEveryMs, 60000);
        // The type's defaults sit under the resource's own source.
        QCOMPARE(p.resource(u"notify"_s)->source.value(u"channel"_s).toString(), u"builds"_s);

        const Job &unit = p.jobs[0];
        QVERIFY(unit.serial);
        QCOMPARE(unit.maxInFlight, 1);
        QCOMPARE(unit.plan.size(), size_t(2));
        QCOMPARE(unit.plan[0].kind, StepKind::InParallel);
        QCOMPARE(unit.plan[0].path, u"jobs[0].plan[0].in_parallel"_s);
        QCOMPARE(unit.plan[0].steps[1].path, u"jobs[0].plan[0].in_parallel[1].get"_s);
        QVERIFY(unit.plan[0].steps[1].get.trigger);
        const Step &test = unit.plan[1];
        QCOMPARE(test.path, u"jobs[0].plan[1].task"_s);
        QCOMPARE(test.attempts, 3);
        QCOMPARE(test.timeoutMs, 5400000);
        QVERIFY(test.task.config);
        QCOMPARE(test.task.config->imageResource->reference(), u"local/golang:1.22"_s);
        QCOMPARE(test.task.config->params.value(u"CGO_ENABLED"_s), u"0"_s);
        QCOMPARE(test.task.config->params.value(u"VERBOSE"_s), u"true"_s);
        QCOMPARE(test.task.config->caches.first().path, u"go/pkg"_s);
        QCOMPARE(test.task.config->limits.cpus, 2.0);
        QCOMPARE(test.task.config->limits.memoryBytes, 1024LL * 1024 * 1024);
        QVERIFY(test.task.config->run.isShell());
        QVERIFY(test.hooks.onFailure);
        QCOMPARE(test.hooks.onFailure->path, u"jobs[0].plan[1].on_failure.put"_s);
        QCOMPARE(test.hooks.onFailure->put.params.value(u"text"_s).toString(), u"unit failed"_s);
        QVERIFY(unit.hooks.onSuccess);
        QCOMPARE(unit.hooks.onSuccess->path, u"jobs[0].on_success.put"_s);

        const Job &build = p.jobs[1];
        QCOMPARE(build.maxInFlight, 2);
        QCOMPARE(build.plan[0].get.passed, QStringList{u"unit"_s});
        const Step &parallel = build.plan[1];
        QCOMPARE(parallel.parallelLimit, 2);
        QVERIFY(parallel.failFast);
        QCOMPARE(parallel.steps[0].path, u"jobs[1].plan[1].in_parallel.steps[0].task"_s);
        QCOMPARE(parallel.steps[0].task.file, u"repo/ci/compile.yml"_s);
        QVERIFY(!parallel.steps[0].task.config);
        QCOMPARE(parallel.steps[1].task.inputMapping.value(u"source"_s), u"repo"_s);
        const Step &tryStep = build.plan[2];
        QCOMPARE(tryStep.kind, StepKind::Try);
        QCOMPARE(tryStep.steps.front().path, u"jobs[1].plan[2].try.task"_s);
        QCOMPARE(tryStep.steps.front().timeoutMs, 100);
        QCOMPARE(taskOutputArtifacts(tryStep.steps.front()), QStringList{u"flaky-out"_s});
        const Step &doStep = build.plan[3];
        QCOMPARE(doStep.steps[0].put.inputs, PutStep::Inputs::Detect);
        QCOMPARE(doStep.steps[0].artifact(), u"repo"_s);
        QVERIFY(doStep.steps[1].put.noGet);
        QCOMPARE(doStep.steps[1].artifact(), QString());
        QCOMPARE(doStep.hooks.ensure->path, u"jobs[1].plan[3].ensure.task"_s);
        QVERIFY(build.hooks.onAbort);
        QVERIFY(build.hooks.ensure);

        const Job &ship = p.jobs[2];
        QCOMPARE(ship.plan[0].get.version, GetStep::Version::Every);
        QCOMPARE(ship.plan[1].get.version, GetStep::Version::Pinned);
        QCOMPARE(ship.plan[1].get.pinned.value(u"time"_s), u"2026-01-01T00:00:00Z"_s);
        QCOMPARE(ship.plan[2].task.config->inputs.first().path, u"src"_s);
        QVERIFY(ship.plan[2].task.config->runsOnHost());
    }

    void invalid_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("message");

        const QByteArray task = "    config:\n      platform: host\n      run: {path: 'true'}\n";
        QTest::newRow("unknown key in a task step")
            << pipelineWith("- name: a\n  plan:\n  - task: t\n    confgi: {}\n" + task) << u"jobs[0].plan[0].task"_s
            << u"unknown key \"confgi\"; did you mean \"config\"?"_s;
        QTest::newRow("unknown top-level key") << QByteArray("resorces: []\njobs: []\n") << QString()
                                               << u"unknown key \"resorces\"; did you mean \"resources\"?"_s;
        QTest::newRow("unknown key in a job") << pipelineWith("- name: a\n  plann: []\n") << u"jobs[0]"_s
                                              << u"unknown key \"plann\"; did you mean \"plan\"?"_s;
        QTest::newRow("unknown key in a resource")
            << pipelineWith("- name: a\n  plan: [{get: repo}]\n", "- name: repo\n  type: git\n  sorce: {}\n")
            << u"resources[0]"_s << u"unknown key \"sorce\"; did you mean \"source\"?"_s;
        QTest::newRow("unknown key in a task config")
            << pipelineWith("- name: a\n  plan:\n  - task: t\n    config:\n      platform: host\n      ruin: {}\n      "
                            "run: {path: x}\n")
            << u"jobs[0].plan[0].config"_s << u"unknown key \"ruin\"; did you mean \"run\"?"_s;
        QTest::newRow("unknown key in run")
            << pipelineWith("- name: a\n  plan:\n  - task: t\n    config:\n      platform: host\n      run: {path: x, "
                            "arg: [y]}\n")
            << u"jobs[0].plan[0].config.run"_s << u"unknown key \"arg\"; did you mean \"args\"?"_s;
        QTest::newRow("unknown key in nested step")
            << pipelineWith("- name: a\n  plan:\n  - in_parallel:\n      steps:\n      - get: repo\n      - get: "
                            "repo2\n        resource: repo\n        triger: true\n")
            << u"jobs[0].plan[0].in_parallel.steps[1].get"_s << u"unknown key \"triger\"; did you mean \"trigger\"?"_s;
        QTest::newRow("wrong type: attempts")
            << pipelineWith("- name: a\n  plan:\n  - get: repo\n    attempts: many\n") << u"jobs[0].plan[0].attempts"_s
            << u"expected an integer from 1 to 100"_s;
        QTest::newRow("attempts < 1") << pipelineWith("- name: a\n  plan:\n  - get: repo\n    attempts: 0\n")
                                      << u"jobs[0].plan[0].attempts"_s << u"expected an integer from 1 to 100"_s;
        QTest::newRow("zero timeout") << pipelineWith("- name: a\n  plan:\n  - get: repo\n    timeout: 0s\n")
                                      << u"jobs[0].plan[0].timeout"_s << u"must be longer than zero"_s;
        QTest::newRow("negative timeout") << pipelineWith("- name: a\n  plan:\n  - get: repo\n    timeout: -5m\n")
                                          << u"jobs[0].plan[0].timeout"_s << u"expected a duration"_s;
        QTest::newRow("bare number timeout") << pipelineWith("- name: a\n  plan:\n  - get: repo\n    timeout: 30\n")
                                             << u"jobs[0].plan[0].timeout"_s << u"expected a duration"_s;
        QTest::newRow("wrong type: trigger") << pipelineWith("- name: a\n  plan:\n  - get: repo\n    trigger: [x]\n")
                                             << u"jobs[0].plan[0].trigger"_s << u"expected true or false"_s;
        QTest::newRow("wrong type: plan")
            << pipelineWith("- name: a\n  plan: {get: repo}\n") << u"jobs[0].plan"_s << u"expected a list of steps"_s;
        QTest::newRow("wrong type: passed") << pipelineWith("- name: a\n  plan:\n  - get: repo\n    passed: b\n")
                                            << u"jobs[0].plan[0].passed"_s << u"expected a list of strings"_s;
        QTest::newRow("two kinds in one step")
            << pipelineWith("- name: a\n  plan:\n  - get: repo\n    task: t\n" + task) << u"jobs[0].plan[0].get"_s
            << u"this one has get and task"_s;
        QTest::newRow("no kind") << pipelineWith("- name: a\n  plan:\n  - attempts: 2\n") << u"jobs[0].plan[0]"_s
                                 << u"a step needs one of get, put, task"_s;
        QTest::newRow("set_pipeline without file") << pipelineWith("- name: a\n  plan:\n  - set_pipeline: x\n")
                                                   << u"jobs[0].plan[0].set_pipeline"_s << u"needs file:"_s;
        QTest::newRow("privileged not a flag")
            << pipelineWith("- name: a\n  plan:\n  - task: t\n    privileged: sometimes\n" + task)
            << u"jobs[0].plan[0].privileged"_s << QString();
        QTest::newRow("config and file")
            << pipelineWith("- name: a\n  plan:\n  - get: repo\n  - task: t\n    file: repo/t.yml\n" + task)
            << u"jobs[0].plan[1].task"_s << u"not both"_s;
        QTest::newRow("empty job name") << pipelineWith("- name: ''\n  plan: [{get: repo}]\n") << u"jobs[0].name"_s
                                        << u"must not be empty"_s;
        QTest::newRow("job name with shell chars") << pipelineWith("- name: 'a;rm -rf'\n  plan: [{get: repo}]\n")
                                                   << u"jobs[0].name"_s << u"invalid job name"_s;
        QTest::newRow("job name leading dash")
            << pipelineWith("- name: -a\n  plan: [{get: repo}]\n") << u"jobs[0].name"_s << u"invalid job name"_s;
        QTest::newRow("resource name with $")
            << pipelineWith("- name: a\n  plan: [{get: r}]\n", "- name: $r\n  type: git\n") << u"resources[0].name"_s
            << u"invalid resource name"_s;
        QTest::newRow("task name with space") << pipelineWith("- name: a\n  plan:\n  - task: 'my task'\n" + task)
                                              << u"jobs[0].plan[0].task"_s << u"invalid task name"_s;
        QTest::newRow("duplicate job") << pipelineWith(
                                              "- name: a\n  plan: [{get: repo}]\n- name: a\n  plan: [{get: repo}]\n")
                                       << u"jobs[1].name"_s << u"job \"a\" is already declared at jobs[0]"_s;
        QTest::newRow("duplicate resource") << pipelineWith("- name: a\n  plan: [{get: repo}]\n",
                                                            "- name: repo\n  type: git\n- name: repo\n  type: time\n")
                                            << u"resources[1].name"_s << u"already declared at resources[0]"_s;
        QTest::newRow("duplicate get in a job")
            << pipelineWith("- name: a\n  plan:\n  - get: repo\n  - in_parallel:\n    - get: repo\n")
            << u"jobs[0].plan[1].in_parallel[0].get"_s
            << u"get \"repo\" is already used in this job at jobs[0].plan[0].get"_s;
        QTest::newRow("duplicate task in a job")
            << pipelineWith("- name: a\n  plan:\n  - task: t\n" + task + "  - task: t\n" + task)
            << u"jobs[0].plan[1].task"_s << u"task \"t\" is already used"_s;
        QTest::newRow("undeclared resource") << pipelineWith("- name: a\n  plan:\n  - get: src\n")
                                             << u"jobs[0].plan[0].get"_s << u"resource \"src\" is not declared"_s;
        QTest::newRow("undeclared put resource") << pipelineWith("- name: a\n  plan:\n  - put: out\n")
                                                 << u"jobs[0].plan[0].put"_s << u"resource \"out\" is not declared"_s;
        QTest::newRow("undeclared resource in hook")
            << pipelineWith("- name: a\n  plan:\n  - get: repo\n    on_failure:\n      put: alert\n")
            << u"jobs[0].plan[0].on_failure.put"_s << u"resource \"alert\" is not declared"_s;
        QTest::newRow("undeclared resource type")
            << pipelineWith("- name: a\n  plan: [{get: repo}]\n", "- name: repo\n  type: ftp\n")
            << u"resources[0].type"_s << u"resource type \"ftp\" is not declared"_s;
        QTest::newRow("a type Concourse ships")
            << pipelineWith("- name: a\n  plan: [{get: repo}]\n", "- name: repo\n  type: pool\n")
            << u"resources[0].type"_s << u"ships with Concourse, and Pando has no built-in pool yet"_s;
        QTest::newRow("group pattern without a job")
            << pipelineWith("- name: a\n  plan: [{get: repo}]\ngroups:\n- name: g\n  jobs: [deploy-*]\n")
            << u"groups[0].jobs[0]"_s << u"matches no job"_s;
        QTest::newRow("privileged resource type")
            << QByteArray("resource_types:\n- name: x\n  type: registry-image\n  privileged: true\n"
                          "  source: {repository: r}\njobs: []\n")
            << u"resource_types[0].privileged"_s << u"not supported yet"_s;
        QTest::newRow("passed unknown job") << pipelineWith("- name: a\n  plan:\n  - get: repo\n    passed: [nope]\n")
                                            << u"jobs[0].plan[0].get"_s << u"passed: names job \"nope\""_s;
        QTest::newRow("passed job without the resource")
            << pipelineWith("- name: a\n  plan:\n  - get: other\n- name: b\n  plan:\n  - get: repo\n    passed: [a]\n",
                            "- name: repo\n  type: git\n- name: other\n  type: git\n")
            << u"jobs[1].plan[0].get"_s << u"passed: job \"a\" does not get or put resource \"repo\""_s;
        QTest::newRow("passed itself") << pipelineWith("- name: a\n  plan:\n  - get: repo\n    passed: [a]\n")
                                       << u"jobs[0].plan[0].get"_s << u"passed: forms a cycle: a → a"_s;
        QTest::newRow("missing task input")
            << pipelineWith("- name: a\n  plan:\n  - task: t\n    config:\n      platform: host\n      inputs: [{name: "
                            "src}]\n      run: {path: ls}\n")
            << u"jobs[0].plan[0].task"_s << u"task input \"src\" is not provided by any earlier step"_s;
        QTest::newRow("missing mapped input")
            << pipelineWith("- name: a\n  plan:\n  - get: repo\n  - task: t\n    input_mapping: {src: code}\n    "
                            "config:\n      platform: host\n      inputs: [{name: src}]\n      run: {path: ls}\n")
            << u"jobs[0].plan[1].task"_s << u"task input \"src\" (mapped to \"code\") is not provided"_s;
        QTest::newRow("in_parallel siblings do not see each other")
            << pipelineWith("- name: a\n  plan:\n  - in_parallel:\n    - task: make\n      config:\n        platform: "
                            "host\n        outputs: [{name: bin}]\n        run: {path: make}\n    - task: use\n      "
                            "config:\n        platform: host\n        inputs: [{name: bin}]\n        run: {path: ls}\n")
            << u"jobs[0].plan[0].in_parallel[1].task"_s << u"task input \"bin\" is not provided"_s;
        QTest::newRow("put input missing") << pipelineWith("- name: a\n  plan:\n  - put: repo\n    inputs: [built]\n")
                                           << u"jobs[0].plan[0].put"_s << u"put input \"built\" is not provided"_s;
        QTest::newRow("task file artifact missing")
            << pipelineWith("- name: a\n  plan:\n  - task: t\n    file: ci/task.yml\n") << u"jobs[0].plan[0].task"_s
            << u"task file \"ci/task.yml\" is in \"ci\", which no earlier step provides"_s;
        QTest::newRow("duplicate output")
            << pipelineWith(
                   "- name: a\n  plan:\n  - task: t\n    config:\n      platform: host\n      outputs: [{name: "
                   "o}, {name: o}]\n      run: {path: ls}\n")
            << u"jobs[0].plan[0].config.outputs[1].name"_s << u"duplicate output name \"o\""_s;
        QTest::newRow("output_mapping of unknown output")
            << pipelineWith("- name: a\n  plan:\n  - task: t\n    output_mapping: {nope: x}\n" + task)
            << u"jobs[0].plan[0].task"_s << u"output_mapping names \"nope\""_s;
        QTest::newRow("bad platform")
            << pipelineWith(
                   "- name: a\n  plan:\n  - task: t\n    config:\n      platform: windows\n      run: {path: x}\n")
            << u"jobs[0].plan[0].config.platform"_s << u"platform \"windows\" is not supported"_s;
        QTest::newRow("host task with image")
            << pipelineWith("- name: a\n  plan:\n  - task: t\n    config:\n      platform: host\n      image_resource: "
                            "{source: {repository: x}}\n      run: {path: x}\n")
            << u"jobs[0].plan[0].config.image_resource"_s << u"runs without an image"_s;
        QTest::newRow("input path escapes")
            << pipelineWith("- name: a\n  plan:\n  - get: repo\n  - task: t\n    config:\n      platform: host\n      "
                            "inputs: [{name: repo, path: ../x}]\n      run: {path: x}\n")
            << u"jobs[0].plan[1].config.inputs[0].path"_s << u"must not leave"_s;
        QTest::newRow("run missing") << pipelineWith("- name: a\n  plan:\n  - task: t\n    config: {platform: host}\n")
                                     << u"jobs[0].plan[0].config"_s << u"\"run\" with a path is required"_s;
        QTest::newRow("bad version") << pipelineWith("- name: a\n  plan:\n  - get: repo\n    version: newest\n")
                                     << u"jobs[0].plan[0].version"_s << u"\"latest\", \"every\" or a version mapping"_s;
        QTest::newRow("serial group name")
            << pipelineWith("- name: a\n  serial_groups: [ok, -bad]\n  plan: [{get: repo}]\n")
            << u"jobs[0].serial_groups[1]"_s << u"serial group"_s;
        QTest::newRow("log retention twice")
            << pipelineWith("- name: a\n  build_logs_to_retain: 3\n  build_log_retention: {builds: 3}\n"
                            "  plan: [{get: repo}]\n")
            << u"jobs[0].build_logs_to_retain"_s << u"say the same thing"_s;
        QTest::newRow("log retention key")
            << pipelineWith("- name: a\n  build_log_retention: {build: 3}\n  plan: [{get: repo}]\n")
            << u"jobs[0].build_log_retention"_s << u"build"_s;
        QTest::newRow("log retention negative")
            << pipelineWith("- name: a\n  build_log_retention: {days: -1}\n  plan: [{get: repo}]\n")
            << u"jobs[0].build_log_retention.days"_s << QString();
        QTest::newRow("old_name of another job")
            << pipelineWith("- name: a\n  plan: [{get: repo}]\n- name: b\n  old_name: a\n  plan: [{get: repo}]\n")
            << u"jobs[1].old_name"_s << u"the name of another job"_s;
        QTest::newRow("old_name twice")
            << pipelineWith("- name: a\n  old_name: x\n  plan: [{get: repo}]\n- name: b\n  old_name: x\n"
                            "  plan: [{get: repo}]\n")
            << u"jobs[1].old_name"_s << u"job \"a\" also names old_name \"x\""_s;
        QTest::newRow("shell type with source")
            << QByteArray("resource_types:\n- name: x\n  commands: {check: ls, in: ls}\n  source: {a: b}\njobs: []\n")
            << u"resource_types[0]"_s << u"takes no type: or source:"_s;
        QTest::newRow("shell type without in")
            << QByteArray("resource_types:\n- name: x\n  commands: {check: ls}\njobs: []\n")
            << u"resource_types[0].commands"_s << u"\"in\" is required"_s;
        QTest::newRow("unknown base type")
            << QByteArray("resource_types:\n- name: x\n  type: pool\njobs: []\n") << u"resource_types[0].type"_s
            << u"use registry-image, docker-image, git, s3, semver, time, mock, or commands:"_s;
        QTest::newRow("group with unknown job")
            << pipelineWith("- name: a\n  plan: [{get: repo}]\ngroups:\n- name: g\n  jobs: [a, b]\n")
            << u"groups[0].jobs[1]"_s << u"group names job \"b\""_s;
        QTest::newRow("no jobs") << QByteArray("resources: []\njobs: []\n") << u"jobs"_s
                                 << u"a pipeline needs at least one job"_s;
        QTest::newRow("undefined var") << pipelineWith(
                                              "- name: a\n  plan:\n  - get: repo\n    params: {x: ((token))}\n")
                                       << u"jobs[0].plan[0].params.x"_s << u"undefined var \"token\""_s;
        QTest::newRow("short webhook token")
            << pipelineWith("- name: a\n  plan: [{get: repo}]\n", "- name: repo\n  type: git\n  webhook_token: abc\n")
            << u"resources[0].webhook_token"_s << u"at least 32 characters"_s;
    }

    void invalid()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(QString, where);
        QFETCH(QString, message);
        const auto parsed = parsePipeline(yaml);
        QVERIFY2(!parsed, "the pipeline was accepted");
        QCOMPARE(parsed.error().code, ErrorCode::Invalid);
        QCOMPARE(parsed.error().where, where);
        QVERIFY2(parsed.error().message.contains(message), qPrintable(parsed.error().text()));
    }

    void readerLimits_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QString>("message");
        QTest::addColumn<int>("code");

        QByteArray laughs = "a: &a [\"lol\",\"lol\",\"lol\"]\n";
        for (char c = 'b'; c <= 'j'; ++c)
            laughs +=
                QByteArray(1, c) + ": &" + c + " [*" + char(c - 1) + ",*" + char(c - 1) + ",*" + char(c - 1) + "]\n";
        QTest::newRow("billion laughs") << laughs << u"aliases"_s << int(ErrorCode::Invalid);
        QTest::newRow("10000-deep flow nesting")
            << QByteArray("jobs: ") + QByteArray(10000, '[') + QByteArray(10000, ']') << u"nesting is deeper than 64"_s
            << int(ErrorCode::Invalid);
        // "- - - - x": 10,000 nested block sequences on one line.
        QByteArray deepBlock = "jobs:\n";
        for (int i = 0; i < 10000; ++i)
            deepBlock += "- ";
        QTest::newRow("10000-deep block nesting") << deepBlock + "x\n"
                                                  << u"nesting is deeper than 64"_s << int(ErrorCode::Invalid);
        QTest::newRow("duplicate key") << QByteArray("jobs:\n- name: a\n  name: b\n  plan: []\n") << u"duplicate key"_s
                                       << int(ErrorCode::Invalid);
        QTest::newRow("too large") << QByteArray("jobs: []\n# ") + QByteArray(1024 * 1024, 'x') << u"the pipeline is"_s
                                   << int(ErrorCode::TooLarge);
        QTest::newRow("not a mapping") << QByteArray("- a\n- b\n") << u"expected a mapping"_s
                                       << int(ErrorCode::Invalid);
        QTest::newRow("empty") << QByteArray("\n") << u"the pipeline is empty"_s << int(ErrorCode::Invalid);
        QTest::newRow("malformed") << QByteArray("jobs: [a, b\n") << QString() << int(ErrorCode::Invalid);
        QTest::newRow("two documents") << QByteArray("jobs: []\n---\njobs: []\n") << u"only one YAML document"_s
                                       << int(ErrorCode::Invalid);
    }

    void readerLimits()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(QString, message);
        QFETCH(int, code);
        const auto parsed = parsePipeline(yaml);
        QVERIFY(!parsed);
        QCOMPARE(int(parsed.error().code), code);
        QVERIFY2(parsed.error().message.contains(message), qPrintable(parsed.error().text()));
    }

    // Durations as fly takes them: Go's time.ParseDuration forms.
    void goDurations()
    {
        for (const auto &[text, ms] : {std::pair{u"1.5h"_s, 5'400'000LL}, std::pair{u"1h0m0s"_s, 3'600'000LL},
                                       std::pair{u"90s"_s, 90'000LL}, std::pair{u"2.5s"_s, 2'500LL}}) {
            const auto parsed =
                parsePipeline(pipelineWith("- name: a\n  plan:\n  - get: repo\n    timeout: " + text.toUtf8() + "\n"));
            QVERIFY2(parsed, qPrintable(text + u": "_s + (parsed ? QString() : parsed.error().text())));
            QCOMPARE(parsed->jobs.front().plan.front().timeoutMs, ms);
        }
    }

    void duplicateKeyNamesThePath()
    {
        const auto parsed = parsePipeline("jobs:\n- name: a\n  plan:\n  - get: x\n    get: y\n");
        QVERIFY(!parsed);
        QCOMPARE(parsed.error().where, u"jobs[0].plan[0].get"_s);
    }

    void cycles_data()
    {
        QTest::addColumn<QByteArray>("jobs");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("cycle");
        QTest::newRow("2-cycle") << QByteArray("- name: a\n  plan:\n  - get: repo\n    passed: [b]\n"
                                               "- name: b\n  plan:\n  - get: repo\n    passed: [a]\n")
                                 << u"jobs[0].plan[0].get"_s << u"a → b → a"_s;
        QTest::newRow("3-cycle") << QByteArray("- name: c\n  plan:\n  - get: repo\n    passed: [b]\n"
                                               "- name: a\n  plan:\n  - get: repo\n    passed: [c]\n"
                                               "- name: b\n  plan:\n  - get: repo\n    passed: [a]\n")
                                 << u"jobs[1].plan[0].get"_s << u"a → b → c → a"_s;
        QTest::newRow("cycle behind a chain")
            << QByteArray("- name: start\n  plan: [{get: repo}]\n"
                          "- name: x\n  plan:\n  - get: repo\n    passed: [start, y]\n"
                          "- name: y\n  plan:\n  - in_parallel:\n    - get: repo\n      passed: [x]\n")
            << u"jobs[1].plan[0].get"_s << u"x → y → x"_s;
    }

    void cycles()
    {
        QFETCH(QByteArray, jobs);
        QFETCH(QString, where);
        QFETCH(QString, cycle);
        const auto parsed = parsePipeline(pipelineWith(jobs));
        QVERIFY(!parsed);
        QCOMPARE(parsed.error().message, u"passed: forms a cycle: "_s + cycle);
        QCOMPARE(parsed.error().where, where);
    }

    void optionalInputsAndFileTasksAreNotChecked()
    {
        const auto parsed =
            parsePipeline(pipelineWith("- name: a\n  plan:\n  - get: repo\n  - task: gen\n    file: repo/ci/gen.yml\n"
                                       "  - task: use\n    config:\n      platform: host\n      inputs: [{name: "
                                       "generated}, {name: maybe, optional: "
                                       "true}]\n      run: {path: ls}\n"));
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
    }

    void taskFile()
    {
        const auto ok = parseTaskConfigFile("platform: linux\nimage_resource:\n  type: registry-image\n  source: "
                                            "{repository: local/alpine}\nrun:\n  path: echo\n  args: [hi]\n",
                                            u"repo/ci/t.yml"_s);
        QVERIFY2(ok, qPrintable(ok ? QString() : ok.error().text()));
        QCOMPARE(ok->imageResource->reference(), u"local/alpine:latest"_s);

        const auto bad = parseTaskConfigFile("run:\n  path: echo\n  argz: []\n", u"repo/ci/t.yml"_s);
        QVERIFY(!bad);
        QCOMPARE(bad.error().where, u"repo/ci/t.yml: run"_s);
        QVERIFY(bad.error().message.contains(u"did you mean \"args\""_s));

        const auto broken = parseTaskConfigFile("run: [\n", u"repo/ci/t.yml"_s);
        QVERIFY(!broken);
        QVERIFY2(broken.error().where.startsWith(u"repo/ci/t.yml: line "_s), qPrintable(broken.error().text()));

        InterpolationSources sources;
        sources.vars = *readVarsFile("tool: make\n");
        const auto withVars = parseTaskConfigFile("platform: host\nrun: {path: ((tool))}\n", u"t.yml"_s, sources);
        QVERIFY(withVars);
        QCOMPARE(withVars->run.path, u"make"_s);
        const auto undefined = parseTaskConfigFile("platform: host\nrun: {path: ((nope))}\n", u"t.yml"_s);
        QVERIFY(!undefined);
        QCOMPARE(undefined.error().where, u"t.yml: run.path"_s);
    }

    void resolveHostAndContainerTasks()
    {
        const auto parsed = parsePipeline(example());
        QVERIFY(parsed);
        const Step &lint = parsed->jobs[1].plan[1].steps[1];
        const auto host = resolveTask(lint);
        QVERIFY(host);
        QCOMPARE(host->venue, ResolvedTask::Venue::Host);
        QCOMPARE(host->argv, (QStringList{u"make"_s, u"lint"_s}));
        QVERIFY(!host->shell);
        QCOMPARE(host->inputs.first().artifact, u"repo"_s);
        QCOMPARE(host->inputs.first().path, u"source"_s);

        const Step &test = parsed->jobs[0].plan[1];
        const auto container = resolveTask(test);
        QVERIFY(container);
        QCOMPARE(container->venue, ResolvedTask::Venue::Image);
        QCOMPARE(container->image, u"local/golang:1.22"_s);
        QVERIFY(container->shell);
        QCOMPARE(container->argv, (QStringList{u"sh"_s, u"-c"_s, u"cd repo && go test ./..."_s}));

        const Step &compile = parsed->jobs[1].plan[1].steps[0];
        QVERIFY(!resolveTask(compile));
        const auto fileConfig = parseTaskConfigFile(
            "platform: host\nparams: {TARGET: any, MODE: fast}\nrun: {path: go}\n", u"repo/ci/compile.yml"_s);
        QVERIFY(fileConfig);
        const auto fromFile = resolveTask(compile, &*fileConfig);
        QVERIFY(fromFile);
        QCOMPARE(fromFile->config.params.value(u"TARGET"_s), u"linux"_s); // the step's params win
        QCOMPARE(fromFile->config.params.value(u"MODE"_s), u"fast"_s);
    }

    void canonicalJsonIsStable()
    {
        const QByteArray a = "platform: host\nparams: {B: 2, A: 1}\ninputs: [{name: x}]\nrun: {path: ls, args: [-l]}\n";
        const QByteArray b = "run: {args: [-l], path: ls}\ninputs: [{name: x}]\nparams: {A: 1, B: 2}\nplatform: host\n";
        const auto ca = parseTaskConfigFile(a, u"a"_s);
        const auto cb = parseTaskConfigFile(b, u"b"_s);
        QVERIFY(ca && cb);
        const QByteArray ja = canonicalJson(toJson(*ca));
        QCOMPARE(ja, canonicalJson(toJson(*cb)));
        QVERIFY(!ja.contains(' '));
        QVERIFY(!ja.contains('\n'));
        QVERIFY(ja.indexOf("\"caches\"") < ja.indexOf("\"inputs\""));

        QCOMPARE(canonicalJson(QJsonValue(QJsonObject{{u"b"_s, 1}, {u"a"_s, QJsonArray{1.5, u"x\n\"y"_s, true}}})),
                 QByteArray("{\"a\":[1.5,\"x\\n\\\"y\",true],\"b\":1}"));
        QCOMPARE(canonicalJson(QJsonValue(u"é\u0001"_s)), QByteArray("\"\xc3\xa9\\u0001\""));

        // A whole pipeline with its jobs' keys reordered hashes the same.
        const auto p1 =
            parsePipeline(pipelineWith("- name: a\n  serial: true\n  plan:\n  - get: repo\n    trigger: true\n    "
                                       "passed: []\n"));
        const auto p2 =
            parsePipeline(pipelineWith("- plan:\n  - trigger: true\n    get: repo\n  serial: true\n  name: a\n"));
        QVERIFY(p1 && p2);
        QCOMPARE(canonicalJson(toJson(*p1)), canonicalJson(toJson(*p2)));
        QCOMPARE(canonicalJson(toJson(p1->jobs[0].plan[0])), canonicalJson(toJson(p2->jobs[0].plan[0])));
    }

    // What `pipelines set` shows is the file as written (comments kept), and of the vars only
    // which names changed.
    void setDiffShowsWhatTheUserWrote()
    {
        const QString before = u"# CI\njobs:\n- name: a   # the first\n  plan:\n  - get: repo\n"_s;
        const QString after = u"# CI\njobs:\n- name: a   # the first\n  plan:\n  - get: repo\n    trigger: true\n"_s;
        QVERIFY(setDiff(before, before, u"x: 1\n"_s, u"x: 1\n"_s).isEmpty());
        QCOMPARE(setDiff(before, after, {}, {}),
                 (QStringList{u"@@ line 3 @@"_s, u"  - name: a   # the first"_s, u"    plan:"_s, u"    - get: repo"_s,
                              u"+     trigger: true"_s, u"  "_s}));
        // A new pipeline: every line added.
        QCOMPARE(setDiff({}, u"jobs: []"_s, {}, {}), (QStringList{u"@@ line 1 @@"_s, u"+ jobs: []"_s}));
        const QString varsBefore = u"a: 1\nb: [x]\nc: s3cr3t\n"_s;
        const QString varsAfter = u"a: 1\nb: [y]\nd: 4\n"_s;
        const QStringList vars = setDiff(before, before, varsBefore, varsAfter);
        QCOMPARE(vars, (QStringList{u"@@ vars @@"_s, u"~ b"_s, u"- c"_s, u"+ d"_s}));
        QCOMPARE(setDiff(before, before, u"a: [\n"_s, u"a: 1\n"_s),
                 (QStringList{u"@@ vars @@"_s, u"~ (the vars file)"_s}));

        const QStringList simple = diffLines({u"a"_s, u"b"_s, u"c"_s}, {u"a"_s, u"c"_s, u"d"_s}, 1);
        QCOMPARE(simple, (QStringList{u"@@ line 1 @@"_s, u"  a"_s, u"- b"_s, u"  c"_s, u"+ d"_s}));
    }

    // Large files: a change in the middle of a long one is found exactly, and a rewrite of a large
    // one is shown as every line removed and added instead of filling memory.
    void diffOfLargeFiles()
    {
        QStringList before;
        for (int i = 0; i < 100000; ++i)
            before << u"line %1"_s.arg(i);
        QStringList after = before;
        after[50000] = u"changed"_s;
        QCOMPARE(diffLines(before, after, 0), (QStringList{u"@@ line 50001 @@"_s, u"- line 50000"_s, u"+ changed"_s}));
        QStringList rewritten;
        for (int i = 0; i < 5000; ++i)
            rewritten << u"new %1"_s.arg(i);
        const QStringList lines = diffLines(before.mid(0, 5000), rewritten);
        QCOMPARE(lines.size(), 1 + 10000);
        QCOMPARE(lines.value(1), u"- line 0"_s);
        QCOMPARE(lines.value(5001), u"+ new 0"_s);
    }

    void secretsStayOutOfTheModelInPlaceholderMode()
    {
        InterpolationSources sources;
        sources.secrets = [](const QString &name) -> std::optional<QString> {
            if (name == u"git-key")
                return u"s3cr3t-value"_s;
            return std::nullopt;
        };
        const QByteArray yaml = pipelineWith("- name: a\n  plan: [{get: repo}]\n",
                                             "- name: repo\n  type: git\n  source: {private_key: ((git-key))}\n");
        sources.secretMode = InterpolationSources::SecretMode::Placeholder;
        const auto shown = parsePipeline(yaml, sources);
        QVERIFY(shown);
        QCOMPARE(shown->secretNames, QStringList{u"git-key"_s});
        QCOMPARE(shown->resources[0].source.value(u"private_key"_s).toString(), u"((git-key))"_s);
        QVERIFY(!canonicalJson(toJson(*shown)).contains("s3cr3t"));

        sources.secretMode = InterpolationSources::SecretMode::Resolve;
        const auto resolved = parsePipeline(yaml, sources);
        QVERIFY(resolved);
        QCOMPARE(resolved->resources[0].source.value(u"private_key"_s).toString(), u"s3cr3t-value"_s);
        QCOMPARE(resolved->secretNames, QStringList{u"git-key"_s});
    }

    void approveStep()
    {
        const QByteArray task = "    config: {platform: host, run: {path: 'true'}}\n";
        const auto parsed = parsePipeline(
            pipelineWith("- name: a\n  plan:\n  - get: repo\n  - approve: ship-to-prod\n    message: \"Ship it?\"\n"
                         "    approvers: [alice, role:operator]\n    timeout: 2h\n    on_failure:\n      task: tell\n" +
                         QByteArray("  ") + task +
                         "  - try:\n      approve: optional\n  - in_parallel:\n    - approve: left\n    - do:\n      - "
                         "approve: right\n"));
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        const Job &job = parsed->jobs.first();
        const Step &ship = job.plan[1];
        QCOMPARE(ship.kind, StepKind::Approve);
        QCOMPARE(ship.name, u"ship-to-prod"_s);
        QCOMPARE(ship.path, u"jobs[0].plan[1].approve"_s);
        QCOMPARE(ship.approve.message, u"Ship it?"_s);
        QCOMPARE(ship.approve.approvers, (QStringList{u"alice"_s, u"role:operator"_s}));
        QCOMPARE(ship.approve.timeoutMs, 2 * 3600 * 1000LL);
        // The request's lifetime, not the generic modifier that would error the step.
        QCOMPARE(ship.timeoutMs, 0);
        QCOMPARE(ship.attempts, 1);
        QVERIFY(ship.hooks.onFailure);
        QCOMPARE(ship.hooks.onFailure->name, u"tell"_s);
        QVERIFY(ship.artifact().isEmpty());

        const Step &optional = job.plan[2].steps.front();
        QCOMPARE(optional.kind, StepKind::Approve);
        QCOMPARE(optional.approve.timeoutMs, ApproveStep::DefaultTimeoutMs);
        QVERIFY(optional.approve.approvers.isEmpty());
        QVERIFY(optional.approve.message.isEmpty());
        QCOMPARE(job.plan[3].steps[1].steps.front().path, u"jobs[0].plan[3].in_parallel[1].do[0].approve"_s);

        const QJsonObject json = toJson(ship);
        QCOMPARE(json.value(u"approve"_s).toString(), u"ship-to-prod"_s);
        QCOMPARE(json.value(u"timeout_ms"_s).toDouble(), 7200000.0);
        QCOMPARE(json.value(u"approvers"_s).toArray().size(), 2);
        QVERIFY(!json.contains(u"attempts"_s));
        QVERIFY(json.value(u"on_failure"_s).isObject());
    }

    void approveStepMessageTakesVars()
    {
        InterpolationSources sources;
        sources.vars = readVarsFile("version: 1.2.3\n").value();
        const auto parsed = parsePipeline(
            pipelineWith("- name: a\n  plan:\n  - approve: ship\n    message: \"Ship ((version))?\"\n"), sources);
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        QCOMPARE(parsed->jobs.first().plan.front().approve.message, u"Ship 1.2.3?"_s);
    }

    void approveInvalid_data()
    {
        QTest::addColumn<QByteArray>("step");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("message");
        QTest::newRow("missing name") << QByteArray("  - approve:\n    message: hi\n") << u"jobs[0].plan[1].approve"_s
                                      << u"name"_s;
        QTest::newRow("bad name") << QByteArray("  - approve: -ship\n") << u"jobs[0].plan[1].approve"_s
                                  << u"invalid step name"_s;
        QTest::newRow("unknown approver role")
            << QByteArray("  - approve: ship\n    approvers: [alice, role:wizard]\n")
            << u"jobs[0].plan[1].approvers[1]"_s << u"\"role:wizard\" names no role"_s;
        QTest::newRow("approver neither user nor role")
            << QByteArray("  - approve: ship\n    approvers: [\"not a user!\"]\n") << u"jobs[0].plan[1].approvers[0]"_s
            << u"neither a username nor role:<role>"_s;
        QTest::newRow("approvers not a list")
            << QByteArray("  - approve: ship\n    approvers: alice\n") << u"jobs[0].plan[1].approvers"_s
            << u"a list of usernames and role:<role> entries"_s;
        QTest::newRow("approvers a mapping") << QByteArray("  - approve: ship\n    approvers: {alice: yes}\n")
                                             << u"jobs[0].plan[1].approvers"_s << u"a list of usernames"_s;
        QTest::newRow("approvers empty") << QByteArray("  - approve: ship\n    approvers: []\n")
                                         << u"jobs[0].plan[1].approvers"_s << u"lets nobody approve"_s;
        QTest::newRow("approver twice") << QByteArray("  - approve: ship\n    approvers: [bob, bob]\n")
                                        << u"jobs[0].plan[1].approvers[1]"_s << u"listed twice"_s;
        QTest::newRow("bad timeout") << QByteArray("  - approve: ship\n    timeout: soon\n")
                                     << u"jobs[0].plan[1].timeout"_s << u"a duration like"_s;
        QTest::newRow("bare number timeout") << QByteArray("  - approve: ship\n    timeout: 3600\n")
                                             << u"jobs[0].plan[1].timeout"_s << u"a duration like"_s;
        QTest::newRow("zero timeout") << QByteArray("  - approve: ship\n    timeout: 0s\n")
                                      << u"jobs[0].plan[1].timeout"_s << u"longer than zero"_s;
        QTest::newRow("timeout too long") << QByteArray("  - approve: ship\n    timeout: 2000h\n")
                                          << u"jobs[0].plan[1].timeout"_s << u"at most 720h"_s;
        QTest::newRow("attempts") << QByteArray("  - approve: ship\n    attempts: 3\n") << u"jobs[0].plan[1].attempts"_s
                                  << u"takes no attempts"_s;
        QTest::newRow("close key") << QByteArray("  - approve: ship\n    approver: [bob]\n")
                                   << u"jobs[0].plan[1].approve"_s
                                   << u"unknown key \"approver\"; did you mean \"approvers\"?"_s;
        QTest::newRow("message a list") << QByteArray("  - approve: ship\n    message: [a, b]\n")
                                        << u"jobs[0].plan[1].message"_s << u"expected"_s;
        QTest::newRow("two kinds") << QByteArray("  - approve: ship\n    task: t\n") << u"jobs[0].plan[1].approve"_s
                                   << u"exactly one of get, put, task, approve"_s;
        QTest::newRow("same name twice") << QByteArray("  - approve: ship\n  - do:\n    - approve: ship\n")
                                         << u"jobs[0].plan[2].do[0].approve"_s << u"approve \"ship\" is already used"_s;
        QTest::newRow("nested bad approver")
            << QByteArray("  - in_parallel:\n    - approve: ship\n      approvers: [role:root]\n")
            << u"jobs[0].plan[1].in_parallel[0].approvers[0]"_s << u"names no role"_s;
    }

    void approveInvalid()
    {
        QFETCH(QByteArray, step);
        QFETCH(QString, where);
        QFETCH(QString, message);
        const auto parsed = parsePipeline(pipelineWith("- name: a\n  plan:\n  - get: repo\n" + step));
        QVERIFY2(!parsed, "the pipeline was accepted");
        QCOMPARE(parsed.error().code, ErrorCode::Invalid);
        QCOMPARE(parsed.error().where, where);
        QVERIFY2(parsed.error().message.contains(message), qPrintable(parsed.error().text()));
    }
};

QTEST_GUILESS_MAIN(TestPipelineConfig)
#include "tst_pipelineconfig.moc"
