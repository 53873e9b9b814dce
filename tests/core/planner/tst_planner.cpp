// The planner's rules, one cap per row: memory and CPUs against host policy and the runtime,
// route ports against the allowed range and the denied list, and runtimes that cannot build.

#include "core/planner/planner.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

namespace {

constexpr qint64 Mi = 1024 * 1024;
constexpr qint64 Gi = 1024 * Mi;
constexpr int Ok = -1;

AppSpec baseSpec()
{
    AppSpec spec;
    spec.name = u"hello"_s;
    spec.source.repo = u"file:///srv/git/hello.git"_s;
    spec.run.port = 8080;
    return spec;
}

QString why(const Result<Plan> &result)
{
    return result ? QString()
                  : u"[%1] %2 (hint: %3)"_s.arg(errorCodeName(result.error().code), result.error().text(),
                                                result.error().hint);
}

} // namespace

class TestPlanner : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void limits_data();
    void limits();
    void copiesSpec();
    void paths();
    void invalidSpecIsRefused();
    void egress();
};

void TestPlanner::limits_data()
{
    QTest::addColumn<qint64>("memory"); // spec
    QTest::addColumn<double>("cpus");   // spec
    QTest::addColumn<int>("routePort"); // spec
    QTest::addColumn<qint64>("policyMaxMemory");
    QTest::addColumn<double>("policyMaxCpus");
    QTest::addColumn<qint64>("policyDefaultMemory");
    QTest::addColumn<qint64>("capsMaxMemory");
    QTest::addColumn<double>("capsMaxCpus");
    QTest::addColumn<bool>("canBuild");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("contains"); // in the message, or in the notes when the plan succeeds
    QTest::addColumn<qint64>("planMemory");
    QTest::addColumn<double>("planCpus");
    const int Invalid = int(ErrorCode::Invalid);
    const int Failed = int(ErrorCode::Failed);
    const QString mem = u"run.resources.memory"_s;
    const QString cpu = u"run.resources.cpus"_s;
    const QString route = u"route.port"_s;

    // memory cpus route | policy max mem, max cpus, default mem | caps mem, cpus | build
    QTest::newRow("no limits asked, defaults")
        << 0LL << 0.0 << 0 << 0LL << 0.0 << 512 * Mi << 0LL << 0.0 << true << Ok << QString()
        << u"memory defaulted to 512Mi (host policy)"_s << 512 * Mi << 0.0;
    QTest::newRow("no default, no cap") << 0LL << 0.0 << 0 << 0LL << 0.0 << 0LL << 0LL << 0.0 << true << Ok << QString()
                                        << u"no memory limit"_s << 0LL << 0.0;
    QTest::newRow("no default, policy cap") << 0LL << 0.0 << 0 << 1 * Gi << 0.0 << 0LL << 0LL << 0.0 << true << Ok
                                            << QString() << u"memory limited to 1Gi"_s << 1 * Gi << 0.0;
    QTest::newRow("default above runtime") << 0LL << 0.0 << 0 << 0LL << 0.0 << 512 * Mi << 256 * Mi << 0.0 << true << Ok
                                           << QString() << u"memory lowered to 256Mi"_s << 256 * Mi << 0.0;
    QTest::newRow("memory within caps") << 256 * Mi << 1.0 << 0 << 1 * Gi << 2.0 << 512 * Mi << 8 * Gi << 8.0 << true
                                        << Ok << QString() << QString() << 256 * Mi << 1.0;
    QTest::newRow("memory at policy cap") << 1 * Gi << 0.0 << 0 << 1 * Gi << 0.0 << 512 * Mi << 0LL << 0.0 << true << Ok
                                          << QString() << QString() << 1 * Gi << 0.0;
    QTest::newRow("memory over policy") << 2 * Gi << 0.0 << 0 << 1 * Gi << 0.0 << 512 * Mi << 0LL << 0.0 << true
                                        << Invalid << mem << u"2Gi is more than this host allows per app (1Gi)"_s << 0LL
                                        << 0.0;
    QTest::newRow("memory over runtime") << 3 * Gi / 2 << 0.0 << 0 << 0LL << 0.0 << 512 * Mi << 1 * Gi << 0.0 << true
                                         << Invalid << mem << u"1.5Gi is more than runtime docker has (1Gi)"_s << 0LL
                                         << 0.0;
    QTest::newRow("memory runtime unknown") << 64 * Gi << 0.0 << 0 << 0LL << 0.0 << 512 * Mi << 0LL << 0.0 << true << Ok
                                            << QString() << QString() << 64 * Gi << 0.0;
    QTest::newRow("cpus over policy") << 0LL << 4.0 << 0 << 0LL << 2.0 << 512 * Mi << 0LL << 0.0 << true << Invalid
                                      << cpu << u"4 CPUs is more than this host allows per app (2)"_s << 0LL << 0.0;
    QTest::newRow("cpus over runtime") << 0LL << 16.0 << 0 << 0LL << 0.0 << 512 * Mi << 0LL << 8.0 << true << Invalid
                                       << cpu << u"16 CPUs is more than runtime docker has (8)"_s << 0LL << 0.0;
    QTest::newRow("cpus fraction within") << 0LL << 0.5 << 0 << 0LL << 1.0 << 512 * Mi << 0LL << 4.0 << true << Ok
                                          << QString() << QString() << 512 * Mi << 0.5;
    QTest::newRow("cpus defaulted to policy cap")
        << 0LL << 0.0 << 0 << 0LL << 2.0 << 512 * Mi << 0LL << 1.0 << true << Ok << QString()
        << u"cpus limited to 1 (host policy)"_s << 512 * Mi << 1.0;
    QTest::newRow("route in range") << 0LL << 0.0 << 18080 << 0LL << 0.0 << 512 * Mi << 0LL << 0.0 << true << Ok
                                    << QString() << QString() << 512 * Mi << 0.0;
    QTest::newRow("route below range") << 0LL << 0.0 << 80 << 0LL << 0.0 << 512 * Mi << 0LL << 0.0 << true << Invalid
                                       << route << u"80 is outside the ports this host gives apps (1024-65535)"_s << 0LL
                                       << 0.0;
    QTest::newRow("route denied") << 0LL << 0.0 << 8443 << 0LL << 0.0 << 512 * Mi << 0LL << 0.0 << true << Invalid
                                  << route << u"8443 is reserved on this host"_s << 0LL << 0.0;
    QTest::newRow("cannot build") << 0LL << 0.0 << 0 << 0LL << 0.0 << 512 * Mi << 0LL << 0.0 << false << Failed
                                  << QString() << u"runtime docker cannot build images"_s << 0LL << 0.0;
}

void TestPlanner::limits()
{
    QFETCH(qint64, memory);
    QFETCH(double, cpus);
    QFETCH(int, routePort);
    QFETCH(qint64, policyMaxMemory);
    QFETCH(double, policyMaxCpus);
    QFETCH(qint64, policyDefaultMemory);
    QFETCH(qint64, capsMaxMemory);
    QFETCH(double, capsMaxCpus);
    QFETCH(bool, canBuild);
    QFETCH(int, code);
    QFETCH(QString, where);
    QFETCH(QString, contains);
    QFETCH(qint64, planMemory);
    QFETCH(double, planCpus);

    AppSpec spec = baseSpec();
    spec.run.memoryBytes = memory;
    spec.run.cpus = cpus;
    spec.route.port = routePort;
    HostPolicy policy;
    policy.maxMemoryBytes = policyMaxMemory;
    policy.maxCpus = policyMaxCpus;
    policy.defaultMemoryBytes = policyDefaultMemory;
    policy.deniedRoutePorts = {8443, 9000};
    adapters::RuntimeCapabilities caps;
    caps.kind = u"docker"_s;
    caps.canBuild = canBuild;
    caps.maxMemoryBytes = capsMaxMemory;
    caps.maxCpus = capsMaxCpus;

    const auto plan = makePlan(spec, policy, caps, u"/tmp/checkout"_s);
    if (code == Ok) {
        QVERIFY2(plan, qPrintable(why(plan)));
        QCOMPARE(plan->container.memoryBytes, planMemory);
        QCOMPARE(plan->container.cpus, planCpus);
        QCOMPARE(plan->routePort, routePort);
        if (!contains.isEmpty())
            QVERIFY2(plan->notes.join(u'\n').contains(contains), qPrintable(plan->notes.join(u'\n')));
        return;
    }
    QVERIFY2(!plan, "planned, but an error was expected");
    QCOMPARE(int(plan.error().code), code);
    QCOMPARE(plan.error().where, where);
    QVERIFY2(plan.error().message.contains(contains), qPrintable(why(plan)));
}

void TestPlanner::copiesSpec()
{
    AppSpec spec = baseSpec();
    spec.run.command = {u"/bin/httpd"_s, u"-f"_s};
    spec.run.env = {{u"GREETING"_s, u"hi"_s}};
    spec.labels = {{u"environment"_s, u"dev"_s}};
    spec.run.memoryBytes = 256 * Mi;
    spec.run.cpus = 0.5;
    spec.health.path = u"/healthz"_s;
    spec.health.timeoutSeconds = 30;
    spec.health.intervalMs = 250;
    spec.route.port = 18080;
    const auto plan = makePlan(spec, HostPolicy{}, adapters::RuntimeCapabilities{}, u"/tmp/checkout"_s);
    QVERIFY2(plan, qPrintable(why(plan)));
    QCOMPARE(plan->app, u"hello"_s);
    QCOMPARE(plan->container.command, spec.run.command);
    // The spec's environment, and PORT saying where the app listens (as Heroku and Dokku say it).
    QMap<QString, QString> env = spec.run.env;
    env.insert(u"PORT"_s, u"8080"_s);
    QCOMPARE(plan->container.env, env);
    QCOMPARE(plan->container.labels, spec.labels);
    QCOMPARE(plan->container.port, 8080);
    QCOMPARE(plan->container.memoryBytes, 256 * Mi);
    QCOMPARE(plan->container.cpus, 0.5);
    QCOMPARE(plan->healthPath, u"/healthz"_s);
    QCOMPARE(plan->healthTimeoutSeconds, 30);
    QCOMPARE(plan->healthIntervalMs, 250);
    QCOMPARE(plan->routePort, 18080);
    QVERIFY(plan->container.name.isEmpty()); // the deploy names the container and the image
    QVERIFY(plan->container.image.isEmpty());
    QVERIFY(plan->notes.isEmpty());
}

void TestPlanner::paths()
{
    AppSpec spec = baseSpec();
    spec.build.context = u"./app/"_s;
    spec.build.dockerfile = u"docker/../Dockerfile.prod"_s;
    const auto plan = makePlan(spec, HostPolicy{}, adapters::RuntimeCapabilities{}, u"/tmp/checkout/"_s);
    QVERIFY2(plan, qPrintable(why(plan)));
    QCOMPARE(plan->contextDir, u"/tmp/checkout/app"_s);
    QCOMPARE(plan->dockerfile, u"Dockerfile.prod"_s);

    const auto relative = makePlan(baseSpec(), HostPolicy{}, adapters::RuntimeCapabilities{}, u"checkout"_s);
    QVERIFY(!relative);
    QCOMPARE(relative.error().code, ErrorCode::Internal);
}

void TestPlanner::invalidSpecIsRefused()
{
    AppSpec spec = baseSpec();
    spec.build.dockerfile = u"../Dockerfile"_s;
    const auto plan = makePlan(spec, HostPolicy{}, adapters::RuntimeCapabilities{}, u"/tmp/checkout"_s);
    QVERIFY(!plan);
    QCOMPARE(plan.error().code, ErrorCode::Invalid);
    QCOMPARE(plan.error().where, u"build.dockerfile"_s);

    spec = baseSpec();
    spec.name = u"a;rm -rf"_s;
    const auto named = makePlan(spec, HostPolicy{}, adapters::RuntimeCapabilities{}, u"/tmp/checkout"_s);
    QVERIFY(!named);
    QCOMPARE(named.error().where, u"name"_s);
}

void TestPlanner::egress()
{
    adapters::RuntimeCapabilities isolating;
    isolating.kind = u"docker"_s;
    isolating.canIsolateEgress = true;
    adapters::RuntimeCapabilities open;
    open.kind = u"elsewhere"_s;
    QVERIFY(!open.canIsolateEgress); // a runtime has to claim it

    // The default opens egress, and needs nothing from the runtime.
    const auto all = makePlan(baseSpec(), HostPolicy{}, open, u"/tmp/checkout"_s);
    QVERIFY2(all, qPrintable(why(all)));
    QVERIFY(all->container.egress);

    AppSpec closed = baseSpec();
    closed.network.egress = AppSpec::Egress::None;
    const auto isolated = makePlan(closed, HostPolicy{}, isolating, u"/tmp/checkout"_s);
    QVERIFY2(isolated, qPrintable(why(isolated)));
    QVERIFY(!isolated->container.egress);

    const auto refused = makePlan(closed, HostPolicy{}, open, u"/tmp/checkout"_s);
    QVERIFY2(!refused, "planned egress none on a runtime that cannot isolate it");
    QCOMPARE(refused.error().code, ErrorCode::Invalid);
    QCOMPARE(refused.error().where, u"network.egress"_s);
    QVERIFY2(refused.error().message.contains(u"runtime elsewhere cannot"_s), qPrintable(why(refused)));
}

QTEST_GUILESS_MAIN(TestPlanner)
#include "tst_planner.moc"
