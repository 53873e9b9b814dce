// zstd streams: round trips through the functions and the devices, and the bounds: a bomb is
// cut off at the output limit, corrupt and truncated streams are errors.

#include "core/pipelines/compress/compress.h"

#include <QBuffer>
#include <QElapsedTimer>
#include <QTest>

using namespace pando;
using namespace pando::core;
using namespace Qt::StringLiterals;

class TestCompress : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void roundTrip_data();
    void roundTrip();
    void streamingDevices();
    void bombIsCutOff();
    void corruptStreamIsRefused();
    void truncatedStreamIsRefused();
    void notZstdIsRefused();
};

static QByteArray sample(qsizetype size)
{
    QByteArray data(size, Qt::Uninitialized);
    quint32 x = 12345;
    for (qsizetype i = 0; i < size; ++i) {
        x = x * 1103515245u + 12345u;
        data[i] = char((i % 64 < 32) ? 'a' + (i % 7) : char(x >> 24));
    }
    return data;
}

void TestCompress::roundTrip_data()
{
    QTest::addColumn<QByteArray>("data");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("one byte") << QByteArray("x");
    QTest::newRow("text") << QByteArray("hello hello hello hello\n").repeated(1000);
    QTest::newRow("mixed 5 MB") << sample(5 * 1024 * 1024);
}

void TestCompress::roundTrip()
{
    QFETCH(QByteArray, data);
    auto packed = zstdCompress(data);
    QVERIFY(packed);
    auto unpacked = zstdDecompress(*packed);
    QVERIFY2(unpacked, qPrintable(unpacked ? QString() : unpacked.error().text()));
    QVERIFY(*unpacked == data);
}

void TestCompress::streamingDevices()
{
    const QByteArray data = sample(3 * 1024 * 1024 + 5);
    QByteArray packed;
    QBuffer sink(&packed);
    sink.open(QIODevice::WriteOnly);
    ZstdCompressDevice out(&sink);
    for (qsizetype i = 0; i < data.size(); i += 1000)
        QCOMPARE(out.write(data.mid(i, 1000)), qint64(data.mid(i, 1000).size()));
    QVERIFY(out.finish());
    QCOMPARE(out.bytesIn(), qint64(data.size()));
    QCOMPARE(out.bytesOut(), qint64(packed.size()));
    QVERIFY(packed.size() < data.size());

    QBuffer source(&packed);
    source.open(QIODevice::ReadOnly);
    ZstdDecompressDevice in(&source);
    QByteArray back;
    char buf[777];
    for (;;) {
        const qint64 n = in.read(buf, sizeof buf);
        QVERIFY2(n >= 0, qPrintable(in.errorString()));
        if (n == 0)
            break;
        back.append(buf, n);
    }
    QVERIFY(back == data);
}

void TestCompress::bombIsCutOff()
{
    // 1 GiB of zeros compresses to a few tens of KiB.
    QByteArray packed;
    QBuffer sink(&packed);
    sink.open(QIODevice::WriteOnly);
    ZstdCompressDevice out(&sink, 1);
    const QByteArray zeros(4 * 1024 * 1024, '\0');
    for (int i = 0; i < 256; ++i)
        out.write(zeros);
    QVERIFY(out.finish());
    QVERIFY(packed.size() < 1024 * 1024);

    QElapsedTimer timer;
    timer.start();
    const qint64 limit = 16 * 1024 * 1024;
    auto r = zstdDecompress(packed, limit);
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::TooLarge);
    QVERIFY2(r.error().message.contains(QString::number(limit)), qPrintable(r.error().text()));
    QVERIFY(timer.elapsed() < 5000);

    QBuffer source(&packed);
    source.open(QIODevice::ReadOnly);
    ZstdDecompressDevice in(&source, limit);
    QByteArray buf(1024 * 1024, Qt::Uninitialized);
    qint64 total = 0;
    qint64 n = 0;
    while ((n = in.read(buf.data(), buf.size())) > 0)
        total += n;
    QCOMPARE(n, qint64(-1));
    QVERIFY(total <= limit + 1);
    QVERIFY(in.bytesOut() <= limit + 1);
}

void TestCompress::corruptStreamIsRefused()
{
    auto packed = zstdCompress(sample(100'000));
    QVERIFY(packed);
    QByteArray bad = *packed;
    bad[bad.size() / 2] = char(bad[bad.size() / 2] ^ 0x55);
    auto r = zstdDecompress(bad);
    QVERIFY(!r);
    QVERIFY2(r.error().message.contains(u"corrupt"_s), qPrintable(r.error().text()));
}

void TestCompress::truncatedStreamIsRefused()
{
    auto packed = zstdCompress(sample(100'000));
    QVERIFY(packed);
    auto r = zstdDecompress(packed->left(packed->size() - 10));
    QVERIFY(!r);
    QVERIFY2(r.error().message.contains(u"truncated"_s), qPrintable(r.error().text()));
    QVERIFY(!zstdDecompress(QByteArray()));
}

void TestCompress::notZstdIsRefused()
{
    auto r = zstdDecompress(QByteArray("this is not zstd at all, just text"));
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::Invalid);
}

QTEST_GUILESS_MAIN(TestCompress)
#include "tst_compress.moc"
