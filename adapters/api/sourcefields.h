#pragma once
// Reading a resource's source and params as Concourse's resource types do: a field is text when
// YAML wrote a number, and a flag may be written as the text "true" or "false". Errors name the
// field ("source.bucket", "params.unpack").

#include "error.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

namespace pando::adapters {

// The text at key (empty when absent or null); prefix is "source." or "params.".
inline Result<QString> sourceText(const QJsonObject &o, const QString &key, const QString &prefix)
{
    const QJsonValue value = o.value(key);
    if (value.isUndefined() || value.isNull())
        return QString();
    if (value.isDouble())
        return QString::number(value.toDouble());
    if (!value.isString())
        return fail(ErrorCode::Invalid, QStringLiteral("must be text"), prefix + key);
    return value.toString();
}

// The flag at key (false when absent or null).
inline Result<bool> sourceFlag(const QJsonObject &o, const QString &key, const QString &prefix)
{
    const QJsonValue value = o.value(key);
    if (value.isUndefined() || value.isNull())
        return false;
    if (value.isBool())
        return value.toBool();
    if (value.isString() && (value.toString() == QLatin1String("true") || value.toString() == QLatin1String("false")))
        return value.toString() == QLatin1String("true");
    return fail(ErrorCode::Invalid, QStringLiteral("must be true or false"), prefix + key);
}

} // namespace pando::adapters
