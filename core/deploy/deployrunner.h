#pragma once
// Package deploy runs the deployment pipeline: fetch, detect, plan, build, start, health,
// switch, retire. Each step is recorded with its timing as it runs; a failing step ends the
// deploy with the previous version still serving and nothing of the new one left behind.
//
// Threading: run() blocks; it is called on a worker thread with the job's CancelToken.

#include "core/deploy/services.h"
#include "core/spec/appspec.h"
#include "core/state/records.h"

namespace pando::core {

class DeployRunner {
public:
    explicit DeployRunner(Services &services) : m_s(services) {}

    // Runs deploy `deployId` of its app to the end. Returns an error when the deploy failed;
    // the deploy record says why either way.
    Status run(const QString &deployId, const CancelToken &cancel);

    // Settles a deploy a dead process left unfinished: when its switch took effect it is marked
    // succeeded, otherwise failed, and what it created is removed.
    Status settleInterrupted(const QString &deployId);

    // Stops and removes the app's containers except keepDeploy's, and its images except
    // keepDeploy's and the one before it (so a redeploy of the previous version is quick).
    void retireOld(const QString &app, const QString &keepDeploy);
    // Removes whatever deployId created (container, image, workspace).
    void discard(const QString &app, const QString &deployId);

    // Settles a deploy held for approval that will not go on: rejected, expired, or cancelled
    // while it waited. Nothing of it is running; its approval step records why.
    Status endHeld(const QString &deployId, const QString &status, const QString &why);

private:
    // Asks for sign-off when the host policy wants it: records the approval step as waiting and
    // the deploy as awaiting-approval, and returns true (the runner stops here).
    Result<bool> holdForApproval(DeployRecord &deploy, const AppSpec &spec, const Plan &plan, const QString &previous,
                                 int &seq);
    // Ends the approval step left waiting.
    void finishWaitingStep(const DeployRecord &deploy, const QString &status, const QString &detail);

    Services &m_s;
};

} // namespace pando::core
