#pragma once
// The AppSpec's disk limit: run.resources.disk (an amount, as memory is written) and
// run.resources.diskPolicy (stop | warn). Read by appspec.cpp's walker; held to by core/disklimit.

#include "adapters/api/error.h"
#include "core/spec/appspec.h"

#include <QJsonObject>

namespace pando::core::detail {

struct DocNode;

inline constexpr qint64 MinDiskBytes = 1LL * 1024 * 1024; // below a MiB the layer's own files count for more

// Reads disk, diskBytes and diskPolicy from run.resources; errors name the field and its line.
Status readDisk(const DocNode &resources, AppSpec &spec);
// Field rules for a spec built in code.
Status checkDisk(qint64 bytes, AppSpec::Run::DiskPolicy policy);
// disk, diskBytes and diskPolicy as toJson() writes them (nothing when there is no limit).
void insertDiskJson(const AppSpec::Run &run, QJsonObject &resources);

} // namespace pando::core::detail

namespace pando::core {
// "stop" or "warn".
QString diskPolicyName(AppSpec::Run::DiskPolicy policy);
} // namespace pando::core
