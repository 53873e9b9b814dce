#pragma once
// What the C++ benchmarks share.

#include <QList>
#include <algorithm>

namespace pando::bench {

// The middle value (the upper middle of an even count); 0 for none.
inline qint64 median(QList<qint64> values)
{
    std::sort(values.begin(), values.end());
    return values.isEmpty() ? 0 : values[values.size() / 2];
}

} // namespace pando::bench
