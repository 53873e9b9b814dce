#include "core/pipelines/outcome/outcome.h"

namespace pando::core::pipelines {

RunStatus runStatusOf(Outcome outcome)
{
    switch (outcome) {
    case Outcome::Succeeded:
        return RunStatus::Succeeded;
    case Outcome::Failed:
        return RunStatus::Failed;
    case Outcome::Errored:
        return RunStatus::Errored;
    case Outcome::Aborted:
        return RunStatus::Aborted;
    }
    return RunStatus::Errored;
}

RunStepStatus stepStatusOf(Outcome outcome)
{
    switch (outcome) {
    case Outcome::Succeeded:
        return RunStepStatus::Succeeded;
    case Outcome::Failed:
        return RunStepStatus::Failed;
    case Outcome::Errored:
        return RunStepStatus::Errored;
    case Outcome::Aborted:
        return RunStepStatus::Aborted;
    }
    return RunStepStatus::Errored;
}

QString outcomeName(Outcome outcome)
{
    return toString(runStatusOf(outcome));
}

std::optional<Outcome> parseOutcome(const QString &name)
{
    for (Outcome o : {Outcome::Succeeded, Outcome::Failed, Outcome::Errored, Outcome::Aborted}) {
        if (parseRunStatus(name) == runStatusOf(o))
            return o;
    }
    return std::nullopt;
}

QString hookKey(Hook hook)
{
    switch (hook) {
    case Hook::OnSuccess:
        return QStringLiteral("on_success");
    case Hook::OnFailure:
        return QStringLiteral("on_failure");
    case Hook::OnError:
        return QStringLiteral("on_error");
    case Hook::OnAbort:
        return QStringLiteral("on_abort");
    case Hook::Ensure:
        return QStringLiteral("ensure");
    }
    return QStringLiteral("ensure");
}

bool isInfrastructureError(const Error &error)
{
    switch (error.code) {
    case ErrorCode::Unavailable:
    case ErrorCode::Timeout:
    case ErrorCode::Internal:
        return true;
    default:
        return false;
    }
}

Outcome outcomeOfError(const Error &error, Interruption why)
{
    // An abort explains whatever the step said while it was being torn down.
    if (why.aborted)
        return Outcome::Aborted;
    if (why.timedOut)
        return Outcome::Errored;
    switch (error.code) {
    case ErrorCode::Cancelled:
        return Outcome::Aborted;
    case ErrorCode::Failed:
        return Outcome::Failed;
    case ErrorCode::Timeout:
    case ErrorCode::Invalid:
    case ErrorCode::NotFound:
    case ErrorCode::Conflict:
    case ErrorCode::TooLarge:
    case ErrorCode::Unauthorized:
    case ErrorCode::Forbidden:
    case ErrorCode::Unavailable:
    case ErrorCode::Internal:
        return Outcome::Errored;
    }
    return Outcome::Errored;
}

Outcome outcomeOfTask(const adapters::TaskResult &result, Interruption why)
{
    if (why.aborted)
        return Outcome::Aborted;
    if (why.timedOut || result.timedOut)
        return Outcome::Errored;
    return result.exitCode == 0 ? Outcome::Succeeded : Outcome::Failed;
}

Outcome outcomeOfTask(const Result<adapters::TaskResult> &result, Interruption why)
{
    return result ? outcomeOfTask(*result, why) : outcomeOfError(result.error(), why);
}

Outcome outcomeOfStatus(const Status &status, Interruption why)
{
    if (why.aborted)
        return Outcome::Aborted;
    if (status)
        return why.timedOut ? Outcome::Errored : Outcome::Succeeded;
    return outcomeOfError(status.error(), why);
}

int severity(Outcome outcome)
{
    switch (outcome) {
    case Outcome::Succeeded:
        return 0;
    case Outcome::Failed:
        return 1;
    case Outcome::Errored:
        return 2;
    case Outcome::Aborted:
        return 3;
    }
    return 2;
}

Outcome worst(Outcome a, Outcome b)
{
    return severity(b) > severity(a) ? b : a;
}

Outcome combineParallel(const QList<Outcome> &children)
{
    Outcome result = Outcome::Succeeded;
    for (Outcome child : children)
        result = worst(result, child);
    return result;
}

Outcome combineSequence(const QList<Outcome> &children)
{
    for (Outcome child : children) {
        if (child != Outcome::Succeeded)
            return child;
    }
    return Outcome::Succeeded;
}

Outcome combineTry(Outcome child)
{
    return child == Outcome::Aborted ? Outcome::Aborted : Outcome::Succeeded;
}

Outcome combineWithHook(Outcome step, Outcome hook)
{
    return worst(step, hook);
}

bool shouldRetryAttempt(Outcome outcome)
{
    return outcome == Outcome::Failed || outcome == Outcome::Errored;
}

QList<Hook> hooksFor(Outcome outcome)
{
    switch (outcome) {
    case Outcome::Succeeded:
        return {Hook::OnSuccess, Hook::Ensure};
    case Outcome::Failed:
        return {Hook::OnFailure, Hook::Ensure};
    case Outcome::Errored:
        return {Hook::OnError, Hook::Ensure};
    case Outcome::Aborted:
        return {Hook::OnAbort, Hook::Ensure};
    }
    return {Hook::Ensure};
}

} // namespace pando::core::pipelines
