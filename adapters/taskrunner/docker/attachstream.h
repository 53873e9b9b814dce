#pragma once
// A container's attach stream over a raw unix-socket connection to the Docker engine: libcurl
// cannot hand over a hijacked ("Upgrade: tcp") connection for writing stdin and half-closing
// it, so this speaks the one HTTP request by hand and then reads and writes raw bytes.
// FrameSplitter cuts Docker's multiplexed frames (8-byte header: stream, 0, 0, 0, big-endian
// length) into raw stdout/stderr chunks, keeping no line structure.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"

#include <QByteArray>
#include <QString>
#include <functional>

namespace pando::adapters::docker::detail {

class FrameSplitter {
public:
    using Sink = std::function<void(bool stderrStream, QByteArrayView data)>;
    explicit FrameSplitter(Sink sink) : m_sink(std::move(sink)) {}
    void feed(QByteArrayView data);

private:
    Sink m_sink;
    QByteArray m_header;
    qint64 m_remaining = 0;
    bool m_stderr = false;
};

class AttachStream {
public:
    AttachStream() = default;
    AttachStream(const AttachStream &) = delete;
    AttachStream &operator=(const AttachStream &) = delete;
    ~AttachStream();

    // Connects to socketPath and attaches to the container's stdout and stderr (and stdin when
    // withStdin), before it starts, so no output is missed. Bytes that came with the response
    // headers are kept and returned by the first pump().
    Status open(const QString &socketPath, const QString &containerId, bool withStdin);

    enum class Pump { More, Ended };
    // Waits up to waitMs for output and passes what came to onData; writes pending stdin when
    // the socket takes it, and half-closes the connection once all of it is written (the
    // container then reads EOF). Ended when the engine closed the stream.
    Pump pump(int waitMs, const std::function<void(QByteArrayView)> &onData);
    void setStdin(QByteArray data);

private:
    int m_fd = -1;
    QByteArray m_early;
    QByteArray m_stdin;
    qsizetype m_stdinOffset = 0;
    bool m_stdinOpen = false;
};

} // namespace pando::adapters::docker::detail
