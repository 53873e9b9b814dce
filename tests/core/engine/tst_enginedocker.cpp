// The deploy pipeline end to end on real parts: git repositories, the Docker engine, the
// loopback router and SQLite. What users rely on: a deploy serves, a redeploy drops no
// request, a failed build or health check keeps the old version, crashes are healed, nothing
// is left behind.

#include "core/deploy/services.h"
#include "enginefixture.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"
#include "tests/support/vocabtesting.h"

#include <QScopeGuard>
#include <QTcpServer>
#include <QTest>
#include <QUuid>
#include <algorithm>
#include <atomic>
#include <thread>

using namespace pando;
using namespace pando::test;

class TestEngineDocker : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void deployServes();
    void redeployDropsNoRequest();
    void failedBuildKeepsOldVersion();
    void failedHealthKeepsOldVersion();
    void missingRefIsRefusedUpFront();
    void takenPortIsRefused();
    void crashedContainerIsRestarted();
    void vanishedContainerIsRecreated();
    void portComesFromTheImage();
    void aRepositoryWithoutADockerfileIsBuiltForItsStack();
    void unownedContainerIsRemoved();
    void deploysOfOneAppAreSerialised();
    void rollbackGoesBackAVersion();
    void restartRestoresRouteAndSettlesWork();
    void isolatedAppServesAndTakesItsNetwork();
    void buildCacheIsTheLatestBuildsAndGoesWithTheApp();
    void removalLeavesNothingBehind();

private:
    QString deployAndWait(const QString &app, const QString &ref = {});
    // The images builds left, as GET /capacity counts them on Docker; -1 when it cannot say.
    int buildCacheImages();
    QUrl appUrl(const QString &app);

    std::unique_ptr<EngineFixture> m_fx;
    QString m_repo;
};

void TestEngineDocker::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), QStringLiteral("Docker Engine: ") + why);
    PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), QStringLiteral("git"));
    auto base = DockerHarness::ensureBaseImage();
    QVERIFY2(base, qPrintable(base ? QString() : base.error().text()));
    m_fx = std::make_unique<EngineFixture>();
    QVERIFY(m_fx->git().isValid());
    m_repo = m_fx->git().createRepository(QStringLiteral("hello"));
    QVERIFY(!m_repo.isEmpty());
    QVERIFY(!m_fx->git().commit(QStringLiteral("hello"), QStringLiteral("main"), helloApp("v1")).isEmpty());
    QVERIFY(m_fx->start());
}

void TestEngineDocker::cleanupTestCase()
{
    m_fx.reset();
}

int TestEngineDocker::buildCacheImages()
{
    auto rooms = m_fx->engine().capacity();
    if (!rooms)
        return -1;
    for (const core::capacity::RuntimeCapacity &room : std::as_const(*rooms))
        if (room.room.kind == QLatin1String("docker"))
            return room.buildCacheImages;
    return -1;
}

QString TestEngineDocker::deployAndWait(const QString &app, const QString &ref)
{
    auto deploy = m_fx->engine().deploy(app, ref, core::Actor{});
    if (!deploy) {
        qWarning("deploy refused: %s", qPrintable(deploy.error().text()));
        return {};
    }
    const core::DeployView view = m_fx->waitDeploy(deploy->id);
    return view.record.id;
}

QUrl TestEngineDocker::appUrl(const QString &app)
{
    auto view = m_fx->engine().app(app);
    return view ? QUrl(view->url) : QUrl();
}

void TestEngineDocker::deployServes()
{
    auto created = m_fx->engine().createApp(helloSpec(QStringLiteral("hello"), m_repo), core::Actor{});
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    QVERIFY(created->record.routePort > 0);
    QCOMPARE(created->status, core::AppStatus::New);

    const QString id = deployAndWait(QStringLiteral("hello"));
    const core::DeployView view = m_fx->waitRetired(id);
    QVERIFY2(view.record.status == core::DeployStatus::Succeeded, qPrintable(view.record.error));
    QCOMPARE(view.record.commit.size(), 40);
    QStringList names;
    for (const auto &step : view.steps) {
        names << step.name;
        QCOMPARE(step.status, core::DeployStepStatus::Succeeded);
        QVERIFY(step.finishedMs >= step.startedMs && step.startedMs > 0);
    }
    QCOMPARE(names, (QStringList{QStringLiteral("fetch"), QStringLiteral("detect"), QStringLiteral("plan"),
                                 QStringLiteral("build"), QStringLiteral("start"), QStringLiteral("health"),
                                 QStringLiteral("switch"), QStringLiteral("retire")}));

    const HttpAnswer answer = httpGet(appUrl(QStringLiteral("hello")));
    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.body.trimmed(), QByteArray("v1"));
    auto app = m_fx->engine().app(QStringLiteral("hello"));
    QCOMPARE(app->status, core::AppStatus::Running);
    QCOMPARE(app->record.currentDeploy, id);

    // The container carries the labels that name its app and deploy.
    auto containers = m_fx->docker().containers(m_fx->installLabels(QStringLiteral("hello"), id));
    QVERIFY(containers);
    QCOMPARE(containers->size(), 1);
}

void TestEngineDocker::redeployDropsNoRequest()
{
    const QUrl url = appUrl(QStringLiteral("hello"));
    QVERIFY(!m_fx->git().commit(QStringLiteral("hello"), QStringLiteral("main"), helloApp("v2")).isEmpty());

    std::atomic_bool stop = false;
    std::atomic_int ok = 0;
    std::atomic_int failed = 0;
    QString firstFailure;
    std::thread poller([&] {
        while (!stop) {
            const HttpAnswer a = httpGet(url, 5000);
            if (a.status == 200) {
                ++ok;
            } else {
                if (failed++ == 0)
                    firstFailure = a.error.isEmpty() ? QString::number(a.status) : a.error;
            }
        }
    });
    const QString id = deployAndWait(QStringLiteral("hello"));
    m_fx->waitRetired(id); // keep polling past the retirement of the old version
    stop = true;
    poller.join();

    auto view = m_fx->engine().deployView(id);
    QVERIFY2(view->record.status == core::DeployStatus::Succeeded, qPrintable(view->record.error));
    QVERIFY2(
        failed == 0,
        qPrintable(
            QStringLiteral("%1 of %2 requests failed, first: %3").arg(int(failed)).arg(ok + failed).arg(firstFailure)));
    QVERIFY(ok > 10);
    QCOMPARE(httpGet(url).body.trimmed(), QByteArray("v2"));
    // Only the new version runs once the old one is retired.
    QTRY_COMPARE_WITH_TIMEOUT(m_fx->docker().containers(m_fx->installLabels(QStringLiteral("hello")))->size(), 1,
                              15000);
}

void TestEngineDocker::failedBuildKeepsOldVersion()
{
    const QUrl url = appUrl(QStringLiteral("hello"));
    QVERIFY(!m_fx->git()
                 .commit(QStringLiteral("hello"), QStringLiteral("broken-build"),
                         // Content of its own, so that the COPY is no earlier run's cached step.
                         helloApp("v3 " + QUuid::createUuid().toByteArray(),
                                  "RUN echo compiling the broken part && false\n"))
                 .isEmpty());
    const QString id = deployAndWait(QStringLiteral("hello"), QStringLiteral("broken-build"));
    auto view = m_fx->engine().deployView(id);
    QCOMPARE(view->record.status, core::DeployStatus::Failed);
    QCOMPARE(view->record.failedStep, QStringLiteral("build"));
    QVERIFY2(!view->record.error.isEmpty(), "a failed deploy says why");
    QCOMPARE(view->steps.last().name, QStringLiteral("build"));
    QCOMPARE(view->steps.last().status, core::DeployStepStatus::Failed);
    // The build's own output is kept with the step: the RUN line's echo, as Docker printed it.
    auto log = m_fx->engine().deployLog(id, view->steps.last().seq, 0, 5000);
    QVERIFY2(log, qPrintable(log ? QString() : log.error().text()));
    QStringList text;
    for (const core::StepLogLine &line : std::as_const(*log))
        text << line.text;
    QVERIFY2(text.join(u'\n').contains(QLatin1String("compiling the broken part")), qPrintable(text.join(u'\n')));

    QCOMPARE(httpGet(url).body.trimmed(), QByteArray("v2"));
    QCOMPARE(m_fx->docker().containers(m_fx->installLabels(QStringLiteral("hello"), id))->size(), 0);
    QCOMPARE(m_fx->docker().imageId(core::imageTag(QStringLiteral("hello"), id)).error().code, ErrorCode::NotFound);
    // BuildKit keeps the step that finished (COPY www) in its own cache: no image is left.
    QCOMPARE(buildCacheImages(), 0);
}

void TestEngineDocker::failedHealthKeepsOldVersion()
{
    const QUrl url = appUrl(QStringLiteral("hello"));
    GitFiles files = helloApp("v4");
    files[QStringLiteral("Dockerfile")].content =
        "FROM pando/busybox:latest\nCMD [\"/bin/sh\", \"-c\", \"echo giving up; exit 3\"]\n";
    QVERIFY(!m_fx->git().commit(QStringLiteral("hello"), QStringLiteral("broken-health"), files).isEmpty());
    const QString id = deployAndWait(QStringLiteral("hello"), QStringLiteral("broken-health"));
    auto view = m_fx->engine().deployView(id);
    QCOMPARE(view->record.status, core::DeployStatus::Failed);
    QCOMPARE(view->record.failedStep, QStringLiteral("health"));
    QVERIFY2(view->record.error.contains(QLatin1String("exit code 3")), qPrintable(view->record.error));
    QVERIFY2(view->record.error.contains(QLatin1String("giving up")), qPrintable(view->record.error));
    // The container's last words are the health step's output.
    auto log = m_fx->engine().deployLog(id, view->steps.last().seq, 0, 5000);
    QVERIFY2(log && !log->isEmpty() && log->last().text.contains(QLatin1String("giving up")),
             qPrintable(log ? QString::number(log->size()) : log.error().text()));
    QCOMPARE(httpGet(url).body.trimmed(), QByteArray("v2"));
    QCOMPARE(m_fx->docker().containers(m_fx->installLabels(QStringLiteral("hello"), id))->size(), 0);
}

void TestEngineDocker::missingRefIsRefusedUpFront()
{
    auto before = m_fx->engine().deploys(QStringLiteral("hello"), 100);
    auto deploy = m_fx->engine().deploy(QStringLiteral("hello"), QStringLiteral("no-such-branch"), core::Actor{});
    QVERIFY(!deploy);
    QCOMPARE(deploy.error().code, ErrorCode::NotFound);
    QVERIFY2(deploy.error().message.contains(QLatin1String("no-such-branch")), qPrintable(deploy.error().text()));
    QCOMPARE(m_fx->engine().deploys(QStringLiteral("hello"), 100)->size(), before->size());

    auto created = m_fx->engine().createApp(
        helloSpec(QStringLiteral("noref"), m_repo).replace("ref: main", "ref: nope"), core::Actor{});
    QVERIFY(!created);
    QCOMPARE(created.error().where, QStringLiteral("source.ref"));
    QCOMPARE(m_fx->engine().app(QStringLiteral("noref")).error().code, ErrorCode::NotFound);
}

void TestEngineDocker::takenPortIsRefused()
{
    QTcpServer squatter;
    QVERIFY(squatter.listen(QHostAddress::LocalHost, 0));
    const QString extra = QStringLiteral("route:\n  port: %1\n").arg(squatter.serverPort());
    auto created = m_fx->engine().createApp(helloSpec(QStringLiteral("porty"), m_repo, extra), core::Actor{});
    QVERIFY(!created);
    QCOMPARE(created.error().code, ErrorCode::Conflict);
    QCOMPARE(created.error().where, QStringLiteral("route.port"));
    QCOMPARE(m_fx->engine().app(QStringLiteral("porty")).error().code, ErrorCode::NotFound);
    QVERIFY(!m_fx->router().route(QStringLiteral("porty")));
}

void TestEngineDocker::crashedContainerIsRestarted()
{
    auto app = m_fx->engine().app(QStringLiteral("hello"));
    auto containers =
        m_fx->docker().containers(m_fx->installLabels(QStringLiteral("hello"), app->record.currentDeploy));
    QCOMPARE(containers->size(), 1);
    QVERIFY(m_fx->docker().stop(containers->first().id, 0));
    QCOMPARE(m_fx->docker().inspect(containers->first().id)->state, QStringLiteral("exited"));

    auto changes = m_fx->engine().reconcileOnce();
    QVERIFY(changes);
    QVERIFY2(changes->join(QLatin1Char('\n')).contains(QLatin1String("restarted hello")),
             qPrintable(changes->join(QLatin1Char('\n'))));
    QCOMPARE(m_fx->docker().inspect(containers->first().id)->state, QStringLiteral("running"));
    QTRY_COMPARE_WITH_TIMEOUT(httpGet(appUrl(QStringLiteral("hello"))).status, 200, 10000);
}

void TestEngineDocker::vanishedContainerIsRecreated()
{
    auto app = m_fx->engine().app(QStringLiteral("hello"));
    auto containers =
        m_fx->docker().containers(m_fx->installLabels(QStringLiteral("hello"), app->record.currentDeploy));
    QCOMPARE(containers->size(), 1);
    QVERIFY(m_fx->docker().remove(containers->first().id));
    auto changes = m_fx->engine().reconcileOnce();
    QVERIFY2(changes && changes->join(QLatin1Char('\n')).contains(QLatin1String("recreated hello")),
             qPrintable(changes ? changes->join(QLatin1Char('\n')) : changes.error().text()));
    QTRY_COMPARE_WITH_TIMEOUT(httpGet(appUrl(QStringLiteral("hello"))).body.trimmed(), QByteArray("v2"), 10000);
}

// A spec without run.port: the deploy takes the port the image exposes, tells the app in $PORT,
// and a container made again by the reconciler listens there too.
void TestEngineDocker::portComesFromTheImage()
{
    const QString repo = m_fx->git().createRepository(QStringLiteral("exposed"));
    GitFiles files;
    files.insert(QStringLiteral("Dockerfile"),
                 GitFile{"FROM pando/busybox:latest\nCOPY www /www\nEXPOSE 9090\n"
                         "CMD [\"/bin/sh\", \"-c\", \"exec /bin/httpd -f -p $PORT -h /www\"]\n"});
    files.insert(QStringLiteral("www/index.html"), GitFile{"on the exposed port\n"});
    QVERIFY(!m_fx->git().commit(QStringLiteral("exposed"), QStringLiteral("main"), files).isEmpty());
    const QByteArray spec = "name: exposed\nsource:\n  repo: " + repo.toUtf8() +
                            "\n  ref: main\nrun:\n  resources: { memory: 64Mi }\nhealth:\n  timeout: 20s\n";
    auto created = m_fx->engine().createApp(spec, core::Actor{});
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    const QString id = deployAndWait(QStringLiteral("exposed"));
    auto view = m_fx->engine().deployView(id);
    QVERIFY(view);
    QVERIFY2(view->record.status == core::DeployStatus::Succeeded, qPrintable(view->record.error));
    QCOMPARE(view->record.port, 9090);
    QCOMPARE(httpGet(appUrl(QStringLiteral("exposed"))).body.trimmed(), QByteArray("on the exposed port"));

    auto containers = m_fx->docker().containers(m_fx->installLabels(QStringLiteral("exposed"), id));
    QVERIFY(containers && containers->size() == 1);
    QVERIFY(m_fx->docker().remove(containers->first().id));
    auto changes = m_fx->engine().reconcileOnce();
    QVERIFY2(changes && changes->join(QLatin1Char('\n')).contains(QLatin1String("recreated exposed")),
             qPrintable(changes ? changes->join(QLatin1Char('\n')) : changes.error().text()));
    QTRY_COMPARE_WITH_TIMEOUT(httpGet(appUrl(QStringLiteral("exposed"))).body.trimmed(),
                              QByteArray("on the exposed port"), 10000);
    QVERIFY(m_fx->engine().removeApp(QStringLiteral("exposed"), core::Actor{}));
    QTRY_VERIFY_WITH_TIMEOUT(!m_fx->engine().app(QStringLiteral("exposed")), 60000);
}

void TestEngineDocker::aRepositoryWithoutADockerfileIsBuiltForItsStack()
{
    // A static site as people push one: no Dockerfile, an index.html at the top. The generated
    // Dockerfile starts from the local base image (build.base), the app listens on 8080.
    const QString repo = m_fx->git().createRepository(QStringLiteral("site"));
    GitFiles files;
    files.insert(QStringLiteral("index.html"), GitFile{"<h1>a site without a Dockerfile</h1>\n"});
    files.insert(QStringLiteral("about/index.html"), GitFile{"about us\n"});
    QVERIFY(!m_fx->git().commit(QStringLiteral("site"), QStringLiteral("main"), files).isEmpty());
    QByteArray spec = "name: site\nsource:\n  repo: " + repo.toUtf8() +
                      "\n  ref: main\nbuild:\n  base: pando/busybox:latest\nrun:\n  resources: { memory: 64Mi }\n"
                      "health:\n  timeout: 20s\n";
    auto created = m_fx->engine().createApp(spec, core::Actor{});
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    const QString id = deployAndWait(QStringLiteral("site"));
    auto view = m_fx->engine().deployView(id);
    QVERIFY(view);
    QVERIFY2(view->record.status == core::DeployStatus::Succeeded, qPrintable(view->record.error));
    QCOMPARE(view->record.port, 8080);
    QCOMPARE(httpGet(appUrl(QStringLiteral("site"))).body.trimmed(),
             QByteArray("<h1>a site without a Dockerfile</h1>"));
    QUrl about = appUrl(QStringLiteral("site"));
    about.setPath(QStringLiteral("/about/"));
    QCOMPARE(httpGet(about).body.trimmed(), QByteArray("about us"));
    // What was found and the Dockerfile written are kept with the deploy.
    const auto detect = std::find_if(view->steps.cbegin(), view->steps.cend(),
                                     [](const core::StepRecord &step) { return step.name == QLatin1String("detect"); });
    QVERIFY(detect != view->steps.cend());
    QCOMPARE(detect->detail, QStringLiteral("no Dockerfile: a static site (index.html, served by BusyBox httpd), built "
                                            "with a generated one"));
    auto log = m_fx->engine().deployLog(id, detect->seq, 0, 100);
    QVERIFY(log);
    QStringList lines;
    for (const core::StepLogLine &line : *log)
        lines << line.text;
    QVERIFY2(lines.contains(QStringLiteral("  FROM pando/busybox:latest")) &&
                 lines.contains(QStringLiteral("  CMD [\"httpd\", \"-f\", \"-p\", \"8080\", \"-h\", \"/www\"]")),
             qPrintable(lines.join(QLatin1Char('\n'))));

    // A Ruby app is recognised and refused at detect, saying what to add; nothing is built.
    const QString ruby = m_fx->git().createRepository(QStringLiteral("gems"));
    GitFiles rubyFiles;
    rubyFiles.insert(QStringLiteral("Gemfile"), GitFile{"source 'https://rubygems.org'\ngem 'sinatra'\n"});
    rubyFiles.insert(QStringLiteral("config.ru"), GitFile{"run Sinatra::Application\n"});
    QVERIFY(!m_fx->git().commit(QStringLiteral("gems"), QStringLiteral("main"), rubyFiles).isEmpty());
    spec = "name: gems\nsource:\n  repo: " + ruby.toUtf8() + "\n  ref: main\nrun:\n  port: 8080\n";
    QVERIFY(m_fx->engine().createApp(spec, core::Actor{}));
    view = m_fx->engine().deployView(deployAndWait(QStringLiteral("gems")));
    QVERIFY(view);
    QCOMPARE(view->record.status, core::DeployStatus::Failed);
    QVERIFY2(view->record.error.contains(QStringLiteral("this Ruby app (Gemfile) is not one Pando builds without a "
                                                        "Dockerfile")),
             qPrintable(view->record.error));
    QCOMPARE(view->steps.last().name, QStringLiteral("detect"));
    for (const QString &app : {QStringLiteral("site"), QStringLiteral("gems")})
        QVERIFY(m_fx->engine().removeApp(app, core::Actor{}));
    QTRY_VERIFY_WITH_TIMEOUT(!m_fx->engine().app(QStringLiteral("site")) && !m_fx->engine().app(QStringLiteral("gems")),
                             60000);
}

void TestEngineDocker::unownedContainerIsRemoved()
{
    adapters::ContainerSpec spec;
    spec.name = QStringLiteral("pando-ghost-") + m_fx->installId();
    spec.image = DockerHarness::baseImage();
    spec.command = {QStringLiteral("/bin/sleep"), QStringLiteral("300")};
    spec.labels = m_fx->installLabels(QStringLiteral("ghost"), QStringLiteral("d000000000000"));
    spec.labels.insert(QLatin1String(adapters::LabelManaged), QStringLiteral("true"));
    auto id = m_fx->docker().run(spec);
    QVERIFY2(id, qPrintable(id ? QString() : id.error().text()));
    auto changes = m_fx->engine().reconcileOnce();
    QVERIFY(changes);
    QVERIFY(m_fx->docker().inspect(*id).error().code == ErrorCode::NotFound);
    // ...and what is owned stays.
    QCOMPARE(httpGet(appUrl(QStringLiteral("hello"))).status, 200);
}

void TestEngineDocker::deploysOfOneAppAreSerialised()
{
    auto first = m_fx->engine().deploy(QStringLiteral("hello"), {}, core::Actor{});
    auto second = m_fx->engine().deploy(QStringLiteral("hello"), {}, core::Actor{});
    QVERIFY(first && second);
    const core::DeployView a = m_fx->waitDeploy(first->id);
    const core::DeployView b = m_fx->waitDeploy(second->id);
    QCOMPARE(a.record.status, core::DeployStatus::Succeeded);
    QCOMPARE(b.record.status, core::DeployStatus::Succeeded);
    QVERIFY2(b.record.startedMs >= a.record.finishedMs, "the second deploy of an app waits for the first");
    QCOMPARE(m_fx->engine().app(QStringLiteral("hello"))->record.currentDeploy, b.record.id);

    // Old versions' images go; the serving one and the version before it (another commit: a
    // redeploy of the same one does not count) stay for a quick way back.
    QCOMPARE(m_fx->waitRetired(b.record.id).steps.last().name, QStringLiteral("retire"));
    QVERIFY(m_fx->docker().imageId(core::imageTag(QStringLiteral("hello"), b.record.id)));
    QVERIFY(!m_fx->docker().imageId(core::imageTag(QStringLiteral("hello"), a.record.id)));
    auto deploys = m_fx->engine().deploys(QStringLiteral("hello"), 100);
    QString before; // the newest that served another commit
    int tagged = 0;
    for (const auto &d : std::as_const(*deploys)) {
        if (before.isEmpty() && d.status == core::DeployStatus::Succeeded && d.commit != b.record.commit)
            before = d.id;
        tagged += m_fx->docker().imageId(core::imageTag(QStringLiteral("hello"), d.id)) ? 1 : 0;
    }
    QVERIFY(!before.isEmpty());
    QVERIFY(m_fx->docker().imageId(core::imageTag(QStringLiteral("hello"), before)));
    QCOMPARE(tagged, 2);
}

// hello served v1, then v2 (deployed twice since): a rollback goes back to v1 with v1's image,
// and another goes back to v2; a deploy that failed, or one of another app, is no version.
void TestEngineDocker::rollbackGoesBackAVersion()
{
    const QUrl url = appUrl(QStringLiteral("hello"));
    QCOMPARE(httpGet(url).body.trimmed(), QByteArray("v2"));
    auto back = m_fx->engine().rollback(QStringLiteral("hello"), {}, core::Actor{});
    QVERIFY2(back, qPrintable(back ? QString() : back.error().text()));
    core::DeployView view = m_fx->waitDeploy(back->id);
    QVERIFY2(view.record.status == core::DeployStatus::Succeeded, qPrintable(view.record.error));
    QCOMPARE(httpGet(url).body.trimmed(), QByteArray("v1"));
    // v1's image, not a new build.
    QString build;
    for (const core::StepRecord &step : std::as_const(view.steps))
        if (step.name == QLatin1String("build"))
            build = step.detail;
    QVERIFY2(build.contains(QLatin1String("from the same commit")), qPrintable(build));

    auto forth = m_fx->engine().rollback(QStringLiteral("hello"), {}, core::Actor{});
    QVERIFY2(forth, qPrintable(forth ? QString() : forth.error().text()));
    view = m_fx->waitDeploy(forth->id);
    QVERIFY2(view.record.status == core::DeployStatus::Succeeded, qPrintable(view.record.error));
    QCOMPARE(httpGet(url).body.trimmed(), QByteArray("v2"));

    auto history = m_fx->engine().deploys(QStringLiteral("hello"), 100);
    QVERIFY(history);
    QString failed;
    for (const core::DeployRecord &deploy : std::as_const(*history))
        if (deploy.status == core::DeployStatus::Failed)
            failed = deploy.id;
    QVERIFY(!failed.isEmpty());
    auto refused = m_fx->engine().rollback(QStringLiteral("hello"), failed, core::Actor{});
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Invalid);
    QVERIFY2(refused.error().message.contains(QLatin1String("only a version that served")),
             qPrintable(refused.error().text()));
    auto serving = m_fx->engine().rollback(QStringLiteral("hello"), view.record.id, core::Actor{});
    QVERIFY(!serving);
    QCOMPARE(serving.error().code, ErrorCode::Conflict);
    QCOMPARE(
        m_fx->engine().rollback(QStringLiteral("hello"), QStringLiteral("d000000000000"), core::Actor{}).error().code,
        ErrorCode::NotFound);
}

void TestEngineDocker::restartRestoresRouteAndSettlesWork()
{
    const QUrl url = appUrl(QStringLiteral("hello"));
    const QString dataDir = m_fx->dataDir();
    m_fx->stop();
    QCOMPARE(httpGet(url, 500).status, 0); // nothing serves while Pando is down
    QVERIFY(m_fx->start(dataDir));
    QTRY_COMPARE_WITH_TIMEOUT(httpGet(appUrl(QStringLiteral("hello"))).status, 200, 10000);
    QCOMPARE(appUrl(QStringLiteral("hello")), url);
}

void TestEngineDocker::isolatedAppServesAndTakesItsNetwork()
{
    const QString app = QStringLiteral("quiet");
    auto created =
        m_fx->engine().createApp(helloSpec(app, m_repo, QStringLiteral("network:\n  egress: none\n")), core::Actor{});
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    const QString id = deployAndWait(app);
    auto view = m_fx->engine().deployView(id);
    QVERIFY(view);
    QVERIFY2(view->record.status == core::DeployStatus::Succeeded, qPrintable(view->record.error));

    // The health check and the router reach it, on the install's internal network only.
    const HttpAnswer answer = httpGet(appUrl(app));
    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.body, httpGet(appUrl(QStringLiteral("hello"))).body); // same repository and ref
    QVERIFY(!answer.body.isEmpty());
    auto containers = m_fx->docker().containers(m_fx->installLabels(app, id));
    QVERIFY(containers && containers->size() == 1);
    auto raw =
        m_fx->docker().client().get(QStringLiteral("/containers/") + containers->first().id + QStringLiteral("/json"));
    QVERIFY(raw);
    const QString network = adapters::docker::DockerRuntime::noEgressNetworkName(m_fx->installId());
    QCOMPARE(raw->json().object()[u"NetworkSettings"_qs][u"Networks"_qs].toObject().keys(), QStringList{network});

    QVERIFY(m_fx->engine().removeApp(app, core::Actor{}));
    QTRY_VERIFY_WITH_TIMEOUT(!m_fx->engine().app(app), 60000);
    auto left = m_fx->docker().client().get(QStringLiteral("/networks/") + network);
    QVERIFY2(!left && left.error().code == ErrorCode::NotFound, "the app's last container took its network along");
}

// With the classic builder (DOCKER_BUILDKIT=0, or an engine without BuildKit), a multi-stage
// build leaves its first stage's steps as images nothing tags or labels: they are counted as the
// build cache, only the latest build's are kept, and they go with the app.
void TestEngineDocker::buildCacheIsTheLatestBuildsAndGoesWithTheApp()
{
    m_fx->docker().setBuilder(adapters::dockerapi::Builder::Classic);
    const auto buildKitAgain = qScopeGuard([this] { m_fx->docker().setBuilder(adapters::dockerapi::Builder::Auto); });
    const int before = buildCacheImages();
    QVERIFY(before >= 0);
    // BuildKit's own cache, the engine's, is reported beside it (what pando capacity says).
    auto rooms = m_fx->engine().capacity();
    QVERIFY(rooms);
    const auto docker = std::find_if(rooms->cbegin(), rooms->cend(), [](const core::capacity::RuntimeCapacity &r) {
        return r.room.kind == QLatin1String("docker");
    });
    QVERIFY(docker != rooms->cend() && docker->builderCache);
    QVERIFY(docker->builderCache->reclaimableBytes <= docker->builderCache->bytes);
    const QJsonObject builder = docker->toJson()
                                    .value(QStringLiteral("disk"))
                                    .toObject()
                                    .value(QStringLiteral("build_cache"))
                                    .toObject()
                                    .value(QStringLiteral("builder"))
                                    .toObject();
    QCOMPARE(builder.value(QStringLiteral("bytes")).toInteger(), docker->builderCache->bytes);
    const QString repo = m_fx->git().createRepository(QStringLiteral("stages"));
    const QByteArray run = QUuid::createUuid().toByteArray(); // no earlier run's cache answers
    const auto version = [&run](const QByteArray &content) {
        GitFiles files;
        files.insert(QStringLiteral("Dockerfile"),
                     GitFile{"FROM pando/busybox:latest AS build\nCOPY www /src\n"
                             "RUN mkdir /out && cp /src/index.html /out/index.html\n"
                             "FROM pando/busybox:latest\nCOPY --from=build /out /www\nEXPOSE 8080\n"
                             "CMD [\"/bin/httpd\", \"-f\", \"-p\", \"8080\", \"-h\", \"/www\"]\n"});
        files.insert(QStringLiteral("www/index.html"), GitFile{content + "\n" + run});
        return files;
    };
    QVERIFY(!m_fx->git().commit(QStringLiteral("stages"), QStringLiteral("main"), version("stage one")).isEmpty());
    auto created = m_fx->engine().createApp(helloSpec(QStringLiteral("stages"), repo), core::Actor{});
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    const QString first = deployAndWait(QStringLiteral("stages"));
    QCOMPARE(m_fx->engine().deployView(first)->record.status, core::DeployStatus::Succeeded);
    QCOMPARE(buildCacheImages(), before + 2); // the build stage's COPY and RUN

    QVERIFY(!m_fx->git().commit(QStringLiteral("stages"), QStringLiteral("main"), version("stage two")).isEmpty());
    const QString second = deployAndWait(QStringLiteral("stages"));
    QCOMPARE(m_fx->engine().deployView(second)->record.status, core::DeployStatus::Succeeded);
    QVERIFY(httpGet(appUrl(QStringLiteral("stages"))).body.startsWith("stage two"));
    QCOMPARE(buildCacheImages(), before + 2); // the second build's, the first's removed

    QVERIFY(m_fx->engine().removeApp(QStringLiteral("stages"), core::Actor{}));
    QTRY_VERIFY_WITH_TIMEOUT(!m_fx->engine().app(QStringLiteral("stages")), 60000);
    QCOMPARE(buildCacheImages(), before);
}

void TestEngineDocker::removalLeavesNothingBehind()
{
    auto app = m_fx->engine().app(QStringLiteral("hello"));
    const int port = app->record.routePort;
    QVERIFY(m_fx->engine().removeApp(QStringLiteral("hello"), core::Actor{}));
    QCOMPARE(m_fx->engine().app(QStringLiteral("hello"))->status, core::AppStatus::Removing);
    QTRY_VERIFY_WITH_TIMEOUT(!m_fx->engine().app(QStringLiteral("hello")), 60000);
    QCOMPARE(m_fx->docker().containers(m_fx->installLabels(QStringLiteral("hello")))->size(), 0);
    auto images = m_fx->docker().images(m_fx->installLabels());
    QVERIFY(images);
    for (const auto &image : std::as_const(*images))
        for (const QString &tag : image.tags)
            QVERIFY2(!tag.startsWith(QLatin1String("pando/hello:")), qPrintable(tag));
    QVERIFY(!m_fx->router().route(QStringLiteral("hello")));
    QTcpServer probe;
    QVERIFY2(probe.listen(QHostAddress::LocalHost, quint16(port)), "the route's port is free again");
}

QTEST_GUILESS_MAIN(TestEngineDocker)
#include "tst_enginedocker.moc"
