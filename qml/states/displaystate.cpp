#include "qml/states/displaystate.h"

using namespace Qt::StringLiterals;

namespace pando::desktop::DisplayState {

Value ofDeploy(const QString &status)
{
    if (status == u"queued"_s || status == u"running"_s)
        return Progress;
    if (status == u"awaiting-approval"_s)
        return Waiting;
    if (status == u"succeeded"_s)
        return Healthy;
    if (status == u"failed"_s || status == u"rejected"_s)
        return Failed;
    if (status == u"cancelled"_s)
        return Stopped;
    return Neutral;
}

Value ofDeployStep(const QString &status)
{
    if (status == u"running"_s)
        return Progress;
    if (status == u"waiting"_s)
        return Waiting;
    if (status == u"succeeded"_s)
        return Healthy;
    if (status == u"failed"_s)
        return Failed;
    // skipped: not run, as a run's step an earlier one ended the plan for.
    return Neutral;
}

Value ofRun(const QString &status)
{
    if (status == u"succeeded"_s)
        return Healthy;
    if (status == u"running"_s)
        return Progress;
    if (status == u"waiting"_s)
        return Waiting;
    if (status == u"failed"_s || status == u"errored"_s)
        return Failed;
    if (status == u"cached"_s)
        return Cached;
    if (status == u"aborted"_s)
        return Stopped;
    return Neutral;
}

bool isDeployInFlight(const QString &status)
{
    return status == u"queued"_s || status == u"running"_s || status == u"awaiting-approval"_s;
}

Value ofApp(const QString &status, const QString &lastDeployStatus, bool busy)
{
    if (lastDeployStatus == u"awaiting-approval"_s)
        return Waiting;
    if (busy || isDeployInFlight(lastDeployStatus) || status == u"deploying"_s || status == u"removing"_s)
        return Progress;
    if (status == u"running"_s)
        return Healthy;
    if (status == u"failed"_s)
        return Failed;
    if (status == u"stopped"_s)
        return Stopped;
    if (status == u"new"_s && lastDeployStatus == u"failed"_s)
        return Failed;
    return Neutral;
}

} // namespace pando::desktop::DisplayState
