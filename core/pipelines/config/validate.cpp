// Checks across the typed pipeline: what one mapping alone cannot tell.
#include "core/pipelines/config/validate.h"

#include <QHash>
#include <QSet>

#include <algorithm>
#include <functional>

using namespace Qt::StringLiterals;

namespace pando::core::pipelines::internal {

namespace {

void forEachStep(const Step &step, bool withHooks, const std::function<void(const Step &)> &visit)
{
    visit(step);
    for (const auto &child : step.steps)
        forEachStep(child, withHooks, visit);
    if (!withHooks)
        return;
    for (const StepPtr &hook :
         {step.hooks.onSuccess, step.hooks.onFailure, step.hooks.onError, step.hooks.onAbort, step.hooks.ensure}) {
        if (hook)
            forEachStep(*hook, withHooks, visit);
    }
}

void forEachStepOfJob(const Job &job, const std::function<void(const Step &)> &visit)
{
    for (const auto &step : job.plan)
        forEachStep(step, true, visit);
    for (const StepPtr &hook :
         {job.hooks.onSuccess, job.hooks.onFailure, job.hooks.onError, job.hooks.onAbort, job.hooks.ensure}) {
        if (hook)
            forEachStep(*hook, true, visit);
    }
}

// What a step may consume: the artifacts earlier steps provide. `open` once a file: task ran,
// whose outputs are known only at run time, so later consumers cannot be checked.
struct Available {
    QSet<QString> names;
    bool open = false;

    bool has(const QString &name) const { return open || names.contains(name); }
    void merge(const Available &other)
    {
        names.unite(other.names);
        open = open || other.open;
    }
};

Status checkHooks(const Hooks &hooks, const Available &available);

Result<Available> flow(const Step &step, Available available)
{
    if (!step.across.empty()) {
        // Each combination runs the step on its own: it needs what it needs, and what it makes
        // stays with it, as in Concourse.
        Step once = step;
        once.across.clear();
        PANDO_PIPE_TRY(inside, flow(once, available));
        return available;
    }
    switch (step.kind) {
    case StepKind::Get:
        available.names.insert(step.name);
        break;
    case StepKind::Put:
        if (step.put.inputs == PutStep::Inputs::List) {
            for (const auto &input : step.put.inputList) {
                if (!available.has(input))
                    return invalid(step.path, u"put input \"%1\" is not provided by any earlier step"_s.arg(input));
            }
        }
        if (!step.put.noGet)
            available.names.insert(step.name);
        break;
    case StepKind::Task: {
        if (!step.task.image.isEmpty() && !available.has(step.task.image))
            return invalid(step.path, u"task image \"%1\" is not provided by any earlier step"_s.arg(step.task.image));
        if (!step.task.config) {
            const QString artifact = step.task.fileArtifact();
            if (!available.has(artifact)) {
                return invalid(step.path, u"task file \"%1\" is in \"%2\", which no earlier step provides"_s.arg(
                                              step.task.file, artifact));
            }
            available.open = true;
            break;
        }
        for (const auto &input : step.task.config->inputs) {
            const QString artifact = step.task.inputMapping.value(input.name, input.name);
            if (input.optional || available.has(artifact))
                continue;
            const QString mapped = artifact == input.name ? QString() : u" (mapped to \"%1\")"_s.arg(artifact);
            return invalid(step.path,
                           u"task input \"%1\"%2 is not provided by any earlier step"_s.arg(input.name, mapped),
                           u"get it first, or mark it optional: true"_s);
        }
        for (const auto &artifact : taskOutputArtifacts(step))
            available.names.insert(artifact);
        break;
    }
    case StepKind::Approve:
        break; // consumes and makes no artifact
    case StepKind::LoadVar:
        if (!available.has(step.loadVar.fileArtifact()))
            return invalid(step.path, u"load_var file \"%1\" is in \"%2\", which no earlier step provides"_s.arg(
                                          step.loadVar.file, step.loadVar.fileArtifact()));
        break; // makes a local var, no artifact
    case StepKind::SetPipeline:
        for (const QString &file : QStringList{step.setPipeline.file} + step.setPipeline.varFiles) {
            const QString artifact = file.section(u'/', 0, 0);
            if (!available.has(artifact))
                return invalid(
                    step.path,
                    u"set_pipeline reads \"%1\" from \"%2\", which no earlier step provides"_s.arg(file, artifact));
        }
        break;
    case StepKind::InParallel: {
        // Siblings start together, so none sees another's outputs; all are there afterwards.
        Available after = available;
        for (const auto &child : step.steps) {
            PANDO_PIPE_TRY(childAfter, flow(child, available));
            after.merge(*childAfter);
        }
        available = after;
        break;
    }
    case StepKind::Do:
        for (const auto &child : step.steps) {
            PANDO_PIPE_TRY(next, flow(child, available));
            available = *next;
        }
        break;
    case StepKind::Try:
        for (const auto &child : step.steps) {
            PANDO_PIPE_TRY(next, flow(child, available));
            available = *next;
        }
        break;
    }
    PANDO_PIPE_TRY(hooks, checkHooks(step.hooks, available));
    return available;
}

// A hook sees what the step made; what the hook makes stays with it.
Status checkHooks(const Hooks &hooks, const Available &available)
{
    for (const StepPtr &hook : {hooks.onSuccess, hooks.onFailure, hooks.onError, hooks.onAbort, hooks.ensure}) {
        if (!hook)
            continue;
        PANDO_PIPE_TRY(after, flow(*hook, available));
    }
    return {};
}

Status checkUniqueNames(const Job &job)
{
    // Two gets (or two tasks) of one name in a plan would be one artifact, one identity in a
    // view; two approve steps of one name would be one approval object ("run/r…/step/name");
    // puts may repeat (a status set to pending, then to success), hooks are their own scope.
    QHash<QString, QString> seen; // "get:name" → path
    Status status;
    for (const auto &top : job.plan) {
        forEachStep(top, false, [&](const Step &step) {
            if (!status ||
                (step.kind != StepKind::Get && step.kind != StepKind::Task && step.kind != StepKind::Approve))
                return;
            const QString key = stepKindName(step.kind) + u':' + step.name;
            if (auto it = seen.constFind(key); it != seen.cend()) {
                status = invalid(step.path, u"%1 \"%2\" is already used in this job at %3"_s.arg(
                                                stepKindName(step.kind), step.name, *it));
                return;
            }
            seen.insert(key, step.path);
        });
    }
    return status;
}

QSet<QString> resourcesUsed(const Job &job)
{
    QSet<QString> used;
    forEachStepOfJob(job, [&](const Step &step) {
        if (step.kind == StepKind::Get)
            used.insert(step.get.resource);
        else if (step.kind == StepKind::Put)
            used.insert(step.put.resource);
    });
    return used;
}

struct Edge {
    QString upstream;
    QString stepPath; // the get in the downstream job that names upstream in passed:
};

Status checkCycles(const Pipeline &pipeline, const QHash<QString, QList<Edge>> &upstreamOf)
{
    // Depth-first over "job ← its passed: jobs"; a job met again on the current path closes a cycle.
    enum class Mark { None, Active, Done };
    QHash<QString, Mark> marks;
    QStringList stack;
    QStringList stackPaths;
    std::function<Status(const QString &)> visit = [&](const QString &job) -> Status {
        marks[job] = Mark::Active;
        stack << job;
        for (const Edge &edge : upstreamOf.value(job)) {
            stackPaths << edge.stepPath;
            const Mark mark = marks.value(edge.upstream, Mark::None);
            if (mark == Mark::Active) {
                const qsizetype from = stack.indexOf(edge.upstream);
                // stack[from..] each depends on the next; the arrow reads "upstream → downstream".
                QStringList cycle = stack.mid(from);
                QStringList paths = stackPaths.mid(from);
                std::reverse(cycle.begin(), cycle.end());
                std::reverse(paths.begin(), paths.end());
                // Start at the smallest name so the message does not depend on the walk order.
                const qsizetype start = std::min_element(cycle.begin(), cycle.end()) - cycle.begin();
                std::rotate(cycle.begin(), cycle.begin() + start, cycle.end());
                std::rotate(paths.begin(), paths.begin() + start, paths.end());
                cycle << cycle.first();
                return invalid(paths.isEmpty() ? edge.stepPath : paths.first(),
                               u"passed: forms a cycle: %1"_s.arg(cycle.join(u" → "_s)),
                               u"a job can only take versions that passed jobs before it"_s);
            }
            if (mark == Mark::None) {
                if (auto ok = visit(edge.upstream); !ok)
                    return ok;
            }
            stackPaths.removeLast();
        }
        stack.removeLast();
        marks[job] = Mark::Done;
        return {};
    };
    for (const auto &job : pipeline.jobs) {
        if (marks.value(job.name, Mark::None) == Mark::None) {
            if (auto ok = visit(job.name); !ok)
                return ok;
        }
    }
    return {};
}

} // namespace

Status validatePipeline(const Pipeline &pipeline)
{
    QHash<QString, QString> resourceRenamedBy; // old_name → the resource that takes its versions
    for (const auto &resource : pipeline.resources) {
        if (resource.oldName.isEmpty())
            continue;
        const QString where = resource.path + u".old_name"_s;
        if (pipeline.resource(resource.oldName))
            return invalid(where,
                           u"old_name \"%1\" is the name of another resource of this pipeline"_s.arg(resource.oldName));
        if (resourceRenamedBy.contains(resource.oldName))
            return invalid(where, u"resource \"%1\" also names old_name \"%2\""_s.arg(
                                      resourceRenamedBy.value(resource.oldName), resource.oldName));
        resourceRenamedBy.insert(resource.oldName, resource.name);
    }
    QHash<QString, QSet<QString>> used;
    QHash<QString, QString> renamedBy; // old_name → the job that takes its history
    for (const auto &job : pipeline.jobs) {
        used.insert(job.name, resourcesUsed(job));
        if (job.oldName.isEmpty())
            continue;
        const QString where = job.path + u".old_name"_s;
        if (pipeline.job(job.oldName))
            return invalid(where, u"old_name \"%1\" is the name of another job of this pipeline"_s.arg(job.oldName));
        if (renamedBy.contains(job.oldName))
            return invalid(where,
                           u"job \"%1\" also names old_name \"%2\""_s.arg(renamedBy.value(job.oldName), job.oldName));
        renamedBy.insert(job.oldName, job.name);
    }

    QHash<QString, QList<Edge>> upstreamOf;
    for (const auto &job : pipeline.jobs) {
        PANDO_PIPE_TRY(unique, checkUniqueNames(job));
        Status status;
        forEachStepOfJob(job, [&](const Step &step) {
            if (!status)
                return;
            if (step.kind != StepKind::Get && step.kind != StepKind::Put)
                return;
            const QString resource = step.kind == StepKind::Get ? step.get.resource : step.put.resource;
            if (!pipeline.resource(resource)) {
                status = invalid(step.path, u"resource \"%1\" is not declared under resources"_s.arg(resource));
                return;
            }
            if (step.kind != StepKind::Get)
                return;
            for (const QString &upstream : step.get.passed) {
                if (upstream == job.name) {
                    status = invalid(step.path, u"passed: forms a cycle: %1 → %1"_s.arg(job.name),
                                     u"a job cannot take versions that passed itself"_s);
                    return;
                }
                if (!pipeline.job(upstream)) {
                    status = invalid(step.path, u"passed: names job \"%1\", which is not declared"_s.arg(upstream));
                    return;
                }
                if (!used.value(upstream).contains(resource)) {
                    status = invalid(
                        step.path, u"passed: job \"%1\" does not get or put resource \"%2\""_s.arg(upstream, resource));
                    return;
                }
                upstreamOf[job.name] << Edge{upstream, step.path};
            }
        });
        if (!status)
            return status;

        Available available;
        for (const auto &step : job.plan) {
            PANDO_PIPE_TRY(next, flow(step, available));
            available = *next;
        }
        PANDO_PIPE_TRY(hooks, checkHooks(job.hooks, available));
    }
    return checkCycles(pipeline, upstreamOf);
}

} // namespace pando::core::pipelines::internal

namespace pando::core::pipelines {

void forEachStepOf(const Job &job, const std::function<void(const Step &)> &visit)
{
    internal::forEachStepOfJob(job, visit);
}

} // namespace pando::core::pipelines
