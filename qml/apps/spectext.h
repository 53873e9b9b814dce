#pragma once
// An AppSpec as the Settings tab shows and sends it: the API's JSON of the spec written as YAML
// (a field a line, nested by indentation, in the order the spec reference documents them), and
// a line diff of two such texts, so that what Save sends is exactly what the diff showed. The
// text is what the engine parses on PUT /api/v1/apps/{name}; a string that YAML could read as
// something else (a number, true, a date) is written quoted.
//
// Threading: pure functions, any thread.

#include <QJsonObject>
#include <QList>
#include <QString>

namespace pando::desktop {

QString specYaml(const QJsonObject &spec);

struct DiffLine {
    enum class Kind { Same, Removed, Added };
    Kind kind = Kind::Same;
    QString text;
    bool operator==(const DiffLine &) const = default;
};
// The lines of before and after, each once: Removed where only before has it, Added where only
// after has it (a longest common subsequence of lines, so a changed line reads as one removed
// and one added).
QList<DiffLine> lineDiff(const QString &before, const QString &after);

} // namespace pando::desktop
