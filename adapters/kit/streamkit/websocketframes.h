#pragma once
// The client side of RFC 6455 over a stream Pando drives itself (a unix socket to incusd, whose
// exec streams are WebSockets): the opening handshake, masked frames out, frames in put back
// together into messages.

#include "adapters/api/error.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace pando::adapters::streamkit::websocket {

enum class Opcode : quint8 { Continuation = 0, Text = 1, Binary = 2, Close = 8, Ping = 9, Pong = 10 };

// GET pathAndQuery with the upgrade headers; key gets the Sec-WebSocket-Key sent.
QByteArray handshakeRequest(const QString &pathAndQuery, const QByteArray &host, QByteArray *key);
// Whether head (the answer's status line and headers) switched protocols for key: 101 and the
// Sec-WebSocket-Accept RFC 6455 derives from it. Otherwise the status line and body's start.
Status checkHandshake(const QByteArray &head, const QByteArray &key, const QString &where);
// The value a server answers key with.
QByteArray acceptFor(const QByteArray &key);

// One frame with FIN set, masked as a client's must be.
QByteArray clientFrame(Opcode opcode, QByteArrayView payload);

struct Message {
    Opcode opcode = Opcode::Binary; // Text, Binary, Close, Ping or Pong
    QByteArray payload;
};

// Frames from the server, as they come, into whole messages: a fragmented message's parts are
// joined; control frames come out when they arrive, also between fragments.
class Reader {
public:
    static constexpr qsizetype MaxMessageBytes = 16 * 1024 * 1024;
    void feed(QByteArrayView data);
    // Takes the next whole message into out; false when none came yet. After an error nothing
    // more comes.
    bool next(Message *out);
    // What was wrong with the stream (a masked frame from a server, an unknown opcode, a
    // message past MaxMessageBytes, a continuation with nothing to continue); empty while right.
    const QString &error() const { return m_error; }

private:
    void parse();
    QByteArray m_buffer;
    QList<Message> m_ready;
    bool m_inMessage = false; // m_partial holds a fragmented data message so far
    Message m_partial;
    QString m_error;
};

} // namespace pando::adapters::streamkit::websocket
