#pragma once
// An image's root file system from its layers, as a container engine makes it: each layer (a
// tar, gzip- or zstd-compressed or not) applied in order over the ones before, its whiteouts
// (".wh.NAME" removes NAME, ".wh..wh..opq" empties a directory of what lower layers put there)
// taking effect. Links met on the way resolve inside the root as if it were "/", so nothing is
// written or removed outside it; devices are left out (Pando does not run as a kernel would);
// an image that unpacks to more than the limits allow is refused.
//
// Threading: stateless; one rootfs at a time per directory.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"

#include <QString>

namespace pando::adapters::registrykit {

struct UnpackLimits {
    qint64 maxBytes = 64LL * 1024 * 1024 * 1024;
    qint64 maxEntries = 4'000'000;
};

class RootfsBuilder {
public:
    explicit RootfsBuilder(QString rootfs, UnpackLimits limits = {});
    // Applies the layer in file (named `what` in errors) over what is there.
    Status apply(const QString &file, const QString &what, const CancelToken &cancel);
    qint64 devicesSkipped() const { return m_devicesSkipped; }

private:
    QString m_root;
    UnpackLimits m_limits;
    qint64 m_bytes = 0;
    qint64 m_entries = 0;
    qint64 m_devicesSkipped = 0;
};

} // namespace pando::adapters::registrykit
