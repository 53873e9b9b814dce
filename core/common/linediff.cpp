#include "core/common/linediff.h"

#include <algorithm>
#include <vector>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

QStringList linesOf(const QString &text)
{
    QStringList lines = text.split(u'\n');
    if (!lines.isEmpty() && lines.last().isEmpty())
        lines.removeLast();
    return lines;
}

// The middle of a diff: a and b from their first differing line to their last.
void diffMiddle(const QStringList &a, const QStringList &b, QList<DiffLine> &out)
{
    const auto n = size_t(a.size());
    const auto m = size_t(b.size());
    if (qsizetype(n + 1) * qsizetype(m + 1) > MaxDiffCells) {
        for (const QString &line : a)
            out.append({DiffLine::Kind::Removed, line});
        for (const QString &line : b)
            out.append({DiffLine::Kind::Added, line});
        return;
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
    for (size_t i = n; i-- > 0;)
        for (size_t j = m; j-- > 0;)
            lcs[i][j] =
                a[qsizetype(i)] == b[qsizetype(j)] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    size_t i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a[qsizetype(i)] == b[qsizetype(j)]) {
            out.append({DiffLine::Kind::Same, a[qsizetype(i)]});
            ++i;
            ++j;
        } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
            out.append({DiffLine::Kind::Removed, a[qsizetype(i++)]});
        } else {
            out.append({DiffLine::Kind::Added, b[qsizetype(j++)]});
        }
    }
}

} // namespace

QList<DiffLine> lineDiff(const QString &before, const QString &after)
{
    const QStringList a = linesOf(before);
    const QStringList b = linesOf(after);
    qsizetype head = 0;
    while (head < a.size() && head < b.size() && a[head] == b[head])
        ++head;
    qsizetype tail = 0;
    while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail])
        ++tail;
    QList<DiffLine> out;
    for (qsizetype i = 0; i < head; ++i)
        out.append({DiffLine::Kind::Same, a[i]});
    diffMiddle(a.mid(head, a.size() - head - tail), b.mid(head, b.size() - head - tail), out);
    for (qsizetype i = a.size() - tail; i < a.size(); ++i)
        out.append({DiffLine::Kind::Same, a[i]});
    return out;
}

QStringList unifiedDiff(const QList<DiffLine> &diff, int context)
{
    QStringList out;
    const auto count = diff.size();
    qsizetype i = 0;
    while (i < count) {
        // The next change, and the hunk around it: changes closer than twice the context join.
        while (i < count && diff[i].kind == DiffLine::Kind::Same)
            ++i;
        if (i == count)
            break;
        const qsizetype start = std::max<qsizetype>(0, i - context);
        qsizetype end = i;
        for (qsizetype same = 0; end < count && same <= 2 * qsizetype(context); ++end)
            same = diff[end].kind == DiffLine::Kind::Same ? same + 1 : 0;
        // end is past the run of unchanged lines that ended the hunk; keep `context` of them.
        qsizetype last = end;
        while (last > start && diff[last - 1].kind == DiffLine::Kind::Same)
            --last;
        end = std::min(count, last + context);
        // Line numbers of the hunk's first line on each side (1-based).
        qsizetype oldLine = 1, newLine = 1;
        for (qsizetype k = 0; k < start; ++k) {
            oldLine += diff[k].kind != DiffLine::Kind::Added ? 1 : 0;
            newLine += diff[k].kind != DiffLine::Kind::Removed ? 1 : 0;
        }
        qsizetype oldCount = 0, newCount = 0;
        QStringList body;
        for (qsizetype k = start; k < end; ++k) {
            const DiffLine &line = diff[k];
            oldCount += line.kind != DiffLine::Kind::Added ? 1 : 0;
            newCount += line.kind != DiffLine::Kind::Removed ? 1 : 0;
            const QChar mark = line.kind == DiffLine::Kind::Same      ? u' '
                               : line.kind == DiffLine::Kind::Removed ? u'-'
                                                                      : u'+';
            body.append(mark + line.text);
        }
        // As diff writes an empty side: the line before it, and a count of 0.
        out.append(u"@@ -%1,%2 +%3,%4 @@"_s.arg(oldCount ? oldLine : oldLine - 1)
                       .arg(oldCount)
                       .arg(newCount ? newLine : newLine - 1)
                       .arg(newCount));
        out.append(body);
        i = end;
    }
    return out;
}

} // namespace pando::core
