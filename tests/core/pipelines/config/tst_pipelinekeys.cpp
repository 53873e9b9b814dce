// The Concourse keys of jobs and steps as Concourse documents them: max_in_flight, serial groups
// and log retention, tags, task vars and check timeouts, load_var and ((.:local)) vars, across
// matrices, YAML anchors as fly reads them, container limits as Concourse writes them, and
// var_sources with ((source:path.field)).

#include "core/pipelines/config/canonical.h"
#include "core/pipelines/config/nodereader.h"
#include "core/pipelines/config/pipelineconfig.h"
#include "tests/core/pipelines/config/pipelinefiles.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;
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
    void varSourcesAreReadAndResolvedInOrder()
    {
        // A vault source whose namespace comes from a dummy one declared after it, its token from
        // Pando's secrets; a source named "secrets" wins over the built-in secrets: prefix.
        const QByteArray file =
            "var_sources:\n"
            "- name: vault\n  type: vault\n  config:\n    url: https://vault.example.com:8200\n"
            "    namespace: ((settings:ns))\n    client_token: ((vault-token))\n"
            "- name: settings\n  type: dummy\n  config:\n    vars: {ns: platform, greeting: hi, limits: {high: 10}}\n"
            "- name: secrets\n  type: dummy\n  config: {vars: {\"db.host\": primary}}\n" +
            pipelineWith("- name: a\n  plan:\n  - get: repo\n  - task: t\n    params:\n"
                         "      PASS: ((vault:db/creds.password))\n      HELLO: \"((settings:greeting)) there\"\n"
                         "      HIGH: ((settings:limits.high))\n      HOST: ((secrets:\"db.host\"))\n"
                         "    config: {platform: linux, run: {path: env}}\n");
        // When set, every var source placeholder stays as written.
        InterpolationSources atSet;
        atSet.allowUndefined = true;
        const auto set = parsePipeline(file, atSet);
        QVERIFY2(set, qPrintable(set ? QString() : set.error().text()));
        QCOMPARE(set->varSources.size(), 3);
        QCOMPARE(set->varSources[0].type, u"vault"_s);
        const Step &task = set->jobs[0].plan[1];
        QCOMPARE(task.task.params.value(u"PASS"_s), u"((vault:db/creds.password))"_s);
        QCOMPARE(set->undefinedVars, QStringList{u"vault-token"_s});
        // A webhook is answered from Pando's secrets, never from a var source.
        const auto hook = parsePipeline("var_sources:\n- {name: secrets, type: dummy, config: {vars: {h: x}}}\n" +
                                            pipelineWith("- name: a\n  plan: [{get: repo}]\n",
                                                         "- name: repo\n  type: git\n  webhook_token: ((secrets:h))\n"),
                                        atSet);
        QVERIFY(!hook);
        QCOMPARE(hook.error().where, u"resources[0].webhook_token"_s);

        // When a run reads it, the dummy sources are read by the parser, the vault one through the
        // reader, with its config resolved first.
        InterpolationSources atRun;
        atRun.secrets = [](const QString &name) -> std::optional<QString> {
            return name == u"vault-token" ? std::optional<QString>(u"t0ken-from-store"_s) : std::nullopt;
        };
        QStringList masked;
        atRun.substituted = [&masked](const QString &value) {
            masked << value;
        };
        QJsonObject seenConfig;
        atRun.readVarSource = [&seenConfig](const VarSourceConfig &source,
                                            const QString &path) -> Result<std::optional<detail::DocNode>> {
            seenConfig = internal::toJsonValue(source.config).toObject();
            if (path != u"db/creds")
                return std::optional<detail::DocNode>();
            auto value = detail::readYaml("{password: v4ult-pa55}");
            return std::optional<detail::DocNode>(*value);
        };
        const auto run = parsePipeline(file, atRun);
        QVERIFY2(run, qPrintable(run ? QString() : run.error().text()));
        const Step &ran = run->jobs[0].plan[1];
        QCOMPARE(ran.task.params.value(u"PASS"_s), u"v4ult-pa55"_s);
        QCOMPARE(ran.task.params.value(u"HELLO"_s), u"hi there"_s);
        QCOMPARE(ran.task.params.value(u"HIGH"_s), u"10"_s);
        QCOMPARE(ran.task.params.value(u"HOST"_s), u"primary"_s);
        QCOMPARE(seenConfig.value(u"namespace"_s).toString(), u"platform"_s);
        QCOMPARE(seenConfig.value(u"client_token"_s).toString(), u"t0ken-from-store"_s);
        // A credential manager's values are masked; a dummy source's are in the file for all to read.
        QVERIFY(masked.contains(u"v4ult-pa55"_s));
        QVERIFY(!masked.contains(u"hi"_s));

        // A var the source lacks, and a source that cannot be asked, say which and where.
        const QByteArray lacking = file;
        auto missing = parsePipeline(QByteArray(lacking).replace("db/creds.password", "db/other.password"), atRun);
        QVERIFY(!missing);
        QCOMPARE(missing.error().where, u"jobs[0].plan[1].params.PASS"_s);
        QVERIFY2(missing.error().message.contains(u"var \"db/other\" is not in var source \"vault\" (vault)"_s),
                 qPrintable(missing.error().text()));
        InterpolationSources down = atRun;
        down.readVarSource = [](const VarSourceConfig &, const QString &) -> Result<std::optional<detail::DocNode>> {
            return fail(ErrorCode::Unavailable, u"Vault answered HTTP 503"_s);
        };
        auto unavailable = parsePipeline(file, down);
        QVERIFY(!unavailable);
        QCOMPARE(unavailable.error().code, ErrorCode::Unavailable);
        QCOMPARE(unavailable.error().where, u"jobs[0].plan[1].params.PASS"_s);
        QVERIFY2(unavailable.error().message.contains(
                     u"reading \"((vault:db/creds.password))\" from var source \"vault\": Vault answered HTTP 503"_s),
                 qPrintable(unavailable.error().text()));
    }

    void setPipelineAsConcourseWritesIt()
    {
        const auto parsed = parsePipeline(
            pipelineWith("- name: a\n  plan:\n  - get: repo\n  - set_pipeline: self\n    file: repo/ci/self.yml\n"
                         "  - set_pipeline: app-((.:region))\n    file: repo/ci/app.yml\n"
                         "    across: [{var: region, values: [eu, us]}]\n"
                         "    var_files: [repo/ci/common.yml, repo/ci/((.:region)).yml]\n    vars: {replicas: 2}\n"));
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        const Step &self = parsed->jobs[0].plan[1];
        QCOMPARE(self.kind, StepKind::SetPipeline);
        QVERIFY(self.setPipeline.self);
        QCOMPARE(self.setPipeline.file, u"repo/ci/self.yml"_s);
        const Step &app = parsed->jobs[0].plan[2];
        QCOMPARE(app.name, u"app-((.:region))"_s);
        QCOMPARE(app.setPipeline.varFiles, (QStringList{u"repo/ci/common.yml"_s, u"repo/ci/((.:region)).yml"_s}));
        QVERIFY(app.setPipeline.vars);
        QCOMPARE(app.across.size(), size_t(1));

        const auto refused = [](const QByteArray &step) {
            return parsePipeline(pipelineWith("- name: a\n  plan:\n  - get: repo\n" + step));
        };
        // instance_vars: read as a mapping (the instance is named when the step runs), never with self.
        const auto instance = refused("  - set_pipeline: app\n    file: repo/p.yml\n    instance_vars: {branch: x}\n");
        QVERIFY2(instance, qPrintable(instance ? QString() : instance.error().text()));
        QVERIFY(instance->jobs[0].plan[1].setPipeline.instanceVars);
        const auto instanceList = refused("  - set_pipeline: app\n    file: repo/p.yml\n    instance_vars: [x]\n");
        QVERIFY(!instanceList);
        QCOMPARE(instanceList.error().where, u"jobs[0].plan[1].instance_vars"_s);
        const auto selfInstance =
            refused("  - set_pipeline: self\n    file: repo/p.yml\n    instance_vars: {branch: x}\n");
        QVERIFY(!selfInstance);
        QCOMPARE(selfInstance.error().where, u"jobs[0].plan[1].instance_vars"_s);
        const auto team = refused("  - set_pipeline: app\n    file: repo/p.yml\n    team: other\n");
        QVERIFY(!team);
        QCOMPARE(team.error().where, u"jobs[0].plan[1].team"_s);
        const auto elsewhere = refused("  - set_pipeline: app\n    file: nowhere/p.yml\n");
        QVERIFY(!elsewhere);
        QVERIFY2(elsewhere.error().message.contains(u"which no earlier step provides"_s),
                 qPrintable(elsewhere.error().text()));
        const auto badVars = refused("  - set_pipeline: app\n    file: repo/p.yml\n    vars: [a]\n");
        QVERIFY(!badVars);
        QCOMPARE(badVars.error().where, u"jobs[0].plan[1].vars"_s);
        const auto badName = refused("  - set_pipeline: ../app\n    file: repo/p.yml\n");
        QVERIFY(!badName);
    }

    void varFlagsGoOverTheVarsFile()
    {
        const QList<VarFlag> flags{{u"branch"_s, u"main"_s, false}, {u"db.host"_s, u"primary"_s, false},
                                   {u"port"_s, u"8080"_s, false},   {u"tags"_s, u"[a, b]"_s, true},
                                   {u"db.port"_s, u"5432"_s, true}, {u"branch"_s, u"release"_s, false}};
        auto merged = withVarFlags("branch: dev\ndb: {host: old, user: app}\nkept: yes-it-is\n", flags);
        QVERIFY2(merged, qPrintable(merged ? QString() : merged.error().text()));
        InterpolationSources sources;
        sources.vars = *readVarsFile(*merged);
        const auto ok = parsePipeline(pipelineWith("- name: a\n  plan:\n  - get: repo\n    params:\n"
                                                   "      B: ((branch))\n      H: ((db.host))\n      U: ((db.user))\n"
                                                   "      P: ((port))\n      DP: ((db.port))\n      K: ((kept))\n"
                                                   "      T: ((tags))\n"),
                                      sources);
        QVERIFY2(ok, qPrintable(ok ? QString() : ok.error().text()));
        const Step &get = ok->jobs[0].plan[0];
        // The later flag wins; a dotted name sets one field and keeps the others.
        QCOMPARE(get.get.params.value(u"B"_s).toString(), u"release"_s);
        QCOMPARE(get.get.params.value(u"H"_s).toString(), u"primary"_s);
        QCOMPARE(get.get.params.value(u"U"_s).toString(), u"app"_s);
        QCOMPARE(get.get.params.value(u"K"_s).toString(), u"yes-it-is"_s);
        // -v gives text, -y a typed value.
        QVERIFY(get.get.params.value(u"P"_s).isString());
        QVERIFY(get.get.params.value(u"DP"_s).isDouble());
        QCOMPARE(get.get.params.value(u"T"_s).toArray().size(), 2);
        // Without flags the file is kept as written.
        QCOMPARE(*withVarFlags("a: 1 # note\n", {}), QByteArray("a: 1 # note\n"));

        const auto bad = withVarFlags({}, {{u"a..b"_s, u"x"_s, false}});
        QVERIFY(!bad);
        QCOMPARE(bad.error().where, u"--var a..b"_s);
        const auto badYaml = withVarFlags({}, {{u"x"_s, u"[a"_s, true}});
        QVERIFY(!badYaml);
        QVERIFY2(badYaml.error().text().contains(u"--yaml-var x"_s), qPrintable(badYaml.error().text()));
        const auto notMap = withVarFlags("a: text\n", {{u"a.b"_s, u"x"_s, false}});
        QVERIFY(!notMap);
        QVERIFY2(notMap.error().message.contains(u"a is not a mapping"_s), qPrintable(notMap.error().text()));
    }

    void varSourceMistakes_data()
    {
        QTest::addColumn<QByteArray>("sources");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("message");
        QTest::newRow("unsupported type") << QByteArray("- {name: s, type: ssm, config: {region: x}}\n")
                                          << u"var_sources[0].type"_s << u"var source type \"ssm\" is not supported"_s;
        QTest::newRow("twice") << QByteArray("- {name: s, type: dummy, config: {vars: {}}}\n"
                                             "- {name: s, type: dummy, config: {vars: {}}}\n")
                               << u"var_sources[1].name"_s << u"already declared at var_sources[0]"_s;
        QTest::newRow("cycle") << QByteArray("- {name: a, type: vault, config: {url: ((b:u)), client_token: t}}\n"
                                             "- {name: b, type: vault, config: {url: ((a:u)), client_token: t}}\n")
                               << u"var_sources[0].config"_s
                               << u"var sources a, b read their configs from each other"_s;
        QTest::newRow("vault without url") << QByteArray("- {name: v, type: vault, config: {client_token: t}}\n")
                                           << u"var_sources[0].config.url"_s << u"needs the url"_s;
        QTest::newRow("vault typo") << QByteArray(
                                           "- {name: v, type: vault, config: {url: https://v, clienttoken: t}}\n")
                                    << u"var_sources[0].config"_s << u"did you mean \"client_token\""_s;
        QTest::newRow("vault without a way in") << QByteArray("- {name: v, type: vault, config: {url: https://v}}\n")
                                                << u"var_sources[0].config"_s << u"needs client_token"_s;
        QTest::newRow("dummy without vars") << QByteArray("- {name: d, type: dummy, config: {}}\n")
                                            << u"var_sources[0].config.vars"_s << u"needs vars"_s;
        QTest::newRow("not a list") << QByteArray("  name: d\n") << u"var_sources"_s << u"a list of var sources"_s;
    }

    void varSourceMistakes()
    {
        QFETCH(QByteArray, sources);
        QFETCH(QString, where);
        QFETCH(QString, message);
        InterpolationSources atSet;
        atSet.allowUndefined = true;
        const auto parsed =
            parsePipeline("var_sources:\n" + sources + pipelineWith("- name: a\n  plan: [{get: repo}]\n"), atSet);
        QVERIFY(!parsed);
        QCOMPARE(parsed.error().where, where);
        QVERIFY2(parsed.error().message.contains(message), qPrintable(parsed.error().text()));
        // A placeholder naming a source nobody declared.
        const auto unknown =
            parsePipeline(pipelineWith("- name: a\n  plan:\n  - get: repo\n    params: {x: ((nowhere:y))}\n"), atSet);
        QVERIFY(!unknown);
        QVERIFY2(unknown.error().hint.contains(u"declare it under var_sources"_s), qPrintable(unknown.error().hint));
    }

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
