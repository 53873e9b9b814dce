#pragma once
// Turns Docker's log stream into LogLines. Non-TTY containers send frames of an 8-byte header
// (stream 1 = stdout, 2 = stderr; 4-byte big-endian length) and a payload; TTY containers send
// raw bytes. Frames and lines may be split anywhere across chunks, so partial data is kept per
// stream until its newline arrives. With timestamps=1 each line starts with an RFC 3339 time.

#include "adapters/api/runtime.h"

#include <QByteArray>
#include <functional>

namespace pando::adapters::docker {

class LogDemuxer {
public:
    LogDemuxer(bool multiplexed, bool timestamps, std::function<void(const LogLine &)> sink);

    void feed(QByteArrayView chunk);
    // Emits what is left without a final newline.
    void finish();

private:
    void appendPayload(int stream, QByteArrayView data);
    void emitLine(int stream, QByteArrayView line);

    bool m_multiplexed;
    bool m_timestamps;
    std::function<void(const LogLine &)> m_sink;
    QByteArray m_header; // the part of a frame header received so far
    int m_frameStream = 1;
    qint64 m_frameRemaining = 0; // payload bytes of the current frame still to come
    QByteArray m_pending[3];     // partial lines by stream (index 1 stdout, 2 stderr)
};

// "2024-05-01T10:20:30.123456789Z" or with an offset; returns ms since the epoch, 0 if malformed.
qint64 parseRfc3339Ms(QByteArrayView text);

} // namespace pando::adapters::docker
