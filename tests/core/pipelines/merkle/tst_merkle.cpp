// A step's content address changes exactly when what the step is, reads or runs on changes.
#include "core/pipelines/merkle/merkle.h"

#include <QTest>

using namespace pando::core::pipelines;

class TestMerkle : public QObject {
    Q_OBJECT

    static StepContent base()
    {
        StepContent c;
        c.kind = QStringLiteral("task");
        c.canonicalConfig = R"({"run":{"args":["-c","make test"],"path":"sh"}})";
        c.inputDigests = {{QStringLiteral("repo"), QStringLiteral("aa11")},
                          {QStringLiteral("deps"), QStringLiteral("bb22")}};
        c.imageDigest = QStringLiteral("sha256:1234");
        return c;
    }

private Q_SLOTS:
    void stableAndHex()
    {
        const QString h = stepHash(base());
        QCOMPARE(h.size(), 64);
        QCOMPARE(stepHash(base()), h);
    }

    void everyPartCounts_data()
    {
        QTest::addColumn<int>("change");
        QTest::newRow("kind") << 0;
        QTest::newRow("config") << 1;
        QTest::newRow("input digest") << 2;
        QTest::newRow("input name") << 3;
        QTest::newRow("extra input") << 4;
        QTest::newRow("image") << 5;
        QTest::newRow("extra") << 6;
    }

    void everyPartCounts()
    {
        QFETCH(int, change);
        StepContent c = base();
        switch (change) {
        case 0:
            c.kind = QStringLiteral("put");
            break;
        case 1:
            c.canonicalConfig.replace("make test", "make lint");
            break;
        case 2:
            c.inputDigests[QStringLiteral("repo")] = QStringLiteral("aa12");
            break;
        case 3:
            c.inputDigests.insert(QStringLiteral("source"), c.inputDigests.take(QStringLiteral("repo")));
            break;
        case 4:
            c.inputDigests.insert(QStringLiteral("cache"), QStringLiteral("cc33"));
            break;
        case 5:
            c.imageDigest = QStringLiteral("sha256:5678");
            break;
        case 6:
            c.extra = QStringLiteral("{\"ref\":\"abc\"}");
            break;
        }
        QVERIFY(stepHash(c) != stepHash(base()));
    }

    void fieldBoundariesAreUnambiguous()
    {
        // Moving bytes from one field into its neighbour must not give the same hash.
        StepContent a = base();
        a.inputDigests = {{QStringLiteral("ab"), QStringLiteral("c")}};
        StepContent b = base();
        b.inputDigests = {{QStringLiteral("a"), QStringLiteral("bc")}};
        QVERIFY(stepHash(a) != stepHash(b));
        StepContent c = base();
        c.imageDigest = QStringLiteral("x");
        c.extra = QStringLiteral("y");
        StepContent d = base();
        d.imageDigest = QStringLiteral("xy");
        QVERIFY(stepHash(c) != stepHash(d));
    }

    void secretsEnterOnlyAsKeyedDigests()
    {
        const QByteArray key(32, 'k');
        const QString digest = secretDigest(key, QStringLiteral("hunter2"));
        QCOMPARE(digest.size(), 64);
        QVERIFY(!digest.contains(QLatin1String("hunter2")));
        QCOMPARE(secretDigest(key, QStringLiteral("hunter2")), digest);
        QVERIFY(secretDigest(key, QStringLiteral("hunter3")) != digest);
        QVERIFY(secretDigest(QByteArray(32, 'j'), QStringLiteral("hunter2")) != digest);
    }
};

QTEST_GUILESS_MAIN(TestMerkle)
#include "tst_merkle.moc"
