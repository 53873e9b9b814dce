// The approval service on both drivers (every test runs once per global row): request, approve,
// reject, expiry through a ManualClock, use-once, the requester refused, a second decision
// refused, two approvers racing, and the events and audit lines every change leaves.
#include "core/approval/approvalservice.h"
#include "core/state/repositories.h"
#include "tests/support/component.h"
#include "tests/support/drivers.h"
#include "tests/support/pgharness.h"
#include "tests/support/vocabtesting.h"

#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <memory>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

class TestApprovalService : public QObject {
    Q_OBJECT

    test::PostgresHarness m_pg;
    bool m_pgStarted = false;
    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<Database> m_db;
    std::unique_ptr<ManualClock> m_clock;
    std::unique_ptr<AuditLog> m_audit;
    std::unique_ptr<EventBus> m_bus;
    std::unique_ptr<ApprovalService> m_service;

    const Actor alice{u"alice"_s, u"10.0.0.1"_s, u"req-1"_s};
    const Actor bob{u"bob"_s, u"10.0.0.2"_s, u"req-2"_s};
    const Actor carol{u"carol"_s, u"10.0.0.3"_s, u"req-3"_s};

    ApprovalRecord ask(qint64 ttlMs = 60'000)
    {
        auto r = m_service->request(u"deploy"_s, u"app/hello"_s, alice, u"environment is prod"_s,
                                    uR"({"steps": ["build", "switch"]})"_s, ttlMs);
        return r.value();
    }

    QList<AuditRecord> auditLines(const QString &action = {})
    {
        AuditRepository::Filter filter;
        filter.action = action;
        return AuditRepository(*m_db).list(filter).value();
    }

private Q_SLOTS:
    void initTestCase_data() { test::addDriverRows(); }

    void initTestCase()
    {
        qRegisterMetaType<Event>();
        m_pgStarted = m_pg.start();
    }

    void init()
    {
        PANDO_FRESH_DATABASE(url, m_pg, m_pgStarted, m_tmp);
        m_db = std::make_unique<Database>(DatabaseConfig::fromUrl(url).value());
        auto opened = m_db->open();
        QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
        m_clock = std::make_unique<ManualClock>();
        m_audit = std::make_unique<AuditLog>(*m_db, *m_clock);
        m_bus = std::make_unique<EventBus>();
        m_service = std::make_unique<ApprovalService>(*m_db, *m_audit, m_bus.get(), *m_clock);
    }

    void cleanup()
    {
        m_service.reset();
        m_bus.reset();
        m_audit.reset();
        m_clock.reset();
        m_db.reset();
        m_tmp.reset();
    }

    void requestIsPendingAndListed()
    {
        QSignalSpy events(m_bus.get(), &EventBus::published);
        const ApprovalRecord r = ask();
        QVERIFY(r.id.startsWith(u'a'));
        QCOMPARE(r.status, u"pending"_s);
        QCOMPARE(r.requester, u"alice"_s);
        QCOMPARE(r.expiresMs, r.createdMs + 60'000);
        auto found = m_service->find(r.id);
        QVERIFY(found && found->has_value());
        QCOMPARE((*found)->planJson, r.planJson);
        QCOMPARE((*found)->toJson().value(u"plan"_s).toObject().value(u"steps"_s).toArray().size(), 2);
        QCOMPARE(m_service->list(u"pending"_s)->size(), 1);
        QCOMPARE(m_service->list(u"approved"_s)->size(), 0);
        QCOMPARE(m_service->list()->size(), 1);
        QCOMPARE(m_service->list(u"bogus"_s).error().code, ErrorCode::Invalid);
        QVERIFY(!m_service->find(u"anope"_s)->has_value());
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.first().first().value<Event>().type, EventType::ApprovalRequested);
        const QList<AuditRecord> lines = auditLines(u"approval.request"_s);
        QCOMPARE(lines.size(), 1);
        QCOMPARE(lines.first().actor, u"alice"_s);
        QCOMPARE(lines.first().object, u"approval/"_s + r.id);
        QCOMPARE(lines.first().requestId, u"req-1"_s);
        QCOMPARE(lines.first().source, u"10.0.0.1"_s);
    }

    void requestRefusesBadInput_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("object");
        QTest::addColumn<QString>("plan");
        QTest::addColumn<qint64>("ttl");
        QTest::addColumn<QString>("where");
        QTest::newRow("unknown kind") << u"build"_s << u"app/x"_s << QString() << qint64(0) << u"kind"_s;
        QTest::newRow("no object") << u"deploy"_s << QString() << QString() << qint64(0) << u"object"_s;
        QTest::newRow("plan not json") << u"pipeline-step"_s << u"run/r1/step/ship"_s << u"{nope"_s << qint64(0)
                                       << u"plan"_s;
        QTest::newRow("negative ttl") << u"deploy"_s << u"app/x"_s << QString() << qint64(-1) << u"ttl"_s;
    }

    void requestRefusesBadInput()
    {
        QFETCH(QString, kind);
        QFETCH(QString, object);
        QFETCH(QString, plan);
        QFETCH(qint64, ttl);
        QFETCH(QString, where);
        auto r = m_service->request(kind, object, alice, {}, plan, ttl);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::Invalid);
        QCOMPARE(r.error().where, where);
    }

    void approveThenConsumeOnce()
    {
        const ApprovalRecord r = ask();
        QSignalSpy events(m_bus.get(), &EventBus::published);
        m_clock->advance(1000);
        auto approved = m_service->approve(r.id, bob, u"looks fine"_s);
        QVERIFY2(approved, qPrintable(approved ? QString() : approved.error().text()));
        QCOMPARE(approved->status, u"approved"_s);
        QCOMPARE(approved->decidedBy, u"bob"_s);
        QCOMPARE(approved->reason, u"looks fine"_s);
        QCOMPARE(approved->decidedMs, r.createdMs + 1000);
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.first().first().value<Event>().type, EventType::ApprovalApproved);

        auto used = m_service->consume(r.id);
        QVERIFY(used);
        QCOMPARE(used->status, u"used"_s);
        auto again = m_service->consume(r.id);
        QVERIFY(!again);
        QCOMPARE(again.error().code, ErrorCode::Conflict);
        QCOMPARE(m_service->consume(u"anope"_s).error().code, ErrorCode::NotFound);

        QCOMPARE(auditLines(u"approval.approve"_s).size(), 1);
        const QList<AuditRecord> uses = auditLines(u"approval.use"_s);
        QCOMPARE(uses.size(), 3); // newest first: the unknown id, the second consume, the first
        QCOMPARE(uses.at(0).outcome, u"failure"_s);
        QCOMPARE(uses.at(1).outcome, u"failure"_s);
        QCOMPARE(uses.at(2).outcome, u"success"_s);
        QVERIFY(!AuditRepository(*m_db).verify()->has_value());
    }

    void pendingCannotBeConsumed()
    {
        const ApprovalRecord r = ask();
        auto used = m_service->consume(r.id);
        QVERIFY(!used);
        QCOMPARE(used.error().code, ErrorCode::Conflict);
        QVERIFY(used.error().message.contains(u"pending"_s));
    }

    void requesterCannotApproveOwn()
    {
        const ApprovalRecord r = ask();
        auto own = m_service->approve(r.id, alice, u"trust me"_s);
        QVERIFY(!own);
        QCOMPARE(own.error().code, ErrorCode::Forbidden);
        QCOMPARE(m_service->find(r.id).value()->status, u"pending"_s);
        const QList<AuditRecord> lines = auditLines(u"approval.approve"_s);
        QCOMPARE(lines.size(), 1);
        QCOMPARE(lines.first().outcome, u"denied"_s);
        // Withdrawing one's own request is allowed.
        auto withdrawn = m_service->reject(r.id, alice, u"wrong branch"_s);
        QVERIFY(withdrawn);
        QCOMPARE(withdrawn->status, u"rejected"_s);
    }

    void secondDecisionRefused()
    {
        const ApprovalRecord r = ask();
        QVERIFY(m_service->approve(r.id, bob, {}));
        auto second = m_service->approve(r.id, carol, {});
        QVERIFY(!second);
        QCOMPARE(second.error().code, ErrorCode::Conflict);
        QVERIFY2(second.error().message.contains(u"approved by bob"_s), qPrintable(second.error().text()));
        auto reject = m_service->reject(r.id, carol, {});
        QCOMPARE(reject.error().code, ErrorCode::Conflict);
        QCOMPARE(m_service->find(r.id).value()->decidedBy, u"bob"_s);
        QCOMPARE(m_service->approve(u"anope"_s, bob, {}).error().code, ErrorCode::NotFound);
    }

    void rejectSettles()
    {
        const ApprovalRecord r = ask();
        QSignalSpy events(m_bus.get(), &EventBus::published);
        auto rejected = m_service->reject(r.id, bob, u"not on a Friday"_s);
        QVERIFY(rejected);
        QCOMPARE(rejected->status, u"rejected"_s);
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.first().first().value<Event>().type, EventType::ApprovalRejected);
        QCOMPARE(m_service->consume(r.id).error().code, ErrorCode::Conflict);
        QCOMPARE(auditLines(u"approval.reject"_s).first().outcome, u"success"_s);
    }

    void expiryThroughTheClock()
    {
        const ApprovalRecord soon = ask(1000);
        const ApprovalRecord later = ask(10'000);
        const ApprovalRecord never = ask(0);
        QSignalSpy events(m_bus.get(), &EventBus::published);
        QCOMPARE(m_service->expire()->size(), 0);
        m_clock->advance(1000); // expires_ms is the first instant it is no longer valid
        auto settled = m_service->expire();
        QVERIFY(settled);
        QCOMPARE(settled->size(), 1);
        QCOMPARE(settled->first().id, soon.id);
        QCOMPARE(settled->first().status, u"expired"_s);
        QCOMPARE(settled->first().decidedBy, u"system:approval"_s);
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.first().first().value<Event>().type, EventType::ApprovalExpired);
        QCOMPARE(m_service->expire()->size(), 0); // settled once
        QCOMPARE(m_service->approve(soon.id, bob, {}).error().code, ErrorCode::Conflict);

        // Past its time but not yet swept: approving it is refused and settles it.
        m_clock->advance(20'000);
        auto late = m_service->approve(later.id, bob, {});
        QVERIFY(!late);
        QCOMPARE(late.error().code, ErrorCode::Conflict);
        QVERIFY2(late.error().message.contains(u"expired"_s), qPrintable(late.error().text()));
        QCOMPARE(m_service->find(later.id).value()->status, u"expired"_s);
        QCOMPARE(m_service->find(never.id).value()->status, u"pending"_s);
        QCOMPARE(auditLines(u"approval.expire"_s).size(), 2);
        QCOMPARE(auditLines(u"approval.expire"_s).first().actor, u"system:approval"_s);
    }

    void racingApproversOneWins()
    {
        for (int round = 0; round < 5; ++round) {
            const ApprovalRecord r = ask();
            std::atomic_int wins = 0, conflicts = 0;
            QList<QThread *> threads;
            for (const Actor &who : {bob, carol}) {
                threads << QThread::create([&, who] {
                    auto result = m_service->approve(r.id, who, {});
                    if (result)
                        ++wins;
                    else if (result.error().code == ErrorCode::Conflict)
                        ++conflicts;
                });
            }
            for (QThread *t : threads)
                t->start();
            for (QThread *t : threads) {
                QVERIFY(t->wait(30'000));
                delete t;
            }
            QCOMPARE(wins.load(), 1);
            QCOMPARE(conflicts.load(), 1);
            QCOMPARE(m_service->find(r.id).value()->status, u"approved"_s);
        }
        QCOMPARE(auditLines(u"approval.approve"_s).size(), 10); // 5 successes, 5 refusals
    }

    void ownTokenIsStillTheRequester()
    {
        const Actor session{u"user:dana"_s, u"10.0.0.4"_s, {}};
        const Actor token{u"user:dana/token:t0011223344556677"_s, u"10.0.0.4"_s, {}};
        auto r = m_service->request(u"deploy"_s, u"app/hello"_s, session, {}, {}, 0);
        QVERIFY(r);
        auto own = m_service->approve(r->id, token, {});
        QVERIFY(!own);
        QCOMPARE(own.error().code, ErrorCode::Forbidden);
        QVERIFY2(own.error().message.contains(u"user:dana asked"_s), qPrintable(own.error().text()));
    }

    void approversListDecidesWhoMay()
    {
        using accounts::Role;
        auto bad = m_service->request(u"pipeline-step"_s, u"run/r1/step/ship"_s, alice, {}, {}, 0, {u"role:boss"_s});
        QVERIFY(!bad);
        QCOMPARE(bad.error().where, u"approvers"_s);
        QCOMPARE(m_service->request(u"deploy"_s, u"app/x"_s, alice, {}, {}, 0, {u"Not A Name"_s}).error().code,
                 ErrorCode::Invalid);

        auto r = m_service->request(u"pipeline-step"_s, u"run/r1/step/ship"_s, alice, {}, {}, 0,
                                    {u"erin"_s, u"role:operator"_s});
        QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
        QCOMPARE(m_service->find(r->id).value()->approvers, (QStringList{u"erin"_s, u"role:operator"_s}));
        // A member who is not named may neither approve nor reject.
        const Approver member{Actor{u"user:frank"_s, {}, {}}, Role::Member};
        auto refused = m_service->approve(r->id, member, {});
        QCOMPARE(refused.error().code, ErrorCode::Forbidden);
        QVERIFY2(refused.error().message.contains(u"erin, role:operator"_s), qPrintable(refused.error().text()));
        QCOMPARE(m_service->reject(r->id, member, {}).error().code, ErrorCode::Forbidden);
        // Automation without a role matches only by name.
        QCOMPARE(m_service->approve(r->id, Approver{Actor::system(u"ci"_s)}, {}).error().code, ErrorCode::Forbidden);
        // An admin is above operator.
        auto admin = m_service->approve(r->id, Approver{Actor{u"user:root/token:t1"_s, {}, {}}, Role::Admin}, {});
        QVERIFY2(admin, qPrintable(admin ? QString() : admin.error().text()));

        auto named = m_service->request(u"pipeline-step"_s, u"run/r2/step/ship"_s, alice, {}, {}, 0, {u"erin"_s});
        QVERIFY(named);
        QCOMPARE(m_service->approve(named->id, Approver{Actor{u"user:gail"_s, {}, {}}, Role::Admin}, {}).error().code,
                 ErrorCode::Forbidden);
        QVERIFY(m_service->approve(named->id, Approver{Actor{u"user:erin"_s, {}, {}}, Role::Viewer}, {}));
        QCOMPARE(m_service->find(named->id).value()->toJson().value(u"approvers"_s).toArray().size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestApprovalService)
#include "tst_approvalservice.moc"
