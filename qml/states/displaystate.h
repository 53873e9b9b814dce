#pragma once
// Package states (QML module Pando.States): the desktop's one state vocabulary (DESKTOP.md) —
// running/healthy, in progress, waiting for approval, failed, skipped as unchanged, stopped — and
// the one place the API's status words for deploys, deploy steps, apps, runs and run steps become
// those states. Every view model exposes DisplayState::Value; StateStyle gives each its colour,
// shape and word, and StateMark.qml draws them, so no view renders a state of its own.

#include <QString>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

namespace DisplayState {
Q_NAMESPACE
QML_ELEMENT
enum Value {
    Healthy,  // running, succeeded
    Progress, // something moves: queued deploys, running steps, deploying apps
    Waiting,  // waiting for approval
    Failed,   // failed, errored, rejected
    Cached,   // skipped as unchanged: outputs restored, not run again
    Stopped,  // stopped, cancelled, aborted
    Neutral,  // not started: new, pending, queued run steps, steps an earlier one ended the plan for
};
Q_ENUM_NS(Value)

// A deploy's status: queued, running, awaiting-approval, succeeded, failed, rejected, cancelled.
Value ofDeploy(const QString &status);
// A deploy step's status: running, waiting, succeeded, failed, skipped (not run).
Value ofDeployStep(const QString &status);
// A run's or a run step's status: queued, pending, running, waiting, succeeded, failed, errored,
// cached, aborted, skipped (not run because an earlier step ended the plan).
Value ofRun(const QString &status);
// An app's status (new, deploying, running, failed, stopped, removing) with its last deploy's
// status; busy: a deploy of it is in flight that the app's record does not show yet.
Value ofApp(const QString &status, const QString &lastDeployStatus, bool busy = false);
// Whether a deploy with this status is still in flight (queued, running, awaiting-approval).
bool isDeployInFlight(const QString &status);
} // namespace DisplayState

} // namespace pando::desktop
