#include "app/desktop/logs/logbuffer.h"

#include <algorithm>

namespace pando::desktop {

LogBuffer::LogBuffer(qsizetype capacity, qsizetype chunkSize, qsizetype maxLineBytes)
    : m_capacity(std::max<qsizetype>(capacity, 1)), m_chunkSize(std::clamp<qsizetype>(chunkSize, 1, m_capacity)),
      m_maxLineBytes(std::max<qsizetype>(maxLineBytes, 16))
{}

// The first line the ring keeps once `end` lines were appended: the latest chunk boundary that
// still leaves at least `capacity` lines after it.
qint64 LogBuffer::keptFrom(qint64 end) const
{
    if (end <= m_capacity)
        return 0;
    return (end - m_capacity) / m_chunkSize * m_chunkSize;
}

qsizetype LogBuffer::dropCountFor(qsizetype incoming) const
{
    return qsizetype(std::max(m_first, keptFrom(m_end + incoming)) - m_first);
}

void LogBuffer::dropFront(qsizetype count)
{
    if (count <= 0)
        return;
    const qint64 newFirst = std::min(m_first + count, m_end);
    while (!m_chunks.empty() && m_chunks.front().firstLine + m_chunks.front().lineCount() <= newFirst)
        m_chunks.pop_front();
    Q_ASSERT(m_chunks.empty() || m_chunks.front().firstLine == newFirst);
    m_first = newFirst;
}

void LogBuffer::clear()
{
    m_chunks.clear();
    m_first = m_end;
    m_carry[0] = m_carry[1] = ansi::Style{};
}

void LogBuffer::reset()
{
    clear();
    m_first = m_end = 0;
}

void LogBuffer::append(std::span<const LogLineIn> lines)
{
    const qsizetype drop = dropCountFor(qsizetype(lines.size()));
    const qsizetype held = std::min(drop, size());
    dropFront(held);
    // When the batch alone overflows the ring its oldest lines are never stored, but they still
    // take their line numbers and leave their colours set, as if stored and dropped.
    const qsizetype skip = drop - held;
    for (qsizetype i = 0; i < skip; ++i) {
        const LogLineIn &line = lines[size_t(i)];
        ansi::Style &carry = m_carry[int(line.stream) & 1];
        carry = ansi::styleAfter(line.text, carry);
        ++m_end;
    }
    if (skip > 0)
        m_first = m_end;
    for (auto i = size_t(skip); i < lines.size(); ++i)
        store(lines[i]);
}

void LogBuffer::store(const LogLineIn &line)
{
    if (m_chunks.empty() || m_end % m_chunkSize == 0) {
        qsizetype reserve = m_chunkSize * 80;
        if (!m_chunks.empty()) {
            // The full chunk never grows again: give back its slack.
            Chunk &sealed = m_chunks.back();
            reserve = sealed.bytes.size() + sealed.bytes.size() / 8;
            sealed.bytes.squeeze();
            sealed.runs.shrink_to_fit();
            sealed.styles.shrink_to_fit();
        }
        Chunk &chunk = m_chunks.emplace_back();
        chunk.firstLine = m_end;
        chunk.bytes.reserve(reserve);
        chunk.ends.reserve(size_t(m_chunkSize - m_end % m_chunkSize));
    }
    Chunk &chunk = m_chunks.back();
    const auto index = std::uint32_t(chunk.ends.size());

    QByteArrayView text = line.text;
    const bool cut = text.size() > m_maxLineBytes;
    if (cut) {
        qsizetype at = m_maxLineBytes;
        while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80)
            --at; // do not split a UTF-8 sequence
        text = text.first(at);
    }
    chunk.bytes.append(text);
    if (cut)
        chunk.bytes.append("\xe2\x80\xa6"); // "…"
    chunk.ends.push_back(std::uint32_t(chunk.bytes.size()));

    if (chunk.runs.empty() || chunk.runs.back().stream != line.stream || chunk.runs.back().timeMs != line.timeMs)
        chunk.runs.push_back(Run{index, line.stream, line.timeMs});

    ansi::Style &carry = m_carry[int(line.stream) & 1];
    if (!carry.isDefault())
        chunk.styles.emplace_back(index, carry);
    carry = ansi::styleAfter(text, carry);
    ++m_end;
}

const LogBuffer::Chunk &LogBuffer::chunkFor(qsizetype row, std::uint32_t *index) const
{
    Q_ASSERT(row >= 0 && row < size());
    const qint64 line = m_first + row;
    const Chunk &chunk = m_chunks[size_t(line / m_chunkSize - m_chunks.front().firstLine / m_chunkSize)];
    *index = std::uint32_t(line - chunk.firstLine);
    return chunk;
}

const LogBuffer::Run &LogBuffer::runFor(const Chunk &chunk, std::uint32_t index) const
{
    auto it = std::upper_bound(chunk.runs.begin(), chunk.runs.end(), index,
                               [](std::uint32_t i, const Run &run) { return i < run.first; });
    return *(it - 1);
}

QByteArrayView LogBuffer::raw(qsizetype row) const
{
    std::uint32_t index;
    const Chunk &chunk = chunkFor(row, &index);
    const std::uint32_t start = index == 0 ? 0 : chunk.ends[index - 1];
    return {chunk.bytes.constData() + start, chunk.ends[index] - start};
}

LogStream LogBuffer::stream(qsizetype row) const
{
    std::uint32_t index;
    const Chunk &chunk = chunkFor(row, &index);
    return runFor(chunk, index).stream;
}

qint64 LogBuffer::timeMs(qsizetype row) const
{
    std::uint32_t index;
    const Chunk &chunk = chunkFor(row, &index);
    return runFor(chunk, index).timeMs;
}

ansi::Style LogBuffer::startStyle(qsizetype row) const
{
    std::uint32_t index;
    const Chunk &chunk = chunkFor(row, &index);
    auto it = std::lower_bound(chunk.styles.begin(), chunk.styles.end(), index,
                               [](const auto &entry, std::uint32_t i) { return entry.first < i; });
    return it != chunk.styles.end() && it->first == index ? it->second : ansi::Style{};
}

qsizetype LogBuffer::memoryBytes() const
{
    qsizetype total = 0;
    for (const Chunk &chunk : m_chunks) {
        total += qsizetype(sizeof(Chunk)) + chunk.bytes.capacity() +
                 qsizetype(chunk.ends.capacity() * sizeof(std::uint32_t)) +
                 qsizetype(chunk.runs.capacity() * sizeof(Run)) +
                 qsizetype(chunk.styles.capacity() * sizeof(std::pair<std::uint32_t, ansi::Style>));
    }
    return total;
}

} // namespace pando::desktop
