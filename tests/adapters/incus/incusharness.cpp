#include "tests/adapters/incus/incusharness.h"

#include "adapters/runtime/incus/incusruntime.h"
#include "tests/adapters/docker/dockerharness.h"

#include <QMutex>

namespace pando::test {

namespace {
const QString BaseProperty = QStringLiteral("dev.pando.test-base");
}

bool IncusHarness::available(QString *why)
{
    adapters::incus::IncusRuntime runtime;
    auto status = runtime.ping();
    if (!status && why) {
        *why = status.error().text();
        if (!status.error().hint.isEmpty())
            *why += QStringLiteral(" (") + status.error().hint + u')';
        *why += QStringLiteral("; scripts/lib.sh's ensure_incus sets Incus up");
    }
    return status.has_value();
}

Result<QString> IncusHarness::ensureBaseImage()
{
    static QMutex mutex;
    QMutexLocker lock(&mutex);
    adapters::incus::IncusRuntime runtime;
    auto images = runtime.images({{BaseProperty, QStringLiteral("busybox")}});
    if (!images)
        return std::unexpected(images.error());
    if (!images->isEmpty())
        return images->first().id;
    auto docker = DockerHarness::ensureBaseImage();
    if (!docker)
        return docker;
    return runtime.importFromDocker(*docker, {{BaseProperty, QStringLiteral("busybox")}},
                                    QStringLiteral("busybox for Pando's tests"), CancelToken());
}

} // namespace pando::test
