#include "qml/runs/runstate.h"

#include <QCoreApplication>
#include <QLocale>

using namespace Qt::StringLiterals;

namespace pando::desktop::RunState {

QString word(const QString &status)
{
    if (status == u"succeeded"_s)
        return QCoreApplication::translate("RunState", "succeeded");
    if (status == u"running"_s)
        return QCoreApplication::translate("RunState", "running");
    if (status == u"waiting"_s)
        return QCoreApplication::translate("RunState", "waiting for approval");
    if (status == u"failed"_s)
        return QCoreApplication::translate("RunState", "failed");
    if (status == u"errored"_s)
        return QCoreApplication::translate("RunState", "errored");
    if (status == u"cached"_s)
        return QCoreApplication::translate("RunState", "unchanged");
    if (status == u"aborted"_s)
        return QCoreApplication::translate("RunState", "aborted");
    if (status == u"queued"_s)
        return QCoreApplication::translate("RunState", "queued");
    if (status == u"pending"_s)
        return QCoreApplication::translate("RunState", "pending");
    if (status == u"skipped"_s)
        return QCoreApplication::translate("RunState", "skipped");
    return status;
}

bool isLive(const QString &status)
{
    return status == u"queued"_s || status == u"pending"_s || status == u"running"_s || status == u"waiting"_s;
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

} // namespace pando::desktop::RunState
