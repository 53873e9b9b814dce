#include "core/pipelines/resource/versions.h"

#include <QJsonDocument>

namespace pando::core::pipelines {

using namespace Qt::StringLiterals;

QJsonObject versionToJson(const Version &version)
{
    QJsonObject out;
    for (auto it = version.cbegin(); it != version.cend(); ++it)
        out.insert(it.key(), it.value());
    return out;
}

Result<Version> versionFromJson(const QJsonValue &value, const QString &where)
{
    if (!value.isObject())
        return fail(ErrorCode::Invalid, u"a version must be an object of strings"_s, where);
    Version version;
    const QJsonObject object = value.toObject();
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!it.value().isString())
            return fail(ErrorCode::Invalid, u"the version field \"%1\" is not a string"_s.arg(it.key()), where);
        version.insert(it.key(), it.value().toString());
    }
    return version;
}

QString versionKey(const Version &version)
{
    // QJsonObject keeps its keys sorted, so the text is canonical.
    return QString::fromUtf8(QJsonDocument(versionToJson(version)).toJson(QJsonDocument::Compact));
}

bool versionMatches(const Version &version, const Version &pin)
{
    for (auto it = pin.cbegin(); it != pin.cend(); ++it) {
        const auto found = version.constFind(it.key());
        if (found == version.cend() || *found != it.value())
            return false;
    }
    return true;
}

QList<Version> versionsAfter(const QList<Version> &versions, const Version &from)
{
    if (from.isEmpty())
        return versions.isEmpty() ? QList<Version>{} : QList<Version>{versions.last()};
    for (qsizetype i = versions.size() - 1; i >= 0; --i) {
        if (versions.at(i) == from)
            return versions.mid(i + 1);
    }
    return versions;
}

Result<VersionSelection> VersionSelection::fromJson(const QJsonValue &value, const QString &where)
{
    VersionSelection selection;
    if (value.isNull() || value.isUndefined() || value == QJsonValue(u"latest"_s))
        return selection;
    if (value == QJsonValue(u"every"_s)) {
        selection.mode = Mode::Every;
        return selection;
    }
    if (value.isObject()) {
        Result<Version> pinned = versionFromJson(value, where);
        if (!pinned)
            return std::unexpected(pinned.error());
        if (pinned->isEmpty())
            return fail(ErrorCode::Invalid, u"a pinned version needs at least one field"_s, where);
        selection.mode = Mode::Pinned;
        selection.pinned = *pinned;
        return selection;
    }
    return fail(ErrorCode::Invalid, u"version must be \"latest\", \"every\" or a version object"_s, where);
}

QList<Version> selectVersions(const QList<Version> &available, const VersionSelection &selection)
{
    switch (selection.mode) {
    case VersionSelection::Mode::Latest:
        return available.isEmpty() ? QList<Version>{} : QList<Version>{available.last()};
    case VersionSelection::Mode::Every:
        return available;
    case VersionSelection::Mode::Pinned:
        for (qsizetype i = available.size() - 1; i >= 0; --i) {
            if (versionMatches(available.at(i), selection.pinned))
                return {available.at(i)};
        }
        return {};
    }
    return {};
}

} // namespace pando::core::pipelines
