// Audited API writes per second against the same writes with auditing off, side by side in one
// run: pausing and unpausing a pipeline over HTTP (each one a state change and an audit line),
// several requests in flight. Target: audited / unaudited >= 0.7.
// PANDO_BENCH_QUICK=1: short rounds, no verdict. PANDO_BENCH_ROUNDS=N (default 3).

#include "app/server/apiserver.h"
#include "app/wiring/pipelinewiring.h"
#include "core/engine/enginewiring.h"
#include "core/pipelines/service/pipelineservice.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/core/engine/enginefixture.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <cstdio>

using namespace pando;

namespace {

int fail(const QString &message)
{
    std::fprintf(stderr, "bench_audit: %s\n", qPrintable(message));
    return 1;
}

// Keeps `inFlight` requests going for durationMs; returns completed requests per second.
double writesPerSecond(QNetworkAccessManager &network, const QUrl &base, const QByteArray &token, int durationMs,
                       int inFlight, int *failures)
{
    QElapsedTimer timer;
    timer.start();
    int done = 0;
    int running = 0;
    bool pause = true;
    QEventLoop loop; // the benchmark's own top-level loop, not nested in a slot
    std::function<void()> send = [&] {
        QNetworkRequest request(base.resolved(QUrl(pause ? QStringLiteral("/api/v1/pipelines/bench/pause")
                                                         : QStringLiteral("/api/v1/pipelines/bench/unpause"))));
        pause = !pause;
        request.setRawHeader("Authorization", "Bearer " + token);
        QNetworkReply *reply = network.post(request, QByteArray());
        ++running;
        QObject::connect(reply, &QNetworkReply::finished, &loop, [&, reply] {
            --running;
            if (reply->error() != QNetworkReply::NoError)
                ++*failures;
            else
                ++done;
            reply->deleteLater();
            if (timer.elapsed() < durationMs)
                send();
            else if (running == 0)
                loop.quit();
        });
    };
    for (int i = 0; i < inFlight; ++i)
        send();
    loop.exec();
    return done * 1000.0 / double(timer.elapsed());
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const bool quick = qEnvironmentVariable("PANDO_BENCH_QUICK") == QLatin1String("1");
    const int rounds = quick ? 1 : qMax(1, qEnvironmentVariableIntValue("PANDO_BENCH_ROUNDS") ?: 3);
    const int durationMs = quick ? 500 : 3000;
    QString why;
    if (!test::DockerHarness::available(&why))
        return fail(QStringLiteral("Docker does not answer: ") + why);

    test::EngineFixture fx;
    if (!fx.start())
        return fail(QStringLiteral("the engine did not start"));
    if (auto installed = wiring::installPipelines(fx.engine()); !installed)
        return fail(installed.error().text());
    auto secret = fx.engine().bootstrapAdminToken();
    if (!secret || !secret->has_value())
        return fail(QStringLiteral("no initial token"));
    const QByteArray token = (*secret)->toUtf8();
    if (auto set = fx.engine().pipelines()->setPipeline(QStringLiteral("bench"),
                                                        "jobs:\n  - name: j\n    plan:\n      - task: t\n        "
                                                        "config: {platform: host, run: {path: /bin/true}}\n",
                                                        {}, false, core::Actor{});
        !set)
        return fail(set.error().text());
    // The bench's task runs on the host: an administrator's choice, made explicitly.
    if (auto on = fx.engine().pipelines()->setHostExecution(true, core::Actor{}); !on)
        return fail(on.error().text());
    if (auto marked = fx.engine().pipelines()->setPipelineHostExecution(QStringLiteral("bench"), true, core::Actor{});
        !marked)
        return fail(marked.error().text());
    server::ApiServer api(fx.engine());
    auto port = api.listen(QHostAddress::LocalHost, 0);
    if (!port)
        return fail(port.error().text());
    const QUrl base(QStringLiteral("http://127.0.0.1:%1").arg(*port));
    QNetworkAccessManager network;

    QList<double> on, off;
    int failures = 0;
    writesPerSecond(network, base, token, 300, 6, &failures); // warm-up
    for (int round = 1; round <= rounds; ++round) {
        core::wiringParts(fx.engine()).audit.setEnabled(true);
        on.append(writesPerSecond(network, base, token, durationMs, 6, &failures));
        core::wiringParts(fx.engine()).audit.setEnabled(false);
        off.append(writesPerSecond(network, base, token, durationMs, 6, &failures));
        std::printf("round %d: audited %.0f writes/s, unaudited %.0f writes/s\n", round, on.last(), off.last());
    }
    core::wiringParts(fx.engine()).audit.setEnabled(true);
    std::sort(on.begin(), on.end());
    std::sort(off.begin(), off.end());
    const double a = on[on.size() / 2], u = off[off.size() / 2];
    const double ratio = u > 0 ? a / u : 0;
    std::printf(
        "bench_audit: audited median %.0f writes/s, unaudited median %.0f writes/s, ratio %.2f (target >= 0.7), "
        "%d rounds, %d failed requests\n",
        a, u, ratio, rounds, failures);
    fx.stop();
    if (failures > 0)
        return fail(QStringLiteral("%1 requests failed").arg(failures));
    if (!quick && ratio < 0.7) {
        std::fprintf(stderr, "bench_audit: below target\n");
        return 1;
    }
    return 0;
}
