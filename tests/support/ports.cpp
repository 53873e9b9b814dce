#include "tests/support/ports.h"

#include <QFile>
#include <QTcpServer>

#include <random>

namespace pando::test {

namespace {

// The first port the kernel hands out on its own (net.ipv4.ip_local_port_range).
int ephemeralFloor()
{
    QFile range(QStringLiteral("/proc/sys/net/ipv4/ip_local_port_range"));
    if (!range.open(QIODevice::ReadOnly))
        return 32768;
    bool ok = false;
    const int floor = range.readAll().simplified().split(' ').value(0).toInt(&ok);
    return ok ? floor : 32768;
}

} // namespace

quint16 unusedPort()
{
    const int top = ephemeralFloor() - 1;
    const int bottom = 10000;
    if (top - bottom >= 1000) {
        static std::mt19937 random(std::random_device{}());
        std::uniform_int_distribution<int> pick(bottom, top);
        for (int attempt = 0; attempt < 100; ++attempt) {
            const auto port = quint16(pick(random));
            QTcpServer probe;
            if (probe.listen(QHostAddress::LocalHost, port) && probe.serverPort() == port)
                return port; // closed again when probe goes away
        }
    }
    QTcpServer probe; // no room below the range: the kernel's choice, with its small race
    if (!probe.listen(QHostAddress::LocalHost, 0))
        return 0;
    return probe.serverPort();
}

} // namespace pando::test
