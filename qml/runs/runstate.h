#pragma once
// Package runs (QML module Pando.Runs): the Pipelines view — the install's pipelines with their
// jobs and last run (PipelinesModel), a pipeline's runs newest first (RunsModel) and one run's
// step tree with states, durations, skipped-as-unchanged marks and each step's output
// (RunTreeModel), all kept live from the session's run.* events and a run's follow. Trigger,
// abort, pause and unpause go through the models; the QML only binds.
//
// Threading: GUI-thread models, like their Session; they never block.

#include "qml/states/displaystate.h"

#include <QJsonObject>
#include <QString>

namespace pando::desktop {

// What the runs views say about a run's or a step's status; its state (DisplayState::ofRun) is
// the shared vocabulary's.
namespace RunState {
// The status as a translated word ("succeeded", "unchanged", "waiting for approval").
QString word(const QString &status);
// Whether the run or step is still moving (queued, pending, running, waiting).
bool isLive(const QString &status);
// How far a run is: 0 queued (or not said), 1 running, 2 ended. Answers and events travel apart and
// may cross; one that says less than what is shown is older and must not undo it.
int progress(const QString &status);
// A duration for people: "0.4 s", "12 s", "3 min 4 s", "2 h 5 min"; "–" for nothing yet.
QString durationText(qint64 ms);
// A listed run's state and word: running while a step of it waits for approval (the API's
// "waiting") is waiting, as the lists and the tray show it.
DisplayState::Value ofListedRun(const QString &status, bool waiting);
QString wordOfListedRun(const QString &status, bool waiting);
// What a list keeps of a listed run: {id, job, number, status, waiting}.
QJsonObject summaryOf(const QJsonObject &run);
// The status a run.queued, run.started or run.finished event (the stream's JSON) says its run
// has now; empty for any other event.
QString statusOfRunEvent(const QJsonObject &event);
// The run an approval is about ("run/<id>/step/<name>"); empty for a deploy's or anything else.
QString runOfApproval(const QJsonObject &approvalEventData);
} // namespace RunState

} // namespace pando::desktop
