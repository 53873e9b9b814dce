// Two installs on one Docker engine, each opened as pandod opens one (its data directory chooses
// its install id): both deploy an app of the same name, both restart, the reconciler runs on
// both, and each keeps its app serving and every image it built. With one shared id each took
// the other's containers and images for leftovers and deleted them. And a tag one install
// removes by name (its failed deploy's) that names the other install's image leaves that image be.

#include "core/deploy/services.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/support/component.h"
#include "tests/support/vocabtesting.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::test;

class TestInstallsDocker : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void twoInstallsKeepTheirAppsAndImages();
    void aTagOfTheSameNameIsNotTaken();

private:
    struct Side {
        std::unique_ptr<EngineFixture> fx;
        QString repo;
        QByteArray content;
        QString deployId;
        QString imageId;
    };
    bool start(Side &side);
    void deploy(Side &side);
    void passes(Side &side);
    void verifyServesAndKeeps(Side &side);

    Side m_a;
    Side m_b;
};

void TestInstallsDocker::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), u"Docker Engine: "_s + why);
    PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), u"git"_s);
    auto base = DockerHarness::ensureBaseImage();
    QVERIFY2(base, qPrintable(base ? QString() : base.error().text()));
    for (Side *side : {&m_a, &m_b}) {
        side->fx = std::make_unique<EngineFixture>();
        side->content = side == &m_a ? "install A" : "install B";
        side->repo = side->fx->git().createRepository(u"hello"_s);
        QVERIFY(!side->repo.isEmpty());
        QVERIFY(!side->fx->git().commit(u"hello"_s, u"main"_s, helloApp(side->content)).isEmpty());
    }
}

bool TestInstallsDocker::start(Side &side)
{
    const QString dataDir = side.fx->dataDir();
    // No id given: the data directory's own, as pandod and the desktop run.
    return side.fx->start(dataDir, [](core::EngineOptions &o) { o.installId.clear(); });
}

void TestInstallsDocker::deploy(Side &side)
{
    auto created = side.fx->engine().createApp(helloSpec(u"hello"_s, side.repo), core::Actor{});
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    auto queued = side.fx->engine().deploy(u"hello"_s, {}, core::Actor{});
    QVERIFY2(queued, qPrintable(queued ? QString() : queued.error().text()));
    const core::DeployView view = side.fx->waitDeploy(queued->id);
    QVERIFY2(view.record.status == core::DeployStatus::Succeeded,
             qPrintable(core::toString(view.record.status) + u": "_s + view.record.error));
    side.deployId = view.record.id;
    side.imageId = view.record.imageId;
    QVERIFY(!side.imageId.isEmpty());
}

void TestInstallsDocker::passes(Side &side)
{
    for (int i = 0; i < 3; ++i) {
        auto changes = side.fx->engine().reconcileOnce();
        QVERIFY2(changes, qPrintable(changes ? QString() : changes.error().text()));
        QVERIFY2(changes->isEmpty(), qPrintable(changes->join(u"; "_s)));
    }
}

void TestInstallsDocker::verifyServesAndKeeps(Side &side)
{
    auto app = side.fx->engine().app(u"hello"_s);
    QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
    QCOMPARE(app->status, core::AppStatus::Running);
    QCOMPARE(app->record.currentDeploy, side.deployId);
    HttpAnswer answer;
    for (int attempt = 0; attempt < 50 && answer.status != 200; ++attempt) {
        answer = httpGet(QUrl(app->url));
        if (answer.status != 200)
            QTest::qWait(100);
    }
    QCOMPARE(answer.status, 200);
    QVERIFY2(answer.body.contains(side.content), answer.body.constData());

    auto containers = side.fx->docker().containers(side.fx->installLabels(u"hello"_s, side.deployId));
    QVERIFY(containers);
    QCOMPARE(containers->size(), 1);
    QCOMPARE(containers->first().state, u"running"_s);
    auto images = side.fx->docker().images(side.fx->installLabels());
    QVERIFY(images);
    bool kept = false;
    for (const adapters::ImageInfo &image : std::as_const(*images))
        kept = kept || (image.id == side.imageId && image.tags.contains(core::imageTag(u"hello"_s, side.deployId)));
    QVERIFY2(kept, qPrintable(u"image %1 of install %2 is gone"_s.arg(side.imageId, side.fx->installId())));
}

void TestInstallsDocker::twoInstallsKeepTheirAppsAndImages()
{
    QVERIFY(start(m_a));
    QVERIFY(start(m_b));
    QVERIFY(m_a.fx->installId() != m_b.fx->installId());
    QVERIFY(m_a.fx->installId() != u"default"_s);

    deploy(m_a);
    if (QTest::currentTestFailed())
        return;
    // B's first reconciler pass (at start) and its deploy's clean-up ran while A served.
    passes(m_b);
    deploy(m_b);
    if (QTest::currentTestFailed())
        return;
    passes(m_a);
    passes(m_b);
    verifyServesAndKeeps(m_a);
    verifyServesAndKeeps(m_b);

    // Both restart, one after the other, each starting while the other runs.
    m_a.fx->stop();
    passes(m_b);
    QVERIFY(start(m_a));
    passes(m_a);
    m_b.fx->stop();
    passes(m_a);
    QVERIFY(start(m_b));
    passes(m_b);
    passes(m_a);
    verifyServesAndKeeps(m_a);
    verifyServesAndKeeps(m_b);
}

void TestInstallsDocker::aTagOfTheSameNameIsNotTaken()
{
    if (!m_a.fx || !m_b.fx)
        QSKIP("needs both installs from the test before");
    // An app of A whose new version never becomes healthy: the deploy fails, and its clean-up
    // removes the image by the deploy's tag.
    GitFiles sleeper;
    sleeper.insert(u"Dockerfile"_s, GitFile{"FROM pando/busybox:latest\nCMD [\"sleep\", \"600\"]\n"});
    const QString repo = m_a.fx->git().createRepository(u"sleeper"_s);
    QVERIFY(!repo.isEmpty());
    QVERIFY(!m_a.fx->git().commit(u"sleeper"_s, u"main"_s, sleeper).isEmpty());
    const QByteArray spec = u"name: sleeper\nsource:\n  repo: %1\n  ref: main\nrun:\n  port: 8080\n"
                            "health:\n  path: /\n  timeout: 8s\n"_s.arg(repo)
                                .toUtf8();
    QVERIFY(m_a.fx->engine().createApp(spec, core::Actor{}));
    auto queued = m_a.fx->engine().deploy(u"sleeper"_s, {}, core::Actor{});
    QVERIFY2(queued, qPrintable(queued ? QString() : queued.error().text()));
    const QString tag = core::imageTag(u"sleeper"_s, queued->id);
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            auto view = m_a.fx->engine().deployView(queued->id);
            if (!view)
                return false;
            return std::any_of(view->steps.cbegin(), view->steps.cend(), [](const core::StepRecord &step) {
                return step.name == u"health"_s && step.status == core::DeployStepStatus::Running;
            });
        }(),
        120000);

    // Meanwhile B makes an image under the same tag (the tag moves to it): B's only tag on it.
    QTemporaryDir context;
    QVERIFY(context.isValid());
    QFile dockerfile(QDir(context.path()).filePath(u"Dockerfile"_s));
    QVERIFY(dockerfile.open(QIODevice::WriteOnly));
    dockerfile.write("FROM pando/busybox:latest\nCMD [\"true\"]\n");
    dockerfile.close();
    adapters::BuildRequest request;
    request.contextDir = context.path();
    request.dockerfile = u"Dockerfile"_s;
    request.tag = tag;
    request.labels = m_b.fx->installLabels();
    auto theirs = m_b.fx->docker().build(request, CancelToken(), {});
    QVERIFY2(theirs, qPrintable(theirs ? QString() : theirs.error().text()));

    const core::DeployView failed = m_a.fx->waitDeploy(queued->id);
    QCOMPARE(failed.record.status, core::DeployStatus::Failed);
    auto images = m_b.fx->docker().images(m_b.fx->installLabels());
    QVERIFY(images);
    const bool kept = std::any_of(images->cbegin(), images->cend(), [&](const adapters::ImageInfo &image) {
        return image.id == *theirs && image.tags.contains(tag);
    });
    QVERIFY2(kept, qPrintable(u"install %1 removed %2, install %3's image"_s.arg(m_a.fx->installId(), tag,
                                                                                 m_b.fx->installId())));
    // Both installs still serve what they served.
    verifyServesAndKeeps(m_a);
    verifyServesAndKeeps(m_b);
    discardResult(m_b.fx->docker().removeImage(*theirs), "clean-up: a leftover shows in the next run");
    QVERIFY(m_a.fx->engine().removeApp(u"sleeper"_s, core::Actor{}));
}

QTEST_GUILESS_MAIN(TestInstallsDocker)
#include "tst_installsdocker.moc"
