#include "runview.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <functional>

namespace pando::core::pipelines {

namespace {
qint64 span(qint64 started, qint64 finished)
{
    return started > 0 && finished >= started ? finished - started : 0;
}

QJsonArray nodesJson(const QList<RunTreeNode> &nodes)
{
    QJsonArray list;
    for (const RunTreeNode &node : nodes) {
        QJsonObject o = toJson(node.step);
        if (!node.children.isEmpty())
            o.insert(QStringLiteral("children"), nodesJson(node.children));
        list.append(o);
    }
    return list;
}
} // namespace

qint64 RunTreeNode::durationMs() const
{
    return span(step.startedMs, step.finishedMs);
}

QJsonObject toJson(const RunRecord &r)
{
    return QJsonObject{{QStringLiteral("id"), r.id},
                       {QStringLiteral("pipeline"), r.pipeline},
                       {QStringLiteral("job"), r.job},
                       {QStringLiteral("number"), r.number},
                       {QStringLiteral("status"), toString(r.status)},
                       {QStringLiteral("trigger"), r.trigger},
                       {QStringLiteral("actor"), r.actor},
                       {QStringLiteral("inputs"), QJsonDocument::fromJson(r.inputsJson.toUtf8()).object()},
                       {QStringLiteral("config_version"), r.configVersion},
                       {QStringLiteral("error"), r.error},
                       {QStringLiteral("created_ms"), r.createdMs},
                       {QStringLiteral("started_ms"), r.startedMs},
                       {QStringLiteral("finished_ms"), r.finishedMs},
                       {QStringLiteral("duration_ms"), span(r.startedMs, r.finishedMs)},
                       {QStringLiteral("log_removed_ms"), r.logRemovedMs},
                       {QStringLiteral("force"), r.force},
                       {QStringLiteral("waiting"), r.waiting}};
}

QJsonObject toJson(const RunStepRecord &s)
{
    QJsonObject o{{QStringLiteral("id"), s.stepId},
                  {QStringLiteral("name"), s.name},
                  {QStringLiteral("kind"), s.kind},
                  {QStringLiteral("status"), toString(s.status)},
                  {QStringLiteral("cached"), s.status == RunStepStatus::Cached},
                  {QStringLiteral("started_ms"), s.startedMs},
                  {QStringLiteral("finished_ms"), s.finishedMs},
                  {QStringLiteral("duration_ms"), span(s.startedMs, s.finishedMs)}};
    if (s.kind == approvestep::Kind) {
        if (!s.hash.isEmpty()) {
            QJsonObject approval{{QStringLiteral("id"), s.hash},
                                 {QStringLiteral("status"), approvestep::approvalStatus(s)}};
            if (s.status == RunStepStatus::Waiting) {
                approval.insert(QStringLiteral("approve"), approvestep::approveCommand(s.hash));
                approval.insert(QStringLiteral("reject"), QString(QStringLiteral("pando approvals reject ") + s.hash));
            }
            o.insert(QStringLiteral("approval"), approval);
        }
    } else if (!s.hash.isEmpty()) {
        o.insert(QStringLiteral("hash"), s.hash);
    }
    if (s.attempt > 0)
        o.insert(QStringLiteral("attempt"), s.attempt);
    if (s.exitCode >= 0)
        o.insert(QStringLiteral("exit_code"), s.exitCode);
    if (!s.error.isEmpty())
        o.insert(QStringLiteral("error"), s.error);
    return o;
}

namespace approvestep {
QString approvalStatus(const RunStepRecord &step)
{
    if (step.hash.isEmpty())
        return {};
    if (step.status == RunStepStatus::Waiting || step.status == RunStepStatus::Running)
        return QStringLiteral("pending");
    if (step.error.startsWith(ApprovedPrefix))
        return QStringLiteral("approved");
    if (step.error.startsWith(RejectedPrefix))
        return QStringLiteral("rejected");
    if (step.error.startsWith(ExpiredPrefix))
        return QStringLiteral("expired");
    if (step.error.startsWith(WithdrawnPrefix))
        return QStringLiteral("withdrawn");
    return {};
}

QString approveCommand(const QString &approvalId)
{
    return QStringLiteral("pando approvals approve ") + approvalId;
}
} // namespace approvestep

RunTree foldRun(const RunRecord &run, const QList<RunStepRecord> &steps)
{
    RunTree tree;
    tree.run = run;
    QList<RunStepRecord> ordered = steps;
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const RunStepRecord &a, const RunStepRecord &b) { return a.seq < b.seq; });
    QHash<QString, int> known;
    for (const RunStepRecord &s : std::as_const(ordered))
        known.insert(s.stepId, 0);

    // Children of each parent, in order; built bottom-up by recursion from the roots.
    QHash<QString, QList<RunStepRecord>> children;
    QList<RunStepRecord> roots;
    for (const RunStepRecord &s : std::as_const(ordered)) {
        ++tree.stepCount;
        if (s.status == RunStepStatus::Cached)
            ++tree.cachedCount;
        if (s.status == RunStepStatus::Failed || s.status == RunStepStatus::Errored)
            ++tree.failedCount;
        if (s.parentId.isEmpty() || !known.contains(s.parentId) || s.parentId == s.stepId)
            roots.append(s);
        else
            children[s.parentId].append(s);
    }
    // Depth-first; a step is visited once even if the records name a cycle.
    QHash<QString, bool> visited;
    std::function<RunTreeNode(const RunStepRecord &)> build = [&](const RunStepRecord &s) {
        RunTreeNode node{s, {}};
        visited.insert(s.stepId, true);
        for (const RunStepRecord &child : children.value(s.stepId))
            if (!visited.contains(child.stepId))
                node.children.append(build(child));
        return node;
    };
    for (const RunStepRecord &s : std::as_const(roots))
        tree.roots.append(build(s));
    return tree;
}

QJsonObject RunTree::toJson() const
{
    QJsonObject o = pipelines::toJson(run);
    o.insert(QStringLiteral("steps"), nodesJson(roots));
    o.insert(QStringLiteral("step_count"), stepCount);
    o.insert(QStringLiteral("cached_count"), cachedCount);
    o.insert(QStringLiteral("failed_count"), failedCount);
    return o;
}

QStringList outputOf(const QList<RunEventRecord> &events, const QString &stepId)
{
    QStringList lines;
    for (const RunEventRecord &e : events) {
        if (e.type != QLatin1String("output") || (!stepId.isEmpty() && e.stepId != stepId))
            continue;
        lines.append(QJsonDocument::fromJson(e.dataJson.toUtf8()).object().value(QStringLiteral("text")).toString());
    }
    return lines;
}

} // namespace pando::core::pipelines
