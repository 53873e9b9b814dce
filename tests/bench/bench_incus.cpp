// Deploy to Incus, Pando against the floor, side by side in one run:
//   pando: a deploy of an app with `runtime: incus` whose tree Docker's cache already built
//          (Engine::deploy → fetch, plan, build from cache, start, health, switch), until the
//          deploy has switched and the app's route answers 200
//   floor: the same Incus image through the REST API: create and start an instance, wait for
//          its address, GET it until 200
// Prints both medians and the ratio; the target ratio is at most 1.25. The first deploy (a
// real build and the import into Incus) is printed too, for what it costs.
// PANDO_BENCH_QUICK=1: one round, no verdict. PANDO_BENCH_ROUNDS=N: N rounds (default 7).

#include "adapters/runtime/incus/imageconvert.h"
#include "adapters/runtime/incus/incusruntime.h"
#include "adapters/runtime/set/runtimeset.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/adapters/incus/incusharness.h"
#include "tests/bench/benchkit.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/support/vocabtesting.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QThread>
#include <algorithm>
#include <cstdio>

using namespace pando;

using pando::bench::median;

namespace {

int fail(const QString &message)
{
    std::fprintf(stderr, "bench_incus: %s\n", qPrintable(message));
    return 1;
}

bool answers200(const QUrl &url, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < timeoutMs) {
        if (test::httpGet(url, 1000).status == 200)
            return true;
        QThread::msleep(5);
    }
    return false;
}

// The floor: one instance of the image, made and started through the REST API, probed.
qint64 floorRound(const adapters::incusapi::IncusClient &client, const QString &fingerprint, int round)
{
    const QString name = QStringLiteral("pando-bench-floor-%1").arg(round);
    QElapsedTimer t;
    t.start();
    adapters::incusapi::InstancesPost post;
    post.name = name;
    post.sourceFingerprint = fingerprint;
    post.config.insert(QStringLiteral("raw.lxc"), QStringLiteral("lxc.init.cmd = /.pando/init\n"));
    post.config.insert(QStringLiteral("user.dev.pando.bench"), QStringLiteral("floor"));
    post.start = true;
    qint64 elapsed = -1;
    if (client.createInstance(post, 60000)) {
        QString address;
        while (t.elapsed() < 30000 && address.isEmpty()) {
            if (auto state = client.state(name))
                address = state->inetAddresses.value(QStringLiteral("eth0")).value(0);
            if (address.isEmpty())
                QThread::msleep(5);
        }
        if (!address.isEmpty() && answers200(QUrl(QStringLiteral("http://%1:8080/").arg(address)), 30000))
            elapsed = t.elapsed();
    }
    discardResult(client.changeState(name, QStringLiteral("stop"), 0, true), "deleting it below stops it too");
    discardResult(client.deleteInstance(name, 60000), "a leftover instance does not change what was measured");
    return elapsed;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const bool quick = qEnvironmentVariableIntValue("PANDO_BENCH_QUICK") == 1;
    const int rounds = quick ? 1 : std::max(1, qEnvironmentVariableIntValue("PANDO_BENCH_ROUNDS") ?: 7);
    QString why;
    if (!test::DockerHarness::available(&why))
        return fail(QStringLiteral("Docker: ") + why);
    if (!test::IncusHarness::available(&why))
        return fail(QStringLiteral("Incus: ") + why);
    if (auto base = test::DockerHarness::ensureBaseImage(); !base)
        return fail(base.error().text());

    auto incus = std::make_shared<adapters::incus::IncusRuntime>();
    test::EngineFixture fx;
    fx.makeRuntime = [incus](const std::shared_ptr<adapters::docker::DockerRuntime> &docker) {
        auto set = std::make_shared<adapters::RuntimeSet>();
        set->add(QStringLiteral("docker"), docker);
        set->add(QStringLiteral("incus"), incus);
        return set;
    };
    const QString repo = fx.git().createRepository(QStringLiteral("bench"));
    if (repo.isEmpty() ||
        fx.git().commit(QStringLiteral("bench"), QStringLiteral("main"), test::helloApp("bench")).isEmpty())
        return fail(QStringLiteral("cannot make the fixture repository"));
    if (!fx.start({}, [](core::EngineOptions &o) { o.retireGraceMs = 0; }))
        return fail(QStringLiteral("the engine did not start"));
    auto created = fx.engine().createApp(
        test::helloSpec(QStringLiteral("bench"), repo, QStringLiteral("runtime: incus\n")), core::Actor{});
    if (!created)
        return fail(created.error().text());

    // The route's URL is stable across deploys: what a user (or a load balancer) keeps using.
    const QUrl url(created->url);
    auto deployOnce = [&fx, &url](qint64 *ms) -> Result<core::DeployView> {
        QElapsedTimer t;
        t.start();
        auto deploy = fx.engine().deploy(QStringLiteral("bench"), {}, core::Actor{});
        if (!deploy)
            return std::unexpected(deploy.error());
        // As often as the floor looks at its instance.
        Result<core::DeployView> view = fx.engine().deployView(deploy->id);
        while (
            view &&
            (view->record.status == core::DeployStatus::Queued || view->record.status == core::DeployStatus::Running) &&
            t.elapsed() < 120000) {
            QThread::msleep(5);
            view = fx.engine().deployView(deploy->id);
        }
        if (!view)
            return view;
        if (view->record.status != core::DeployStatus::Succeeded)
            return fail(ErrorCode::Failed, view->record.error);
        if (!answers200(url, 30000))
            return fail(ErrorCode::Failed, QStringLiteral("the app does not answer after its deploy"));
        *ms = t.elapsed();
        if (qEnvironmentVariableIntValue("PANDO_BENCH_STEPS") == 1)
            for (const auto &step : std::as_const(view->steps))
                std::printf("  %s %lld ms\n", qPrintable(step.name),
                            std::max<qint64>(0, step.finishedMs - step.startedMs));
        return view;
    };

    qint64 firstMs = 0;
    auto first = deployOnce(&firstMs);
    if (!first)
        return fail(first.error().text());
    const QString fingerprint = first->record.imageId.mid(QStringLiteral("incus:").size());
    std::printf("first deploy (build, import into Incus, start): %lld ms\n", firstMs);

    QList<qint64> pando, floor;
    for (int round = 0; round < rounds; ++round) {
        qint64 ms = 0;
        auto again = deployOnce(&ms);
        if (!again)
            return fail(again.error().text());
        if (again->record.imageId != first->record.imageId)
            return fail(QStringLiteral("the unchanged tree got a new image: %1").arg(again->record.imageId));
        pando << ms;
        const qint64 f = floorRound(incus->client(), fingerprint, round);
        if (f < 0)
            return fail(QStringLiteral("the floor instance did not answer"));
        floor << f;
        std::printf("round %d: pando %lld ms, floor %lld ms\n", round + 1, ms, f);
        std::fflush(stdout);
    }

    if (auto removed = fx.engine().removeApp(QStringLiteral("bench"), core::Actor{}); !removed)
        std::printf("removing the app failed: %s\n", qPrintable(removed.error().text()));
    QElapsedTimer gone;
    gone.start();
    while (fx.engine().app(QStringLiteral("bench")) && gone.elapsed() < 60000)
        QThread::msleep(100);

    const qint64 p = median(pando), f = median(floor);
    const double ratio = f > 0 ? double(p) / double(f) : 0;
    std::printf("pando median %lld ms, floor median %lld ms, ratio %.2f (target <= 1.25)\n", p, f, ratio);
    if (quick)
        return 0;
    return ratio <= 1.25 ? 0 : 1;
}
