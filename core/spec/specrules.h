#pragma once
// The AppSpec's field rules, shared by the YAML/JSON walker (which knows where a value came
// from) and validateAppSpec (which checks a spec built in code). Each check returns an Error
// whose `where` is the field path.

#include "adapters/api/error.h"

#include <QString>
#include <optional>

namespace pando::core::detail {

Status checkName(const QString &name);
// source.connection: a connection's name, a DNS label as an app's.
Status checkConnectionName(const QString &name);
Status checkRepo(const QString &repo);
Status checkRef(const QString &ref);
// A path relative to `root` ("repository", "build context") that must not leave it.
Status checkRelativePath(const QString &value, const QString &where, const QString &root, bool mustBeFile);
Status checkVariableName(const QString &key, const QString &where);     // env and build-arg names
Status checkImageReference(const QString &value, const QString &where); // "node:22-slim", "host:5000/a/b:1"
Status checkLabel(const QString &key, const QString &value, const QString &where);
Status checkHealthPath(const QString &path);
Status checkMemory(qint64 bytes, const QString &where);
Status checkCpus(double cpus, const QString &where);
// A services slot: its name (where: "services.NAME"), kind and version.
Status checkServiceSlot(const QString &slot, const QString &where);
Status checkServiceKind(const QString &kind, const QString &where);
Status checkServiceVersion(const QString &kind, const QString &version, const QString &where);

inline constexpr int MinHealthTimeoutSeconds = 1;
inline constexpr int MaxHealthTimeoutSeconds = 3600;
inline constexpr int MinHealthIntervalMs = 10;
inline constexpr int MaxHealthIntervalMs = 60000;
inline constexpr int MinHealthEveryMs = 100;
inline constexpr int MaxHealthEveryMs = 3600000;
inline constexpr int MaxHealthFailures = 100;
inline constexpr double MaxCpus = 1024;
inline constexpr qint64 MaxMemoryBytes = 1LL << 50; // 1 PiB: far past any host, short of overflow

// "30s", "2m", "1h", "7d", "500ms", "1m30s", or an integer number of seconds; nullopt for anything else.
std::optional<qint64> parseDurationMs(const QString &value);

struct DocNode;
// An Invalid error at `where` with where in the document node was ("(line 7, column 5)").
std::unexpected<Error> invalidAt(const DocNode &node, const QString &message, const QString &where,
                                 const QString &hint = {});
// What a value was, for "got …": a scalar quoted, else "a mapping" or "a list".
QString shownValue(const DocNode &node);

// A value quoted for an error message: control characters escaped, long values shortened.
QString quoted(const QString &value);

} // namespace pando::core::detail
