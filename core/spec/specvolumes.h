#pragma once
// The AppSpec's run.volumes: a list of {name, path, size}. Each is a named volume of the app on
// its runtime, made at its first deploy and mounted at path by every container of the app after
// it, so what the app writes there survives deploys, rollbacks and restarts (docs/appspec.md).

#include "adapters/api/error.h"
#include "core/spec/appspec.h"

#include <QJsonArray>

namespace pando::core::detail {

struct DocNode;

inline constexpr int MaxVolumes = 16;
inline constexpr qsizetype MaxVolumeNameChars = 32;

// Reads run.volumes (when present) into spec; errors name the field ("run.volumes[1].path") and its line.
Status readVolumes(const DocNode &run, AppSpec &spec);
// Field rules for a spec built in code.
Status checkVolumes(const QList<AppSpec::Run::Volume> &volumes);
// run.volumes as toJson() writes it.
QJsonArray volumesJson(const QList<AppSpec::Run::Volume> &volumes);

} // namespace pando::core::detail
