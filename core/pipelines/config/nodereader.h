#pragma once
// Typed reads from the YAML reader's value tree for the pipeline parser: each read names the
// path it failed at, and mappings are checked for unknown keys with a "did you mean" hint.

#include "adapters/api/error.h"
#include "core/spec/yamlreader.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QMap>
#include <QString>
#include <QStringList>
#include <initializer_list>
#include <optional>
#include <utility>

namespace pando::core::pipelines::internal {

using pando::core::detail::DocNode;

QString join(const QString &path, const QString &key);
QString at(const QString &path, qsizetype index); // "path[3]"
QString describe(const DocNode &node);            // "a list", "\"abc\"", ...
std::unexpected<Error> wrongType(const DocNode &node, const QString &path, const QString &expected);
std::unexpected<Error> invalid(const QString &where, const QString &message, const QString &hint = {});

// Every key of the mapping must be in `known`; the error's `where` is `where` (the mapping's
// path, or a step's path), its message `unknown key "x"; did you mean "y"?`.
Status checkKeys(const DocNode &node, const QString &where, const QStringList &known);
// Closest of `candidates` to `word`, or empty when none is close.
QString closest(const QString &word, const QStringList &candidates);

bool isNull(const DocNode *node);
Result<const DocNode *> mapping(const DocNode &parent, const QString &key, const QString &path); // null: absent
Result<const DocNode *> sequence(const DocNode &parent, const QString &key, const QString &path);
Result<QString> string(const DocNode &node, const QString &path); // scalars (numbers too)
Result<QString> requiredString(const DocNode &parent, const QString &key, const QString &path);
Result<bool> boolean(const DocNode &node, const QString &path);
// Each key of parent that is present sets its flag (boolean()); an absent key leaves it as it is.
Status booleans(const DocNode &parent, const QString &path, std::initializer_list<std::pair<QString, bool *>> flags);
Result<int> integer(const DocNode &node, const QString &path, int min, int max);
Result<QStringList> stringList(const DocNode &node, const QString &path);
// A mapping of names to scalars; numbers and booleans stay as text, null becomes "".
Result<QMap<QString, QString>> stringMap(const DocNode &node, const QString &path);
// Free-form values (source, params): scalars become JSON booleans/numbers/strings as written.
QJsonValue toJsonValue(const DocNode &node);
Result<QJsonObject> jsonObject(const DocNode &node, const QString &path);

// "100ms", "30s", "5m", "1h30m", "1.5h": what Go's time.ParseDuration reads, as Concourse does
// (adapters/api/goduration.h). Null on anything else (bare numbers but "0" included).
std::optional<qint64> parseDurationMs(const QString &text);
// A duration > 0.
Result<qint64> duration(const DocNode &node, const QString &path);
// "512Mi", "1Gi", "256MB", "2G", "1024" (bytes); every unit a multiple of 1024, as in Concourse.
std::optional<qint64> parseMemory(const QString &text);
// text with each ((.:local)) var written as "x": what a name or tag that carries across's and
// load_var's vars is checked as when the pipeline is set (the filled text is checked at run).
QString withLocalVarsStubbed(const QString &text);

// A job, resource, resource type or step name: non-empty, [a-zA-Z0-9_.-]+, not starting with '-'.
Status checkName(const QString &name, const QString &where, const QString &what);
// A relative path inside the work dir: not absolute, no "..".
Status checkRelativePath(const QString &path, const QString &where);

#define PANDO_PIPE_TRY(var, expr)                                                                                      \
    auto var = (expr);                                                                                                 \
    if (!var)                                                                                                          \
        return std::unexpected(var.error());

} // namespace pando::core::pipelines::internal
