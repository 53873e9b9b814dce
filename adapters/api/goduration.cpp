#include "adapters/api/goduration.h"

#include <algorithm>
#include <array>
#include <utility>

namespace pando::adapters {

std::optional<qint64> parseGoDurationMs(QStringView text, qint64 maxMs)
{
    if (text == u"0")
        return 0;
    if (text.isEmpty())
        return std::nullopt;
    // Go's units in nanoseconds' terms, as milliseconds.
    static constexpr std::array<std::pair<QStringView, double>, 8> Units{{
        {u"ns", 1e-6},
        {u"us", 1e-3},
        {u"\u00b5s", 1e-3}, // micro sign
        {u"\u03bcs", 1e-3}, // Greek mu
        {u"ms", 1.0},
        {u"s", 1e3},
        {u"m", 60e3},
        {u"h", 3600e3},
    }};
    double total = 0;
    qsizetype i = 0;
    while (i < text.size()) {
        const qsizetype start = i;
        bool digits = false;
        while (i < text.size() && text.at(i).isDigit()) {
            ++i;
            digits = true;
        }
        if (i < text.size() && text.at(i) == u'.') {
            ++i;
            while (i < text.size() && text.at(i).isDigit()) {
                ++i;
                digits = true;
            }
        }
        if (!digits)
            return std::nullopt;
        bool ok = false;
        const double value = text.sliced(start, i - start).toDouble(&ok);
        if (!ok)
            return std::nullopt;
        const qsizetype unitStart = i;
        while (i < text.size() && !text.at(i).isDigit() && text.at(i) != u'.')
            ++i;
        const QStringView unit = text.sliced(unitStart, i - unitStart);
        const auto known =
            std::find_if(Units.cbegin(), Units.cend(), [&unit](const auto &u) { return u.first == unit; });
        if (known == Units.cend())
            return std::nullopt; // no unit, or one Go does not know (days included)
        total += value * known->second;
        if (total > double(maxMs))
            return std::nullopt;
    }
    return qint64(total);
}

} // namespace pando::adapters
