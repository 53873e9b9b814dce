#include "adapters/kit/streamkit/websocketframes.h"

#include <QCryptographicHash>
#include <QRandomGenerator>
#include <utility>

using namespace Qt::StringLiterals;

namespace pando::adapters::streamkit::websocket {

namespace {
// RFC 6455 section 1.3: what the key is joined with before it is hashed.
constexpr QByteArrayView AcceptGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

QByteArray randomBytes(int n)
{
    QByteArray bytes(n, Qt::Uninitialized);
    for (char &b : bytes)
        b = char(QRandomGenerator::system()->bounded(256));
    return bytes;
}
} // namespace

QByteArray acceptFor(const QByteArray &key)
{
    return QCryptographicHash::hash(QByteArray(key + AcceptGuid.toByteArray()), QCryptographicHash::Sha1).toBase64();
}

QByteArray handshakeRequest(const QString &pathAndQuery, const QByteArray &host, QByteArray *key)
{
    *key = randomBytes(16).toBase64();
    return "GET " + pathAndQuery.toUtf8() + " HTTP/1.1\r\nHost: " + host +
           "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + *key +
           "\r\nSec-WebSocket-Version: 13\r\n\r\n";
}

Status checkHandshake(const QByteArray &head, const QByteArray &key, const QString &where)
{
    const QList<QByteArray> lines = head.split('\n');
    const QByteArray status = lines.value(0).trimmed();
    if (status.split(' ').value(1) != "101")
        return fail(ErrorCode::Failed, u"the server did not switch to a WebSocket: %1"_s.arg(QString::fromUtf8(status)),
                    where);
    for (const QByteArray &line : lines) {
        const qsizetype colon = line.indexOf(':');
        if (colon > 0 && line.left(colon).trimmed().toLower() == "sec-websocket-accept")
            return line.mid(colon + 1).trimmed() == acceptFor(key)
                       ? Status{}
                       : fail(ErrorCode::Failed, u"the server's WebSocket accept value is wrong"_s, where);
    }
    return fail(ErrorCode::Failed, u"the server sent no WebSocket accept value"_s, where);
}

QByteArray clientFrame(Opcode opcode, QByteArrayView payload)
{
    QByteArray frame;
    frame.reserve(payload.size() + 14);
    frame.append(char(0x80 | quint8(opcode)));
    const auto length = quint64(payload.size());
    if (length < 126) {
        frame.append(char(0x80 | length));
    } else if (length <= 0xFFFF) {
        frame.append(char(0x80 | 126));
        frame.append(char(length >> 8)).append(char(length & 0xFF));
    } else {
        frame.append(char(0x80 | 127));
        for (int shift = 56; shift >= 0; shift -= 8)
            frame.append(char((length >> shift) & 0xFF));
    }
    const QByteArray mask = randomBytes(4);
    frame.append(mask);
    for (qsizetype i = 0; i < payload.size(); ++i)
        frame.append(char(payload[i] ^ mask[i % 4]));
    return frame;
}

void Reader::feed(QByteArrayView data)
{
    if (!m_error.isEmpty())
        return;
    m_buffer.append(data);
    parse();
}

bool Reader::next(Message *out)
{
    if (m_ready.isEmpty())
        return false;
    *out = m_ready.takeFirst();
    return true;
}

void Reader::parse()
{
    for (;;) {
        if (m_buffer.size() < 2)
            return;
        const auto *b = reinterpret_cast<const quint8 *>(m_buffer.constData());
        const bool fin = b[0] & 0x80;
        const quint8 opcode = b[0] & 0x0F;
        if (b[1] & 0x80) {
            m_error = u"the server masked a frame"_s;
            return;
        }
        quint64 length = b[1] & 0x7F;
        qsizetype header = 2;
        if (length == 126) {
            if (m_buffer.size() < 4)
                return;
            length = (quint64(b[2]) << 8) | b[3];
            header = 4;
        } else if (length == 127) {
            if (m_buffer.size() < 10)
                return;
            length = 0;
            for (int i = 0; i < 8; ++i)
                length = (length << 8) | b[2 + i];
            header = 10;
        }
        if (length > quint64(MaxMessageBytes)) {
            m_error = u"a frame of %1 bytes, more than %2"_s.arg(length).arg(MaxMessageBytes);
            return;
        }
        if (m_buffer.size() < header + qsizetype(length))
            return;
        const QByteArray payload = m_buffer.mid(header, qsizetype(length));
        m_buffer.remove(0, header + qsizetype(length));
        switch (opcode) {
        case quint8(Opcode::Close):
        case quint8(Opcode::Ping):
        case quint8(Opcode::Pong):
            m_ready.append(Message{Opcode(opcode), payload});
            break;
        case quint8(Opcode::Text):
        case quint8(Opcode::Binary):
            if (m_inMessage) {
                m_error = u"a new message began before the last one ended"_s;
                return;
            }
            m_partial = Message{Opcode(opcode), payload};
            m_inMessage = true;
            break;
        case quint8(Opcode::Continuation):
            if (!m_inMessage) {
                m_error = u"a continuation frame with no message to continue"_s;
                return;
            }
            if (m_partial.payload.size() + payload.size() > MaxMessageBytes) {
                m_error = u"a message of more than %1 bytes"_s.arg(MaxMessageBytes);
                return;
            }
            m_partial.payload += payload;
            break;
        default:
            m_error = u"a frame of unknown opcode %1"_s.arg(opcode);
            return;
        }
        if (fin && m_inMessage && opcode != quint8(Opcode::Close) && opcode != quint8(Opcode::Ping) &&
            opcode != quint8(Opcode::Pong)) {
            m_ready.append(std::exchange(m_partial, {}));
            m_inMessage = false;
        }
    }
}

} // namespace pando::adapters::streamkit::websocket
