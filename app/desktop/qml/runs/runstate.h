#pragma once
// Package runs (QML module Pando.Runs): the Pipelines view — the install's pipelines with their
// jobs and last run (PipelinesModel), a pipeline's runs newest first (RunsModel) and one run's
// step tree with states, durations, skipped-as-unchanged marks and each step's output
// (RunTreeModel), all kept live from the session's run.* events and a run's follow. Trigger,
// abort, pause and unpause go through the models; the QML only binds.
//
// Threading: GUI-thread models, like their Session; they never block.

#include <QObject>
#include <QString>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

// The shared state vocabulary of DESKTOP.md for runs and steps: shape, colour and word.
namespace RunState {
Q_NAMESPACE
QML_ELEMENT
enum Value {
    Healthy,  // succeeded
    Progress, // running
    Waiting,  // an approve step waiting for sign-off
    Failed,   // failed, errored
    Cached,   // skipped as unchanged: outputs restored, not run again
    Stopped,  // aborted
    Neutral,  // queued, pending, skipped (not run because an earlier step ended the plan)
};
Q_ENUM_NS(Value)

// A run's or a step's status as the API sends it.
Value of(const QString &status);
// The status as a translated word ("succeeded", "unchanged", "waiting for approval").
QString word(const QString &status);
// Whether the run or step is still moving (queued, pending, running, waiting).
bool isLive(const QString &status);
// A duration for people: "0.4 s", "12 s", "3 min 4 s", "2 h 5 min"; "–" for nothing yet.
QString durationText(qint64 ms);
} // namespace RunState

} // namespace pando::desktop
