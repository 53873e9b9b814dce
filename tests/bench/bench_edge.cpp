// The edge's cost, side by side in one run: requests per second and p99 latency to one app (an
// HTTP/1.1 server on its own thread) directly on its port and through the Caddy edge, with the same
// keep-alive clients on loopback; then how long a route change takes until a new request reaches
// the new backend. Targets (issue 14): through the edge >= 0.8x the direct throughput and at most
// +1 ms p99; a switch visible within 50 ms. PANDO_BENCH_QUICK=1: short rounds, to prove it runs.

#include "adapters/routing/caddy/caddyedge.h"
#include "tests/bench/benchkit.h"
#include "tests/support/httpbackend.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>

#include <atomic>
#include <cstdio>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::test;

namespace {

struct Load {
    double perSecond = 0;
    double p99Ms = 0;
    int failed = 0;
};

// clients keep-alive connections, each sending requests one after another for ms.
Load measure(quint16 port, int clients, int ms)
{
    std::vector<std::vector<qint64>> latencies(static_cast<size_t>(clients));
    std::atomic_int failed{0};
    std::atomic_bool stop{false};
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
        threads.emplace_back([&, c] {
            Client client;
            if (!client.connectTo(port)) {
                ++failed;
                return;
            }
            QElapsedTimer timer;
            while (!stop) {
                timer.start();
                if (!client.request("ping")) {
                    ++failed;
                    client.close();
                    if (!client.connectTo(port))
                        return;
                    continue;
                }
                latencies[size_t(c)].push_back(timer.nsecsElapsed());
            }
        });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    stop = true;
    for (std::thread &t : threads)
        t.join();
    QList<qint64> all;
    for (const auto &list : latencies)
        for (qint64 ns : list)
            all << ns;
    std::sort(all.begin(), all.end());
    Load load;
    load.failed = failed;
    load.perSecond = all.size() * 1000.0 / ms;
    load.p99Ms = all.isEmpty() ? 0 : double(all[qsizetype(double(all.size() - 1) * 0.99)]) / 1e6;
    return load;
}

// CPU time (user + system) a process has used, in microseconds; 0 when it cannot be read.
double cpuMicros(qint64 pid)
{
    QFile stat(pid > 0 ? u"/proc/%1/stat"_s.arg(pid) : u"/proc/self/stat"_s);
    if (!stat.open(QIODevice::ReadOnly))
        return 0;
    // After the command's name (in parentheses, which may hold spaces): state is field 3, utime 14.
    const QByteArray line = stat.readAll();
    const QList<QByteArray> fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
    if (fields.size() < 13)
        return 0;
    const double ticks = fields[11].toDouble() + fields[12].toDouble();
    return ticks * 1e6 / double(::sysconf(_SC_CLK_TCK));
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const bool quick = qEnvironmentVariableIntValue("PANDO_BENCH_QUICK") == 1;
    if (adapters::caddy::CaddyEdge::findCaddy().isEmpty()) {
        std::printf("bench_edge: caddy is not installed (Debian's caddy package)\n");
        return 1;
    }
    QTemporaryDir dir;
    adapters::caddy::CaddyEdge edge({.stateDir = dir.filePath(u"edge"_s)});
    HttpBackend a("A"), b("B");
    auto route = edge.ensure(u"bench"_s, 0);
    if (!route || !edge.setBackend(u"bench"_s, u"127.0.0.1"_s, a.port())) {
        std::printf("bench_edge: the edge did not start: %s\n",
                    qPrintable(route ? u"setBackend failed"_s : route.error().text()));
        discardResult(edge.stop(), "the benchmark failed already");
        return 1;
    }
    const int ms = quick ? 500 : 5000;
    const int clients = 4;
    // Warm both paths (connections, Caddy's upstream pool) before measuring.
    measure(a.port(), clients, 200);
    measure(quint16(route->port), clients, 200);
    double self = cpuMicros(0);
    const Load direct = measure(a.port(), clients, ms);
    const double directCpu = cpuMicros(0) - self;
    const qint64 caddy = edge.status().pid;
    double caddyBefore = cpuMicros(caddy);
    self = cpuMicros(0);
    const Load through = measure(quint16(route->port), clients, ms);
    const double throughSelfCpu = cpuMicros(0) - self;
    const double caddyCpu = cpuMicros(caddy) - caddyBefore;
    std::printf("requests/s   direct %9.0f   through the edge %9.0f   ratio %.2f (target >= 0.80)\n", direct.perSecond,
                through.perSecond, direct.perSecond > 0 ? through.perSecond / direct.perSecond : 0);
    std::printf("p99 latency  direct %8.3f ms  through the edge %8.3f ms  +%.3f ms (target <= +1 ms)\n", direct.p99Ms,
                through.p99Ms, through.p99Ms - direct.p99Ms);
    std::printf("failed requests: direct %d, through the edge %d\n", direct.failed, through.failed);
    // Where the time goes: the clients and the app (this process) against the edge's own work.
    const auto perRequest = [ms](double micros, const Load &load) {
        return load.perSecond > 0 ? micros / (load.perSecond * ms / 1000) : 0;
    };
    std::printf("CPU per request: clients and app %.1f us (direct), %.1f us (through); the edge (Caddy) %.1f us on "
                "%ld cores\n",
                perRequest(directCpu, direct), perRequest(throughSelfCpu, through), perRequest(caddyCpu, through),
                ::sysconf(_SC_NPROCESSORS_ONLN));

    // A switch: from the call until a new connection's request is answered by the new backend.
    QList<qint64> visible;
    QList<qint64> call;
    for (int i = 0; i < (quick ? 3 : 20); ++i) {
        HttpBackend &next = i % 2 == 0 ? b : a;
        const QByteArray name = i % 2 == 0 ? "B" : "A";
        QElapsedTimer timer;
        timer.start();
        if (!edge.setBackend(u"bench"_s, u"127.0.0.1"_s, next.port())) {
            std::printf("bench_edge: a switch failed\n");
            discardResult(edge.stop(), "the benchmark failed already");
            return 1;
        }
        call << timer.nsecsElapsed() / 1000;
        while (true) {
            auto reply = oneShot(quint16(route->port));
            if (reply && reply->backend == name)
                break;
        }
        visible << timer.nsecsElapsed() / 1000;
    }
    std::printf("route change visible after %.1f ms (median; the admin call %.1f ms) (target <= 50 ms)\n",
                double(bench::median(visible)) / 1000, double(bench::median(call)) / 1000);
    discardResult(edge.stop(), "the figures are printed; a Caddy left over serves only a temporary port");
    return direct.failed + through.failed == 0 ? 0 : 1;
}
