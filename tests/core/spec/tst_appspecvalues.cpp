// The AppSpec's rules on values rather than documents: memory sizes read and written, the
// validator of an AppSpec built in code (each field it checks named in the error), and app names.

#include "core/spec/appspec.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

class TestAppSpecValues : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void memory_data();
    void memory();
    void formatMemory_data();
    void formatMemory();
    void validateStruct_data();
    void validateStruct();
    void appNames_data();
    void appNames();
};

void TestAppSpecValues::memory_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("bytes"); // -1: unreadable
    const qint64 Mi = 1024 * 1024;
    QTest::newRow("Mi") << u"256Mi"_s << 256 * Mi;
    QTest::newRow("Gi") << u"1Gi"_s << 1024 * Mi;
    QTest::newRow("Ti") << u"2Ti"_s << 2LL * 1024 * 1024 * Mi;
    QTest::newRow("M") << u"512M"_s << 512000000LL;
    QTest::newRow("G") << u"1G"_s << 1000000000LL;
    QTest::newRow("k") << u"10k"_s << 10000LL;
    QTest::newRow("Ki") << u"1024Ki"_s << Mi;
    QTest::newRow("bytes") << u"1048576"_s << Mi;
    QTest::newRow("bytes B") << u"1048576B"_s << Mi;
    QTest::newRow("fraction") << u"1.5Gi"_s << 1536 * Mi;
    QTest::newRow("space before unit") << u"64 Mi"_s << 64 * Mi;
    QTest::newRow("surrounding space") << u" 64Mi "_s << 64 * Mi;
    QTest::newRow("fraction of a byte") << u"1.5"_s << -1LL;
    QTest::newRow("MB") << u"1MB"_s << -1LL;
    QTest::newRow("lowercase mi") << u"1mi"_s << -1LL;
    QTest::newRow("negative") << u"-1"_s << -1LL;
    QTest::newRow("empty") << QString() << -1LL;
    QTest::newRow("words") << u"a lot"_s << -1LL;
}

void TestAppSpecValues::memory()
{
    QFETCH(QString, text);
    QFETCH(qint64, bytes);
    const auto parsed = parseMemory(text);
    if (bytes < 0) {
        QVERIFY(!parsed);
        return;
    }
    QVERIFY(parsed);
    QCOMPARE(*parsed, bytes);
}

void TestAppSpecValues::formatMemory_data()
{
    QTest::addColumn<qint64>("bytes");
    QTest::addColumn<QString>("text");
    QTest::newRow("bytes") << 700LL << u"700"_s;
    QTest::newRow("Ki") << 2048LL << u"2Ki"_s;
    QTest::newRow("Mi") << 268435456LL << u"256Mi"_s;
    QTest::newRow("1.5Gi") << 1610612736LL << u"1.5Gi"_s;
    QTest::newRow("Gi") << 4294967296LL << u"4Gi"_s;
    QTest::newRow("decimal G") << 1000000000LL << u"953.67Mi"_s;
}

void TestAppSpecValues::formatMemory()
{
    QFETCH(qint64, bytes);
    QFETCH(QString, text);
    QCOMPARE(core::formatMemory(bytes), text);
}

void TestAppSpecValues::validateStruct_data()
{
    QTest::addColumn<int>("change");
    QTest::addColumn<QString>("where");
    // Each row breaks one field of an otherwise valid struct.
    const QStringList wheres{QString(),
                             u"name"_s,
                             u"source.repo"_s,
                             u"source.ref"_s,
                             u"build.context"_s,
                             u"build.dockerfile"_s,
                             u"run.port"_s,
                             u"run.env.1X"_s,
                             u"run.resources.memory"_s,
                             u"run.resources.cpus"_s,
                             u"health.path"_s,
                             u"health.timeout"_s,
                             u"health.interval"_s,
                             u"route.port"_s,
                             u"labels.dev.pando.x"_s,
                             u"build.args.A B"_s,
                             u"run.command[0]"_s,
                             u"network.egress"_s};
    for (int i = 0; i < wheres.size(); ++i)
        QTest::addRow("%d %s", i, qPrintable(wheres[i].isEmpty() ? u"valid"_s : wheres[i])) << i << wheres[i];
}

void TestAppSpecValues::validateStruct()
{
    QFETCH(int, change);
    QFETCH(QString, where);
    AppSpec spec;
    spec.name = u"hello"_s;
    spec.source.repo = u"https://host/x.git"_s;
    spec.run.port = 8080;
    switch (change) {
    case 1:
        spec.name = u"Hello"_s;
        break;
    case 2:
        spec.source.repo = u"ext::sh"_s;
        break;
    case 3:
        spec.source.ref = u"-x"_s;
        break;
    case 4:
        spec.build.context = u"../x"_s;
        break;
    case 5:
        spec.build.dockerfile = u"/etc/passwd"_s;
        break;
    case 6:
        spec.run.port = -1; // 0 is none: the port the image exposes
        break;
    case 7:
        spec.run.env.insert(u"1X"_s, u"v"_s);
        break;
    case 8:
        spec.run.memoryBytes = 1024;
        break;
    case 9:
        spec.run.cpus = -1;
        break;
    case 10:
        spec.health.path = u"x"_s;
        break;
    case 11:
        spec.health.timeoutSeconds = 0;
        break;
    case 12:
        spec.health.intervalMs = 0;
        break;
    case 13:
        spec.route.port = 70000;
        break;
    case 14:
        spec.labels.insert(u"dev.pando.x"_s, u"y"_s);
        break;
    case 15:
        spec.build.args.insert(u"A B"_s, u"y"_s);
        break;
    case 16:
        spec.run.command = QStringList{QString()};
        break;
    case 17:
        spec.network.egress = static_cast<AppSpec::Egress>(7); // what a bad cast from a number gives
        break;
    default:
        break;
    }
    const auto status = validateAppSpec(spec);
    if (where.isEmpty()) {
        QVERIFY2(status, qPrintable(status ? QString() : status.error().text()));
        return;
    }
    QVERIFY(!status);
    QCOMPARE(status.error().code, ErrorCode::Invalid);
    QCOMPARE(status.error().where, where);
}

void TestAppSpecValues::appNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("valid");
    QTest::newRow("a") << u"a"_s << true;
    QTest::newRow("digit") << u"1"_s << true;
    QTest::newRow("hello-world") << u"hello-world"_s << true;
    QTest::newRow("63") << QString(63, u'x') << true;
    QTest::newRow("64") << QString(64, u'x') << false;
    QTest::newRow("empty") << QString() << false;
    QTest::newRow("upper") << u"Hello"_s << false;
    QTest::newRow("lead dash") << u"-x"_s << false;
    QTest::newRow("trail dash") << u"x-"_s << false;
    QTest::newRow("dash only") << u"-"_s << false;
    QTest::newRow("space") << u"a b"_s << false;
    QTest::newRow("slash") << u"a/b"_s << false;
    QTest::newRow("newline") << u"a\nb"_s << false;
    QTest::newRow("trailing newline") << u"ab\n"_s << false;
    QTest::newRow("unicode") << u"caf\u00e9"_s << false;
}

void TestAppSpecValues::appNames()
{
    QFETCH(QString, name);
    QFETCH(bool, valid);
    QCOMPARE(isValidAppName(name), valid);
}

QTEST_GUILESS_MAIN(TestAppSpecValues)
#include "tst_appspecvalues.moc"
