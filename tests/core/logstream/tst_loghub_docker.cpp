// LogHub over the real DockerRuntime: two watchers of one container share one follow, and each
// gets its backlog and the live lines as one unbroken sequence from an app writing in bursts
// (many lines in the same millisecond, lines written while the hub switches from history to
// follow).
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
                        QStringLiteral("i=0; while true; do i=$((i+1)); echo tick $i; "
                                       "[ $((i % 40)) = 0 ] && sleep 0.02; done")};
        spec.labels = {{QStringLiteral("dev.pando.test"), spec.name}};
        auto id = runtime->run(spec);
        QVERIFY2(id.has_value(), qPrintable(id ? QString() : id.error().text()));
        const QString containerId = *id;
        auto cleanup = qScopeGuard(
            [&] { discardResult(runtime->remove(containerId), "clean-up: the container may be gone already"); });

        // The container has written a few hundred lines before anyone watches.
        QTest::qWait(500);
        LogHub hub(runtime, [&](const QString &) { return containerId; });
        QList<int> a, b;
        QObject ctx;
        auto number = [](const LogLine &l) {
            return l.text.startsWith(QLatin1String("tick ")) ? l.text.mid(5).toInt() : -1;
        };
        auto sa = hub.subscribe(QStringLiteral("ticker"), 100);
        connect(sa.get(), &LogSubscription::line, &ctx, [&](const LogLine &l) { a.append(number(l)); });
        QTRY_VERIFY_WITH_TIMEOUT(a.size() >= 400, 20000);
        auto sb = hub.subscribe(QStringLiteral("ticker"), 50);
        connect(sb.get(), &LogSubscription::line, &ctx, [&](const LogLine &l) { b.append(number(l)); });
        QCOMPARE(hub.upstreamCount(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(b.size() >= 400, 20000);

        // Each saw its backlog and then every line, in order, none twice.
        auto unbroken = [](const QList<int> &seen) {
            for (qsizetype i = 1; i < seen.size(); ++i)
                if (seen.at(i) != seen.at(i - 1) + 1)
                    return QStringLiteral("line %1 is tick %2 after tick %3")
                        .arg(i)
                        .arg(seen.at(i))
                        .arg(seen.at(i - 1));
            return QString();
        };
        QVERIFY2(a.first() > 100, "the container wrote more than the backlog before the first watcher came");
        QVERIFY2(unbroken(a).isEmpty(), qPrintable(unbroken(a)));
        QVERIFY2(unbroken(b).isEmpty(), qPrintable(unbroken(b)));
        QVERIFY2(b.first() > a.first() && b.first() < a.last(), qPrintable(QString::number(b.first())));

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
