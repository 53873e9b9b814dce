#pragma once
// Package resource runs a resource type's check/in/out: shell-defined types speaking
// Concourse's JSON-on-stdin protocol through a TaskRunner (ShellResourceType), the built-in
// `time` type (TimeResourceType), and the helpers that turn versions into JSON and back and
// select among the versions a check returns (latest, every, or a pinned one).

#include "adapters/api/resourcetype.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>

namespace pando::core::pipelines {

using adapters::Version;

QJsonObject versionToJson(const Version &version);
// A JSON object of string values; anything else fails with Invalid naming `where`.
Result<Version> versionFromJson(const QJsonValue &value, const QString &where);
// A canonical text of the version (compact JSON, keys sorted): equal versions, equal keys.
QString versionKey(const Version &version);
// True when every key of pin has the same value in version (Concourse's pinned `version:`).
bool versionMatches(const Version &version, const Version &pin);

// Concourse's check scripts print the requested version again (oldest first) when it still
// exists; this drops it and everything before it. When `from` is not in the list (history was
// rewritten) the whole list is new. With an empty `from`, only the newest is kept.
QList<Version> versionsAfter(const QList<Version> &versions, const Version &from);

// A get step's `version:` — latest (default), every, or a pinned version.
struct VersionSelection {
    enum class Mode { Latest, Every, Pinned };
    Mode mode = Mode::Latest;
    Version pinned;

    // "latest", "every" or an object of strings; null/absent is latest.
    static Result<VersionSelection> fromJson(const QJsonValue &value, const QString &where);
};

// From versions ordered oldest → newest: latest → the newest; every → all of them, in order;
// pinned → the newest matching the pin. Empty when nothing qualifies.
QList<Version> selectVersions(const QList<Version> &available, const VersionSelection &selection);

} // namespace pando::core::pipelines
