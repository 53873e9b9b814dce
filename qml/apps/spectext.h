#pragma once
// An AppSpec as the Settings tab shows and sends it: the API's JSON of the spec written as YAML
// (a field a line, nested by indentation, in the order the spec reference documents them), so
// that what Save sends is exactly what the diff (core::lineDiff) showed. The text is what the
// engine parses on PUT /api/v1/apps/{name}; a string that YAML could read as something else (a
// number, true, a date) is written quoted.
//
// Threading: pure functions, any thread.

#include "core/common/linediff.h"

#include <QJsonObject>
#include <QString>

namespace pando::desktop {

QString specYaml(const QJsonObject &spec);

// The line diff of two such texts is core::lineDiff (core/common/linediff.h).
using core::DiffLine;
using core::lineDiff;

} // namespace pando::desktop
