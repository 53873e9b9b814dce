#include "app/desktop/logs/logmodel.h"

#include <QElapsedTimer>
#include <QVariantMap>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

constexpr size_t CacheSlots = 512; // more than any window shows at once
constexpr int ScanSliceMs = 4;     // a quarter of a 60 Hz frame per search slice

bool isAscii(QByteArrayView bytes)
{
    return std::all_of(bytes.begin(), bytes.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// `needle` is lower-case ASCII.
bool containsAsciiNoCase(QByteArrayView haystack, QByteArrayView needle)
{
    const qsizetype n = needle.size();
    if (n == 0)
        return true;
    const char lower = needle[0];
    const char upper = (lower >= 'a' && lower <= 'z') ? char(lower - 32) : lower;
    const char *data = haystack.data();
    for (qsizetype i = 0, last = haystack.size() - n; i <= last; ++i) {
        if ((data[i] == lower || data[i] == upper) && qstrnicmp(data + i, needle.data(), size_t(n)) == 0)
            return true;
    }
    return false;
}

QVariantMap rangeValue(qsizetype start, qsizetype length)
{
    return QVariantMap{{u"start"_s, start}, {u"length"_s, length}};
}

} // namespace

LogModel::LogModel(QObject *parent) : LogModel(LogBuffer::DefaultCapacity, LogBuffer::DefaultChunkSize, parent)
{}

LogModel::LogModel(qsizetype capacity, qsizetype chunkSize, QObject *parent)
    : QAbstractListModel(parent), m_buffer(capacity, chunkSize), m_cache(CacheSlots)
{
    m_coalesce.setSingleShot(true);
    m_coalesce.setInterval(0);
    connect(&m_coalesce, &QTimer::timeout, this, &LogModel::applyQueued);
    m_scanTimer.setInterval(0);
    connect(&m_scanTimer, &QTimer::timeout, this, &LogModel::scanSlice);
}

LogModel::~LogModel() = default;

int LogModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_buffer.size());
}

QHash<int, QByteArray> LogModel::roleNames() const
{
    return {
        {TextRole, "text"}, {SpansRole, "spans"}, {LineNumberRole, "lineNumber"},   {StreamRole, "stream"},
        {TimeRole, "time"}, {MatchRole, "match"}, {MatchRangesRole, "matchRanges"},
    };
}

const ansi::RenderedLine &LogModel::rendered(qsizetype row) const
{
    const qint64 line = m_buffer.firstLine() + row;
    CachedLine &slot = m_cache[size_t(line) % CacheSlots];
    if (slot.line != line) {
        slot.rendered = m_buffer.render(row);
        slot.line = line;
    }
    return slot.rendered;
}

QVariant LogModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const qsizetype row = index.row();
    switch (role) {
    case Qt::DisplayRole:
    case TextRole:
        return rendered(row).text;
    case SpansRole: {
        QVariantList spans;
        for (const ansi::Span &span : rendered(row).spans) {
            spans.append(QVariantMap{{u"start"_s, span.start},
                                     {u"length"_s, span.length},
                                     {u"fg"_s, ansi::colourValue(span.style.fg)},
                                     {u"bg"_s, ansi::colourValue(span.style.bg)},
                                     {u"bold"_s, span.style.bold}});
        }
        return spans;
    }
    case LineNumberRole:
        return m_buffer.firstLine() + row + 1;
    case StreamRole:
        return int(m_buffer.stream(row));
    case TimeRole:
        return QDateTime::fromMSecsSinceEpoch(m_buffer.timeMs(row), Qt::UTC);
    case MatchRole:
        return !m_term.isEmpty() && lineMatches(row);
    case MatchRangesRole: {
        QVariantList ranges;
        if (!m_term.isEmpty()) {
            for (const auto &[start, length] : findIn(rendered(row).text))
                ranges.append(rangeValue(start, length));
        }
        return ranges;
    }
    default:
        return {};
    }
}

void LogModel::appendData(QByteArrayView data, Stream stream, const QDateTime &time)
{
    if (data.isEmpty())
        return;
    const qint64 ms = time.isValid() ? time.toMSecsSinceEpoch() : QDateTime::currentMSecsSinceEpoch();
    if (m_coalesce.interval() > 0) {
        m_queue.push_back(Queued{stream, ms, data.toByteArray()});
        if (!m_coalesce.isActive())
            m_coalesce.start();
        return;
    }
    if (!m_queue.empty())
        applyQueued(); // keep the order when the interval was just set to 0
    const Segment segment{stream, ms, data};
    appendSegments(std::span(&segment, 1));
}

void LogModel::appendSegments(std::span<const Segment> segments)
{
    std::vector<LogLineIn> lines;
    std::deque<QByteArray> joined; // lines completed from a partial one; the views point here
    const qsizetype maxLine = LogBuffer::DefaultMaxLineBytes + 1;
    for (const Segment &seg : segments) {
        const int s = int(seg.stream);
        QByteArrayView rest = seg.bytes;
        for (qsizetype nl; (nl = rest.indexOf('\n')) >= 0; rest = rest.sliced(nl + 1)) {
            QByteArrayView line = rest.first(nl);
            qint64 lineMs = seg.timeMs;
            if (!m_partial[s].isEmpty()) {
                m_partial[s].append(
                    line.first(std::min(line.size(), std::max<qsizetype>(0, maxLine - m_partial[s].size()))));
                joined.push_back(std::exchange(m_partial[s], QByteArray()));
                line = joined.back();
                lineMs = m_partialTime[s];
            }
            if (line.endsWith('\r'))
                line.chop(1);
            lines.push_back(LogLineIn{line, LogStream(s), lineMs});
        }
        if (!rest.isEmpty()) {
            if (m_partial[s].isEmpty())
                m_partialTime[s] = seg.timeMs;
            // A line that never ends is cut where the buffer would cut it anyway.
            m_partial[s].append(
                rest.first(std::min(rest.size(), std::max<qsizetype>(0, maxLine - m_partial[s].size()))));
        }
    }
    appendBatch(lines);
}

void LogModel::applyQueued()
{
    m_coalesce.stop();
    if (m_queue.empty())
        return;
    // Taken first: a slot reacting to the insertion may append again.
    const std::vector<Queued> queue = std::exchange(m_queue, {});
    std::vector<Segment> segments;
    segments.reserve(queue.size());
    for (const Queued &q : queue)
        segments.push_back(Segment{q.stream, q.timeMs, q.bytes});
    appendSegments(segments);
}

void LogModel::appendLines(const QList<QByteArray> &lines, Stream stream, const QDateTime &time)
{
    if (lines.isEmpty())
        return;
    applyQueued();
    const qint64 ms = time.isValid() ? time.toMSecsSinceEpoch() : QDateTime::currentMSecsSinceEpoch();
    std::vector<LogLineIn> in;
    in.reserve(size_t(lines.size()));
    for (const QByteArray &line : lines)
        in.push_back(LogLineIn{line, LogStream(stream), ms});
    appendBatch(in);
}

void LogModel::flush()
{
    applyQueued();
    std::vector<LogLineIn> lines;
    QByteArray partial[2];
    for (int s = 0; s < 2; ++s) {
        if (m_partial[s].isEmpty())
            continue;
        partial[s] = std::exchange(m_partial[s], QByteArray());
        QByteArrayView line = partial[s];
        if (line.endsWith('\r'))
            line.chop(1);
        lines.push_back(LogLineIn{line, LogStream(s), m_partialTime[s]});
    }
    appendBatch(lines);
}

void LogModel::appendBatch(std::span<const LogLineIn> lines)
{
    if (lines.empty())
        return;
    const auto incoming = qsizetype(lines.size());
    const qsizetype drop = m_buffer.dropCountFor(incoming);
    const qsizetype held = std::min(drop, m_buffer.size());
    if (held > 0) {
        beginRemoveRows({}, 0, int(held - 1));
        m_buffer.dropFront(held);
        endRemoveRows();
    }
    const qsizetype inserted = incoming - (drop - held);
    const int first = int(m_buffer.size());
    beginInsertRows({}, first, int(first + inserted - 1));
    m_buffer.append(lines);
    endInsertRows();
    Q_ASSERT(m_buffer.size() == first + inserted);

    if (drop > 0) {
        const size_t before = m_matches.size();
        while (!m_matches.empty() && m_matches.front() < m_buffer.firstLine())
            m_matches.pop_front();
        m_scanned = std::max(m_scanned, m_buffer.firstLine());
        if (m_matches.size() != before)
            Q_EMIT matchCountChanged();
    }
    if (!m_term.isEmpty() && !m_scanTimer.isActive()) {
        m_scanTimer.start();
        Q_EMIT searchingChanged();
    }
    if (!m_following) {
        m_unseen += incoming;
        Q_EMIT unseenCountChanged();
    }
    Q_EMIT countChanged();
}

void LogModel::clear()
{
    applyQueued();
    beginResetModel();
    m_buffer.clear();
    m_partial[0].clear();
    m_partial[1].clear();
    endResetModel();
    m_unseen = 0;
    Q_EMIT unseenCountChanged();
    restartSearch();
    Q_EMIT countChanged();
}

void LogModel::reset()
{
    clear();
    m_buffer.reset();
    // Renders are cached by line number, which now starts again.
    for (CachedLine &slot : m_cache)
        slot.line = -1;
    restartSearch();
}

void LogModel::setCoalesceInterval(int ms)
{
    m_coalesce.setInterval(std::max(ms, 0));
}

void LogModel::setFollowing(bool following)
{
    if (m_following == following)
        return;
    m_following = following;
    if (following && m_unseen != 0) {
        m_unseen = 0;
        Q_EMIT unseenCountChanged();
    }
    Q_EMIT followingChanged();
}

void LogModel::setSearchTerm(const QString &term)
{
    if (term == m_term)
        return;
    m_term = term;
    restartSearch();
    Q_EMIT searchTermChanged();
}

void LogModel::setCaseSensitive(bool caseSensitive)
{
    if (caseSensitive == m_caseSensitive)
        return;
    m_caseSensitive = caseSensitive;
    restartSearch();
    Q_EMIT caseSensitiveChanged();
}

void LogModel::restartSearch()
{
    m_termUtf8 = m_term.toUtf8();
    m_termAscii = isAscii(m_termUtf8);
    if (m_termAscii && !m_caseSensitive)
        m_termUtf8 = m_termUtf8.toLower();
    const bool hadMatches = !m_matches.empty();
    const bool wasSearching = m_scanTimer.isActive();
    m_matches.clear();
    m_scanned = m_buffer.firstLine();
    if (m_term.isEmpty() || m_buffer.isEmpty())
        m_scanTimer.stop();
    else
        m_scanTimer.start();
    if (hadMatches)
        Q_EMIT matchCountChanged();
    if (wasSearching != m_scanTimer.isActive())
        Q_EMIT searchingChanged();
    if (rowCount() > 0)
        Q_EMIT dataChanged(index(0), index(rowCount() - 1), {MatchRole, MatchRangesRole});
}

bool LogModel::lineMatches(qsizetype row) const
{
    const QByteArrayView raw = m_buffer.raw(row);
    QByteArray stripped;
    QByteArrayView text = raw;
    if (ansi::needsProcessing(raw)) {
        stripped = ansi::strip(raw);
        text = stripped;
    }
    if (m_caseSensitive)
        return text.indexOf(m_termUtf8) >= 0; // UTF-8 is matched exactly byte for byte
    if (m_termAscii)
        return containsAsciiNoCase(text, m_termUtf8);
    return QString::fromUtf8(text).contains(m_term, Qt::CaseInsensitive);
}

QList<std::pair<qsizetype, qsizetype>> LogModel::findIn(const QString &text) const
{
    QList<std::pair<qsizetype, qsizetype>> ranges;
    const Qt::CaseSensitivity cs = m_caseSensitive ? Qt::CaseSensitive : Qt::CaseInsensitive;
    for (qsizetype at = text.indexOf(m_term, 0, cs); at >= 0; at = text.indexOf(m_term, at + m_term.size(), cs))
        ranges.append({at, m_term.size()});
    return ranges;
}

void LogModel::scanSlice()
{
    QElapsedTimer timer;
    timer.start();
    const size_t before = m_matches.size();
    const qint64 first = m_buffer.firstLine();
    const qint64 end = m_buffer.endLine();
    while (m_scanned < end) {
        const qint64 stop = std::min(end, m_scanned + 512);
        for (; m_scanned < stop; ++m_scanned) {
            if (lineMatches(qsizetype(m_scanned - first)))
                m_matches.push_back(m_scanned);
        }
        if (timer.elapsed() >= ScanSliceMs)
            break;
    }
    if (m_matches.size() != before)
        Q_EMIT matchCountChanged();
    if (m_scanned >= end) {
        m_scanTimer.stop();
        Q_EMIT searchingChanged();
    }
}

int LogModel::nextMatch(int row) const
{
    if (m_matches.empty())
        return -1;
    auto it = std::upper_bound(m_matches.begin(), m_matches.end(), m_buffer.firstLine() + row);
    if (it == m_matches.end())
        it = m_matches.begin();
    return int(*it - m_buffer.firstLine());
}

int LogModel::previousMatch(int row) const
{
    if (m_matches.empty())
        return -1;
    auto it = std::lower_bound(m_matches.begin(), m_matches.end(), m_buffer.firstLine() + row);
    if (it == m_matches.begin())
        it = m_matches.end();
    return int(*(it - 1) - m_buffer.firstLine());
}

int LogModel::matchOrdinal(int row) const
{
    const qint64 line = m_buffer.firstLine() + row;
    auto it = std::lower_bound(m_matches.begin(), m_matches.end(), line);
    return it != m_matches.end() && *it == line ? int(it - m_matches.begin()) + 1 : 0;
}

QString LogModel::plainText(int row) const
{
    if (row < 0 || row >= rowCount())
        return {};
    return QString::fromUtf8(m_buffer.plainText(row));
}

QString LogModel::copyRows(int first, int last) const
{
    first = std::max(first, 0);
    last = std::min(last, rowCount() - 1);
    QByteArray out;
    for (int row = first; row <= last; ++row) {
        if (row > first)
            out.append('\n');
        const QByteArrayView raw = m_buffer.raw(row);
        if (ansi::needsProcessing(raw))
            out.append(ansi::strip(raw));
        else
            out.append(raw);
    }
    return QString::fromUtf8(out);
}

} // namespace pando::desktop
