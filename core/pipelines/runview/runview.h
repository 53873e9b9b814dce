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
QJsonObject toJson(const RunStepRecord &step);

} // namespace pando::core::pipelines
