// The AppSpec's run.volumes: read, written back as JSON, and every way they can be wrong, each
// error naming the volume's field and its line.
#include "core/spec/appspec.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando::core;

namespace {

QByteArray spec(const QByteArray &volumes)
{
    return "name: notes\nsource:\n  repo: https://git.example/notes.git\nrun:\n  port: 8080\n  volumes:" + volumes;
}

} // namespace

class TestAppSpecVolumes : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void volumesAreRead()
    {
        auto parsed = parseAppSpec(spec("\n    - name: data\n      path: /var/lib/notes\n      size: 1Gi\n"
                                        "    - {name: cache, path: /cache}\n"));
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        QCOMPARE(parsed->run.volumes.size(), 2);
        QCOMPARE(parsed->run.volumes[0].name, u"data"_s);
        QCOMPARE(parsed->run.volumes[0].path, u"/var/lib/notes"_s);
        QCOMPARE(parsed->run.volumes[0].sizeBytes, 1024LL * 1024 * 1024);
        QCOMPARE(parsed->run.volumes[1].sizeBytes, 0);
        const QJsonArray json = parsed->toJson().value(u"run"_s).toObject().value(u"volumes"_s).toArray();
        QCOMPARE(json.size(), 2);
        QCOMPARE(json[0].toObject().value(u"size"_s).toString(), u"1Gi"_s);
        auto again = parseAppSpecJson(QJsonDocument(parsed->toJson()).toJson());
        QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
        QCOMPARE(again->run.volumes, parsed->run.volumes);
        auto none = parseAppSpec(spec(" []\n"));
        QVERIFY(none);
        QVERIFY(!none->toJson().value(u"run"_s).toObject().contains(u"volumes"_s));
    }

    void badInputNamesTheFieldAndLine_data()
    {
        QTest::addColumn<QByteArray>("volumes");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("says");
        QTest::newRow("not a list") << QByteArray(" /data\n") << u"run.volumes"_s << u"expected a list of volumes"_s;
        QTest::newRow("no path") << QByteArray("\n    - name: data\n") << u"run.volumes[0].path"_s
                                 << u"missing required field (line 7"_s;
        QTest::newRow("relative path") << QByteArray("\n    - {name: data, path: data}\n") << u"run.volumes[0].path"_s
                                       << u"not an absolute path"_s;
        QTest::newRow("climbs") << QByteArray("\n    - {name: data, path: /data/../etc}\n") << u"run.volumes[0].path"_s
                                << u"'..'"_s;
        QTest::newRow("the root") << QByteArray("\n    - {name: data, path: /}\n") << u"run.volumes[0].path"_s
                                  << u"would cover the container's own /"_s;
        QTest::newRow("proc") << QByteArray("\n    - {name: data, path: /proc/x}\n") << u"run.volumes[0].path"_s
                              << u"would cover the container's own /proc"_s;
        QTest::newRow("bad name") << QByteArray("\n    - {name: My_Data, path: /data}\n") << u"run.volumes[0].name"_s
                                  << u"is not a volume name"_s;
        QTest::newRow("twice") << QByteArray("\n    - {name: data, path: /a}\n    - {name: data, path: /b}\n")
                               << u"run.volumes[1].name"_s << u"named twice (line 8"_s;
        QTest::newRow("nested") << QByteArray("\n    - {name: a, path: /data}\n    - {name: b, path: /data/b}\n")
                                << u"run.volumes[1].path"_s << u"overlaps volume a"_s;
        QTest::newRow("tiny") << QByteArray("\n    - {name: data, path: /data, size: 10Ki}\n")
                              << u"run.volumes[0].size"_s << u"not from 1Mi to 1Pi"_s;
        QTest::newRow("a typo") << QByteArray("\n    - {name: data, path: /data, sise: 1Gi}\n")
                                << u"run.volumes[0].sise"_s << u"did you mean \"size\""_s;
    }

    void badInputNamesTheFieldAndLine()
    {
        QFETCH(QByteArray, volumes);
        QFETCH(QString, where);
        QFETCH(QString, says);
        auto parsed = parseAppSpec(spec(volumes));
        QVERIFY(!parsed);
        QCOMPARE(parsed.error().code, pando::ErrorCode::Invalid);
        QCOMPARE(parsed.error().where, where);
        QVERIFY2(parsed.error().message.contains(says), qPrintable(parsed.error().message));
    }
};

QTEST_GUILESS_MAIN(TestAppSpecVolumes)
#include "tst_appspecvolumes.moc"
