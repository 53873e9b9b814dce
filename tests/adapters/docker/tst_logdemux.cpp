// LogDemuxer and the RFC 3339 parser: Docker's frame format split at every possible place.
#include "adapters/runtime/docker/logdemux.h"

#include <QTest>

using pando::adapters::LogLine;
using pando::adapters::docker::LogDemuxer;
using pando::adapters::docker::parseRfc3339Ms;

namespace {

QByteArray frame(int stream, const QByteArray &payload)
{
    QByteArray out(8, '\0');
    out[0] = char(stream);
    const quint32 n = quint32(payload.size());
    out[4] = char((n >> 24) & 0xff);
    out[5] = char((n >> 16) & 0xff);
    out[6] = char((n >> 8) & 0xff);
    out[7] = char(n & 0xff);
    return out + payload;
}

} // namespace

class TestLogDemux : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void timestamps_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<qint64>("expected");
        QTest::newRow("nanos") << QByteArray("2024-05-01T10:20:30.123456789Z") << qint64(1714558830123);
        QTest::newRow("no fraction") << QByteArray("2024-05-01T10:20:30Z") << qint64(1714558830000);
        QTest::newRow("one digit") << QByteArray("2024-05-01T10:20:30.5Z") << qint64(1714558830500);
        QTest::newRow("offset") << QByteArray("2024-05-01T12:20:30.000+02:00") << qint64(1714558830000);
        QTest::newRow("negative offset") << QByteArray("2024-05-01T09:20:30-01:00") << qint64(1714558830000);
        QTest::newRow("garbage") << QByteArray("hello world") << qint64(0);
        QTest::newRow("no zone") << QByteArray("2024-05-01T10:20:30.1") << qint64(0);
        QTest::newRow("trailing") << QByteArray("2024-05-01T10:20:30Zx") << qint64(0);
    }
    void timestamps()
    {
        QFETCH(QByteArray, text);
        QFETCH(qint64, expected);
        QCOMPARE(parseRfc3339Ms(text), expected);
    }

    void everySplitPoint()
    {
        const QByteArray stream = frame(1, "2024-05-01T10:20:30.100Z out one\n") +
                                  frame(2, "2024-05-01T10:20:30.200Z err one\n") +
                                  frame(1, "2024-05-01T10:20:30.300Z out ") + frame(1, "two\n") +
                                  frame(2, "2024-05-01T10:20:30.400Z no newline");
        for (int split = 0; split <= stream.size(); ++split) {
            QList<LogLine> lines;
            LogDemuxer demux(true, true, [&](const LogLine &l) { lines.append(l); });
            demux.feed(QByteArrayView(stream).first(split));
            demux.feed(QByteArrayView(stream).sliced(split));
            demux.finish();
            QCOMPARE(lines.size(), 4);
            QCOMPARE(lines[0].text, QStringLiteral("out one"));
            QVERIFY(!lines[0].stderrStream);
            QCOMPARE(lines[0].timestampMs, qint64(1714558830100));
            QCOMPARE(lines[1].text, QStringLiteral("err one"));
            QVERIFY(lines[1].stderrStream);
            QCOMPARE(lines[2].text, QStringLiteral("out two"));
            QCOMPARE(lines[2].timestampMs, qint64(1714558830300));
            QCOMPARE(lines[3].text, QStringLiteral("no newline"));
            QVERIFY(lines[3].stderrStream);
        }
    }

    void byteByByte()
    {
        const QByteArray stream = frame(1, "a\nb\r\n") + frame(2, "c\n");
        QList<LogLine> lines;
        LogDemuxer demux(true, false, [&](const LogLine &l) { lines.append(l); });
        for (char c : stream)
            demux.feed(QByteArrayView(&c, 1));
        demux.finish();
        QCOMPARE(lines.size(), 3);
        QCOMPARE(lines[1].text, QStringLiteral("b"));
        QCOMPARE(lines[2].text, QStringLiteral("c"));
        QVERIFY(lines[2].stderrStream);
    }

    void rawTty()
    {
        QList<LogLine> lines;
        LogDemuxer demux(false, true, [&](const LogLine &l) { lines.append(l); });
        demux.feed("2024-05-01T10:20:30Z he");
        demux.feed("llo\n2024-05-01T10:20:31Z x\n");
        demux.finish();
        QCOMPARE(lines.size(), 2);
        QCOMPARE(lines[0].text, QStringLiteral("hello"));
        QCOMPARE(lines[1].timestampMs, qint64(1714558831000));
    }
};

QTEST_GUILESS_MAIN(TestLogDemux)
#include "tst_logdemux.moc"
