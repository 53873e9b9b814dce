// The audit log under concurrent writers, on SQLite and PostgreSQL (every test runs once per
// driver row): group commit keeps every line, in one unbroken chain, each caller returns only
// once its own line is committed, and a writer the log does not know about (another process)
// never forks the chain.
#include "core/audit/auditlog.h"
#include "core/state/repositories.h"
#include "tests/support/component.h"
#include "tests/support/drivers.h"
#include "tests/support/pgharness.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <atomic>
#include <memory>

using namespace pando;
using namespace pando::core;

class TestAuditLog : public QObject {
    Q_OBJECT

    test::PostgresHarness m_pg;
    bool m_pgStarted = false;
    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<Database> m_db;

    static Actor tester() { return Actor::system(QStringLiteral("test")); }

    void verifyChain(qint64 lines)
    {
        auto newest = AuditRepository(*m_db).list(AuditRepository::Filter{.limit = 1});
        QVERIFY2(newest, qPrintable(newest ? QString() : newest.error().text()));
        QCOMPARE(newest->size(), 1);
        QCOMPARE(newest->first().seq, lines);
        auto broken = AuditRepository(*m_db).verify();
        QVERIFY2(broken, qPrintable(broken ? QString() : broken.error().text()));
        QVERIFY2(!broken->has_value(),
                 qPrintable(broken->has_value() ? QStringLiteral("broken at seq %1").arg(**broken) : QString()));
    }

private Q_SLOTS:
    void initTestCase_data() { test::addDriverRows(); }
    void initTestCase() { m_pgStarted = m_pg.start(); }

    void init()
    {
        PANDO_FRESH_DATABASE(url, m_pg, m_pgStarted, m_tmp);
        m_db = std::make_unique<Database>(DatabaseConfig::fromUrl(url).value());
        auto opened = m_db->open();
        QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
    }

    void cleanup()
    {
        m_db.reset();
        m_tmp.reset();
    }

    void concurrentWritersShareCommitsAndKeepTheChain()
    {
        AuditLog audit(*m_db, SystemClock::instance());
        constexpr int Threads = 8;
        constexpr int PerThread = 100;
        std::atomic_int failures = 0;
        std::atomic_int notYetVisible = 0;
        std::vector<std::unique_ptr<QThread>> threads;
        for (int t = 0; t < Threads; ++t) {
            threads.emplace_back(QThread::create([&, t] {
                AuditRepository reader(*m_db);
                for (int i = 0; i < PerThread; ++i) {
                    const QString object = QStringLiteral("app/t%1-%2").arg(t).arg(i);
                    if (!audit.record(tester(), QStringLiteral("app.create"), object, QStringLiteral("success")))
                        ++failures;
                    // Committed before record() returns: the line is there for any reader.
                    AuditRepository::Filter f;
                    f.object = object;
                    if (auto lines = reader.list(f); !lines || lines->size() != 1)
                        ++notYetVisible;
                }
            }));
        }
        for (auto &t : threads)
            t->start();
        for (auto &t : threads)
            t->wait();
        QCOMPARE(failures.load(), 0);
        QCOMPARE(notYetVisible.load(), 0);
        verifyChain(Threads * PerThread);
    }

    // The log remembers where the chain ends instead of reading it before every commit; lines
    // written past it by someone else (another process, or the repository directly) must make it
    // read the end again and link on, never write a second line with the same seq.
    void writersItDoesNotKnowAboutAreLinkedOnto()
    {
        AuditLog audit(*m_db, SystemClock::instance());
        QVERIFY(audit.record(tester(), QStringLiteral("a.first"), QStringLiteral("x/1"), QStringLiteral("success")));
        for (int round = 0; round < 3; ++round) {
            AuditRecord outside;
            outside.actor = QStringLiteral("system:other-process");
            outside.action = QStringLiteral("b.outside");
            outside.object = QStringLiteral("x/%1").arg(round);
            outside.outcome = QStringLiteral("success");
            auto appended = AuditRepository(*m_db).append(outside);
            QVERIFY2(appended, qPrintable(appended ? QString() : appended.error().text()));
            auto recorded = audit.record(tester(), QStringLiteral("a.after"), QStringLiteral("x/%1").arg(round),
                                         QStringLiteral("success"));
            QVERIFY2(recorded, qPrintable(recorded ? QString() : recorded.error().text()));
        }
        verifyChain(7);
        const auto lines = AuditRepository(*m_db).list(AuditRepository::Filter{.limit = 10}).value();
        QStringList actions;
        for (const AuditRecord &line : lines)
            actions.prepend(line.action);
        QCOMPARE(actions, (QStringList{u"a.first"_qs, u"b.outside"_qs, u"a.after"_qs, u"b.outside"_qs, u"a.after"_qs,
                                       u"b.outside"_qs, u"a.after"_qs}));
    }

    // Two logs over the same database at once (two processes sharing one install's database):
    // each only learns of the other's lines through a Conflict, and still no line is lost.
    void twoLogsOnOneDatabaseKeepOneChain()
    {
        Database second(m_db->config());
        AuditLog one(*m_db, SystemClock::instance());
        AuditLog two(second, SystemClock::instance());
        constexpr int PerLog = 150;
        std::atomic_int failures = 0;
        auto writer = [&](AuditLog &log, const QString &name) {
            return QThread::create([&, name] {
                for (int i = 0; i < PerLog; ++i)
                    if (!log.record(tester(), QStringLiteral("app.create"), name + QString::number(i),
                                    QStringLiteral("success")))
                        ++failures;
            });
        };
        std::unique_ptr<QThread> a(writer(one, QStringLiteral("app/one-")));
        std::unique_ptr<QThread> b(writer(two, QStringLiteral("app/two-")));
        a->start();
        b->start();
        a->wait();
        b->wait();
        QCOMPARE(failures.load(), 0);
        verifyChain(2 * PerLog);
    }

    void disabledWritesNothing()
    {
        AuditLog audit(*m_db, SystemClock::instance());
        audit.setEnabled(false);
        QVERIFY(audit.record(Actor{}, QStringLiteral("x"), QStringLiteral("y"), QStringLiteral("success")));
        QVERIFY(AuditRepository(*m_db).list(AuditRepository::Filter{})->isEmpty());
    }

    void unauthenticatedRefusalsAreCountedNotWrittenEach()
    {
        // 10 000 failed logins from one network used to be 10 000 durable lines.
        ManualClock clock;
        AuditLog audit(*m_db, clock);
        const QString login = QStringLiteral("session.failed");
        for (int i = 0; i < 10000; ++i)
            QVERIFY(audit.recordUnauthenticated(
                Actor{QStringLiteral("user:x"), QStringLiteral("203.0.113.%1").arg(i % 200)}, login,
                QStringLiteral("user/x"), {{QStringLiteral("reason"), QStringLiteral("wrong password")}}));
        // Another network is its own line; a sprayed name each is one too, up to the window's cap.
        QVERIFY(audit.recordUnauthenticated(Actor{QStringLiteral("user:x"), QStringLiteral("198.51.100.1")}, login,
                                            QStringLiteral("user/x")));
        for (int i = 0; i < 500; ++i)
            QVERIFY(audit.recordUnauthenticated(Actor{QStringLiteral("user:y"), QStringLiteral("198.51.100.2")}, login,
                                                QStringLiteral("user/name%1").arg(i)));
        auto lines = AuditRepository(*m_db).list(AuditRepository::Filter{.limit = 10000}).value();
        QCOMPARE(lines.size(), qsizetype(AuditLog::MaxRefusalLinesPerWindow));
        // Nothing more until the window is over; then one line counts each group.
        QVERIFY(audit.flushRefusals());
        QCOMPARE(AuditRepository(*m_db).list(AuditRepository::Filter{.limit = 10000})->size(), lines.size());
        clock.advance(AuditLog::RefusalWindowMs);
        QVERIFY(audit.flushRefusals());
        lines = AuditRepository(*m_db).list(AuditRepository::Filter{.limit = 10000}).value();
        QCOMPARE(lines.size(), qsizetype(AuditLog::MaxRefusalLinesPerWindow + 2));
        qint64 repeated = 0;
        qint64 suppressed = 0;
        for (const AuditRecord &line : std::as_const(lines)) {
            const QJsonObject detail = QJsonDocument::fromJson(line.detail.toUtf8()).object();
            if (line.action == login &&
                detail.value(QStringLiteral("reason")).toString() == QStringLiteral("repeated")) {
                repeated = detail.value(QStringLiteral("count")).toInteger();
                QCOMPARE(detail.value(QStringLiteral("network")).toString(), QStringLiteral("203.0.113.0/24"));
                QCOMPARE(line.object, QStringLiteral("user/x"));
            }
            if (line.action == QStringLiteral("audit.refusals_suppressed"))
                suppressed = detail.value(QStringLiteral("count")).toInteger();
        }
        QCOMPARE(repeated, qint64(9999));
        QCOMPARE(suppressed, qint64(500 - (AuditLog::MaxRefusalLinesPerWindow - 2)));
        // A new window starts afresh.
        QVERIFY(audit.recordUnauthenticated(Actor{QStringLiteral("user:x"), QStringLiteral("203.0.113.9")}, login,
                                            QStringLiteral("user/x")));
        QCOMPARE(AuditRepository(*m_db).list(AuditRepository::Filter{.limit = 10000})->size(), lines.size() + 1);
        QCOMPARE(AuditLog::sourceNetwork(QStringLiteral("2001:db8:1:2:3:4:5:6")), QStringLiteral("2001:db8:1:2::/64"));
        QCOMPARE(AuditLog::sourceNetwork(QStringLiteral("::ffff:10.1.2.3")), QStringLiteral("10.1.2.0/24"));
    }
};

QTEST_GUILESS_MAIN(TestAuditLog)
#include "tst_auditlog.moc"
