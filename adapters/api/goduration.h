#pragma once
// Durations as Go's time.ParseDuration reads them, which is how Concourse reads every duration of
// a pipeline (a step's timeout, the time resource's interval): decimal numbers, each with an
// optional fraction and a unit, one after another ("1h30m", "1.5h", "90s", "250ms", "500us").
//
// Threading: a pure function; any thread.

#include <QStringView>
#include <optional>

namespace pando::adapters {

// Milliseconds (fractions of one dropped), or nullopt for anything Go refuses, for a sign (a
// negative duration means nothing here) and for more than maxMs. "0" alone is zero, as in Go.
std::optional<qint64> parseGoDurationMs(QStringView text, qint64 maxMs);

} // namespace pando::adapters
