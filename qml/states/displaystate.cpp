#include "qml/states/displaystate.h"

#include <QSet>

using namespace Qt::StringLiterals;

namespace pando::desktop::DisplayState {

namespace {

// GUI thread only, like every caller (view models).
void warnUnknown(const char *what, const QString &word)
{
    static QSet<QString> warned;
    const QString key = QString::fromLatin1(what) + u'/' + word;
    if (!word.isEmpty() && !warned.contains(key)) {
        warned.insert(key);
        qWarning("desktop: unknown %s status \"%s\", shown as not started", what, qPrintable(word));
    }
}

} // namespace

Value of(core::DeployStatus status)
{
    using S = core::DeployStatus;
    switch (status) {
    case S::Queued:
    case S::Running:
        return Progress;
    case S::AwaitingApproval:
        return Waiting;
    case S::Succeeded:
        return Healthy;
    case S::Failed:
    case S::Rejected:
        return Failed;
    case S::Cancelled:
        return Stopped;
    }
    return Neutral;
}

Value of(core::DeployStepStatus status)
{
    using S = core::DeployStepStatus;
    switch (status) {
    case S::Running:
        return Progress;
    case S::Waiting:
        return Waiting;
    case S::Succeeded:
        return Healthy;
    case S::Failed:
        return Failed;
    case S::Skipped: // not run, as a run's step an earlier one ended the plan for
        return Neutral;
    }
    return Neutral;
}

Value of(core::RunStatus status)
{
    using S = core::RunStatus;
    switch (status) {
    case S::Succeeded:
        return Healthy;
    case S::Running:
        return Progress;
    case S::Failed:
    case S::Errored:
        return Failed;
    case S::Aborted:
        return Stopped;
    case S::Queued:
        return Neutral;
    }
    return Neutral;
}

Value of(core::RunStepStatus status)
{
    using S = core::RunStepStatus;
    switch (status) {
    case S::Succeeded:
        return Healthy;
    case S::Running:
        return Progress;
    case S::Waiting:
        return Waiting;
    case S::Failed:
    case S::Errored:
        return Failed;
    case S::Cached:
        return Cached;
    case S::Aborted:
        return Stopped;
    case S::Pending:
    case S::Skipped:
        return Neutral;
    }
    return Neutral;
}

Value ofDeploy(const QString &status)
{
    if (auto known = core::parseDeployStatus(status))
        return of(*known);
    warnUnknown("deploy", status);
    return Neutral;
}

Value ofDeployStep(const QString &status)
{
    if (auto known = core::parseDeployStepStatus(status))
        return of(*known);
    warnUnknown("deploy step", status);
    return Neutral;
}

Value ofRun(const QString &status)
{
    if (auto run = core::parseRunStatus(status))
        return of(*run);
    if (auto step = core::parseRunStepStatus(status))
        return of(*step);
    warnUnknown("run", status);
    return Neutral;
}

bool isDeployInFlight(const QString &status)
{
    const std::optional<core::DeployStatus> known = core::parseDeployStatus(status);
    return known && !core::isFinished(*known);
}

Value ofApp(const QString &status, const QString &lastDeployStatus, bool busy)
{
    using A = core::AppStatus;
    const std::optional<A> app = core::parseAppStatus(status);
    const std::optional<core::DeployStatus> last = core::parseDeployStatus(lastDeployStatus);
    if (!app)
        warnUnknown("app", status);
    if (last == core::DeployStatus::AwaitingApproval)
        return Waiting;
    if (busy || isDeployInFlight(lastDeployStatus) || app == A::Deploying || app == A::Removing)
        return Progress;
    if (app == A::Running)
        return Healthy;
    // Its container runs but does not answer: a failure the user must see, with its reason.
    if (app == A::Failed || app == A::Unhealthy)
        return Failed;
    if (app == A::Stopped)
        return Stopped;
    if (app == A::New && last == core::DeployStatus::Failed)
        return Failed;
    return Neutral;
}

} // namespace pando::desktop::DisplayState
