#pragma once
// Package outcome classifies what a step or a job ended with into the four categories the hook
// system dispatches on, the way Concourse users know them: succeeded, failed (the task said no:
// a non-zero exit), errored (the infrastructure or the configuration let it down, including a
// `timeout:` running out) and aborted (someone cancelled the run). It also holds the rules for
// folding children's outcomes into a parent's and for which hooks fire.
//
// Classification (Concourse semantics, checked against concourse-ci.org's step docs):
//
//   what ended the step                                  outcome
//   ---------------------------------------------------  ---------
//   task ran, exit code 0                                Succeeded
//   task ran, exit code != 0                             Failed
//   ErrorCode::Failed (the work ran and said no: a       Failed      (Concourse: a resource
//     resource script's non-zero exit, a health check)               script's failure fails)
//   task's own timeout ended it (TaskResult::timedOut)   Errored     (Concourse: "the build will
//   ErrorCode::Timeout, or the step's `timeout:` fired   Errored      be errored, not aborted")
//   ErrorCode::Cancelled, or the run was aborted         Aborted
//   any other ErrorCode (Unavailable: engine down,       Errored     (on_error: "configuration
//     NotFound: image missing, Invalid: bad config,                   mistakes, temporary network
//     Internal, Conflict, TooLarge, Unauthorized,                    issues ... running longer
//     Forbidden)                                                     than a timeout")
//
// When the run was aborted, Aborted wins over whatever the step reported while being torn down
// (its container was killed, so it may well say Unavailable or exit 137).
//
// Combining (precedence Aborted > Errored > Failed > Succeeded, "worst"):
//
//   structure            parent outcome
//   -------------------  ------------------------------------------------------------------
//   in_parallel          the worst child outcome (all children run to the end)
//   do / a job's plan    the first non-succeeded child (later children do not run); else Succeeded
//   try                  Succeeded, unless the child was Aborted (try does not swallow an abort)
//   attempts: N          the last attempt's outcome; another attempt runs after Failed or
//                        Errored (Concourse retries both), never after Aborted or Succeeded
//   step + its hook      the worst of the step's and the hook's outcome: a failing on_success
//                        or ensure hook fails the step, a hook never makes a failed step green
//
// Hooks (each fires after the step; ensure last, whatever happened):
//
//   outcome     hooks, in order
//   ----------  ---------------------
//   Succeeded   on_success, ensure
//   Failed      on_failure, ensure
//   Errored     on_error, ensure
//   Aborted     on_abort, ensure

#include "adapters/api/error.h"
#include "adapters/api/taskrunner.h"
#include "core/vocab/vocab.h"

#include <QList>
#include <QString>
#include <optional>

namespace pando::core::pipelines {

enum class Outcome { Succeeded, Failed, Errored, Aborted };

enum class Hook { OnSuccess, OnFailure, OnError, OnAbort, Ensure };

// Why a step was interrupted, as its orchestrator knows it (the error the step returned may
// not say: a killed container reports whatever it reports).
struct Interruption {
    bool aborted = false;  // the run's cancel token fired
    bool timedOut = false; // the step's `timeout:` fired
};

// The run status and the step status an outcome ends in; their strings ("succeeded", "failed",
// "errored", "aborted") come from core/vocab's tables.
RunStatus runStatusOf(Outcome outcome);
RunStepStatus stepStatusOf(Outcome outcome);
// toString(runStatusOf(outcome)), for messages and tests.
QString outcomeName(Outcome outcome);
std::optional<Outcome> parseOutcome(const QString &name);

// "on_success", "on_failure", "on_error", "on_abort", "ensure": the pipeline YAML keys.
QString hookKey(Hook hook);

Outcome outcomeOfError(const Error &error, Interruption why = {});
// Whether an error is the infrastructure's (an engine or store that did not answer, a bug) rather
// than what the pipeline says (a bad config or task file, a missing image, a refused host task):
// only these count towards the circuit breaker, so a broken task file cannot pause a pipeline.
bool isInfrastructureError(const Error &error);
Outcome outcomeOfTask(const adapters::TaskResult &result, Interruption why = {});
Outcome outcomeOfTask(const Result<adapters::TaskResult> &result, Interruption why = {});
Outcome outcomeOfStatus(const Status &status, Interruption why = {});

// Precedence rank: Succeeded 0 < Failed 1 < Errored 2 < Aborted 3.
int severity(Outcome outcome);
Outcome worst(Outcome a, Outcome b);

Outcome combineParallel(const QList<Outcome> &children);
Outcome combineSequence(const QList<Outcome> &children);
Outcome combineTry(Outcome child);
Outcome combineWithHook(Outcome step, Outcome hook);

// Whether `attempts:` runs the step again after this outcome.
bool shouldRetryAttempt(Outcome outcome);

// The hooks that fire for an outcome, in the order they run.
QList<Hook> hooksFor(Outcome outcome);

// An infrastructure error: what the scheduler's circuit breaker counts.
inline bool isInfrastructureError(Outcome outcome)
{
    return outcome == Outcome::Errored;
}

} // namespace pando::core::pipelines
