// The request guard's chunked decoder on its own: every body split at every point (each split a
// read boundary) decodes to the same end and size, and malformed framing (trailers included,
// which Qt 6.4's server would read as another request) is caught wherever the bytes are cut. The guard in front of a
// real pandod is tested by tests/security.

#include "app/server/requestguard.h"

#include <QTest>

using pando::server::detail::ChunkedReader;

class TestRequestGuard : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void decodesAtEverySplit_data();
    void decodesAtEverySplit();
    void malformedAtEverySplit_data();
    void malformedAtEverySplit();
    void hugeChunkIsCountedAtItsSize();
};

namespace {

struct Fed {
    ChunkedReader::Outcome outcome = ChunkedReader::Outcome::More;
    qsizetype consumed = 0;
    qint64 decoded = 0;
};

// Feeds the bytes in the pieces the cuts make; stops at the first outcome that is not More.
Fed feedCut(const QByteArray &bytes, QList<qsizetype> cuts)
{
    ChunkedReader reader;
    Fed fed;
    cuts.append(bytes.size());
    qsizetype from = 0;
    for (const qsizetype cut : cuts) {
        const ChunkedReader::Step step = reader.feed(QByteArrayView(bytes).sliced(from, cut - from));
        fed.consumed += step.consumed;
        fed.outcome = step.outcome;
        if (step.outcome != ChunkedReader::Outcome::More)
            break;
        from = cut;
    }
    fed.decoded = reader.decodedBytes();
    return fed;
}

} // namespace

void TestRequestGuard::decodesAtEverySplit_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<qint64>("decoded");
    QTest::newRow("one chunk") << QByteArray("5\r\nhello\r\n0\r\n\r\n") << qint64(5);
    QTest::newRow("data that looks like the end")
        << QByteArray("5\r\n0\r\n\r\n\r\n7\r\n0\r\n\r\n\r\n\r\n0\r\n\r\n") << qint64(12);
    QTest::newRow("extensions") << QByteArray("A;name=\"v\";x\r\n0123456789\r\n1 ;y\r\nz\r\n0;last\r\n\r\n")
                                << qint64(11);
    QTest::newRow("upper-case hex and leading zeros") << QByteArray("00B\r\nhello world\r\n000\r\n\r\n") << qint64(11);
}

void TestRequestGuard::decodesAtEverySplit()
{
    QFETCH(QByteArray, body);
    QFETCH(qint64, decoded);
    // What follows the body belongs to the next request and is not taken.
    const QByteArray stream = body + "GET / HTTP/1.1\r\n";
    for (qsizetype a = 0; a <= body.size(); ++a) {
        for (qsizetype b = a; b <= body.size(); b += 3) {
            const Fed fed = feedCut(stream, {a, b});
            const QByteArray where = "cut at " + QByteArray::number(a) + " and " + QByteArray::number(b);
            QVERIFY2(fed.outcome == ChunkedReader::Outcome::Done, where.constData());
            QVERIFY2(fed.consumed == body.size(), where.constData());
            QVERIFY2(fed.decoded == decoded, where.constData());
        }
    }
}

void TestRequestGuard::malformedAtEverySplit_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::newRow("not hex") << QByteArray("zz\r\n");
    QTest::newRow("no size") << QByteArray("\r\n\r\n");
    QTest::newRow("data past its size") << QByteArray("3\r\nhello\r\n0\r\n\r\n");
    QTest::newRow("bare LF after the size") << QByteArray("5\nhello\r\n0\r\n\r\n");
    QTest::newRow("bare LF after the data") << QByteArray("5\r\nhello\n0\r\n\r\n");
    QTest::newRow("a trailer") << QByteArray("0\r\nX-A: 1\r\n\r\n");
    QTest::newRow("bare LF at the end") << QByteArray("0\r\n\n");
    QTest::newRow("16 hex digits") << QByteArray("1000000000000000\r\n");
    QTest::newRow("a size line of 5000 bytes") << "1;" + QByteArray(5000, 'e') + "\r\nx\r\n0\r\n\r\n";
}

void TestRequestGuard::malformedAtEverySplit()
{
    QFETCH(QByteArray, body);
    for (qsizetype a = 0; a <= body.size(); a += body.size() > 100 ? 97 : 1) {
        const Fed fed = feedCut(body, {a});
        QVERIFY2(fed.outcome == ChunkedReader::Outcome::Malformed, QByteArray::number(a).constData());
    }
}

void TestRequestGuard::hugeChunkIsCountedAtItsSize()
{
    // Counted when the size line ends, before any of its data came.
    ChunkedReader reader;
    QCOMPARE(reader.feed("10000000000\r\n").outcome, ChunkedReader::Outcome::More);
    QCOMPARE(reader.decodedBytes(), qint64(1) << 40);
}

QTEST_GUILESS_MAIN(TestRequestGuard)
#include "tst_requestguard.moc"
