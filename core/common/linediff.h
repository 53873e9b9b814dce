#pragma once
// A line diff of two texts (specs, for the desktop's Settings tab and `pando apps update`), and
// the unified form people know from git to print it in.
//
// Threading: pure functions, any thread.

#include <QList>
#include <QString>
#include <QStringList>

namespace pando::core {

struct DiffLine {
    enum class Kind { Same, Removed, Added };
    Kind kind = Kind::Same;
    QString text;
    bool operator==(const DiffLine &) const = default;
};

// The lines of before and after, each once: Removed where only before has it, Added where only
// after has it (a longest common subsequence of the lines between the common head and tail, so a
// changed line reads as one removed and one added). Past MaxDiffCells the middle is shown as all
// removed, then all added, rather than spending memory on an exact answer.
QList<DiffLine> lineDiff(const QString &before, const QString &after);
inline constexpr qsizetype MaxDiffCells = 4'000'000;

// The diff as hunks ("@@ -3,4 +3,5 @@", then " same", "-removed", "+added") with `context`
// unchanged lines around each change; empty when nothing changed.
QStringList unifiedDiff(const QList<DiffLine> &diff, int context = 3);

} // namespace pando::core
