// Pipeline overhead, Pando against the floor, side by side in one run:
//   pando: a job of 10 sequential container task steps (trigger → run finished)
//   floor: 10 bare container runs through the Engine API (create, start, wait, remove)
// and a re-run of the same job where every step is unchanged (target: under 100 ms for the
// whole job). Prints medians and the ratio; the target ratio is at most 1.15.
// PANDO_BENCH_QUICK=1: one round, no verdict. PANDO_BENCH_ROUNDS=N: N rounds (default 5).

#include "adapters/kit/dockerapi/dockerclient.h"
#include "app/wiring/pipelinewiring.h"
#include "core/pipelines/service/pipelineservice.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/bench/benchkit.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/support/vocabtesting.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QThread>
#include <algorithm>
#include <cstdio>

using namespace pando;

using pando::bench::median;

namespace {

int fail(const QString &message)
{
    std::fprintf(stderr, "bench_pipeline: %s\n", qPrintable(message));
    return 1;
}

// The floor: 10 containers, the four Engine API calls each, nothing else.
qint64 floorRound(const adapters::dockerapi::DockerClient &client)
{
    QElapsedTimer t;
    t.start();
    for (int i = 0; i < 10; ++i) {
        const QJsonObject body{
            {QStringLiteral("Image"), test::DockerHarness::baseImage()},
            {QStringLiteral("Cmd"), QJsonArray{QStringLiteral("true")}},
            {QStringLiteral("Labels"), QJsonObject{{QStringLiteral("dev.pando.bench"), QStringLiteral("floor")}}}};
        auto created =
            client.post(QStringLiteral("/containers/create"), {}, QJsonDocument(body).toJson(QJsonDocument::Compact));
        if (!created)
            return -1;
        const QString id = created->json().object().value(QStringLiteral("Id")).toString();
        if (!client.post(QStringLiteral("/containers/") + id + QStringLiteral("/start")) ||
            !client.post(QStringLiteral("/containers/") + id + QStringLiteral("/wait")))
            return -1;
        adapters::dockerapi::Request remove;
        remove.method = "DELETE";
        remove.path = QStringLiteral("/containers/") + id;
        remove.addQuery(QStringLiteral("force"), QStringLiteral("1"));
        if (!client.call(remove))
            return -1;
    }
    return t.elapsed();
}

QByteArray jobOfTenTasks(int round)
{
    QByteArray yaml = "jobs:\n  - name: ten\n    plan:\n";
    for (int i = 0; i < 10; ++i)
        yaml += "      - task: t" + QByteArray::number(i) +
                "\n        config: {platform: linux, image_resource: {type: registry-image, source: {repository: "
                "pando/busybox, tag: latest}}, params: {ROUND: \"" +
                QByteArray::number(round) + "\"}, run: {path: /bin/true, args: [\"" + QByteArray::number(i) + "\"]}}\n";
    return yaml;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const bool quick = qEnvironmentVariable("PANDO_BENCH_QUICK") == QLatin1String("1");
    const int rounds = quick ? 1
                       : qEnvironmentVariableIntValue("PANDO_BENCH_ROUNDS") > 0
                           ? qEnvironmentVariableIntValue("PANDO_BENCH_ROUNDS")
                           : 5;
    QString why;
    if (!test::DockerHarness::available(&why))
        return fail(QStringLiteral("Docker does not answer: ") + why);
    if (auto base = test::DockerHarness::ensureBaseImage(); !base)
        return fail(base.error().text());

    test::EngineFixture fx;
    if (!fx.start())
        return fail(QStringLiteral("the engine did not start"));
    wiring::PipelineWiringOptions options;
    options.service.triggerIntervalMs = 60'000;
    if (auto installed = wiring::installPipelines(fx.engine(), options); !installed)
        return fail(installed.error().text());
    core::pipelines::PipelineService &service = *fx.engine().pipelines();
    const adapters::dockerapi::DockerClient client;

    auto runJob = [&](int round) -> std::pair<qint64, QString> {
        QElapsedTimer t;
        t.start();
        auto run = service.triggerJob(QStringLiteral("bench"), QStringLiteral("ten"), core::Actor{});
        if (!run)
            return {-1, run.error().text()};
        for (;;) {
            auto tree = service.runTree(run->run.id);
            if (tree && tree->run.status != core::RunStatus::Queued && tree->run.status != core::RunStatus::Running) {
                if (tree->run.status != core::RunStatus::Succeeded)
                    return {-1, core::toString(tree->run.status) + QStringLiteral(": ") + tree->run.error};
                return {t.elapsed(), QStringLiteral("%1 cached").arg(tree->cachedCount)};
            }
            if (t.elapsed() > 120'000)
                return {-1, QStringLiteral("round %1 timed out").arg(round)};
            QThread::msleep(2);
        }
    };

    // Warm both paths once (image caches, first container after idle), not measured.
    floorRound(client);
    QList<qint64> pando, floor, rerun;
    for (int round = 0; round <= rounds; ++round) {
        // A new ROUND value each time: the first run of a round cannot be skipped.
        if (auto set = service.setPipeline(QStringLiteral("bench"), jobOfTenTasks(round), {}, false, core::Actor{});
            !set)
            return fail(set.error().text());
        const auto [first, note] = runJob(round);
        if (first < 0)
            return fail(note);
        const auto [again, cachedNote] = runJob(round);
        if (again < 0)
            return fail(cachedNote);
        const qint64 bare = floorRound(client);
        if (bare < 0)
            return fail(QStringLiteral("the floor's container calls failed"));
        if (round == 0)
            continue; // warm-up
        pando.append(first);
        rerun.append(again);
        floor.append(bare);
        std::printf("round %d: pando %lld ms, floor %lld ms, unchanged re-run %lld ms (%s)\n", round, first, bare,
                    again, qPrintable(cachedNote));
    }
    const qint64 p = median(pando), f = median(floor), r = median(rerun);
    const double ratio = f > 0 ? double(p) / double(f) : 0;
    std::printf("bench_pipeline: 10 container tasks: pando median %lld ms, floor median %lld ms, ratio %.2f (target <= "
                "1.15); unchanged re-run median %lld ms (target < 100 ms), %d rounds\n",
                p, f, ratio, r, rounds);
    fx.stop();
    if (!quick && (ratio > 1.15 || r >= 100)) {
        std::fprintf(stderr, "bench_pipeline: above target\n");
        return 1;
    }
    return 0;
}
