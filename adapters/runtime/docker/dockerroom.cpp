// DockerRuntime's room and disk use: what GET /capacity and the disk limits read.
#include "adapters/runtime/docker/dockerruntime.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonObject>

#include <sys/statvfs.h>

namespace pando::adapters::docker {

namespace {

// MemTotal and MemAvailable from /proc/meminfo, in bytes (0 when unreadable).
std::pair<qint64, qint64> hostMemory()
{
    QFile file(QStringLiteral("/proc/meminfo"));
    if (!file.open(QIODevice::ReadOnly))
        return {0, 0};
    qint64 total = 0;
    qint64 available = 0;
    for (const QByteArray &line : file.readAll().split('\n')) {
        const QList<QByteArray> parts = line.simplified().split(' ');
        if (parts.size() < 2)
            continue;
        if (parts[0] == "MemTotal:")
            total = parts[1].toLongLong() * 1024;
        else if (parts[0] == "MemAvailable:")
            available = parts[1].toLongLong() * 1024;
    }
    return {total, available};
}

} // namespace

Result<QList<RuntimeRoom>> DockerRuntime::rooms()
{
    auto info = m_client.get(QStringLiteral("/info"));
    if (!info)
        return std::unexpected(info.error());
    const QJsonObject o = info->json().object();
    RuntimeRoom room;
    room.kind = QStringLiteral("docker");
    room.canMeasureDisk = true;
    room.cpus = o.value(QLatin1String("NCPU")).toDouble();
    room.memoryBytes = qint64(o.value(QLatin1String("MemTotal")).toDouble());
    QStringList unknown;
    // Docker reports no free memory. This host's kernel does, and it is the engine's own when
    // both report the same total (a Docker in a VM reports the VM's).
    const auto [hostTotal, hostAvailable] = hostMemory();
    if (hostTotal > 0 && hostTotal == room.memoryBytes)
        room.memoryAvailableBytes = hostAvailable;
    else
        unknown << QStringLiteral("free memory (Docker does not report it)");
    // The filesystem images and writable layers live on, when this host can see it.
    const QString rootDir = o.value(QLatin1String("DockerRootDir")).toString();
    room.disk = rootDir;
    struct statvfs fs {};
    if (!rootDir.isEmpty() && QFileInfo::exists(rootDir) &&
        ::statvfs(QFile::encodeName(rootDir).constData(), &fs) == 0) {
        room.diskBytes = qint64(fs.f_blocks) * qint64(fs.f_frsize);
        room.diskAvailableBytes = qint64(fs.f_bavail) * qint64(fs.f_frsize);
    } else {
        unknown << QStringLiteral("disk (%1 is not on this host)")
                       .arg(rootDir.isEmpty() ? QStringLiteral("the root dir") : rootDir);
    }
    if (!unknown.isEmpty())
        room.note = QStringLiteral("unknown: ") + unknown.join(QStringLiteral(", "));
    return QList<RuntimeRoom>{room};
}

Result<qint64> DockerRuntime::diskUsage(const QString &id)
{
    // size=1 makes Docker walk the container's writable layer: slower than a plain inspect.
    auto response =
        m_client.get(QStringLiteral("/containers/%1/json").arg(id), {{QStringLiteral("size"), QStringLiteral("1")}});
    if (!response)
        return std::unexpected(response.error());
    const QJsonValue size = response->json().object().value(QLatin1String("SizeRw"));
    if (!size.isDouble())
        return fail(ErrorCode::Unavailable, QStringLiteral("Docker did not report the container's disk use (SizeRw)"),
                    id);
    return qint64(size.toDouble());
}

} // namespace pando::adapters::docker
