#pragma once
// Package logs: the model behind the desktop's log view. LogBuffer keeps the newest lines of a
// stream in a ring of fixed-size chunks (one byte array and one offset table per chunk, not an
// object per line) so a million lines cost little more than their bytes and appending a batch
// costs only that batch; LogModel shows it to QML with ANSI colours, search and follow.
//
// Line numbers are absolute and stable: line 0 is the first line ever appended, and when the
// ring is full the oldest chunk is dropped whole, so the first line held moves forward while
// every held line keeps its number. Chunk boundaries sit at multiples of the chunk size in that
// numbering, which makes finding a line O(1) and the set of held lines a function of only the
// capacity, the chunk size and how many lines were ever appended: the buffer holds at least the
// newest `capacity` lines (all of them until then) and fewer than capacity + chunkSize.
//
// Threading: not thread-safe; owned and used by one thread (the GUI thread, through LogModel).

#include "app/desktop/logs/ansi.h"

#include <QByteArray>
#include <QByteArrayView>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

namespace pando::desktop {

enum class LogStream : std::uint8_t { Stdout = 0, Stderr = 1 };

// One complete line to append: its raw bytes (escapes included, no '\n').
struct LogLineIn {
    QByteArrayView text;
    LogStream stream = LogStream::Stdout;
    qint64 timeMs = 0; // milliseconds since the epoch
};

class LogBuffer {
public:
    static constexpr qsizetype DefaultCapacity = 1'000'000;
    static constexpr qsizetype DefaultChunkSize = 4096;
    // Longer lines are cut here (a 50 MB minified bundle on one line would otherwise make the
    // one line that shows it unusable); the cut is marked with "…".
    static constexpr qsizetype DefaultMaxLineBytes = 64 * 1024;

    explicit LogBuffer(qsizetype capacity = DefaultCapacity, qsizetype chunkSize = DefaultChunkSize,
                       qsizetype maxLineBytes = DefaultMaxLineBytes);

    qsizetype capacity() const { return m_capacity; }
    qsizetype chunkSize() const { return m_chunkSize; }
    qsizetype size() const { return qsizetype(m_end - m_first); }
    bool isEmpty() const { return m_end == m_first; }
    // Absolute number of the first line held (= how many were dropped) and one past the last.
    qint64 firstLine() const { return m_first; }
    qint64 endLine() const { return m_end; }

    // How many lines appending `incoming` lines will drop, counted from firstLine(): held lines
    // first, then (when incoming alone overflows the ring) the oldest of the incoming ones.
    qsizetype dropCountFor(qsizetype incoming) const;
    // Drops `count` lines from the front; firstLine() + count must be a chunk boundary or
    // endLine(), which dropCountFor's answer (capped at size()) always is.
    void dropFront(qsizetype count);
    // Appends; drops first what dropCountFor(lines.size()) says. O(lines + their bytes).
    void append(std::span<const LogLineIn> lines);
    void clear();
    // Clears and numbers the next line 1 again (another log shown in the same buffer).
    void reset();

    // Line access by row (0 = firstLine()); row must be in [0, size()).
    QByteArrayView raw(qsizetype row) const;
    LogStream stream(qsizetype row) const;
    qint64 timeMs(qsizetype row) const;
    // The style the line starts with (what earlier lines of its stream left set).
    ansi::Style startStyle(qsizetype row) const;

    ansi::RenderedLine render(qsizetype row) const { return ansi::render(raw(row), startStyle(row)); }
    QByteArray plainText(qsizetype row) const { return ansi::strip(raw(row)); }

    // Bytes allocated for the lines: text, offsets, per-batch and style tables.
    qsizetype memoryBytes() const;

private:
    struct Run { // a batch's stream and time, from line `first` of the chunk on
        std::uint32_t first;
        LogStream stream;
        qint64 timeMs;
    };
    struct Chunk {
        qint64 firstLine = 0; // absolute; above the aligned start only for a ring's first chunk
        QByteArray bytes;
        std::vector<std::uint32_t> ends; // end offset of each line in bytes
        std::vector<Run> runs;
        std::vector<std::pair<std::uint32_t, ansi::Style>> styles; // non-default start styles only
        qsizetype lineCount() const { return qsizetype(ends.size()); }
    };

    qint64 keptFrom(qint64 end) const;
    const Chunk &chunkFor(qsizetype row, std::uint32_t *index) const;
    const Run &runFor(const Chunk &chunk, std::uint32_t index) const;
    void store(const LogLineIn &line);

    qsizetype m_capacity;
    qsizetype m_chunkSize;
    qsizetype m_maxLineBytes;
    qint64 m_first = 0;
    qint64 m_end = 0;
    std::deque<Chunk> m_chunks;
    ansi::Style m_carry[2]; // style each stream's last line ended with
};

} // namespace pando::desktop
