#pragma once
// Whether a pipeline's commands may run on the host, as pandod's user, outside any container:
// a task without image_resource (or with platform: host), a shell resource type without image:,
// and a task with `privileged: true` (its container has every capability of the host). Both the install's setting (off
// unless an administrator turned it on) and an administrator's mark on the pipeline are needed; a task read from an
// artifact (`file:`) never runs on the host, whatever they say, since whoever can push to that repository wrote it.
//
// Read at the start of each run and each resource check, so a change applies to the next one.
// Threading: any thread (database reads only).

#include "adapters/api/error.h"
#include "core/state/database.h"

#include <QString>

namespace pando::core::pipelines {

// The install setting's name and values in install_settings.
inline constexpr auto HostExecutionSetting = "pipelines.host_execution";
inline constexpr auto SettingOn = "on";
inline constexpr auto SettingOff = "off";

struct HostPolicy {
    QString pipeline;
    bool installEnabled = false;  // the install's setting
    bool pipelineAllowed = false; // an administrator's mark on the pipeline
    bool allowed() const { return installEnabled && pipelineAllowed; }
    // "host execution is off for this install", or that the pipeline is not allowed.
    QString why() const;
    // Why `what` (a task, a resource type) may not run on the host, with what to do instead.
    Error refusal(const QString &what, const QString &where, const QString &imageHint) const;
    // Why a privileged task may not run: its container holds the host as much as a host task.
    Error privilegedRefusal(const QString &task, const QString &where) const;
};

// The install's setting alone.
Result<bool> hostExecutionEnabled(Database &db);
// The setting and the pipeline's mark (a pipeline that does not exist has none).
Result<HostPolicy> hostPolicyFor(Database &db, const QString &pipeline);
// The error a `file:` task that names no image gets: a task file cannot pick the host.
Error fileTaskOnHost(const QString &file, const QString &where);

} // namespace pando::core::pipelines
