// The service's answers as the API shows them.
#include "pipelineservice.h"

#include <QJsonArray>

namespace pando::core::pipelines {

QJsonObject PipelineView::toJson() const
{
    return QJsonObject{{QStringLiteral("name"), record.name},
                       {QStringLiteral("config_version"), record.configVersion},
                       {QStringLiteral("paused"), record.paused},
                       {QStringLiteral("paused_reason"), record.pausedReason},
                       {QStringLiteral("max_runs"), record.maxRuns},
                       {QStringLiteral("host_execution"), record.hostExecution},
                       {QStringLiteral("created_ms"), record.createdMs},
                       {QStringLiteral("updated_ms"), record.updatedMs},
                       {QStringLiteral("jobs"), QJsonArray::fromStringList(jobs)},
                       {QStringLiteral("config"), config}};
}

QJsonObject SetPipelineResult::toJson() const
{
    return QJsonObject{{QStringLiteral("pipeline"), pipeline.toJson()},
                       {QStringLiteral("diff"), QJsonArray::fromStringList(diff)},
                       {QStringLiteral("created"), created},
                       {QStringLiteral("changed"), changed}};
}

QJsonObject TriggerResult::toJson() const
{
    return pipelines::toJson(run);
}

} // namespace pando::core::pipelines
