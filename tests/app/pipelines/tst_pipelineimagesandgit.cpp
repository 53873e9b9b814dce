// Pipelines whose resources are real services, run end to end on Docker as pandod wires them:
// a git repository a put tags (the task reading the get's .git), and a registry a task's image
// comes from and an image is pushed to.

#include "adapters/kit/dockerapi/dockerimages.h"
#include "adapters/kit/registrykit/registryclient.h"
#include "tests/app/pipelines/pipelinetrustfixture.h"
#include "tests/support/registry.h"

#include <QJsonArray>
#include <QJsonDocument>

using namespace pando;
using namespace pando::core;
using namespace pando::core::pipelines;
using namespace pando::test;

class TestPipelineImagesAndGit : public PipelineTrustFixture {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { startEngine(); }
    void cleanupTestCase() { stopEngine(); }
    void aReleaseIsTaggedInGit();
    void aTaskRunsInAnImageFromARegistry();
};

// Concourse's tagging of a release: a get of the repository (whose .git the task reads), a task
// that works out the version, and a put that tags the commit it got, leaving the branch alone.
void TestPipelineImagesAndGit::aReleaseIsTaggedInGit()
{
    const QString repo = m_fx->git().createRepository(QStringLiteral("tagged"));
    const QString commit = m_fx->git().commit(QStringLiteral("tagged"), QStringLiteral("main"),
                                              {{QStringLiteral("README"), GitFile{"tag me\n"}}}, QStringLiteral("one"));
    QVERIFY(!commit.isEmpty());
    const QByteArray config =
        "resources:\n  - name: repo\n    type: git\n    source: { uri: \"" + repo.toUtf8() +
        "\", branch: main }\n"
        "jobs:\n  - name: release\n    plan:\n      - get: repo\n"
        "      - task: version\n        config: {platform: linux, " +
        Image +
        ", inputs: [{name: repo}], outputs: [{name: version}], run: {path: sh, args: [\"-c\", \"echo built "
        "$(cat repo/.git/ref) short $(cat repo/.git/short_ref); echo 2.0.0 > version/number\"]}}\n"
        "      - put: repo\n        params: {repository: repo, tag: version/number, tag_prefix: v, only_tag: true}\n";
    setPipeline(QStringLiteral("tagging"), config);
    const RunRecord run = runJob(QStringLiteral("tagging"), QStringLiteral("release"));
    const QString output = outputOf(run.id).join(u'\n');
    QVERIFY2(run.status == core::RunStatus::Succeeded, qPrintable(run.error + output));
    QVERIFY2(output.contains(QStringLiteral("built %1 short %2").arg(commit, commit.left(7))), qPrintable(output));
    const QString bare = m_fx->git().barePath(QStringLiteral("tagged"));
    QCOMPARE(m_fx->git().git({QStringLiteral("rev-parse"), QStringLiteral("v2.0.0")}, bare).value_or(QString()),
             commit);
    QCOMPARE(m_fx->git().git({QStringLiteral("rev-parse"), QStringLiteral("main")}, bare).value_or(QString()), commit);
}

// Concourse's way to run a task in an image from a registry: a registry-image get, then the
// task's image: naming it; and the image fetched as a tarball pushed on under another name.
void TestPipelineImagesAndGit::aTaskRunsInAnImageFromARegistry()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(ImageRegistry::available(&why), why);
    ImageRegistry registry;
    QVERIFY2(registry.start(), qPrintable(registry.error()));
    const adapters::dockerapi::DockerClient &docker = m_fx->docker().client();
    const QString tools = registry.host() + QStringLiteral("/team/tools");
    QVERIFY(docker.post(QStringLiteral("/images/%1/tag").arg(DockerHarness::baseImage()),
                        {{QStringLiteral("repo"), tools}, {QStringLiteral("tag"), QStringLiteral("1")}}));
    adapters::dockerapi::Request push;
    push.method = "POST";
    push.path = QStringLiteral("/images/%1/push").arg(tools);
    push.addQuery(QStringLiteral("tag"), QStringLiteral("1"));
    push.headers.append({"X-Registry-Auth", QByteArray("{}").toBase64()});
    push.timeoutMs = 60000;
    auto pushed = docker.call(push);
    QVERIFY2(pushed && !pushed->body.contains("\"error\""), pushed ? pushed->body.constData() : "push failed");
    QVERIFY(adapters::dockerapi::removeImage(docker, tools + QStringLiteral(":1")));

    const QByteArray config =
        "resources:\n"
        "  - name: tools\n    type: registry-image\n    source: {repository: " +
        tools.toUtf8() +
        ", tag: \"1\"}\n"
        "  - name: shipped\n    type: registry-image\n    source: {repository: " +
        registry.host().toUtf8() +
        "/team/shipped}\n"
        "jobs:\n  - name: build\n    plan:\n"
        "      - get: tools\n"
        "      - task: inside\n        image: tools\n"
        "        config: {platform: linux, params: {MARKER: from-the-registry}, run: {path: sh, args: [\"-c\", "
        "\"echo ran $MARKER; test -x /bin/busybox\"]}}\n"
        "      - get: tarball\n        resource: tools\n        params: {format: oci}\n"
        "      - put: shipped\n        params: {image: tarball/image.tar, version: 1.0.0}\n";
    setPipeline(QStringLiteral("images"), config);
    const RunRecord run = runJob(QStringLiteral("images"), QStringLiteral("build"), Actor{}, 120000);
    const QString output = outputOf(run.id).join(u'\n');
    QVERIFY2(run.status == core::RunStatus::Succeeded, qPrintable(run.error + output));
    QVERIFY2(output.contains(QLatin1String("ran from-the-registry")), qPrintable(output));

    // The same image under its new name and the version's tag.
    adapters::registrykit::RegistryClient client(*adapters::registrykit::parseImageName(tools, {}), {});
    auto original = client.manifest(QStringLiteral("1"), CancelToken());
    QVERIFY(original);
    adapters::registrykit::RegistryClient shipped(
        *adapters::registrykit::parseImageName(registry.host() + QStringLiteral("/team/shipped"), {}), {});
    auto copy = shipped.manifest(QStringLiteral("1.0.0"), CancelToken());
    QVERIFY2(copy, qPrintable(copy ? QString() : copy.error().text()));
    QCOMPARE(copy->digest, original->digest);

    // What the task ran in was made once, under a name of its content, with Pando's labels.
    auto images = docker.get(
        QStringLiteral("/images/json"),
        {{QStringLiteral("filters"),
          QStringLiteral(R"({"label":["dev.pando.kind=artifact-image"],"reference":["pando/artifact-image"]})")}});
    QVERIFY(images);
    const QJsonArray made = images->json().array();
    QCOMPARE(made.size(), 1);
    QVERIFY(made.first()
                .toObject()
                .value(QLatin1String("RepoTags"))
                .toArray()
                .first()
                .toString()
                .startsWith(QLatin1String("pando/artifact-image:")));
    QVERIFY(
        adapters::dockerapi::removeImage(docker, made.first().toObject().value(QLatin1String("Id")).toString(), true));
}

QTEST_GUILESS_MAIN(TestPipelineImagesAndGit)
#include "tst_pipelineimagesandgit.moc"
