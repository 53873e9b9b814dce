// LogHub over the real DockerRuntime: two watchers of one container share one follow.
#include "adapters/runtime/docker/dockerruntime.h"
#include "core/logstream/loghub.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"

#include <QTest>

using namespace pando;
using namespace pando::adapters;
using pando::core::LogHub;
using pando::core::LogSubscription;
using pando::test::DockerHarness;

class TestLogHubDocker : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void liveLinesFromDocker()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), why);
        auto base = DockerHarness::ensureBaseImage();
        QVERIFY2(base.has_value(), qPrintable(base ? QString() : base.error().text()));

        auto runtime = std::make_shared<docker::DockerRuntime>();
        ContainerSpec spec;
        spec.name = QStringLiteral("pando-test-loghub-%1").arg(QCoreApplication::applicationPid());
        spec.image = DockerHarness::baseImage();
        spec.command = {QStringLiteral("sh"), QStringLiteral("-c"),
                        QStringLiteral("i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.2; done")};
        spec.labels = {{QStringLiteral("dev.pando.test"), spec.name}};
        auto id = runtime->run(spec);
        QVERIFY2(id.has_value(), qPrintable(id ? QString() : id.error().text()));
        const QString containerId = *id;
        auto cleanup = qScopeGuard([&] { (void)runtime->remove(containerId); });

        LogHub hub(runtime, [&](const QString &) { return containerId; });
        QStringList a, b;
        QObject ctx;
        auto sa = hub.subscribe(QStringLiteral("ticker"));
        auto sb = hub.subscribe(QStringLiteral("ticker"));
        connect(sa.get(), &LogSubscription::line, &ctx, [&](const LogLine &l) { a.append(l.text); });
        connect(sb.get(), &LogSubscription::line, &ctx, [&](const LogLine &l) { b.append(l.text); });
        QCOMPARE(hub.upstreamCount(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(a.size() >= 3 && b.size() >= 3, 10000);
        QVERIFY(a.first().startsWith(QLatin1String("tick ")));

        QElapsedTimer timer;
        timer.start();
        sa.reset();
        sb.reset();
        QCOMPARE(hub.upstreamCount(), 0);
        qInfo("last unsubscribe returned after %lld ms", timer.elapsed());
        QVERIFY(timer.elapsed() < 1000);
    }
};

QTEST_GUILESS_MAIN(TestLogHubDocker)
#include "tst_loghub_docker.moc"
