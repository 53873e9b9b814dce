// The Concourse keys of jobs and steps as Concourse documents them: max_in_flight, serial groups
// and log retention, tags, task vars and check timeouts, load_var and ((.:local)) vars, across
// matrices, YAML anchors as fly reads them, and container limits as Concourse writes them.

#include "core/pipelines/config/canonical.h"
#include "core/pipelines/config/pipelineconfig.h"
#include "tests/core/pipelines/config/pipelinefiles.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core::pipelines;
using pando::test::corpusFile;
using pando::test::pipelineWith;

class TestPipelineKeys : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void memoryReadsAsConcourseReadsIt_data()
    {
        QTest::addColumn<QString>("memory");
        QTest::addColumn<qint64>("bytes");
        const qint64 mi = 1024LL * 1024;
        QTest::newRow("GB") << u"32GB"_s << 32 * 1024 * mi;
        QTest::newRow("lower mb") << u"512mb"_s << 512 * mi;
        QTest::newRow("G") << u"2G"_s << 2 * 1024 * mi;
        QTest::newRow("Gi") << u"1Gi"_s << 1024 * mi;
        QTest::newRow("KiB") << u"8192KiB"_s << 8 * mi;
        QTest::newRow("bytes") << u"8388608"_s << 8 * mi;
        QTest::newRow("too small") << u"1MB"_s << qint64(-1);
        QTest::newRow("unknown unit") << u"1PB"_s << qint64(-1);
        QTest::newRow("fraction") << u"1.5GB"_s << qint64(-1);
    }

    void memoryReadsAsConcourseReadsIt()
    {
        QFETCH(QString, memory);
        QFETCH(qint64, bytes);
        const QByteArray yaml = "jobs:\n- name: a\n  plan:\n  - task: t\n    config:\n      platform: linux\n"
                                "      image_resource: {type: registry-image, source: {repository: local/x}}\n"
                                "      container_limits: {memory: " +
                                memory.toUtf8() + "}\n      run: {path: true}\n";
        const auto parsed = parsePipeline(yaml);
        if (bytes < 0) {
            QVERIFY(!parsed);
            QCOMPARE(parsed.error().where, u"jobs[0].plan[0].config.container_limits.memory"_s);
            return;
        }
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        QCOMPARE(parsed->jobs[0].plan[0].task.config->limits.memoryBytes, bytes);
    }

    void aTaskNameMayCarryAcrossVars()
    {
        // Concourse's across example names each task after its value.
        const QByteArray yaml =
            "jobs:\n- name: a\n  plan:\n  - across:\n    - var: arch\n      values: [x86_64, arm64]\n"
            "    task: build-((.:arch))\n    config:\n      platform: linux\n"
            "      image_resource: {type: registry-image, source: {repository: local/x, tag: \"((.:arch))-slim\"}}\n"
            "      run: {path: echo, args: [\"((.:arch))\"]}\n";
        const auto parsed = parsePipeline(yaml);
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        const QByteArray bad = QByteArray(yaml).replace("build-((.:arch))", "build ((.:arch))");
        const auto refused = parsePipeline(bad);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.contains(u"task name"_s), qPrintable(refused.error().text()));
    }

    // How many builds of a job run at once, and which keep their logs, as Concourse reads them.
    void jobConcurrencyAndRetention()
    {
        const auto parsed = parsePipeline(pipelineWith(
            "- name: unit\n  plan: [{get: repo}]\n"
            "- name: deploy-staging\n  serial_groups: [deploy, staging]\n  max_in_flight: 4\n"
            "  build_log_retention: {builds: 10, days: 7, minimum_succeeded_builds: 2}\n  plan: [{get: repo}]\n"
            "- name: deploy-prod\n  serial_groups: [deploy, deploy]\n  old_name: ship\n"
            "  build_logs_to_retain: 25\n  plan: [{get: repo}]\n"
            "- name: lint\n  serial: true\n  max_in_flight: 3\n  plan: [{get: repo}]\n"
            "- name: fan\n  max_in_flight: 3\n  plan: [{get: repo}]\n"));
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        const Pipeline &p = *parsed;
        QCOMPARE(p.job(u"unit"_s)->maxInFlight, 0); // Concourse's default: no limit
        QVERIFY(p.job(u"unit"_s)->serialGroups.isEmpty());
        QVERIFY(p.job(u"unit"_s)->logRetention.isEmpty());
        // serial_groups wins over max_in_flight, as serial does (fly accepts both together).
        QCOMPARE(p.job(u"deploy-staging"_s)->maxInFlight, 1);
        QCOMPARE(p.job(u"deploy-staging"_s)->serialGroups, (QStringList{u"deploy"_s, u"staging"_s}));
        QCOMPARE(p.job(u"deploy-staging"_s)->logRetention.builds, 10);
        QCOMPARE(p.job(u"deploy-staging"_s)->logRetention.days, 7);
        QCOMPARE(p.job(u"deploy-staging"_s)->logRetention.minimumSucceeded, 2);
        QCOMPARE(p.job(u"deploy-prod"_s)->serialGroups, QStringList{u"deploy"_s});
        QCOMPARE(p.job(u"deploy-prod"_s)->oldName, u"ship"_s);
        QCOMPARE(p.job(u"deploy-prod"_s)->logRetention.builds, 25);
        QCOMPARE(p.job(u"lint"_s)->maxInFlight, 1);
        QCOMPARE(p.job(u"fan"_s)->maxInFlight, 3);

        // They are part of what the pipeline means, so a change of them is a change of its digest.
        const QByteArray with = canonicalJson(toJson(*p.job(u"deploy-prod"_s)));
        QVERIFY(with.contains("\"serial_groups\":[\"deploy\"]"));
        QVERIFY(with.contains("\"old_name\":\"ship\""));
        QVERIFY(!canonicalJson(toJson(*p.job(u"unit"_s))).contains("serial_groups"));
    }

    // Step tags, a file task's vars and a resource's check_timeout, as Concourse documents them.
    void tagsVarsAndCheckTimeout()
    {
        const auto parsed = parsePipeline(pipelineWith(
            "- name: a\n  plan:\n  - get: repo\n    tags: [gpu, linux]\n  - task: t\n    file: repo/ci/t.yml\n"
            "    vars: {image: golang, versions: [1.21, 1.22], nested: {a: b}}\n    tags: [gpu]\n",
            "- name: repo\n  type: git\n  check_timeout: 5m\n- name: plain\n  type: mock\n"));
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        const Job &job = parsed->jobs[0];
        QCOMPARE(job.plan[0].tags, (QStringList{u"gpu"_s, u"linux"_s}));
        QVERIFY(job.plan[1].task.vars);
        QCOMPARE(job.plan[1].task.vars->value(u"image"_s)->text, u"golang"_s);
        QCOMPARE(job.plan[1].task.vars->value(u"versions"_s)->items.size(), size_t(2));
        QCOMPARE(parsed->resource(u"repo"_s)->checkTimeoutMs, 300000);
        QCOMPARE(parsed->resource(u"plain"_s)->checkTimeoutMs, Resource::DefaultCheckTimeoutMs);
        // vars are part of what the step means; the default check_timeout leaves a digest as it was.
        QVERIFY(toJson(job.plan[1]).contains(u"vars"_s));
        QVERIFY(toJson(*parsed->resource(u"repo"_s)).contains(u"check_timeout_ms"_s));
        QVERIFY(!toJson(*parsed->resource(u"plain"_s)).contains(u"check_timeout_ms"_s));

        const auto badVars = parsePipeline(pipelineWith("- name: a\n  plan:\n  - get: repo\n  - task: t\n"
                                                        "    file: repo/t.yml\n    vars: [a, b]\n"));
        QVERIFY(!badVars);
        QCOMPARE(badVars.error().where, u"jobs[0].plan[1].vars"_s);
        const auto badTimeout =
            parsePipeline(pipelineWith("- name: a\n  plan: [{get: repo}]\n", "- name: repo\n  type: git\n"
                                                                             "  check_timeout: soon\n"));
        QVERIFY(!badTimeout);
        QCOMPARE(badTimeout.error().where, u"resources[0].check_timeout"_s);
        const auto badTags = parsePipeline(pipelineWith("- name: a\n  plan:\n  - get: repo\n    tags: gpu\n"));
        QVERIFY(!badTags);
        QCOMPARE(badTags.error().where, u"jobs[0].plan[0].tags"_s);
    }

    // load_var as Concourse documents it: read at set time with ((.:name)) left for the run, and
    // the steps that use one read again with its value when they run.
    void loadVarAndLocalVars()
    {
        const auto parsed = parsePipeline(pipelineWith(
            "- name: a\n  plan:\n  - get: repo\n  - load_var: meta\n    file: repo/meta.json\n    format: json\n"
            "  - load_var: tag\n    file: repo/tag\n    reveal: true\n"
            "  - task: t\n    config:\n      platform: host\n      params: {TAG: ((.:tag)), IMAGE: "
            "\"((.:meta.image)):x\"}\n"
            "      run: {path: echo}\n"));
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        QVERIFY(parsed->undefinedVars.isEmpty());
        const std::vector<Step> &plan = parsed->jobs[0].plan;
        QCOMPARE(plan[1].kind, StepKind::LoadVar);
        QCOMPARE(plan[1].name, u"meta"_s);
        QCOMPARE(plan[1].loadVar.format, LoadVarStep::Format::Json);
        QVERIFY(!plan[1].loadVar.reveal);
        QVERIFY(plan[2].loadVar.reveal);
        QCOMPARE(plan[2].loadVar.format, LoadVarStep::Format::Auto);
        QVERIFY(!plan[1].written); // uses no local var itself
        QVERIFY(plan[3].written);
        QCOMPARE(plan[3].task.config->params.value(u"TAG"_s), u"((.:tag))"_s);

        auto locals = core::detail::readYaml("tag: v1.2\nmeta: {image: golang}\n");
        QVERIFY(locals);
        const auto filled = fillLocalVars(plan[3], *locals);
        QVERIFY2(filled, qPrintable(filled ? QString() : filled.error().text()));
        QCOMPARE(filled->path, plan[3].path);
        QCOMPARE(filled->task.config->params.value(u"TAG"_s), u"v1.2"_s);
        QCOMPARE(filled->task.config->params.value(u"IMAGE"_s), u"golang:x"_s);
        auto lacking = core::detail::readYaml("tag: v1.2\n");
        const auto missing = fillLocalVars(plan[3], *lacking);
        QVERIFY(!missing);
        QCOMPARE(missing.error().where, u"jobs[0].plan[3].config.params.IMAGE"_s);
        QVERIFY2(missing.error().message.contains(u"undefined local var \"meta\""_s),
                 qPrintable(missing.error().text()));

        const auto noArtifact =
            parsePipeline(pipelineWith("- name: a\n  plan:\n  - load_var: x\n    file: elsewhere/x.txt\n"));
        QVERIFY(!noArtifact);
        QCOMPARE(noArtifact.error().where, u"jobs[0].plan[0].load_var"_s);
        const auto badFormat = parsePipeline(
            pipelineWith("- name: a\n  plan:\n  - get: repo\n  - load_var: x\n    file: repo/x\n    format: toml\n"));
        QVERIFY(!badFormat);
        QCOMPARE(badFormat.error().where, u"jobs[0].plan[1].format"_s);
        const auto noFile = parsePipeline(pipelineWith("- name: a\n  plan:\n  - get: repo\n  - load_var: x\n"));
        QVERIFY(!noFile);
        QVERIFY2(noFile.error().message.contains(u"needs file:"_s), qPrintable(noFile.error().text()));
    }

    // across as Concourse documents it: vars with values (a list, or a loaded one), each
    // combination read from the step as written.
    void acrossCombinations()
    {
        const auto parsed = parsePipeline(pipelineWith(
            "- name: a\n  plan:\n  - get: repo\n  - load_var: targets\n    file: repo/targets.json\n"
            "  - across:\n    - var: go\n      values: [\"1.21\", \"1.22\"]\n      max_in_flight: all\n"
            "    - var: target\n      values: ((.:targets))\n    fail_fast: true\n"
            "    task: build\n    config:\n      platform: host\n      inputs: [{name: repo}]\n"
            "      outputs: [{name: bin}]\n      params: {GO: ((.:go)), TARGET: ((.:target)), TAG: ((.:tag))}\n"
            "      run: {path: make}\n"));
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        const Step &across = parsed->jobs[0].plan[2];
        QCOMPARE(across.across.size(), size_t(2));
        QCOMPARE(across.across[0].name, u"go"_s);
        QCOMPARE(across.across[0].maxInFlight, 0);
        QCOMPARE(across.across[1].maxInFlight, 1);
        QVERIFY(across.acrossFailFast);

        auto values = core::detail::readYaml("go: \"1.22\"\ntarget: arm64\n");
        QVERIFY(values);
        const auto once = acrossIteration(across, *values, 3);
        QVERIFY2(once, qPrintable(once ? QString() : once.error().text()));
        QVERIFY(once->across.empty());
        QCOMPARE(once->path, u"jobs[0].plan[2].across[3].task"_s);
        QCOMPARE(once->task.config->params.value(u"GO"_s), u"1.22"_s);
        QCOMPARE(once->task.config->params.value(u"TARGET"_s), u"arm64"_s);
        // A load_var placeholder that is no across var waits for the run.
        QCOMPARE(once->task.config->params.value(u"TAG"_s), u"((.:tag))"_s);
        QVERIFY(once->written);

        // What a combination makes stays with it: a later step cannot take it.
        const auto later = parsePipeline(
            pipelineWith("- name: a\n  plan:\n  - get: repo\n  - across: [{var: x, values: [1, 2]}]\n    task: t\n"
                         "    config: {platform: host, outputs: [{name: bin}], run: {path: make}}\n"
                         "  - task: use\n    config: {platform: host, inputs: [{name: bin}], run: {path: ls}}\n"));
        QVERIFY(!later);
        QVERIFY2(later.error().message.contains(u"task input \"bin\""_s), qPrintable(later.error().text()));
        const auto stray = parsePipeline(pipelineWith("- name: a\n  plan:\n  - get: repo\n    fail_fast: true\n"));
        QVERIFY(!stray);
        QCOMPARE(stray.error().where, u"jobs[0].plan[0].fail_fast"_s);
        const auto twice = parsePipeline(pipelineWith(
            "- name: a\n  plan:\n  - across: [{var: x, values: [1]}, {var: x, values: [2]}]\n    get: repo\n"));
        QVERIFY(!twice);
        QCOMPARE(twice.error().where, u"jobs[0].plan[0].across[1].var"_s);
        const auto scalar =
            parsePipeline(pipelineWith("- name: a\n  plan:\n  - across: [{var: x, values: abc}]\n    get: repo\n"));
        QVERIFY(!scalar);
        QCOMPARE(scalar.error().where, u"jobs[0].plan[0].across[0].values"_s);
    }

    // Anchors, aliases and merge keys as fly reads them: the pipeline means what it means
    // written out, and the key that only held anchors is left out and named.
    void anchorsAsFlyReadsThem()
    {
        const auto anchored = parsePipeline(corpusFile(u"anchored-pipeline.yml"_s));
        QVERIFY2(anchored, qPrintable(anchored ? QString() : anchored.error().text()));
        const auto writtenOut = parsePipeline(corpusFile(u"anchored-pipeline-written-out.yml"_s));
        QVERIFY2(writtenOut, qPrintable(writtenOut ? QString() : writtenOut.error().text()));
        QCOMPARE(canonicalJson(toJson(*anchored)), canonicalJson(toJson(*writtenOut)));
        QCOMPARE(anchored->ignoredKeys, QStringList{u"shared"_s});
        QVERIFY(writtenOut->ignoredKeys.isEmpty());
        QCOMPARE(anchored->resource(u"docs"_s)->source.value(u"branch"_s).toString(), u"gh-pages"_s);

        // A near miss of a key the file lacks is a typo; beside the key it is a holder of anchors.
        const auto typo = parsePipeline("resources:\n- {name: repo, type: git}\njob:\n- name: a\n  plan: []\n"
                                        "jobs:\n- name: b\n  plan: [{get: repo}]\n");
        QVERIFY2(typo, qPrintable(typo ? QString() : typo.error().text()));
        QCOMPARE(typo->ignoredKeys, QStringList{u"job"_s});
        // What Concourse reads and Pando does not yet is refused rather than left out.
        const auto refused = parsePipeline("var_sources: []\n" + pipelineWith("- name: a\n  plan: [{get: repo}]\n"));
        QVERIFY(!refused);
        QCOMPARE(refused.error().where, u"var_sources"_s);
        QVERIFY2(refused.error().message.contains(u"does not support"_s), qPrintable(refused.error().text()));
        // display: is read (and checked), not left out.
        const auto shown = parsePipeline("display: {background_image: https://example.org/bg.png}\n" +
                                         pipelineWith("- name: a\n  plan: [{get: repo}]\n"));
        QVERIFY2(shown, qPrintable(shown ? QString() : shown.error().text()));
        QCOMPARE(shown->display.backgroundImage, u"https://example.org/bg.png"_s);
        QVERIFY(shown->ignoredKeys.isEmpty());
        const auto badDisplay =
            parsePipeline("display: {background: x}\n" + pipelineWith("- name: a\n  plan: [{get: repo}]\n"));
        QVERIFY(!badDisplay);
        QCOMPARE(badDisplay.error().where, u"display"_s);
        // Secrets named only under a key Pando leaves out are not the pipeline's.
        const auto unread =
            parsePipeline("notes: {x: ((unused-secret))}\n" + pipelineWith("- name: a\n  plan: [{get: repo}]\n"));
        QVERIFY2(unread, qPrintable(unread ? QString() : unread.error().text()));
        QVERIFY(!unread->secretNames.contains(u"unused-secret"_s));
    }

    // Job settings Concourse documents, read as it reads them.
    void jobSettings()
    {
        const auto parsed = parsePipeline(pipelineWith("- name: deploy\n  disable_manual_trigger: true\n"
                                                       "  interruptible: true\n  plan: [{get: repo, trigger: true}]\n"
                                                       "- name: test\n  plan: [{get: repo}]\n"));
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        QVERIFY(parsed->job(u"deploy"_s)->disableManualTrigger && parsed->job(u"deploy"_s)->interruptible);
        QVERIFY(!parsed->job(u"test"_s)->disableManualTrigger && !parsed->job(u"test"_s)->interruptible);
        // Unset, they leave a job's canonical form as it was before Pando read them.
        QVERIFY(!toJson(*parsed->job(u"test"_s)).contains(u"disable_manual_trigger"_s));
        QCOMPARE(toJson(*parsed->job(u"deploy"_s)).value(u"disable_manual_trigger"_s).toBool(), true);
        const auto wrong = parsePipeline(pipelineWith("- name: a\n  disable_manual_trigger: sometimes\n"
                                                      "  plan: [{get: repo}]\n"));
        QVERIFY(!wrong);
        QCOMPARE(wrong.error().where, u"jobs[0].disable_manual_trigger"_s);
    }
};

QTEST_GUILESS_MAIN(TestPipelineKeys)
#include "tst_pipelinekeys.moc"
