#pragma once
// Package deploy runs the deployment pipeline: fetch, detect, plan, approval, build, services,
// start, health, switch, retire (the table in deploysteps.h). Each step is recorded with its
// timing as it runs; a failing step ends the deploy with the previous version still serving and
// nothing of the new one left behind.
//
// Threading: run() blocks; it is called on a worker thread with the job's CancelToken.

#include "core/deploy/services.h"
#include "core/spec/appspec.h"
#include "core/state/records.h"

#include <memory>

namespace pando::core {

struct DeployRun;

class DeployRunner {
public:
    explicit DeployRunner(Services &services) : m_s(services) {}

    // Runs deploy `deployId` of its app to the end. Returns an error when the deploy failed;
    // the deploy record says why either way.
    Status run(const QString &deployId, const CancelToken &cancel);

    // Settles a deploy a dead process left unfinished: when its switch took effect it is marked
    // succeeded, otherwise failed, and what it created is removed. A succeeded one cut off in its
    // retire has its retire done and its step ended.
    Status settleInterrupted(const QString &deployId);

    // Settles a deploy held for approval that will not go on: rejected, expired, or cancelled
    // while it waited. Nothing of it is running; its approval step records why.
    Status endHeld(const QString &deployId, DeployStatus status, const QString &why);

private:
    // Marks a queued deploy running and reads what its steps start from; nullptr when it is not
    // queued any more (cancelled while queued, or settled already).
    Result<std::unique_ptr<DeployRun>> begin(const QString &deployId, const CancelToken &cancel);
    // Ends the deploy as failed (or cancelled), removing what this deploy created.
    Status finishFailed(DeployRun &run, const Error &error);
    // Marks the deploy succeeded once its new version serves at `url`, with its audit line.
    void finishSucceeded(DeployRun &run, const QString &url);

    Services &m_s;
};

} // namespace pando::core
