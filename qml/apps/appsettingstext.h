#pragma once
// How the app's settings (appsettings.cpp, appsettingsdata.cpp) read the engine's JSON and say
// sizes and failures.

#include "qml/apps/appsettings.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QLocale>
#include <QString>

namespace pando::desktop::settingstext {

inline QJsonValue valueAt(const QJsonObject &object, const QString &path)
{
    const QStringList parts = path.split(u'.');
    QJsonValue at = object;
    for (const QString &part : parts)
        at = at.toObject().value(part);
    return at;
}

inline QString textOf(const QJsonValue &value)
{
    if (value.isDouble()) {
        const double d = value.toDouble();
        return d == double(qint64(d)) ? QString::number(qint64(d)) : QString::number(d, 'g', 15);
    }
    return value.isString() ? value.toString() : QString();
}

inline QString bytesText(qint64 bytes)
{
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
}

inline QString failureText(const Error &e)
{
    return e.hint.isEmpty() ? e.text() : AppSettings::tr("%1 — %2").arg(e.text(), e.hint);
}

} // namespace pando::desktop::settingstext
