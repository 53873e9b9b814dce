#include "qml/runs/runstate.h"
#include "core/vocab/vocab.h"

#include <QCoreApplication>
#include <QLocale>

using namespace Qt::StringLiterals;

namespace pando::desktop::RunState {

namespace {

QString wordOf(core::RunStepStatus status)
{
    using S = core::RunStepStatus;
    switch (status) {
    case S::Succeeded:
        return QCoreApplication::translate("RunState", "succeeded");
    case S::Running:
        return QCoreApplication::translate("RunState", "running");
    case S::Waiting:
        return QCoreApplication::translate("RunState", "waiting for approval");
    case S::Failed:
        return QCoreApplication::translate("RunState", "failed");
    case S::Errored:
        return QCoreApplication::translate("RunState", "errored");
    case S::Cached:
        return QCoreApplication::translate("RunState", "unchanged");
    case S::Aborted:
        return QCoreApplication::translate("RunState", "aborted");
    case S::Pending:
        return QCoreApplication::translate("RunState", "pending");
    case S::Skipped:
        return QCoreApplication::translate("RunState", "skipped");
    }
    return core::toString(status);
}

} // namespace

// A run's statuses are a step's too, with the same words, except queued.
QString word(const QString &status)
{
    if (core::parseRunStatus(status) == core::RunStatus::Queued)
        return QCoreApplication::translate("RunState", "queued");
    if (auto step = core::parseRunStepStatus(status))
        return wordOf(*step);
    return status;
}

int progress(const QString &status)
{
    const std::optional<core::RunStatus> run = core::parseRunStatus(status);
    if (status.isEmpty() || run == core::RunStatus::Queued)
        return 0;
    return run == core::RunStatus::Running ? 1 : 2;
}

bool isLive(const QString &status)
{
    if (core::parseRunStatus(status) == core::RunStatus::Queued)
        return true;
    const std::optional<core::RunStepStatus> step = core::parseRunStepStatus(status);
    return step == core::RunStepStatus::Pending || step == core::RunStepStatus::Running ||
           step == core::RunStepStatus::Waiting;
}

QString durationText(qint64 ms)
{
    if (ms <= 0)
        return u"–"_s;
    const QLocale locale;
    if (ms < 10000)
        return QCoreApplication::translate("RunState", "%1 s").arg(locale.toString(double(ms) / 1000.0, 'f', 1));
    const qint64 seconds = ms / 1000;
    if (seconds < 60)
        return QCoreApplication::translate("RunState", "%1 s").arg(seconds);
    if (seconds < 3600)
        return QCoreApplication::translate("RunState", "%1 min %2 s").arg(seconds / 60).arg(seconds % 60);
    return QCoreApplication::translate("RunState", "%1 h %2 min").arg(seconds / 3600).arg((seconds % 3600) / 60);
}

DisplayState::Value ofListedRun(const QString &status, bool waiting)
{
    if (waiting && core::parseRunStatus(status) == core::RunStatus::Running)
        return DisplayState::Waiting;
    return DisplayState::ofRun(status);
}

QString wordOfListedRun(const QString &status, bool waiting)
{
    if (waiting && core::parseRunStatus(status) == core::RunStatus::Running)
        return word(core::toString(core::RunStepStatus::Waiting));
    return word(status);
}

QString runOfApproval(const QJsonObject &approvalEventData)
{
    const QString object = approvalEventData.value(u"object"_s).toString();
    return object.startsWith(u"run/"_s) ? object.section(u'/', 1, 1) : QString();
}

QJsonObject summaryOf(const QJsonObject &run)
{
    return QJsonObject{{u"id"_s, run.value(u"id"_s)},
                       {u"job"_s, run.value(u"job"_s)},
                       {u"number"_s, run.value(u"number"_s)},
                       {u"status"_s, run.value(u"status"_s)},
                       {u"waiting"_s, run.value(u"waiting"_s)}};
}

QString statusOfRunEvent(const QJsonObject &event)
{
    const std::optional<core::EventType> type = core::parseEventType(event.value(u"type"_s).toString());
    if (type == core::EventType::RunQueued)
        return core::toString(core::RunStatus::Queued);
    if (type == core::EventType::RunStarted)
        return core::toString(core::RunStatus::Running);
    if (type == core::EventType::RunFinished)
        return event.value(u"data"_s).toObject().value(u"status"_s).toString();
    return {};
}

} // namespace pando::desktop::RunState
