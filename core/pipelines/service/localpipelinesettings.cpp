// What setting a pipeline keeps beside its text (the jobs' settings the run queue and the log
// reaper read, the renames old_name asks for), and the privileged tasks it may not have.
#include "localpipelineservice.h"

#include "core/pipelines/pipeline/hostpolicy.h"
#include "core/state/pipelinerepositories.h"

namespace pando::core::pipelines {

// What the run queue and the log reaper keep of each job (PipelineRecord::jobs).
QMap<QString, JobSettings> LocalPipelineService::jobSettingsOf(const Pipeline &pipeline)
{
    QMap<QString, JobSettings> jobs;
    for (const Job &job : pipeline.jobs) {
        JobSettings settings;
        settings.maxInFlight = job.maxInFlight;
        settings.serialGroups = job.serialGroups;
        settings.keepLogsOfRuns = job.logRetention.builds;
        settings.keepLogsForDays = job.logRetention.days;
        settings.keepSucceededLogs = job.logRetention.minimumSucceeded;
        settings.oldName = job.oldName;
        jobs.insert(job.name, settings);
    }
    return jobs;
}

QMap<QString, QString> LocalPipelineService::resourceOldNamesOf(const Pipeline &pipeline)
{
    QMap<QString, QString> renamed; // new name → old name
    for (const Resource &resource : pipeline.resources)
        if (!resource.oldName.isEmpty())
            renamed.insert(resource.name, resource.oldName);
    return renamed;
}

Status LocalPipelineService::refusePrivileged(const QString &name, const Pipeline &pipeline)
{
    const Step *found = nullptr;
    for (const Job &job : pipeline.jobs)
        forEachStepOf(job, [&found](const Step &step) {
            if (!found && step.kind == StepKind::Task && step.task.privileged)
                found = &step;
        });
    if (!found)
        return {};
    auto policy = hostPolicyFor(m_deps.db, name);
    if (!policy)
        return std::unexpected(policy.error());
    // A pipeline being made cannot carry an administrator's mark yet: with host execution on for
    // the install it is set, and its privileged tasks wait for the mark.
    PipelineRepository pipelines(m_deps.db);
    const bool exists = pipelines.find(name).has_value();
    if (policy->installEnabled && (policy->pipelineAllowed || !exists))
        return {};
    return std::unexpected(policy->privilegedRefusal(found->name, found->keyPath(QStringLiteral("privileged"))));
}

void LocalPipelineService::recordJobSettings()
{
    PipelineRepository pipelines(m_deps.db);
    auto all = pipelines.list();
    if (!all)
        return;
    for (const PipelineRecord &record : std::as_const(*all)) {
        if (!record.jobs.isEmpty())
            continue; // every pipeline has a job: an empty map was set before they were kept
        auto parsed = parseStored(record, false);
        if (!parsed)
            continue; // its runs error when they start, saying why
        if (auto saved = pipelines.setJobSettings(record.name, jobSettingsOf(*parsed)); !saved)
            qWarning("pipelines: recording the job settings of %s failed: %s", qPrintable(record.name),
                     qPrintable(saved.error().text()));
    }
}

} // namespace pando::core::pipelines
