// The service's answers as the API shows them.
#include "pipelineservice.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace pando::core::pipelines {

QJsonObject PipelineView::toJson() const
{
    QJsonObject out{{QStringLiteral("name"), record.name},
                    {QStringLiteral("config_version"), record.configVersion},
                    {QStringLiteral("paused"), record.paused},
                    {QStringLiteral("paused_reason"), record.pausedReason},
                    {QStringLiteral("max_runs"), record.maxRuns},
                    {QStringLiteral("host_execution"), record.hostExecution},
                    {QStringLiteral("set_by"), record.setBy},
                    {QStringLiteral("set_by_job"), record.setByJob},
                    {QStringLiteral("archived"), record.archivedMs > 0},
                    {QStringLiteral("archived_ms"), record.archivedMs},
                    {QStringLiteral("created_ms"), record.createdMs},
                    {QStringLiteral("updated_ms"), record.updatedMs},
                    {QStringLiteral("jobs"), QJsonArray::fromStringList(jobs)},
                    {QStringLiteral("config"), config}};
    QJsonObject paused;
    for (auto it = pausedJobs.begin(); it != pausedJobs.end(); ++it)
        paused.insert(it.key(),
                      QJsonObject{{QStringLiteral("reason"), it->reason}, {QStringLiteral("paused_ms"), it->pausedMs}});
    out.insert(QStringLiteral("paused_jobs"), paused);
    if (detailed) {
        out.insert(QStringLiteral("config_yaml"), record.configYaml);
        out.insert(QStringLiteral("config_diff"), QJsonArray::fromStringList(configDiff));
    }
    return out;
}

QJsonObject JobView::toJson() const
{
    const auto run = [](const std::optional<RunRecord> &r) {
        return r ? QJsonValue(pipelines::toJson(*r)) : QJsonValue();
    };
    return QJsonObject{{QStringLiteral("name"), name},
                       {QStringLiteral("paused"), pause.has_value()},
                       {QStringLiteral("paused_reason"), pause ? pause->reason : QString()},
                       {QStringLiteral("paused_ms"), pause ? pause->pausedMs : 0},
                       {QStringLiteral("manual_trigger"), manualTrigger},
                       {QStringLiteral("last_run"), run(lastRun)},
                       {QStringLiteral("next_run"), run(nextRun)}};
}

QJsonObject ResourceView::toJson() const
{
    QJsonObject out{{QStringLiteral("name"), name},
                    {QStringLiteral("type"), type},
                    {QStringLiteral("checked_ms"), checkedMs},
                    {QStringLiteral("check_error"), checkError},
                    {QStringLiteral("webhook"), webhook}};
    if (!pinned.isEmpty()) {
        out.insert(QStringLiteral("pinned_version"), pinned);
        out.insert(QStringLiteral("pinned_in_config"), pinnedInConfig);
        out.insert(QStringLiteral("pinned_by"), pinnedBy);
        out.insert(QStringLiteral("pinned_ms"), pinnedMs);
    }
    return out;
}

QJsonObject ResourceVersionView::toJson() const
{
    return QJsonObject{{QStringLiteral("seq"), record.seq},
                       {QStringLiteral("version"), QJsonDocument::fromJson(record.versionJson.toUtf8()).object()},
                       {QStringLiteral("metadata"), QJsonDocument::fromJson(record.metadataJson.toUtf8()).array()},
                       {QStringLiteral("found_ms"), record.foundMs},
                       {QStringLiteral("pinned"), pinned}};
}

QJsonObject SetPipelineResult::toJson() const
{
    QJsonArray sources;
    for (const auto &[name, type] : varSources)
        sources.append(QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("type"), type}});
    return QJsonObject{{QStringLiteral("var_sources"), sources},
                       {QStringLiteral("pipeline"), pipeline.toJson()},
                       {QStringLiteral("diff"), QJsonArray::fromStringList(diff)},
                       {QStringLiteral("created"), created},
                       {QStringLiteral("changed"), changed},
                       {QStringLiteral("ignored_keys"), QJsonArray::fromStringList(ignoredKeys)},
                       {QStringLiteral("undefined_vars"), QJsonArray::fromStringList(undefinedVars)}};
}

QJsonObject TriggerResult::toJson() const
{
    return pipelines::toJson(run);
}

} // namespace pando::core::pipelines
