// LogModel under QAbstractItemModelTester: batched appends from raw stream bytes (lines and
// escapes split across calls), ring drops announced as removals, stable line numbers, search
// with next/previous across a wrap, follow, copy without escapes, coalescing.

#include "app/desktop/logs/logmodel.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace pando::desktop;
using namespace Qt::StringLiterals;

namespace {

QByteArray numbered(qint64 from, qint64 count, qint64 matchEvery = 0)
{
    QByteArray out;
    for (qint64 n = from; n < from + count; ++n) {
        out += "line " + QByteArray::number(n);
        if (matchEvery > 0 && n % matchEvery == 0)
            out += " \x1b[31mERROR\x1b[0m here";
        out += '\n';
    }
    return out;
}

QVariant role(const LogModel &model, int row, int role)
{
    return model.data(model.index(row), role);
}

} // namespace

class TestLogModel : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void linesAndEscapesSplitAcrossAppends()
    {
        LogModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.appendData("\x1b[3");
        model.appendData("1mred\x1b");
        QCOMPARE(model.rowCount(), 0);
        model.appendData("[0m plain\r\npartial \x1b[");
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(role(model, 0, LogModel::TextRole).toString(), u"red plain"_s);
        QCOMPARE(role(model, 0, Qt::DisplayRole).toString(), u"red plain"_s);
        const QVariantList spans = role(model, 0, LogModel::SpansRole).toList();
        QCOMPARE(spans.size(), 1);
        const QVariantMap span = spans.first().toMap();
        QCOMPARE(span.value(u"start"_s).toInt(), 0);
        QCOMPARE(span.value(u"length"_s).toInt(), 3);
        QCOMPARE(span.value(u"fg"_s), QVariant(1));
        QVERIFY(!span.value(u"bg"_s).isValid());
        QCOMPARE(span.value(u"bold"_s).toBool(), false);

        model.appendData("1mbold\x1b[0m");
        model.flush(); // the stream ended without a final newline
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(role(model, 1, LogModel::TextRole).toString(), u"partial bold"_s);
        QCOMPARE(role(model, 1, LogModel::SpansRole).toList().first().toMap().value(u"bold"_s).toBool(), true);
        QCOMPARE(inserted.size(), 2);
        model.flush(); // nothing pending: no empty row
        QCOMPARE(model.rowCount(), 2);
    }

    void oneInsertionPerBatchAndRolesPerLine()
    {
        LogModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        const QDateTime t1 = QDateTime::fromMSecsSinceEpoch(1'700'000'000'000, Qt::UTC);
        const QDateTime t2 = t1.addSecs(5);
        model.appendData(numbered(0, 1000), LogModel::Stdout, t1);
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(inserted.first().at(1).toInt(), 0);
        QCOMPARE(inserted.first().at(2).toInt(), 999);
        model.appendLines({"err one", "err two"}, LogModel::Stderr, t2);
        QCOMPARE(inserted.size(), 2);
        QCOMPARE(model.rowCount(), 1002);
        QCOMPARE(role(model, 999, LogModel::StreamRole).toInt(), int(LogModel::Stdout));
        QCOMPARE(role(model, 1000, LogModel::StreamRole).toInt(), int(LogModel::Stderr));
        QCOMPARE(role(model, 0, LogModel::TimeRole).toDateTime(), t1);
        QCOMPARE(role(model, 1001, LogModel::TimeRole).toDateTime(), t2);
        QCOMPARE(role(model, 0, LogModel::LineNumberRole).toLongLong(), 1);
        QCOMPARE(role(model, 1001, LogModel::LineNumberRole).toLongLong(), 1002);
        QCOMPARE(model.roleNames().value(LogModel::SpansRole), "spans");
        QCOMPARE(model.roleNames().value(LogModel::MatchRangesRole), "matchRanges");
    }

    void ringDropsAreRemovalsAndNumbersStayStable()
    {
        LogModel model(10, 4);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.appendData(numbered(0, 12));
        QCOMPARE(removed.size(), 0);
        model.appendData(numbered(12, 3)); // 15 lines: dropping [0,4) leaves 11
        QCOMPARE(removed.size(), 1);
        QCOMPARE(removed.first().at(1).toInt(), 0);
        QCOMPARE(removed.first().at(2).toInt(), 3);
        QCOMPARE(model.rowCount(), 11);
        QCOMPARE(role(model, 0, LogModel::TextRole).toString(), u"line 4"_s);
        QCOMPARE(role(model, 0, LogModel::LineNumberRole).toLongLong(), 5);
        // A batch bigger than the whole ring: everything held goes, then only the newest arrive.
        removed.clear();
        inserted.clear();
        model.appendData(numbered(15, 30));
        QCOMPARE(removed.size(), 1);
        QCOMPARE(removed.first().at(2).toInt(), 10);
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(model.rowCount(), 13); // 45 lines: kept from 32
        QCOMPARE(role(model, 0, LogModel::TextRole).toString(), u"line 32"_s);
        QCOMPARE(role(model, 12, LogModel::LineNumberRole).toLongLong(), 45);
    }

    void millionLinesWithNumbersAfterWrap()
    {
        LogModel model; // 1,000,000 lines
        const qint64 total = 1'250'000;
        qint64 from = 0;
        for (; from < 1'000'000; from += 1000)
            model.appendData(numbered(from, 1000));
        // The tester walks every row after each change: attached for the batches that wrap.
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        for (; from < total; from += 125'000)
            model.appendData(numbered(from, 125'000));
        QVERIFY(model.rowCount() >= 1'000'000);
        QVERIFY(model.rowCount() < 1'000'000 + 4096);
        const qint64 first = (total - 1'000'000) / 4096 * 4096;
        QCOMPARE(model.rowCount(), total - first);
        QCOMPARE(role(model, 0, LogModel::LineNumberRole).toLongLong(), first + 1);
        QCOMPARE(role(model, 0, LogModel::TextRole).toString(), u"line "_s + QString::number(first));
        const int last = model.rowCount() - 1;
        QCOMPARE(role(model, last, LogModel::LineNumberRole).toLongLong(), total);
        QCOMPARE(role(model, last, LogModel::TextRole).toString(), u"line "_s + QString::number(total - 1));
        QCOMPARE(role(model, 500'000, LogModel::TextRole).toString(), u"line "_s + QString::number(first + 500'000));
    }

    void searchFindsMatchesIncrementally()
    {
        LogModel model;
        for (qint64 from = 0; from < 300'000; from += 10'000)
            model.appendData(numbered(from, 10'000, 1000));
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy counts(&model, &LogModel::matchCountChanged);
        model.setSearchTerm(u"error"_s); // case-insensitive by default
        QVERIFY(model.isSearching());    // nothing scanned synchronously
        QTRY_VERIFY_WITH_TIMEOUT(!model.isSearching(), 60'000);
        QCOMPARE(model.matchCount(), 300);
        QVERIFY(counts.size() >= 1);
        QCOMPARE(model.nextMatch(-1), 0);
        QCOMPARE(model.nextMatch(0), 1000);
        QCOMPARE(model.nextMatch(1500), 2000);
        QCOMPARE(model.nextMatch(299'000), 0); // wraps to the first
        QCOMPARE(model.previousMatch(model.rowCount()), 299'000);
        QCOMPARE(model.previousMatch(1000), 0);
        QCOMPARE(model.previousMatch(0), 299'000); // wraps to the last
        QCOMPARE(model.matchOrdinal(2000), 3);
        QCOMPARE(model.matchOrdinal(2001), 0);
        QCOMPARE(role(model, 1000, LogModel::MatchRole).toBool(), true);
        QCOMPARE(role(model, 1001, LogModel::MatchRole).toBool(), false);
        const QVariantList ranges = role(model, 1000, LogModel::MatchRangesRole).toList();
        QCOMPARE(ranges.size(), 1);
        QCOMPARE(ranges.first().toMap().value(u"start"_s).toInt(), 10); // "line 1000 ERROR"
        QCOMPARE(ranges.first().toMap().value(u"length"_s).toInt(), 5);

        // Lines appended later are scanned too.
        model.appendData(numbered(300'000, 2000, 1000));
        QTRY_VERIFY(!model.isSearching());
        QCOMPARE(model.matchCount(), 302);

        model.setCaseSensitive(true);
        QTRY_VERIFY(!model.isSearching());
        QCOMPARE(model.matchCount(), 0);
        model.setSearchTerm(u"ERROR"_s);
        QTRY_VERIFY(!model.isSearching());
        QCOMPARE(model.matchCount(), 302);
        // Escape sequences are not text: "31m" appears only inside them.
        model.setSearchTerm(u"31m"_s);
        QTRY_VERIFY(!model.isSearching());
        QCOMPARE(model.matchCount(), 0);
        model.setSearchTerm(QString());
        QVERIFY(!model.isSearching());
        QCOMPARE(model.nextMatch(-1), -1);
        QCOMPARE(role(model, 1000, LogModel::MatchRole).toBool(), false);
    }

    void searchAcrossEscapesAndNonAscii()
    {
        LogModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.appendData("an \x1b[31merr\x1b[0mor split by colour\n\xc3\x84rger mit Umlaut\nnothing\n");
        model.setSearchTerm(u"error"_s);
        QTRY_VERIFY(!model.isSearching());
        QCOMPARE(model.matchCount(), 1);
        QCOMPARE(model.nextMatch(-1), 0);
        model.setSearchTerm(u"\u00e4RGER"_s); // non-ASCII, case-insensitive
        QTRY_VERIFY(!model.isSearching());
        QCOMPARE(model.matchCount(), 1);
        QCOMPARE(model.nextMatch(-1), 1);
        QCOMPARE(role(model, 1, LogModel::MatchRangesRole).toList().size(), 1);
    }

    void searchNextPreviousAcrossAWrap()
    {
        LogModel model(100, 16);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.appendData(numbered(0, 100, 10)); // matches on lines 0, 10, ..., 90
        model.setSearchTerm(u"error"_s);
        QTRY_VERIFY(!model.isSearching());
        QCOMPARE(model.matchCount(), 10);
        QSignalSpy counts(&model, &LogModel::matchCountChanged);
        model.appendData(numbered(100, 40, 10)); // 140 lines: lines 0..31 dropped
        QCOMPARE(model.buffer().firstLine(), 32);
        QTRY_VERIFY(!model.isSearching());
        // Matches on lines 40..130 remain: rows are line - 32.
        QCOMPARE(model.matchCount(), 10);
        QCOMPARE(model.nextMatch(-1), 8);
        QCOMPARE(role(model, 8, LogModel::TextRole).toString(), u"line 40 ERROR here"_s);
        QCOMPARE(model.previousMatch(8), 130 - 32); // wraps to the newest
        QCOMPARE(model.nextMatch(130 - 32), 8);
        QCOMPARE(model.matchOrdinal(8), 1);
        QVERIFY(counts.size() >= 1);
        // Drop everything matched so far: the next match is the one found among the new lines.
        model.appendData(numbered(140, 100)); // no new matches; first becomes 128
        QTRY_VERIFY(!model.isSearching());
        QCOMPARE(model.buffer().firstLine(), 128);
        QCOMPARE(model.matchCount(), 1);
        QCOMPARE(model.nextMatch(-1), 130 - 128);
        QCOMPARE(model.previousMatch(0), 130 - 128);
    }

    void followPausesAndCountsUnseen()
    {
        LogModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(model.isFollowing());
        model.appendData(numbered(0, 5));
        QCOMPARE(model.unseenCount(), 0);
        QSignalSpy following(&model, &LogModel::followingChanged);
        model.setFollowing(false); // the user scrolled up
        model.appendData(numbered(5, 7));
        model.appendData(numbered(12, 3));
        QCOMPARE(model.unseenCount(), 10);
        model.setFollowing(true); // "resume"
        QCOMPARE(model.unseenCount(), 0);
        QCOMPARE(following.size(), 2);
    }

    void copyStripsEscapes()
    {
        LogModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.appendData("\x1b[1;32mok\x1b[0m step 1\n\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\\nplain\n10%\r100%\n");
        QCOMPARE(model.copyRows(0, 3), u"ok step 1\nlink\nplain\n100%"_s);
        QCOMPARE(model.copyRows(1, 1), u"link"_s);
        QCOMPARE(model.copyRows(-5, 100), u"ok step 1\nlink\nplain\n100%"_s);
        QCOMPARE(model.copyRows(3, 1), QString());
        QCOMPARE(model.plainText(0), u"ok step 1"_s);
        QCOMPARE(model.plainText(4), QString());
    }

    void coalescesSmallWritesIntoOneBatch()
    {
        LogModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setCoalesceInterval(20);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        for (int i = 0; i < 100; ++i)
            model.appendData(numbered(i, 1), i % 2 ? LogModel::Stderr : LogModel::Stdout);
        QCOMPARE(model.rowCount(), 0);
        QTRY_COMPARE(model.rowCount(), 100);
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(role(model, 99, LogModel::TextRole).toString(), u"line 99"_s);
        QCOMPARE(role(model, 99, LogModel::StreamRole).toInt(), int(LogModel::Stderr));
        model.appendData("queued\n");
        model.flush(); // applies what is queued at once
        QCOMPARE(model.rowCount(), 101);
    }

    void clearKeepsNumbering()
    {
        LogModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.appendData(numbered(0, 10, 2));
        model.setSearchTerm(u"error"_s);
        QTRY_VERIFY(!model.isSearching());
        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.matchCount(), 0);
        model.appendData("after\n");
        QCOMPARE(role(model, 0, LogModel::LineNumberRole).toLongLong(), 11);
    }

    // Another log in the same model (a step's output after another's) starts at line 1, and
    // nothing rendered for the old line 1 is shown for the new one.
    void resetNumbersFromOne()
    {
        LogModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.appendData(numbered(0, 10, 2));
        QCOMPARE(role(model, 0, LogModel::TextRole).toString(), role(model, 0, Qt::DisplayRole).toString());
        const QString oldFirst = role(model, 0, LogModel::TextRole).toString();
        model.setSearchTerm(u"error"_s);
        QTRY_VERIFY(!model.isSearching());
        model.reset();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.matchCount(), 0);
        model.appendData("\x1b[31mred error\x1b[0m\nafter\n");
        QCOMPARE(role(model, 0, LogModel::LineNumberRole).toLongLong(), 1);
        QCOMPARE(role(model, 1, LogModel::LineNumberRole).toLongLong(), 2);
        QVERIFY(role(model, 0, LogModel::TextRole).toString() != oldFirst);
        QCOMPARE(role(model, 0, LogModel::TextRole).toString(), u"red error"_s);
        QCOMPARE(role(model, 0, LogModel::SpansRole).toList().size(), 1);
        QTRY_COMPARE(model.matchCount(), 1);
        QCOMPARE(model.nextMatch(-1), 0);
    }
};

QTEST_GUILESS_MAIN(TestLogModel)
#include "tst_logmodel.moc"
