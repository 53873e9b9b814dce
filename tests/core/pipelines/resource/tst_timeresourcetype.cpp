// The time resource type on a ManualClock, and the version selection helpers.

#include "core/pipelines/resource/timeresourcetype.h"
#include "core/pipelines/resource/versions.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>
#include <QTimeZone>

using namespace Qt::StringLiterals;
using pando::ErrorCode;
using pando::adapters::Version;
using pando::core::ManualClock;
using namespace pando::core::pipelines;

template<class R> QByteArray errorText(const R &result)
{
    return result.has_value() ? QByteArray() : result.error().text().toUtf8();
}
#define PANDO_VERIFY_OK(result) QVERIFY2((result).has_value(), errorText(result).constData())

namespace {
qint64 utcMs(int h, int m)
{
    return QDateTime(QDate(2024, 5, 1), QTime(h, m), QTimeZone::utc()).toMSecsSinceEpoch();
}
Version v(const QString &ref)
{
    return Version{{u"ref"_s, ref}};
}
} // namespace

class TestTimeResourceType : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void durations_data();
    void durations();
    void firstCheckIsNow();
    void intervalElapses();
    void window();
    void locationDaysAndOnePerWindow();
    void invalidSources_data();
    void invalidSources();
    void inWritesFiles();
    void outIsNow();
    void versionsAfter();
    void selection_data();
    void selection();
    void selectionParsing();
};

void TestTimeResourceType::durations_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("ms");
    QTest::newRow("1m") << u"1m"_s << qint64(60'000);
    QTest::newRow("90s") << u"90s"_s << qint64(90'000);
    QTest::newRow("1h30m") << u"1h30m"_s << qint64(5'400'000);
    QTest::newRow("1.5h") << u"1.5h"_s << qint64(5'400'000);
    QTest::newRow("250ms") << u"250ms"_s << qint64(250);
    // As Go's time.ParseDuration reads them, as Concourse does.
    QTest::newRow("go's own form") << u"1h0m30s"_s << qint64(3'630'000);
    QTest::newRow("fraction of a second") << u"1.25s"_s << qint64(1'250);
    QTest::newRow("leading dot") << u".5s"_s << qint64(500);
    QTest::newRow("microseconds") << u"1500us"_s << qint64(1);
    QTest::newRow("micro sign") << u"2000\u00b5s"_s << qint64(2);
    QTest::newRow("zero alone") << u"0"_s << qint64(0);
    QTest::newRow("a year and a day") << u"8809h"_s << qint64(-1);
    QTest::newRow("plus sign") << u"+1m"_s << qint64(-1);
    QTest::newRow("dot alone") << u".s"_s << qint64(-1);
    QTest::newRow("unknown unit") << u"5min"_s << qint64(-1);
    QTest::newRow("empty") << QString() << qint64(-1);
    QTest::newRow("no unit") << u"10"_s << qint64(-1);
    QTest::newRow("days") << u"1d"_s << qint64(-1);
    QTest::newRow("negative") << u"-1m"_s << qint64(-1);
    QTest::newRow("spaces") << u"1 m"_s << qint64(-1);
}

void TestTimeResourceType::durations()
{
    QFETCH(QString, text);
    QFETCH(qint64, ms);
    const std::optional<qint64> parsed = parseDurationMs(text);
    if (ms < 0)
        QVERIFY(!parsed);
    else
        QCOMPARE(parsed.value_or(-1), ms);
}

void TestTimeResourceType::firstCheckIsNow()
{
    ManualClock clock(utcMs(10, 0));
    TimeResourceType type(clock);
    QCOMPARE(type.name(), u"time"_s);
    auto versions = type.check(QJsonObject{{u"interval"_s, u"1m"_s}}, {}, {}, {});
    PANDO_VERIFY_OK(versions);
    QCOMPARE(versions->size(), 1);
    QCOMPARE(versions->first().value(u"time"_s), u"2024-05-01T10:00:00.000Z"_s);
}

void TestTimeResourceType::intervalElapses()
{
    ManualClock clock(utcMs(10, 0));
    TimeResourceType type(clock);
    const QJsonObject source{{u"interval"_s, u"1m"_s}};
    auto first = type.check(source, {}, {}, {});
    PANDO_VERIFY_OK(first);
    const Version last = first->first();

    clock.advance(30'000);
    auto early = type.check(source, last, {}, {});
    PANDO_VERIFY_OK(early);
    QVERIFY(early->isEmpty());

    clock.advance(30'000);
    auto due = type.check(source, last, {}, {});
    PANDO_VERIFY_OK(due);
    QCOMPARE(due->size(), 1);
    QCOMPARE(due->first().value(u"time"_s), u"2024-05-01T10:01:00.000Z"_s);
}

void TestTimeResourceType::window()
{
    ManualClock clock(utcMs(8, 0));
    TimeResourceType type(clock);
    const QJsonObject source{{u"interval"_s, u"1m"_s}, {u"start"_s, u"09:00"_s}, {u"stop"_s, u"17:00"_s}};
    auto before = type.check(source, {}, {}, {});
    PANDO_VERIFY_OK(before);
    QVERIFY(before->isEmpty());
    clock.set(utcMs(9, 30));
    auto inside = type.check(source, {}, {}, {});
    PANDO_VERIFY_OK(inside);
    QCOMPARE(inside->size(), 1);

    // A window across midnight.
    const QJsonObject night{{u"interval"_s, u"1h"_s}, {u"start"_s, u"22:00"_s}, {u"stop"_s, u"02:00"_s}};
    clock.set(utcMs(23, 0));
    QCOMPARE(type.check(night, {}, {}, {})->size(), 1);
    clock.set(utcMs(1, 0));
    QCOMPARE(type.check(night, {}, {}, {})->size(), 1);
    clock.set(utcMs(12, 0));
    QCOMPARE(type.check(night, {}, {}, {})->size(), 0);
}

// As Concourse's documentation describes them: a window in a named zone, on some days, one
// version per window without an interval, Go's forms of a time of day, initial_version.
void TestTimeResourceType::locationDaysAndOnePerWindow()
{
    // 2024-05-01 was a Wednesday. New York is UTC-4 then.
    ManualClock clock(utcMs(12, 0)); // 08:00 in New York
    TimeResourceType type(clock);
    const QJsonObject weekdays{{u"start"_s, u"9:00 AM"_s},
                               {u"stop"_s, u"5PM"_s},
                               {u"location"_s, u"America/New_York"_s},
                               {u"days"_s, QJsonArray{u"Wednesday"_s, u"friday"_s}}};
    QVERIFY(type.check(weekdays, {}, {}, {})->isEmpty()); // 08:00 there: not yet
    clock.set(utcMs(13, 30));                             // 09:30 there
    auto first = type.check(weekdays, {}, {}, {});
    PANDO_VERIFY_OK(first);
    QCOMPARE(first->size(), 1);
    clock.set(utcMs(18, 0)); // later in the same window: it has its version
    QVERIFY(type.check(weekdays, first->first(), {}, {})->isEmpty());
    // Thursday 10:00 there: not one of the days.
    clock.set(utcMs(14, 0) + 86'400'000);
    QVERIFY(type.check(weekdays, first->first(), {}, {})->isEmpty());
    // Friday 10:00 there: the next window's version.
    clock.set(utcMs(14, 0) + 2 * 86'400'000);
    QCOMPARE(type.check(weekdays, first->first(), {}, {})->size(), 1);

    // initial_version: a first check finds one outside the window, later ones wait for it.
    const QJsonObject nightly{{u"start"_s, u"0200"_s}, {u"stop"_s, u"0300"_s}, {u"initial_version"_s, true}};
    clock.set(utcMs(12, 0));
    auto initial = type.check(nightly, {}, {}, {});
    PANDO_VERIFY_OK(initial);
    QCOMPARE(initial->size(), 1);
    QVERIFY(type.check(nightly, initial->first(), {}, {})->isEmpty());
    clock.set(utcMs(2, 30) + 86'400'000);
    QCOMPARE(type.check(nightly, initial->first(), {}, {})->size(), 1);
}

void TestTimeResourceType::invalidSources_data()
{
    QTest::addColumn<QByteArray>("source");
    QTest::addColumn<QString>("where");
    QTest::newRow("no interval") << QByteArray("{}") << u"source.interval"_s;
    QTest::newRow("bare hour") << QByteArray(R"({"start":"9","stop":"17:00"})") << u"source.start"_s;
    QTest::newRow("13 PM") << QByteArray(R"({"start":"13PM","stop":"17:00"})") << u"source.start"_s;
    QTest::newRow("bad location") << QByteArray(R"({"interval":"1m","location":"Mars/Olympus"})")
                                  << u"source.location"_s;
    QTest::newRow("bad day") << QByteArray(R"({"interval":"1m","days":["Monday","Funday"]})") << u"source.days[1]"_s;
    QTest::newRow("days not a list") << QByteArray(R"({"interval":"1m","days":"Monday"})") << u"source.days"_s;
    QTest::newRow("bad interval") << QByteArray(R"({"interval":"soon"})") << u"source.interval"_s;
    QTest::newRow("too short") << QByteArray(R"({"interval":"10ms"})") << u"source.interval"_s;
    QTest::newRow("number") << QByteArray(R"({"interval":60})") << u"source.interval"_s;
    QTest::newRow("start alone") << QByteArray(R"({"interval":"1m","start":"09:00"})") << u"source"_s;
    QTest::newRow("bad stop") << QByteArray(R"({"interval":"1m","start":"09:00","stop":"25:00"})") << u"source.stop"_s;
    QTest::newRow("unknown") << QByteArray(R"({"interval":"1m","timezone":"Europe/Paris"})") << u"source.timezone"_s;
}

void TestTimeResourceType::invalidSources()
{
    QFETCH(QByteArray, source);
    QFETCH(QString, where);
    ManualClock clock;
    TimeResourceType type(clock);
    auto r = type.check(QJsonDocument::fromJson(source).object(), {}, {}, {});
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::Invalid);
    QCOMPARE(r.error().where, where);
}

void TestTimeResourceType::inWritesFiles()
{
    ManualClock clock;
    TimeResourceType type(clock);
    QTemporaryDir dir;
    const Version version{{u"time"_s, u"2024-05-01T10:00:00.000Z"_s}};
    auto result = type.in(QJsonObject{{u"interval"_s, u"1m"_s}}, version, {}, dir.path(), {}, {}, {});
    PANDO_VERIFY_OK(result);
    QCOMPARE(result->version, version);
    QFile timestamp(QDir(dir.path()).filePath(u"timestamp"_s));
    QVERIFY(timestamp.open(QIODevice::ReadOnly));
    QCOMPARE(timestamp.readAll(), QByteArray("2024-05-01T10:00:00.000Z\n"));
    QFile input(QDir(dir.path()).filePath(u"input"_s));
    QVERIFY(input.open(QIODevice::ReadOnly));
    const QJsonObject request = QJsonDocument::fromJson(input.readAll()).object();
    QCOMPARE(request.value(u"version"_s).toObject().value(u"time"_s).toString(), version.value(u"time"_s));

    auto bad = type.in({}, Version{{u"time"_s, u"yesterday"_s}}, {}, dir.path(), {}, {}, {});
    QVERIFY(!bad);
    QCOMPARE(bad.error().code, ErrorCode::Invalid);
}

void TestTimeResourceType::outIsNow()
{
    ManualClock clock(utcMs(12, 34));
    TimeResourceType type(clock);
    auto result = type.out({}, {}, {}, {}, {}, {});
    PANDO_VERIFY_OK(result);
    QCOMPARE(result->version.value(u"time"_s), u"2024-05-01T12:34:00.000Z"_s);
}

void TestTimeResourceType::versionsAfter()
{
    const QList<Version> all{v(u"1"_s), v(u"2"_s), v(u"3"_s)};
    QCOMPARE(pando::core::pipelines::versionsAfter(all, v(u"1"_s)), (QList<Version>{v(u"2"_s), v(u"3"_s)}));
    QCOMPARE(pando::core::pipelines::versionsAfter(all, v(u"3"_s)), QList<Version>{});
    QCOMPARE(pando::core::pipelines::versionsAfter(all, v(u"9"_s)), all);
    QCOMPARE(pando::core::pipelines::versionsAfter(all, {}), QList<Version>{v(u"3"_s)});
    QCOMPARE(pando::core::pipelines::versionsAfter({}, {}), QList<Version>{});
    QCOMPARE(versionKey(Version{{u"b"_s, u"2"_s}, {u"a"_s, u"1"_s}}), u"{\"a\":\"1\",\"b\":\"2\"}"_s);
}

void TestTimeResourceType::selection_data()
{
    QTest::addColumn<QByteArray>("spec");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("default") << QByteArray("null") << QStringList{u"3"_s};
    QTest::newRow("latest") << QByteArray(R"("latest")") << QStringList{u"3"_s};
    QTest::newRow("every") << QByteArray(R"("every")") << QStringList{u"1"_s, u"2"_s, u"3"_s};
    QTest::newRow("pinned") << QByteArray(R"({"ref":"2"})") << QStringList{u"2"_s};
    QTest::newRow("pinned by a subset") << QByteArray(R"({"branch":"main"})") << QStringList{u"3"_s};
    QTest::newRow("pinned missing") << QByteArray(R"({"ref":"9"})") << QStringList{};
}

void TestTimeResourceType::selection()
{
    QFETCH(QByteArray, spec);
    QFETCH(QStringList, expected);
    QList<Version> available;
    for (const QString &ref : {u"1"_s, u"2"_s, u"3"_s})
        available.append(Version{{u"ref"_s, ref}, {u"branch"_s, u"main"_s}});
    const QJsonValue value = QJsonDocument::fromJson("[" + spec + "]").array().first();
    auto selection = VersionSelection::fromJson(value, u"jobs[0].plan[0].version"_s);
    PANDO_VERIFY_OK(selection);
    QStringList refs;
    for (const Version &version : selectVersions(available, *selection))
        refs << version.value(u"ref"_s);
    QCOMPARE(refs, expected);
    QVERIFY(selectVersions({}, *selection).isEmpty());
}

void TestTimeResourceType::selectionParsing()
{
    for (const QByteArray &bad :
         {QByteArray(R"("newest")"), QByteArray("3"), QByteArray("{}"), QByteArray(R"({"ref":1})")}) {
        const QJsonValue value = QJsonDocument::fromJson("[" + bad + "]").array().first();
        auto selection = VersionSelection::fromJson(value, u"version"_s);
        QVERIFY2(!selection, bad.constData());
        QCOMPARE(selection.error().code, ErrorCode::Invalid);
        QCOMPARE(selection.error().where, u"version"_s);
    }
}

QTEST_GUILESS_MAIN(TestTimeResourceType)
#include "tst_timeresourcetype.moc"
