#pragma once
// How a deploy's steps are recorded: each step is a row (name, status, detail, timing) written
// when it starts and when it ends, and a deploy.step event for live views. StepRecorder is RAII:
// a step left open when the code that opened it returns early is recorded as interrupted, so
// a deploy never shows a step running that nothing runs any more.

#include "core/deploy/services.h"
#include "core/state/records.h"

namespace pando::core {

// Records one step: started on construction, ended by succeed()/waitFor()/failWith(); a step
// left open when it is destroyed is recorded as failed ("interrupted").
class StepRecorder {
public:
    // A quiet step is recorded only if it fails: a deploy resumed after its approval runs
    // fetch, detect and plan again (same commit, same spec) without listing them twice.
    StepRecorder(Services &s, DeployRecord &deploy, int seq, const QString &name, bool quiet = false);
    ~StepRecorder();
    StepRecorder(const StepRecorder &) = delete;
    StepRecorder &operator=(const StepRecorder &) = delete;

    void succeed(const QString &detail = {});
    // The step stays open past the runner's return: the deploy waits for a person.
    void waitFor(const QString &detail);
    // Ends the step as failed and records on the deploy which step failed and why; returns
    // the error to hand on.
    Error failWith(const Error &error);

private:
    void add();
    void end(DeployStepStatus status, const QString &detail);
    void publish();

    Services &m_s;
    DeployRecord &m_deploy;
    StepRecord m_step;
    bool m_quiet = false;
};

// Ends the deploy's steps left waiting (its approval step) with status and detail.
void finishWaitingSteps(Services &s, const DeployRecord &deploy, DeployStepStatus status, const QString &detail);

} // namespace pando::core
