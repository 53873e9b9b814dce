#include "tagversion.h"

#include <QRegularExpression>
#include <algorithm>

namespace pando::adapters::registryimage {

using namespace Qt::StringLiterals;

std::optional<TagVersion> parseTagVersion(const QString &tag)
{
    static const QRegularExpression shape(u"^v?(\\d+)(?:\\.(\\d+))?(?:\\.(\\d+))?(?:-([0-9A-Za-z.-]+))?$"_s);
    static const QRegularExpression pre(u"^((?:alpha|beta|rc)[0-9A-Za-z.]*)(?:-(.+))?$"_s);
    const auto match = shape.match(tag);
    if (!match.hasMatch())
        return std::nullopt;
    TagVersion v;
    for (int i = 1; i <= 3 && match.hasCaptured(i); ++i)
        v.numbers.append(match.captured(i).toInt());
    const QString suffix = match.captured(4);
    if (const auto p = pre.match(suffix); p.hasMatch()) {
        v.preRelease = p.captured(1);
        v.variant = p.captured(2);
    } else {
        v.variant = suffix;
    }
    return v;
}

int compareReleases(const TagVersion &a, const TagVersion &b)
{
    for (int i = 0; i < 3; ++i) {
        const int x = i < a.numbers.size() ? a.numbers[i] : 0;
        const int y = i < b.numbers.size() ? b.numbers[i] : 0;
        if (x != y)
            return x < y ? -1 : 1;
    }
    if (a.preRelease.isEmpty() != b.preRelease.isEmpty())
        return a.preRelease.isEmpty() ? 1 : -1;
    const QStringList pa = a.preRelease.split(u'.');
    const QStringList pb = b.preRelease.split(u'.');
    for (qsizetype i = 0; i < std::min(pa.size(), pb.size()); ++i) {
        bool na = false;
        bool nb = false;
        const int ia = pa[i].toInt(&na);
        const int ib = pb[i].toInt(&nb);
        if (na && nb && ia != ib)
            return ia < ib ? -1 : 1;
        if (!(na && nb) && pa[i] != pb[i])
            return na ? -1 : nb ? 1 : (pa[i] < pb[i] ? -1 : 1);
    }
    if (pa.size() != pb.size())
        return pa.size() < pb.size() ? -1 : 1;
    return 0;
}

int compareTagVersions(const TagVersion &a, const TagVersion &b)
{
    if (const int byRelease = compareReleases(a, b); byRelease != 0)
        return byRelease;
    if (a.numbers.size() != b.numbers.size())
        return a.numbers.size() < b.numbers.size() ? -1 : 1;
    return 0;
}

} // namespace pando::adapters::registryimage
