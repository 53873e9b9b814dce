// The retry loop against the Sleeper and Clock seams: linear waits, attempts, the predicate,
// the budget and cancellation, without ever sleeping (except one short real-sleeper check).
#include "core/pipelines/retry/retry.h"

#include <QElapsedTimer>
#include <QTest>
#include <thread>

using namespace pando;
using namespace pando::core;
using namespace pando::core::pipelines;

Q_DECLARE_METATYPE(pando::ErrorCode)

namespace {

// An operation that fails with the given codes in turn, then returns 42.
struct Script {
    QList<ErrorCode> failures;
    int calls = 0;
    Result<int> operator()(int attempt)
    {
        ++calls;
        if (attempt != calls)
            return fail(ErrorCode::Internal, QStringLiteral("attempt numbers skipped"));
        if (calls <= failures.size())
            return fail(failures[calls - 1], QStringLiteral("try %1 failed").arg(calls), QStringLiteral("op"));
        return 42;
    }
};

RetryOptions options(ManualSleeper *sleeper, int attempts = 5)
{
    RetryOptions o;
    o.policy.maxAttempts = attempts;
    o.policy.delayMs = 100;
    o.policy.delayStepMs = 50;
    o.policy.maxDelayMs = 220;
    o.sleeper = sleeper;
    o.what = QStringLiteral("test op");
    return o;
}

} // namespace

class TestRetry : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void delays_data()
    {
        QTest::addColumn<qint64>("delay");
        QTest::addColumn<qint64>("step");
        QTest::addColumn<qint64>("cap");
        QTest::addColumn<QList<qint64>>("expected"); // after attempts 1, 2, 3, 4
        QTest::newRow("linear") << qint64(100) << qint64(100) << qint64(10'000) << QList<qint64>{100, 200, 300, 400};
        QTest::newRow("constant") << qint64(250) << qint64(0) << qint64(10'000) << QList<qint64>{250, 250, 250, 250};
        QTest::newRow("capped") << qint64(100) << qint64(50) << qint64(220) << QList<qint64>{100, 150, 200, 220};
        QTest::newRow("no wait") << qint64(0) << qint64(0) << qint64(0) << QList<qint64>{0, 0, 0, 0};
    }
    void delays()
    {
        QFETCH(qint64, delay);
        QFETCH(qint64, step);
        QFETCH(qint64, cap);
        QFETCH(QList<qint64>, expected);
        RetryPolicy p;
        p.delayMs = delay;
        p.delayStepMs = step;
        p.maxDelayMs = cap;
        QList<qint64> got;
        for (int i = 1; i <= 4; ++i)
            got << p.delayAfter(i);
        QCOMPARE(got, expected);
    }
    void hugeAttemptNumberSaturates()
    {
        RetryPolicy p;
        p.delayMs = 1000;
        p.delayStepMs = std::numeric_limits<qint64>::max() / 4;
        p.maxDelayMs = std::numeric_limits<qint64>::max() / 2;
        QCOMPARE(p.delayAfter(std::numeric_limits<int>::max()), p.maxDelayMs);
    }

    void invalidPolicy_data()
    {
        QTest::addColumn<int>("attempts");
        QTest::addColumn<qint64>("delay");
        QTest::addColumn<qint64>("step");
        QTest::addColumn<qint64>("cap");
        QTest::addColumn<qint64>("budget");
        QTest::addColumn<QString>("where");
        QTest::newRow("zero attempts") << 0 << qint64(1) << qint64(1) << qint64(5) << qint64(0)
                                       << QStringLiteral("retry.maxAttempts");
        QTest::newRow("negative delay") << 1 << qint64(-1) << qint64(1) << qint64(5) << qint64(0)
                                        << QStringLiteral("retry.delayMs");
        QTest::newRow("negative step") << 1 << qint64(1) << qint64(-1) << qint64(5) << qint64(0)
                                       << QStringLiteral("retry.delayStepMs");
        QTest::newRow("cap below delay") << 1 << qint64(10) << qint64(1) << qint64(5) << qint64(0)
                                         << QStringLiteral("retry.maxDelayMs");
        QTest::newRow("negative budget") << 1 << qint64(1) << qint64(1) << qint64(5) << qint64(-1)
                                         << QStringLiteral("retry.maxElapsedMs");
    }
    void invalidPolicy()
    {
        QFETCH(int, attempts);
        QFETCH(qint64, delay);
        QFETCH(qint64, step);
        QFETCH(qint64, cap);
        QFETCH(qint64, budget);
        QFETCH(QString, where);
        ManualSleeper sleeper;
        RetryOptions o = options(&sleeper);
        o.policy = RetryPolicy{attempts, delay, step, cap, budget};
        Script op;
        auto r = retry(o, CancelToken{}, std::ref(op));
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::Invalid);
        QCOMPARE(r.error().where, where);
        QCOMPARE(op.calls, 0);
    }

    void scripted_data()
    {
        QTest::addColumn<QList<ErrorCode>>("failures");
        QTest::addColumn<int>("attempts");
        QTest::addColumn<bool>("succeeds");
        QTest::addColumn<int>("calls");
        QTest::addColumn<QList<qint64>>("sleeps");
        QTest::addColumn<ErrorCode>("code");
        using L = QList<ErrorCode>;
        QTest::newRow("first try") << L{} << 5 << true << 1 << QList<qint64>{} << ErrorCode::Internal;
        QTest::newRow("two transient then ok") << L{ErrorCode::Unavailable, ErrorCode::Timeout} << 5 << true << 3
                                               << QList<qint64>{100, 150} << ErrorCode::Internal;
        QTest::newRow("ok on the last attempt") << L{ErrorCode::Unavailable, ErrorCode::Unavailable} << 3 << true << 3
                                                << QList<qint64>{100, 150} << ErrorCode::Internal;
        QTest::newRow("runs out of attempts")
            << L{ErrorCode::Unavailable, ErrorCode::Unavailable, ErrorCode::Unavailable} << 3 << false << 3
            << QList<qint64>{100, 150} << ErrorCode::Unavailable;
        QTest::newRow("single attempt") << L{ErrorCode::Unavailable} << 1 << false << 1 << QList<qint64>{}
                                        << ErrorCode::Unavailable;
        QTest::newRow("capped waits") << L{ErrorCode::Timeout, ErrorCode::Timeout, ErrorCode::Timeout,
                                           ErrorCode::Timeout}
                                      << 5 << true << 5 << QList<qint64>{100, 150, 200, 220} << ErrorCode::Internal;
        QTest::newRow("not retryable: Invalid")
            << L{ErrorCode::Invalid} << 5 << false << 1 << QList<qint64>{} << ErrorCode::Invalid;
        QTest::newRow("not retryable: NotFound")
            << L{ErrorCode::NotFound} << 5 << false << 1 << QList<qint64>{} << ErrorCode::NotFound;
        QTest::newRow("not retryable: Failed")
            << L{ErrorCode::Failed} << 5 << false << 1 << QList<qint64>{} << ErrorCode::Failed;
        QTest::newRow("transient then permanent") << L{ErrorCode::Unavailable, ErrorCode::Forbidden} << 5 << false << 2
                                                  << QList<qint64>{100} << ErrorCode::Forbidden;
        QTest::newRow("cancelled is never retried")
            << L{ErrorCode::Cancelled} << 5 << false << 1 << QList<qint64>{} << ErrorCode::Cancelled;
    }
    void scripted()
    {
        QFETCH(QList<ErrorCode>, failures);
        QFETCH(int, attempts);
        QFETCH(bool, succeeds);
        QFETCH(int, calls);
        QFETCH(QList<qint64>, sleeps);
        QFETCH(ErrorCode, code);
        ManualSleeper sleeper;
        RetryOptions o = options(&sleeper, attempts);
        QList<int> told;
        o.onRetry = [&](int failed, const Error &, qint64 delay) {
            told << failed;
            QCOMPARE(delay, o.policy.delayAfter(failed));
        };
        Script op{failures};
        auto r = retry(o, CancelToken{}, std::ref(op));
        QCOMPARE(bool(r), succeeds);
        if (succeeds)
            QCOMPARE(*r, 42);
        else
            QCOMPARE(r.error().code, code);
        QCOMPARE(op.calls, calls);
        QCOMPARE(sleeper.sleeps(), sleeps);
        QCOMPARE(told.size(), sleeps.size());
    }

    void exhaustedErrorSaysSo()
    {
        ManualSleeper sleeper;
        Script op{{ErrorCode::Unavailable, ErrorCode::Unavailable}};
        auto r = retry(options(&sleeper, 2), CancelToken{}, std::ref(op));
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::Unavailable);
        QVERIFY2(r.error().message.contains(QStringLiteral("try 2 failed")), qPrintable(r.error().message));
        QVERIFY2(r.error().message.contains(QStringLiteral("gave up after 2 attempt(s)")),
                 qPrintable(r.error().message));
        QCOMPARE(r.error().where, QStringLiteral("op")); // op's own place is kept
    }

    void customPredicate()
    {
        ManualSleeper sleeper;
        RetryOptions o = options(&sleeper);
        o.retryable = [](const Error &e) {
            return e.code == ErrorCode::Conflict;
        };
        Script op{{ErrorCode::Conflict, ErrorCode::Conflict}};
        auto r = retry(o, CancelToken{}, std::ref(op));
        QVERIFY(r);
        QCOMPARE(op.calls, 3);
        Script op2{{ErrorCode::Unavailable}};
        auto r2 = retry(o, CancelToken{}, std::ref(op2));
        QVERIFY(!r2);
        QCOMPARE(op2.calls, 1);
    }

    void statusOperation()
    {
        ManualSleeper sleeper;
        int calls = 0;
        Status s = retry(options(&sleeper), CancelToken{}, [&](int) -> Status {
            if (++calls < 2)
                return fail(ErrorCode::Timeout, QStringLiteral("slow"));
            return {};
        });
        QVERIFY(s);
        QCOMPARE(calls, 2);
    }

    void cancelledBeforeFirstAttempt()
    {
        ManualSleeper sleeper;
        CancelToken cancel;
        cancel.cancel();
        Script op;
        auto r = retry(options(&sleeper), cancel, std::ref(op));
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::Cancelled);
        QCOMPARE(op.calls, 0);
        QVERIFY(r.error().message.contains(QStringLiteral("test op")));
    }
    void cancelledDuringWait_data()
    {
        QTest::addColumn<int>("cancelAtSleep");
        QTest::newRow("first wait") << 0;
        QTest::newRow("second wait") << 1;
        QTest::newRow("third wait") << 2;
    }
    void cancelledDuringWait()
    {
        QFETCH(int, cancelAtSleep);
        ManualSleeper sleeper;
        CancelToken cancel;
        sleeper.setOnSleep([&](int index, qint64) {
            if (index == cancelAtSleep)
                cancel.cancel();
        });
        Script op{QList<ErrorCode>(10, ErrorCode::Unavailable)};
        auto r = retry(options(&sleeper, 10), cancel, std::ref(op));
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::Cancelled);
        QCOMPARE(op.calls, cancelAtSleep + 1);
        QVERIFY2(r.error().message.contains(QStringLiteral("after %1 attempt(s)").arg(cancelAtSleep + 1)),
                 qPrintable(r.error().message));
    }
    void cancelledByTheOperation()
    {
        ManualSleeper sleeper;
        CancelToken cancel;
        int calls = 0;
        auto r = retry(options(&sleeper), cancel, [&](int) -> Result<int> {
            ++calls;
            cancel.cancel(); // cancelled while the attempt ran: no further attempt starts
            return fail(ErrorCode::Unavailable, QStringLiteral("down"));
        });
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::Cancelled);
        QCOMPARE(calls, 1);
    }

    void budget_data()
    {
        QTest::addColumn<qint64>("budget");
        QTest::addColumn<qint64>("attemptCostMs");
        QTest::addColumn<int>("calls");
        // waits 100, 150, 200, 220; attempts each take attemptCostMs on the manual clock
        QTest::newRow("no budget") << qint64(0) << qint64(0) << 5;
        QTest::newRow("room for two waits") << qint64(260) << qint64(0) << 3;
        QTest::newRow("exact fit") << qint64(250) << qint64(0) << 3;
        QTest::newRow("slow attempts eat the budget") << qint64(400) << qint64(100) << 2;
        QTest::newRow("first wait already too long") << qint64(50) << qint64(0) << 1;
    }
    void budget()
    {
        QFETCH(qint64, budget);
        QFETCH(qint64, attemptCostMs);
        QFETCH(int, calls);
        ManualClock clock;
        ManualSleeper sleeper(&clock);
        RetryOptions o = options(&sleeper);
        o.clock = &clock;
        o.policy.maxElapsedMs = budget;
        int made = 0;
        auto r = retry(o, CancelToken{}, [&](int) -> Result<int> {
            ++made;
            clock.advance(attemptCostMs);
            return fail(ErrorCode::Unavailable, QStringLiteral("down"));
        });
        QVERIFY(!r);
        QCOMPARE(made, calls);
        QCOMPARE(r.error().code, ErrorCode::Unavailable);
        if (budget > 0)
            QVERIFY2(r.error().message.contains(QStringLiteral("budget")), qPrintable(r.error().message));
    }

    void manualClockMovesWithWaits()
    {
        ManualClock clock(1000);
        ManualSleeper sleeper(&clock);
        Script op{{ErrorCode::Unavailable, ErrorCode::Unavailable}};
        auto r = retry(options(&sleeper), CancelToken{}, std::ref(op));
        QVERIFY(r);
        QCOMPARE(clock.nowMs(), qint64(1000 + 100 + 150));
    }

    void systemSleeperHonoursCancel()
    {
        SystemSleeper sleeper;
        QElapsedTimer t;
        t.start();
        QVERIFY(sleeper.sleep(20, CancelToken{}));
        QVERIFY(t.elapsed() >= 19);
        CancelToken cancel;
        std::thread canceller([cancel] {
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
            cancel.cancel();
        });
        t.restart();
        QVERIFY(!sleeper.sleep(60'000, cancel));
        canceller.join();
        QVERIFY2(t.elapsed() < 5'000, "cancel did not cut the wait short");
    }
};

QTEST_GUILESS_MAIN(TestRetry)
#include "tst_retry.moc"
