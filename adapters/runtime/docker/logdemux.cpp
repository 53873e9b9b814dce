#include "adapters/runtime/docker/logdemux.h"

#include <QDateTime>
#include <QTimeZone>

namespace pando::adapters::docker {

qint64 parseRfc3339Ms(QByteArrayView text)
{
    // yyyy-MM-ddTHH:mm:ss[.fraction](Z|+hh:mm|-hh:mm)
    if (text.size() < 20 || text[4] != '-' || text[7] != '-' || (text[10] != 'T' && text[10] != 't') ||
        text[13] != ':' || text[16] != ':')
        return 0;
    const QDateTime base = QDateTime::fromString(QString::fromLatin1(text.first(19)), Qt::ISODate);
    if (!base.isValid())
        return 0;
    qsizetype i = 19;
    int millis = 0;
    if (i < text.size() && text[i] == '.') {
        ++i;
        int digits = 0;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            if (digits < 3)
                millis = millis * 10 + (text[i] - '0');
            ++digits;
            ++i;
        }
        for (; digits < 3; ++digits)
            millis *= 10;
    }
    if (i >= text.size())
        return 0;
    int offsetSeconds = 0;
    if (text[i] == 'Z' || text[i] == 'z') {
        ++i;
    } else if ((text[i] == '+' || text[i] == '-') && i + 6 <= text.size() && text[i + 3] == ':') {
        const int sign = text[i] == '-' ? -1 : 1;
        const int hours = (text[i + 1] - '0') * 10 + (text[i + 2] - '0');
        const int minutes = (text[i + 4] - '0') * 10 + (text[i + 5] - '0');
        offsetSeconds = sign * (hours * 3600 + minutes * 60);
        i += 6;
    } else {
        return 0;
    }
    if (i != text.size())
        return 0;
    const QDateTime utc(base.date(), base.time(), Qt::UTC);
    return utc.toMSecsSinceEpoch() - qint64(offsetSeconds) * 1000 + millis;
}

LogDemuxer::LogDemuxer(bool multiplexed, bool timestamps, std::function<void(const LogLine &)> sink)
    : m_multiplexed(multiplexed), m_timestamps(timestamps), m_sink(std::move(sink))
{}

void LogDemuxer::feed(QByteArrayView chunk)
{
    if (!m_multiplexed) {
        appendPayload(1, chunk);
        return;
    }
    while (!chunk.isEmpty()) {
        if (m_frameRemaining == 0) {
            const qsizetype need = 8 - m_header.size();
            const qsizetype take = qMin(need, chunk.size());
            m_header.append(chunk.first(take));
            chunk = chunk.sliced(take);
            if (m_header.size() < 8)
                return;
            const auto *h = reinterpret_cast<const uchar *>(m_header.constData());
            m_frameStream = h[0] == 2 ? 2 : 1;
            m_frameRemaining = (qint64(h[4]) << 24) | (qint64(h[5]) << 16) | (qint64(h[6]) << 8) | qint64(h[7]);
            m_header.clear();
            continue;
        }
        const qsizetype take = qsizetype(qMin<qint64>(m_frameRemaining, chunk.size()));
        appendPayload(m_frameStream, chunk.first(take));
        chunk = chunk.sliced(take);
        m_frameRemaining -= take;
    }
}

void LogDemuxer::appendPayload(int stream, QByteArrayView data)
{
    QByteArray &pending = m_pending[stream];
    while (!data.isEmpty()) {
        const qsizetype newline = data.indexOf('\n');
        if (newline < 0) {
            pending.append(data);
            return;
        }
        if (pending.isEmpty()) {
            emitLine(stream, data.first(newline));
        } else {
            pending.append(data.first(newline));
            emitLine(stream, pending);
            pending.clear();
        }
        data = data.sliced(newline + 1);
    }
}

void LogDemuxer::emitLine(int stream, QByteArrayView line)
{
    if (line.endsWith('\r'))
        line.chop(1);
    LogLine out;
    out.stderrStream = stream == 2;
    if (m_timestamps) {
        const qsizetype space = line.indexOf(' ');
        const QByteArrayView stamp = space < 0 ? line : line.first(space);
        out.timestampMs = parseRfc3339Ms(stamp);
        if (out.timestampMs != 0)
            line = space < 0 ? QByteArrayView() : line.sliced(space + 1);
    }
    out.text = QString::fromUtf8(line);
    m_sink(out);
}

void LogDemuxer::finish()
{
    for (int stream = 1; stream <= 2; ++stream) {
        if (!m_pending[stream].isEmpty()) {
            emitLine(stream, m_pending[stream]);
            m_pending[stream].clear();
        }
    }
}

} // namespace pando::adapters::docker
