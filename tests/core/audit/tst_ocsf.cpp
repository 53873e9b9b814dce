// OCSF encoding of audit lines: the API Activity shape, activity and status mapping.
#include "core/audit/ocsf.h"

#include <QJsonArray>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando::core;

class TestOcsf : public QObject {
    Q_OBJECT

private:
    static AuditRecord sample()
    {
        AuditRecord line;
        line.seq = 42;
        line.timeMs = 1'700'000'000'123;
        line.actor = u"user:alice"_s;
        line.action = u"app.create"_s;
        line.object = u"app/hello"_s;
        line.outcome = u"success"_s;
        line.detail = uR"({"port":8080})"_s;
        line.requestId = u"r-1"_s;
        line.source = u"10.0.0.7"_s;
        line.prevHash = u"aa"_s;
        line.hash = u"bb"_s;
        return line;
    }

private Q_SLOTS:
    void shape()
    {
        const QJsonObject e = ocsfEvent(sample());
        QCOMPARE(e.value(u"class_uid"_s).toInt(), 6003);
        QCOMPARE(e.value(u"class_name"_s).toString(), u"API Activity"_s);
        QCOMPARE(e.value(u"category_uid"_s).toInt(), 6);
        QCOMPARE(e.value(u"activity_id"_s).toInt(), 1);
        QCOMPARE(e.value(u"type_uid"_s).toInt(), 600301);
        QCOMPARE(e.value(u"time"_s).toInteger(), 1'700'000'000'123LL);
        QCOMPARE(e.value(u"actor"_s)[u"user"_s][u"name"_s].toString(), u"user:alice"_s);
        QCOMPARE(e.value(u"actor"_s)[u"user"_s][u"type_id"_s].toInt(), 1);
        QCOMPARE(e.value(u"api"_s)[u"operation"_s].toString(), u"app.create"_s);
        QCOMPARE(e.value(u"api"_s)[u"request"_s][u"uid"_s].toString(), u"r-1"_s);
        const QJsonObject resource = e.value(u"resources"_s).toArray().at(0).toObject();
        QCOMPARE(resource.value(u"uid"_s).toString(), u"app/hello"_s);
        QCOMPARE(resource.value(u"type"_s).toString(), u"app"_s);
        QCOMPARE(resource.value(u"name"_s).toString(), u"hello"_s);
        QCOMPARE(e.value(u"status_id"_s).toInt(), 1);
        QCOMPARE(e.value(u"status"_s).toString(), u"Success"_s);
        QCOMPARE(e.value(u"src_endpoint"_s)[u"ip"_s].toString(), u"10.0.0.7"_s);
        QCOMPARE(e.value(u"metadata"_s)[u"product"_s][u"name"_s].toString(), u"Pando"_s);
        QCOMPARE(e.value(u"metadata"_s)[u"uid"_s].toString(), u"bb"_s);
        QCOMPARE(e.value(u"metadata"_s)[u"correlation_uid"_s].toString(), u"r-1"_s);
        QVERIFY(!e.value(u"metadata"_s)[u"version"_s].toString().isEmpty());
        QCOMPARE(e.value(u"unmapped"_s)[u"seq"_s].toInteger(), 42);
        QCOMPARE(e.value(u"unmapped"_s)[u"hash"_s].toString(), u"bb"_s);
        QCOMPARE(e.value(u"unmapped"_s)[u"prevHash"_s].toString(), u"aa"_s);
        QCOMPARE(e.value(u"unmapped"_s)[u"detail"_s][u"port"_s].toInt(), 8080);
        QVERIFY(e.contains(u"cloud"_s));
        QVERIFY(!e.contains(u"status_detail"_s));
    }

    void activity_data()
    {
        QTest::addColumn<QString>("action");
        QTest::addColumn<int>("activityId");
        QTest::newRow("create") << u"app.create"_s << 1;
        QTest::newRow("add") << u"user.add"_s << 1;
        QTest::newRow("list") << u"audit.list"_s << 2;
        QTest::newRow("show") << u"deploy.show"_s << 2;
        QTest::newRow("delete") << u"app.delete"_s << 4;
        QTest::newRow("revoke") << u"token.revoke"_s << 4;
        QTest::newRow("start") << u"deploy.start"_s << 3;
        QTest::newRow("approve") << u"approval.approve"_s << 3;
        QTest::newRow("no dot") << u"login"_s << 3;
    }
    void activity()
    {
        QFETCH(QString, action);
        QFETCH(int, activityId);
        AuditRecord line = sample();
        line.action = action;
        const QJsonObject e = ocsfEvent(line);
        QCOMPARE(e.value(u"activity_id"_s).toInt(), activityId);
        QCOMPARE(e.value(u"type_uid"_s).toInt(), 600300 + activityId);
        QCOMPARE(e.value(u"api"_s)[u"operation"_s].toString(), action);
    }

    void outcome_data()
    {
        QTest::addColumn<QString>("outcome");
        QTest::addColumn<int>("statusId");
        QTest::addColumn<int>("severityId");
        QTest::newRow("success") << u"success"_s << 1 << 1;
        QTest::newRow("failure") << u"failure"_s << 2 << 2;
        QTest::newRow("denied") << u"denied"_s << 2 << 3;
    }
    void outcome()
    {
        QFETCH(QString, outcome);
        QFETCH(int, statusId);
        QFETCH(int, severityId);
        AuditRecord line = sample();
        line.outcome = outcome;
        const QJsonObject e = ocsfEvent(line);
        QCOMPARE(e.value(u"status_id"_s).toInt(), statusId);
        QCOMPARE(e.value(u"severity_id"_s).toInt(), severityId);
        if (statusId != 1)
            QCOMPARE(e.value(u"status_detail"_s).toString(), outcome);
    }

    void systemActorAndNamedSource()
    {
        AuditRecord line = sample();
        line.actor = u"system:reconciler"_s;
        line.source = u"engine"_s;
        line.requestId.clear();
        line.detail = u"not json"_s;
        const QJsonObject e = ocsfEvent(line);
        QCOMPARE(e.value(u"actor"_s)[u"user"_s][u"type_id"_s].toInt(), 3);
        QCOMPARE(e.value(u"src_endpoint"_s)[u"name"_s].toString(), u"engine"_s);
        QVERIFY(!e.value(u"api"_s).toObject().contains(u"request"_s));
        QCOMPARE(e.value(u"unmapped"_s)[u"detail"_s].toString(), u"not json"_s);
    }
};

QTEST_GUILESS_MAIN(TestOcsf)
#include "tst_ocsf.moc"
