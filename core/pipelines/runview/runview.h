#pragma once
// Package runview folds a run's recorded steps and events into the tree a reader sees: steps
// nested as the plan nests them (in_parallel, do, try, hooks), each with its state, duration,
// attempt and whether it was skipped as unchanged, plus the run's output per step. The API,
// `pando runs show` and the desktop all show this one tree.

#include "core/state/pipelinerecords.h"

#include <QJsonObject>
#include <QList>
#include <QString>

namespace pando::core::pipelines {

struct RunTreeNode {
    RunStepRecord step;
    QList<RunTreeNode> children;
    qint64 durationMs() const;
};

struct RunTree {
    RunRecord run;
    QList<RunTreeNode> roots; // top-level steps in plan order
    // Counts over the whole tree.
    int stepCount = 0;
    int cachedCount = 0; // skipped as unchanged
    int failedCount = 0;

    QJsonObject toJson() const;
};

// Steps whose parent is missing from the list become roots, so a tree can be shown while the
// run is still recording it.
RunTree foldRun(const RunRecord &run, const QList<RunStepRecord> &steps);

// The output lines of one step (or of all steps when stepId is empty), from the run's events,
// in order: "output" events carry {"stream": "stdout"|"stderr", "text": "..."}.
QStringList outputOf(const QList<RunEventRecord> &events, const QString &stepId = {});

QJsonObject toJson(const RunRecord &run);
// An approve step's object also carries "approval": {id, status, and while it waits the
// commands that settle it}.
QJsonObject toJson(const RunStepRecord &step);

// An approve step (kind "approve") has no content hash (it is never cached), so its record's
// hash column holds the id of the approval it asked for. While the request is pending the step
// is RunStepStatus::Waiting; its error column says how it ended, starting with one of the
// prefixes below.
namespace approvestep {
inline constexpr QLatin1String Kind{"approve"};
inline constexpr QLatin1String ApprovedPrefix{"approved by "};
inline constexpr QLatin1String RejectedPrefix{"rejected by "};
inline constexpr QLatin1String ExpiredPrefix{"no decision within "};
inline constexpr QLatin1String WithdrawnPrefix{"withdrawn: "};
// "pending", "approved", "rejected", "expired", "withdrawn"; empty when the step has no approval
// (it errored before asking).
QString approvalStatus(const RunStepRecord &step);
QString approveCommand(const QString &approvalId); // "pando approvals approve a0123…"
} // namespace approvestep

} // namespace pando::core::pipelines
