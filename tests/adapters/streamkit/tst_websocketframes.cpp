// RFC 6455 as the Incus exec streams need it (adapters/kit/streamkit/websocketframes.h): the
// handshake's accept value (the RFC's own example), client frames masked with each length form,
// and server frames of every length form, fragmented, with control frames between, put back
// together; what a client must refuse from a server is refused.

#include "adapters/kit/streamkit/websocketframes.h"

#include <QTest>

using namespace pando::adapters::streamkit::websocket;
using namespace Qt::StringLiterals;

namespace {

// A frame as a server sends it: unmasked.
QByteArray serverFrame(quint8 opcode, const QByteArray &payload, bool fin = true)
{
    QByteArray frame;
    frame.append(char((fin ? 0x80 : 0) | opcode));
    const quint64 n = quint64(payload.size());
    if (n < 126) {
        frame.append(char(n));
    } else if (n <= 0xFFFF) {
        frame.append(char(126)).append(char(n >> 8)).append(char(n & 0xFF));
    } else {
        frame.append(char(127));
        for (int shift = 56; shift >= 0; shift -= 8)
            frame.append(char((n >> shift) & 0xFF));
    }
    return frame + payload;
}

// The payload of a client frame, unmasked; its length form checked against the payload's size.
QByteArray unmask(const QByteArray &frame, quint8 *opcode)
{
    const auto *b = reinterpret_cast<const quint8 *>(frame.constData());
    *opcode = b[0] & 0x0F;
    if (!(b[0] & 0x80) || !(b[1] & 0x80))
        return "not final or not masked";
    quint64 n = b[1] & 0x7F;
    int at = 2;
    if (n == 126) {
        n = (quint64(b[2]) << 8) | b[3];
        at = 4;
    } else if (n == 127) {
        n = 0;
        for (int i = 0; i < 8; ++i)
            n = (n << 8) | b[2 + i];
        at = 10;
    }
    const QByteArray mask = frame.mid(at, 4);
    QByteArray payload = frame.mid(at + 4);
    if (quint64(payload.size()) != n)
        return "wrong length";
    for (qsizetype i = 0; i < payload.size(); ++i)
        payload[i] = char(payload[i] ^ mask[i % 4]);
    return payload;
}

} // namespace

class TestWebSocketFrames : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void handshake()
    {
        QCOMPARE(acceptFor("dGhlIHNhbXBsZSBub25jZQ=="), QByteArray("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
        QByteArray key;
        const QByteArray request = handshakeRequest(u"/1.0/operations/x/websocket?secret=a%2Bb"_s, "incus", &key);
        QCOMPARE(QByteArray::fromBase64(key).size(), 16);
        QVERIFY(request.startsWith("GET /1.0/operations/x/websocket?secret=a%2Bb HTTP/1.1\r\n"));
        QVERIFY(request.contains(QByteArray("\r\nSec-WebSocket-Key: " + key + "\r\n")));
        QVERIFY(request.endsWith("\r\n\r\n"));
        QVERIFY(checkHandshake("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                               "sec-websocket-accept: " +
                                   acceptFor(key) + "\r\n\r\n",
                               key, u"here"_s));
        auto wrongKey = checkHandshake(
            "HTTP/1.1 101 Switching Protocols\r\nSec-WebSocket-Accept: " + acceptFor("other") + "\r\n\r\n", key,
            u"here"_s);
        QVERIFY(!wrongKey);
        auto refused = checkHandshake("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", key, u"here"_s);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.contains(u"403 Forbidden"_s), qPrintable(refused.error().text()));
    }

    void clientFramesAreMasked_data()
    {
        QTest::addColumn<int>("size");
        QTest::newRow("empty") << 0;
        QTest::newRow("short") << 125;
        QTest::newRow("16-bit length") << 126;
        QTest::newRow("16-bit max") << 65535;
        QTest::newRow("64-bit length") << 70000;
    }
    void clientFramesAreMasked()
    {
        QFETCH(int, size);
        QByteArray payload(size, Qt::Uninitialized);
        for (int i = 0; i < size; ++i)
            payload[i] = char(i * 7);
        quint8 opcode = 0;
        QCOMPARE(unmask(clientFrame(Opcode::Binary, payload), &opcode), payload);
        QCOMPARE(opcode, quint8(Opcode::Binary));
    }

    void serverFramesMakeMessages()
    {
        Reader reader;
        const QByteArray big(70000, 'b');
        QByteArray stream = serverFrame(2, "hello") + serverFrame(2, QByteArray(300, 'm')) + serverFrame(2, big) +
                            // fragmented, a ping between its parts
                            serverFrame(2, "frag", false) + serverFrame(9, "are you there") +
                            serverFrame(0, "men", false) + serverFrame(0, "ted") +
                            // Incus's end of a stream: an empty text message; then a close
                            serverFrame(1, {}) + serverFrame(8, QByteArray("\x03\xe8", 2));
        // Byte by byte for the first frames, then in large pieces: messages do not depend on reads.
        for (int i = 0; i < 10; ++i)
            reader.feed(stream.mid(i, 1));
        reader.feed(stream.mid(10));
        QList<Message> got;
        for (Message m; reader.next(&m);)
            got << m;
        QCOMPARE(reader.error(), QString());
        QCOMPARE(got.size(), 7);
        QCOMPARE(got[0].payload, QByteArray("hello"));
        QCOMPARE(got[1].payload, QByteArray(300, 'm'));
        QCOMPARE(got[2].payload, big);
        QCOMPARE(got[3].opcode, Opcode::Ping);
        QCOMPARE(got[4].opcode, Opcode::Binary);
        QCOMPARE(got[4].payload, QByteArray("fragmented"));
        QCOMPARE(got[5].opcode, Opcode::Text);
        QVERIFY(got[5].payload.isEmpty());
        QCOMPARE(got[6].opcode, Opcode::Close);
    }

    void whatAServerMustNotSendIsRefused_data()
    {
        QTest::addColumn<QByteArray>("stream");
        QTest::addColumn<QString>("error");
        QByteArray masked = serverFrame(2, "x");
        masked[1] = char(masked[1] | 0x80);
        QTest::newRow("masked") << masked << u"masked"_s;
        QTest::newRow("unknown opcode") << serverFrame(3, "x") << u"unknown opcode 3"_s;
        QTest::newRow("continuation of nothing") << serverFrame(0, "x") << u"no message to continue"_s;
        QTest::newRow("new message inside one")
            << serverFrame(2, "a", false) + serverFrame(2, "b") << u"before the last one ended"_s;
        QByteArray huge;
        huge.append(char(0x82)).append(char(127));
        const quint64 n = quint64(Reader::MaxMessageBytes) + 1;
        for (int shift = 56; shift >= 0; shift -= 8)
            huge.append(char((n >> shift) & 0xFF));
        QTest::newRow("too large") << huge << u"more than"_s;
    }
    void whatAServerMustNotSendIsRefused()
    {
        QFETCH(QByteArray, stream);
        QFETCH(QString, error);
        Reader reader;
        reader.feed(stream);
        QVERIFY2(reader.error().contains(error), qPrintable(reader.error()));
        Message none;
        QVERIFY(!reader.next(&none));
    }
};

QTEST_GUILESS_MAIN(TestWebSocketFrames)
#include "tst_websocketframes.moc"
