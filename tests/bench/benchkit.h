#pragma once
// What the C++ benchmarks share.

#include <QList>
#include <algorithm>

namespace pando::bench {

// The middle value (the upper middle of an even count); 0 for none.
template<typename T> T median(QList<T> values)
{
    std::sort(values.begin(), values.end());
    return values.isEmpty() ? T{} : values[values.size() / 2];
}

} // namespace pando::bench
