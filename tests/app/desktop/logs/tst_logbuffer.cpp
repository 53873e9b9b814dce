// LogBuffer: the ring of line chunks — stable line numbers after the oldest chunks are dropped,
// batches larger than the ring, styles carried per stream, long lines cut, memory per line.

#include "app/desktop/logs/logbuffer.h"

#include <QRandomGenerator>
#include <QTest>

using namespace pando::desktop;
using namespace Qt::StringLiterals;

namespace {

QByteArray lineText(qint64 n)
{
    return "line " + QByteArray::number(n);
}

// Appends lines numbered from buffer.endLine(), `count` of them, in one batch.
void appendNumbered(LogBuffer &buffer, qsizetype count, LogStream stream = LogStream::Stdout, qint64 timeMs = 0)
{
    std::vector<QByteArray> storage;
    storage.reserve(size_t(count));
    std::vector<LogLineIn> lines;
    lines.reserve(size_t(count));
    for (qsizetype i = 0; i < count; ++i) {
        storage.push_back(lineText(buffer.endLine() + i));
        lines.push_back(LogLineIn{storage.back(), stream, timeMs});
    }
    buffer.append(lines);
}

// Every held line is the one its number says.
bool holdsNumberedLines(const LogBuffer &buffer, QString *why)
{
    for (qsizetype row = 0; row < buffer.size(); ++row) {
        if (buffer.raw(row) != lineText(buffer.firstLine() + row)) {
            *why = u"row %1 holds \"%2\", expected line %3"_s.arg(row).arg(
                QString::fromUtf8(buffer.raw(row).toByteArray()), QString::number(buffer.firstLine() + row));
            return false;
        }
    }
    return true;
}

} // namespace

class TestLogBuffer : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void appendsAndReadsBack()
    {
        LogBuffer buffer(100, 8);
        std::vector<LogLineIn> lines{{"one", LogStream::Stdout, 1000},
                                     {"two", LogStream::Stderr, 1000},
                                     {"", LogStream::Stderr, 2000},
                                     {"four", LogStream::Stdout, 2000}};
        buffer.append(lines);
        QCOMPARE(buffer.size(), 4);
        QCOMPARE(buffer.firstLine(), 0);
        QCOMPARE(buffer.raw(0), "one");
        QCOMPARE(buffer.raw(1), "two");
        QCOMPARE(buffer.raw(2), "");
        QCOMPARE(buffer.raw(3), "four");
        QCOMPARE(buffer.stream(0), LogStream::Stdout);
        QCOMPARE(buffer.stream(1), LogStream::Stderr);
        QCOMPARE(buffer.stream(2), LogStream::Stderr);
        QCOMPARE(buffer.stream(3), LogStream::Stdout);
        QCOMPARE(buffer.timeMs(1), 1000);
        QCOMPARE(buffer.timeMs(2), 2000);
        QCOMPARE(buffer.timeMs(3), 2000);
    }

    void dropsOldestChunkWholeAndKeepsNumbers()
    {
        LogBuffer buffer(10, 4);
        for (int i = 0; i < 25; ++i) {
            appendNumbered(buffer, 1);
            const qint64 end = i + 1;
            QCOMPARE(buffer.endLine(), end);
            // At least the newest `capacity` lines, fewer than capacity + chunk size.
            QVERIFY(buffer.size() >= std::min<qint64>(end, 10));
            QVERIFY(buffer.size() < 14);
            QCOMPARE(buffer.firstLine() % 4, 0);
            QString why;
            QVERIFY2(holdsNumberedLines(buffer, &why), qPrintable(why));
        }
        QCOMPARE(buffer.firstLine(), 12); // 25 - 12 = 13 >= 10; dropping 16 would leave 9
        QCOMPARE(buffer.raw(0), "line 12");
    }

    void batchLargerThanTheRing()
    {
        LogBuffer buffer(10, 4);
        appendNumbered(buffer, 3);
        QCOMPARE(buffer.dropCountFor(34), 24);
        appendNumbered(buffer, 34);
        QCOMPARE(buffer.endLine(), 37);
        QCOMPARE(buffer.firstLine(), 24); // the latest chunk boundary leaving >= 10 lines
        QCOMPARE(buffer.size(), 13);
        QString why;
        QVERIFY2(holdsNumberedLines(buffer, &why), qPrintable(why));
        // Appending more continues in the same numbering and chunk grid.
        appendNumbered(buffer, 5);
        QCOMPARE(buffer.firstLine(), 32);
        QVERIFY2(holdsNumberedLines(buffer, &why), qPrintable(why));
    }

    void dropCountPredictsAppend()
    {
        // The model announces removals before appending: the prediction must match exactly.
        LogBuffer buffer(1000, 64);
        QRandomGenerator random(7);
        for (int round = 0; round < 300; ++round) {
            const qsizetype incoming = random.bounded(1, 700);
            const qint64 firstBefore = buffer.firstLine();
            const qsizetype predicted = buffer.dropCountFor(incoming);
            appendNumbered(buffer, incoming);
            QCOMPARE(buffer.firstLine() - firstBefore, predicted);
            QVERIFY(buffer.size() >= std::min<qint64>(buffer.endLine(), 1000));
            QVERIFY(buffer.size() < 1064);
        }
        QString why;
        QVERIFY2(holdsNumberedLines(buffer, &why), qPrintable(why));
    }

    void dropFrontOfEverythingThenAppend()
    {
        LogBuffer buffer(10, 4);
        appendNumbered(buffer, 6); // chunk [0,4) full, chunk [4,8) holds 2
        buffer.dropFront(buffer.size());
        QVERIFY(buffer.isEmpty());
        QCOMPARE(buffer.firstLine(), 6);
        appendNumbered(buffer, 9); // first chunk after the drop starts mid-grid, at line 6
        QCOMPARE(buffer.size(), 9);
        QString why;
        QVERIFY2(holdsNumberedLines(buffer, &why), qPrintable(why));
        appendNumbered(buffer, 4); // lines 6..18: dropping [6,8) leaves 11
        QCOMPARE(buffer.firstLine(), 8);
        QVERIFY2(holdsNumberedLines(buffer, &why), qPrintable(why));
    }

    void stylesCarryPerStreamAndAcrossChunks()
    {
        LogBuffer buffer(100, 2);
        std::vector<LogLineIn> lines{{"\x1b[31mred starts", LogStream::Stdout, 0},
                                     {"err line", LogStream::Stderr, 0},
                                     {"still red", LogStream::Stdout, 0},
                                     {"\x1b[1mred bold", LogStream::Stdout, 0},
                                     {"red bold \x1b[0mreset", LogStream::Stdout, 0},
                                     {"plain", LogStream::Stdout, 0}};
        buffer.append(lines);
        const ansi::Style red{ansi::paletteColour(1), ansi::DefaultColour, false};
        const ansi::Style redBold{ansi::paletteColour(1), ansi::DefaultColour, true};
        QCOMPARE(buffer.startStyle(0), ansi::Style{});
        QCOMPARE(buffer.startStyle(1), ansi::Style{}); // stderr is its own stream
        QCOMPARE(buffer.startStyle(2), red);
        QCOMPARE(buffer.startStyle(3), red);
        QCOMPARE(buffer.startStyle(4), redBold);
        QCOMPARE(buffer.startStyle(5), ansi::Style{});
        QCOMPARE(buffer.render(2).text, u"still red"_s);
        QCOMPARE(buffer.render(2).spans.size(), 1);
        QCOMPARE(buffer.plainText(4), "red bold reset");
    }

    void styleSetByLinesNeverStored()
    {
        LogBuffer buffer(4, 4);
        std::vector<QByteArray> storage{"\x1b[32mgreen", "a", "b", "c", "d", "e", "f", "g", "h", "i"};
        std::vector<LogLineIn> lines;
        for (const QByteArray &s : storage)
            lines.push_back(LogLineIn{s, LogStream::Stdout, 0});
        buffer.append(lines); // ten lines into a ring of four: the colour line itself is skipped
        QCOMPARE(buffer.firstLine(), 4);
        QCOMPARE(buffer.raw(0), "d");
        QCOMPARE(buffer.startStyle(0).fg, ansi::paletteColour(2));
    }

    void cutsVeryLongLinesAtACharacter()
    {
        LogBuffer buffer(10, 4, 16);
        QByteArray longLine;
        for (int i = 0; i < 20; ++i)
            longLine += "\xc3\xa9"; // é: two bytes each
        std::vector<LogLineIn> lines{{longLine, LogStream::Stdout, 0}, {"short", LogStream::Stdout, 0}};
        buffer.append(lines);
        QCOMPARE(buffer.raw(0), QByteArray(QByteArray("\xc3\xa9").repeated(8) + "\xe2\x80\xa6"));
        QCOMPARE(buffer.render(0).text, QString(8, QChar(0xe9)) + QChar(0x2026));
        QCOMPARE(buffer.raw(1), "short");
    }

    void millionLineCapacity()
    {
        LogBuffer buffer; // defaults: 1,000,000 lines, 4096 per chunk
        QCOMPARE(buffer.capacity(), 1'000'000);
        const qsizetype total = 1'300'000;
        while (buffer.endLine() < total)
            appendNumbered(buffer, std::min<qsizetype>(1000, total - buffer.endLine()));
        QCOMPARE(buffer.endLine(), total);
        QVERIFY(buffer.size() >= 1'000'000);
        QVERIFY(buffer.size() < 1'000'000 + 4096);
        QCOMPARE(buffer.firstLine(), (total - 1'000'000) / 4096 * 4096);
        QCOMPARE(buffer.raw(0), lineText(buffer.firstLine()));
        QCOMPARE(buffer.raw(buffer.size() - 1), lineText(total - 1));
        QRandomGenerator random(1);
        for (int i = 0; i < 1000; ++i) {
            const qsizetype row = random.bounded(buffer.size());
            QCOMPARE(buffer.raw(row), lineText(buffer.firstLine() + row));
        }
        // Memory: the text plus a few bytes per line, not an object per line.
        qsizetype heldBytes = 0;
        for (qsizetype row = 0; row < buffer.size(); ++row)
            heldBytes += buffer.raw(row).size();
        const double overheadPerLine = double(buffer.memoryBytes() - heldBytes) / double(buffer.size());
        qInfo("%lld lines held, %lld text bytes, %lld bytes allocated: %.1f bytes per line of overhead",
              qlonglong(buffer.size()), qlonglong(heldBytes), qlonglong(buffer.memoryBytes()), overheadPerLine);
        QVERIFY2(overheadPerLine < 8, qPrintable(QString::number(overheadPerLine)));
    }
};

QTEST_GUILESS_MAIN(TestLogBuffer)
#include "tst_logbuffer.moc"
