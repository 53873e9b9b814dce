#include "hostpolicy.h"

#include "core/state/pipelinerepositories.h"

using namespace Qt::StringLiterals;

namespace pando::core::pipelines {

Error HostPolicy::refusal(const QString &what, const QString &where, const QString &imageHint) const
{
    return Error{ErrorCode::Forbidden, u"%1 would run on the host, as Pando's user: %2"_s.arg(what, why()), where,
                 u"%1, or ask an administrator to allow host execution for this pipeline (pando settings set "
                 "host-execution on; pando pipelines host-execution %2 allow)"_s.arg(imageHint, pipeline)};
}

QString HostPolicy::why() const
{
    return installEnabled ? u"pipeline %1 is not allowed to run commands on the host"_s.arg(pipeline)
                          : u"host execution is off for this install"_s;
}

Error HostPolicy::privilegedRefusal(const QString &task, const QString &where) const
{
    return Error{ErrorCode::Forbidden,
                 u"task %1 is privileged: its container would have every capability of the host: %2"_s.arg(task, why()),
                 where,
                 u"leave privileged out, or ask an administrator to allow host execution for this pipeline (pando "
                 "settings set host-execution on; pando pipelines host-execution %1 allow)"_s.arg(pipeline)};
}

Result<bool> hostExecutionEnabled(Database &db)
{
    auto value =
        InstallSettingRepository(db).value(QString::fromLatin1(HostExecutionSetting), QString::fromLatin1(SettingOff));
    if (!value)
        return std::unexpected(value.error());
    return *value == QLatin1String(SettingOn);
}

Result<HostPolicy> hostPolicyFor(Database &db, const QString &pipeline)
{
    HostPolicy policy;
    policy.pipeline = pipeline;
    auto enabled = hostExecutionEnabled(db);
    if (!enabled)
        return std::unexpected(enabled.error());
    policy.installEnabled = *enabled;
    auto record = PipelineRepository(db).find(pipeline);
    if (record)
        policy.pipelineAllowed = record->hostExecution;
    else if (record.error().code != ErrorCode::NotFound)
        return std::unexpected(record.error());
    return policy;
}

Error fileTaskOnHost(const QString &file, const QString &where)
{
    return Error{ErrorCode::Forbidden,
                 u"task file %1 names no image_resource (or says platform: host); a task file never runs on the "
                 "host"_s.arg(file),
                 where, u"add image_resource with a local image to %1"_s.arg(file)};
}

} // namespace pando::core::pipelines
