// Deploy on push against the deploy floor, side by side in one run, on real Docker:
//   push:  a GitHub push delivery (signed) reaches the engine → the pushed version serves
//   floor: `pando deploy` of a new commit (Engine::deploy) → that version serves
// Each round pushes two new commits of a small busybox httpd app, one deployed each way, and
// times until the app's address answers with the new content. Prints medians and the verdict
// against the target: push at most 1.1 × floor + 100 ms.
// PANDO_BENCH_QUICK=1: one round, no verdict. PANDO_BENCH_ROUNDS=N: N rounds (default 5).

#include "tests/adapters/docker/dockerharness.h"
#include "tests/bench/benchkit.h"
#include "tests/core/engine/enginefixture.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageAuthenticationCode>
#include <QThread>
#include <QUuid>
#include <algorithm>
#include <cstdio>

using namespace pando;
using pando::bench::median;

namespace {

int fail(const QString &message)
{
    std::fprintf(stderr, "bench_autodeploy: %s\n", qPrintable(message));
    return 1;
}

core::autodeploy::HookRequest githubPush(const QByteArray &secret, const QString &repo, const QString &commit)
{
    const QJsonObject body{
        {QStringLiteral("ref"), QStringLiteral("refs/heads/main")},
        {QStringLiteral("after"), commit},
        {QStringLiteral("repository"), QJsonObject{{QStringLiteral("clone_url"), repo}}},
        {QStringLiteral("pusher"), QJsonObject{{QStringLiteral("name"), QStringLiteral("bench")}}},
    };
    core::autodeploy::HookRequest request;
    request.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    request.headers.insert("x-github-event", "push");
    request.headers.insert("x-github-delivery", QUuid::createUuid().toString(QUuid::WithoutBraces).toUtf8());
    request.headers.insert(
        "x-hub-signature-256",
        "sha256=" + QMessageAuthenticationCode::hash(request.body, secret, QCryptographicHash::Sha256).toHex());
    return request;
}

// Until the app's address answers with content; -1 past the deadline.
qint64 untilServing(core::Engine &engine, const QByteArray &content, const QElapsedTimer &since)
{
    QString url;
    while (since.elapsed() < 120'000) {
        if (url.isEmpty())
            if (auto app = engine.app(QStringLiteral("bench")); app)
                url = app->url;
        if (!url.isEmpty() && test::httpGet(QUrl(url), 1000).body == content)
            return since.elapsed();
        QThread::msleep(5);
    }
    return -1;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const bool quick = qEnvironmentVariable("PANDO_BENCH_QUICK") == QLatin1String("1");
    const int rounds = quick ? 1 : std::max(1, qEnvironmentVariableIntValue("PANDO_BENCH_ROUNDS") ?: 5);
    QString why;
    if (!test::DockerHarness::available(&why))
        return fail(QStringLiteral("Docker does not answer: ") + why);
    if (auto base = test::DockerHarness::ensureBaseImage(); !base)
        return fail(base.error().text());

    test::EngineFixture fx;
    if (!fx.start())
        return fail(QStringLiteral("the engine did not start"));
    core::Engine &engine = fx.engine();
    test::GitFixture &git = fx.git();
    if (git.createRepository(QStringLiteral("bench")).isEmpty())
        return fail(QStringLiteral("no git repository: ") + git.errorString());
    const QString repo = git.url(QStringLiteral("bench"));
    int version = 0;
    const auto commitNext = [&](QByteArray &content) {
        content = "version " + QByteArray::number(++version) + "\n";
        return git.commit(QStringLiteral("bench"), QStringLiteral("main"), test::helloApp(content));
    };
    QByteArray content;
    if (commitNext(content).isEmpty())
        return fail(QStringLiteral("commit failed: ") + git.errorString());
    const QByteArray spec = QStringLiteral("name: bench\nsource:\n  repo: %1\n  ref: main\n  autodeploy: push\n"
                                           "run:\n  port: 8080\n  resources: { memory: 64Mi }\n"
                                           "health:\n  path: /\n  interval: 10ms\n  timeout: 20s\n")
                                .arg(repo)
                                .toUtf8();
    if (auto created = engine.createApp(spec, core::Actor{}); !created)
        return fail(created.error().text());
    auto secret = engine.setHookSecret(QStringLiteral("bench"), {}, core::Actor{});
    if (!secret)
        return fail(secret.error().text());

    // Warm up (the first build pulls layers into the cache), not measured.
    {
        auto first = engine.deploy(QStringLiteral("bench"), {}, core::Actor{});
        if (!first)
            return fail(first.error().text());
        QElapsedTimer t;
        t.start();
        if (untilServing(engine, content, t) < 0)
            return fail(QStringLiteral("the first deploy did not serve"));
    }

    QList<qint64> push, floor;
    for (int round = 1; round <= rounds; ++round) {
        QString commit = commitNext(content);
        QElapsedTimer t;
        t.start();
        auto manual = engine.deploy(QStringLiteral("bench"), commit, core::Actor{});
        if (!manual)
            return fail(manual.error().text());
        const qint64 bare = untilServing(engine, content, t);
        if (bare < 0)
            return fail(QStringLiteral("round %1: the deploy did not serve").arg(round));
        // The push starts on a settled app, as the floor does: a deploy of the app waits for the
        // one before it to retire the old version.
        fx.waitRetired(manual->id);

        commit = commitNext(content);
        t.restart();
        auto delivered = engine.receiveHook(QStringLiteral("bench"), githubPush(*secret, repo, commit),
                                            core::Actor{QStringLiteral("anonymous"), QStringLiteral("127.0.0.1"), {}});
        if (!delivered || delivered->outcome != QLatin1String("accepted"))
            return fail(delivered ? delivered->detail : delivered.error().text());
        const qint64 pushed = untilServing(engine, content, t);
        if (pushed < 0)
            return fail(QStringLiteral("round %1: the push did not serve").arg(round));
        floor.append(bare);
        push.append(pushed);
        std::printf("round %d: push %lld ms, floor %lld ms\n", round, pushed, bare);
        // Let the pushed deploy finish retiring the old version before the next round starts.
        if (auto deploys = engine.deploys(QStringLiteral("bench"), 1); deploys && !deploys->isEmpty())
            fx.waitRetired(deploys->first().id);
    }
    const qint64 p = median(push), f = median(floor);
    const double ratio = f > 0 ? double(p) / double(f) : 0;
    const bool met = double(p) <= 1.1 * double(f) + 100;
    std::printf("bench_autodeploy: push to serving median %lld ms, deploy floor median %lld ms, ratio %.2f; target "
                "push <= 1.1 x floor + 100 ms (%.0f ms): %s, %d rounds\n",
                p, f, ratio, 1.1 * double(f) + 100, quick ? "not judged in quick mode" : (met ? "met" : "NOT met"),
                rounds);
    fx.cleanDocker();
    fx.stop();
    return quick || met ? 0 : 1;
}
