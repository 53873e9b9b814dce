// Apps that serve are probed after their deploy, on real parts (git, Docker, the loopback
// router): a container whose health path starts failing is unhealthy with what the probe got
// within its health.every, is restarted per run.restart (event, audit line), and is running
// again, its URL answering, once it answers.

#include "enginefixture.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"
#include "tests/support/vocabtesting.h"

#include <QMutex>
#include <QTest>

using namespace pando;
using namespace pando::test;
using namespace Qt::StringLiterals;

namespace {

// Serves /health until 2 s after its first start, then 404 for it; started again (the same
// container, its marker kept), it serves /health for good.
GitFiles sickOnceApp()
{
    GitFiles files;
    files.insert(u"Dockerfile"_s,
                 GitFile{"FROM pando/busybox:latest\nCOPY www /www\nEXPOSE 8080\n"
                         "CMD [\"/bin/sh\", \"-c\", \"echo ok > /www/health; "
                         "if [ ! -e /tmp/was-sick ]; then touch /tmp/was-sick; (sleep 2; rm /www/health) & fi; "
                         "exec /bin/httpd -f -p 8080 -h /www\"]\n"});
    files.insert(u"www/index.html"_s, GitFile{"hello\n"});
    return files;
}

} // namespace

class TestAppHealth : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void anAppThatStopsAnsweringIsUnhealthyRestartedAndRunningAgain();

private:
    QList<core::Event> eventsOf(const QString &app, core::EventType type);
    core::AppView view(const QString &name);

    // Declared before the engine: its threads publish into them until the engine is gone.
    QMutex m_eventsMutex;
    QList<core::Event> m_events;
    std::unique_ptr<EngineFixture> m_fx;
};

void TestAppHealth::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), u"Docker Engine: "_s + why);
    PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), u"git"_s);
    auto base = DockerHarness::ensureBaseImage();
    QVERIFY2(base, qPrintable(base ? QString() : base.error().text()));
    m_fx = std::make_unique<EngineFixture>();
    QVERIFY(m_fx->git().isValid());
    QVERIFY(m_fx->start({}, [](core::EngineOptions &o) { o.healthTickMs = 100; }));
    connect(
        m_fx->engine().events(), &core::EventBus::published, this,
        [this](const core::Event &event) {
            QMutexLocker lock(&m_eventsMutex);
            m_events << event;
        },
        Qt::DirectConnection);
}

void TestAppHealth::cleanupTestCase()
{
    m_fx.reset();
}

QList<core::Event> TestAppHealth::eventsOf(const QString &app, core::EventType type)
{
    QMutexLocker lock(&m_eventsMutex);
    QList<core::Event> out;
    for (const core::Event &event : std::as_const(m_events))
        if (event.app == app && event.type == type)
            out << event;
    return out;
}

core::AppView TestAppHealth::view(const QString &name)
{
    auto found = m_fx->engine().app(name);
    return found ? *found : core::AppView{};
}

void TestAppHealth::anAppThatStopsAnsweringIsUnhealthyRestartedAndRunningAgain()
{
    const QString repo = m_fx->git().createRepository(u"sick"_s);
    QVERIFY(!m_fx->git().commit(u"sick"_s, u"main"_s, sickOnceApp()).isEmpty());
    const QByteArray spec = u"name: sick\nsource:\n  repo: %1\n  ref: main\nrun:\n  port: 8080\n"
                            u"  resources: { memory: 64Mi }\n"
                            u"health:\n  path: /health\n  timeout: 20s\n  every: 200ms\n  failures: 2\n"_s.arg(repo)
                                .toUtf8();
    auto created = m_fx->engine().createApp(spec, core::Actor{});
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    auto deploy = m_fx->engine().deploy(u"sick"_s, {}, core::Actor{});
    QVERIFY(deploy);
    const core::DeployView done = m_fx->waitDeploy(deploy->id);
    QVERIFY2(done.record.status == core::DeployStatus::Succeeded, qPrintable(done.record.error));

    // 2 s after the container started its health path is gone: two failed probes 200 ms apart.
    QTRY_COMPARE_WITH_TIMEOUT(view(u"sick"_s).status, core::AppStatus::Unhealthy, 10000);
    const QList<core::Event> told = eventsOf(u"sick"_s, core::EventType::AppUnhealthy);
    QVERIFY(!told.isEmpty());
    QCOMPARE(told.first().data.value(u"reason"_s).toString(), u"GET /health answered 404"_s);

    // run.restart is always by default: restarted, and then it answers again.
    QTRY_VERIFY_WITH_TIMEOUT(!eventsOf(u"sick"_s, core::EventType::AppRestarted).isEmpty(), 5000);
    QCOMPARE(eventsOf(u"sick"_s, core::EventType::AppRestarted).first().data.value(u"reason"_s).toString(),
             u"unhealthy"_s);
    QTRY_COMPARE_WITH_TIMEOUT(view(u"sick"_s).status, core::AppStatus::Running, 10000);
    QVERIFY(!eventsOf(u"sick"_s, core::EventType::AppHealthy).isEmpty());
    QCOMPARE(view(u"sick"_s).statusReason, QString());
    const HttpAnswer answer = httpGet(QUrl(view(u"sick"_s).url + u"health"_s));
    QCOMPARE(answer.status, 200);
}

QTEST_GUILESS_MAIN(TestAppHealth)
#include "tst_apphealth.moc"
