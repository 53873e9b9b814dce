#pragma once
// Package states (QML module Pando.States): the desktop's one state vocabulary (DESKTOP.md) —
// running/healthy, in progress, waiting for approval, failed, skipped as unchanged, stopped — and
// the one place the API's status words for deploys, deploy steps, apps, runs and run steps become
// those states. Every view model exposes DisplayState::Value; StateStyle gives each its colour,
// shape and word, and StateMark.qml draws them, so no view renders a state of its own.

#include "core/vocab/vocab.h"

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

// Each status of core/vocab as a display state; every value has one (a switch over the enum).
Value of(core::DeployStatus status);
Value of(core::DeployStepStatus status);
Value of(core::RunStatus status);
Value of(core::RunStepStatus status);

// The same from the API's words, as the view models get them. A word no table holds (a newer
// server's) is Neutral, with a warning logged once per word, never some other state.
Value ofDeploy(const QString &status);
Value ofDeployStep(const QString &status);
// A run's or a run step's status (the runs views show both).
Value ofRun(const QString &status);
// An app's status with its last deploy's status; busy: a deploy of it is in flight that the
// app's record does not show yet.
Value ofApp(const QString &status, const QString &lastDeployStatus, bool busy = false);
// Whether a deploy with this status is still in flight (queued, running, awaiting-approval).
bool isDeployInFlight(const QString &status);
} // namespace DisplayState

} // namespace pando::desktop
