// The audit log under concurrent writers: group commit keeps every line, in one unbroken chain,
// and each caller returns only once its own line is committed.
#include "core/audit/auditlog.h"
#include "core/state/repositories.h"

#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <atomic>

using namespace pando;
using namespace pando::core;

class TestAuditLog : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void concurrentWritersShareCommitsAndKeepTheChain()
    {
        QTemporaryDir dir;
        DatabaseConfig config;
        config.sqlitePath = dir.path() + QStringLiteral("/pando.db");
        Database db(config);
        QVERIFY(db.open());
        AuditLog audit(db, SystemClock::instance());
        constexpr int Threads = 8;
        constexpr int PerThread = 150;
        std::atomic_int failures = 0;
        std::atomic_int notYetVisible = 0;
        std::vector<std::unique_ptr<QThread>> threads;
        for (int t = 0; t < Threads; ++t) {
            threads.emplace_back(QThread::create([&, t] {
                AuditRepository reader(db);
                for (int i = 0; i < PerThread; ++i) {
                    const QString object = QStringLiteral("app/t%1-%2").arg(t).arg(i);
                    if (!audit.record(Actor::system(QStringLiteral("test")), QStringLiteral("app.create"), object,
                                      QStringLiteral("success")))
                        ++failures;
                    // Durable before record() returns: the line is there for any reader.
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
        auto newest = AuditRepository(db).list(AuditRepository::Filter{.limit = 1});
        QCOMPARE(newest->first().seq, qint64(Threads * PerThread));
        auto broken = AuditRepository(db).verify();
        QVERIFY(broken);
        QVERIFY2(!broken->has_value(), "the chain holds");
    }

    void disabledWritesNothing()
    {
        QTemporaryDir dir;
        DatabaseConfig config;
        config.sqlitePath = dir.path() + QStringLiteral("/pando.db");
        Database db(config);
        QVERIFY(db.open());
        AuditLog audit(db, SystemClock::instance());
        audit.setEnabled(false);
        QVERIFY(audit.record(Actor{}, QStringLiteral("x"), QStringLiteral("y"), QStringLiteral("success")));
        QVERIFY(AuditRepository(db).list(AuditRepository::Filter{})->isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestAuditLog)
#include "tst_auditlog.moc"
