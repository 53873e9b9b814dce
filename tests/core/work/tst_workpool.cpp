// The durable work pool: jobs of different keys run side by side on the bounded pool, jobs of
// one key one after another, and work a dead process left running is picked up again.

#include "core/common/clock.h"
#include "core/state/repositories.h"
#include "core/work/workpool.h"

#include <QElapsedTimer>
#include <QMutex>
#include <QTemporaryDir>
#include <QTest>
#include <atomic>

using namespace pando;
using namespace pando::core;

class TestWorkPool : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void differentKeysRunInParallel();
    void oneKeyRunsOneAtATime();
    void failuresAreRecorded();
    void cancelReachesTheRunningJob();
    void workOfADeadProcessIsPickedUp();

private:
    static bool waitFor(const std::function<bool()> &condition, int timeoutMs = 10000);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<Database> m_db;
};

bool TestWorkPool::waitFor(const std::function<bool()> &condition, int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while (!condition()) {
        if (timer.elapsed() > timeoutMs)
            return false;
        QTest::qWait(5);
    }
    return true;
}

void TestWorkPool::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    DatabaseConfig config;
    config.sqlitePath = m_dir->path() + QStringLiteral("/pando.db");
    m_db = std::make_unique<Database>(config);
    QVERIFY(m_db->open());
}

void TestWorkPool::cleanup()
{
    m_db.reset();
    m_dir.reset();
}

void TestWorkPool::differentKeysRunInParallel()
{
    WorkPool pool(*m_db, SystemClock::instance(), 2);
    std::atomic_int running = 0;
    std::atomic_int peak = 0;
    std::atomic_bool release = false;
    std::atomic_int done = 0;
    pool.setHandler(QStringLiteral("t"), [&](const JobRecord &, const CancelToken &) -> Status {
        peak = std::max(peak.load(), ++running);
        while (!release)
            QThread::msleep(2);
        --running;
        ++done;
        return {};
    });
    pool.start();
    QVERIFY(pool.enqueue(QStringLiteral("t"), QStringLiteral("app-a"), {}));
    QVERIFY(pool.enqueue(QStringLiteral("t"), QStringLiteral("app-b"), {}));
    QVERIFY2(waitFor([&] { return running == 2; }), "two apps' jobs run at once");
    release = true;
    QVERIFY(waitFor([&] { return done == 2; }));
    QCOMPARE(peak.load(), 2);
}

void TestWorkPool::oneKeyRunsOneAtATime()
{
    WorkPool pool(*m_db, SystemClock::instance(), 3);
    std::atomic_int running = 0;
    std::atomic_int peak = 0;
    QMutex mutex;
    QStringList order;
    pool.setHandler(QStringLiteral("t"), [&](const JobRecord &job, const CancelToken &) -> Status {
        peak = std::max(peak.load(), ++running);
        QThread::msleep(20);
        {
            QMutexLocker lock(&mutex);
            order << job.payload;
        }
        --running;
        return {};
    });
    pool.start();
    for (int i = 0; i < 5; ++i)
        QVERIFY(pool.enqueue(QStringLiteral("t"), QStringLiteral("same-app"), QString::number(i)));
    QVERIFY(waitFor([&] {
        QMutexLocker lock(&mutex);
        return order.size() == 5;
    }));
    QCOMPARE(peak.load(), 1);
    QCOMPARE(order, (QStringList{QStringLiteral("0"), QStringLiteral("1"), QStringLiteral("2"), QStringLiteral("3"),
                                 QStringLiteral("4")}));
}

void TestWorkPool::failuresAreRecorded()
{
    WorkPool pool(*m_db, SystemClock::instance(), 1);
    pool.setHandler(QStringLiteral("t"), [](const JobRecord &, const CancelToken &) -> Status {
        return fail(ErrorCode::Failed, QStringLiteral("the build broke"));
    });
    pool.start();
    auto id = pool.enqueue(QStringLiteral("t"), QStringLiteral("k"), {});
    QVERIFY(id);
    JobRepository jobs(*m_db);
    QVERIFY(waitFor([&] { return jobs.find(*id)->state == QLatin1String("failed"); }));
    QCOMPARE(jobs.find(*id)->error, QStringLiteral("the build broke"));

    // A kind nobody handles fails with a reason instead of hanging in the queue.
    auto orphan = pool.enqueue(QStringLiteral("unknown-kind"), QStringLiteral("k2"), {});
    QVERIFY(waitFor([&] { return jobs.find(*orphan)->state == QLatin1String("failed"); }));
    QVERIFY(jobs.find(*orphan)->error.contains(QLatin1String("unknown-kind")));
}

void TestWorkPool::cancelReachesTheRunningJob()
{
    WorkPool pool(*m_db, SystemClock::instance(), 1);
    std::atomic_bool started = false;
    pool.setHandler(QStringLiteral("t"), [&](const JobRecord &, const CancelToken &cancel) -> Status {
        started = true;
        while (!cancel.isCancelled())
            QThread::msleep(2);
        return fail(ErrorCode::Cancelled, QStringLiteral("cancelled"));
    });
    pool.start();
    auto id = pool.enqueue(QStringLiteral("t"), QStringLiteral("k"), {});
    QVERIFY(waitFor([&] { return started.load(); }));
    QVERIFY(pool.cancel(*id));
    JobRepository jobs(*m_db);
    QVERIFY(waitFor([&] { return jobs.find(*id)->state == QLatin1String("failed"); }));
    QVERIFY(!pool.cancel(*id));
}

void TestWorkPool::workOfADeadProcessIsPickedUp()
{
    // A job another process claimed and never finished, as after SIGKILL.
    JobRepository jobs(*m_db);
    auto id = jobs.enqueue(QStringLiteral("t"), QStringLiteral("k"), QStringLiteral("payload"), 1);
    QVERIFY(id);
    auto claimed = jobs.claimNext(QStringLiteral("dead-process"), 2);
    QVERIFY(claimed && claimed->has_value());

    WorkPool pool(*m_db, SystemClock::instance(), 1);
    std::atomic_int seen = 0;
    pool.setHandler(QStringLiteral("t"), [&](const JobRecord &job, const CancelToken &) -> Status {
        if (job.payload == QLatin1String("payload") && job.attempts >= 1)
            ++seen;
        return {};
    });
    auto abandoned = jobs.requeueAbandoned(pool.owner(), 3);
    QVERIFY(abandoned);
    QCOMPARE(abandoned->size(), 1);
    pool.start();
    QVERIFY(waitFor([&] { return seen == 1; }));
    QVERIFY(waitFor([&] { return jobs.find(*id)->state == QLatin1String("done"); }));
}

QTEST_GUILESS_MAIN(TestWorkPool)
#include "tst_workpool.moc"
