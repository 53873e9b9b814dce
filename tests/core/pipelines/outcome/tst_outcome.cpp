// Every row of outcome.h's tables: classification of errors and task results, combination of
// children, hook dispatch and attempts.
#include "core/pipelines/outcome/outcome.h"

#include <QTest>

using namespace pando;
using namespace pando::core::pipelines;
using pando::adapters::TaskResult;

Q_DECLARE_METATYPE(pando::ErrorCode)
Q_DECLARE_METATYPE(pando::core::pipelines::Outcome)
Q_DECLARE_METATYPE(QList<pando::core::pipelines::Outcome>)
Q_DECLARE_METATYPE(QList<pando::core::pipelines::Hook>)

namespace {
constexpr Outcome S = Outcome::Succeeded;
constexpr Outcome F = Outcome::Failed;
constexpr Outcome E = Outcome::Errored;
constexpr Outcome A = Outcome::Aborted;
} // namespace

class TestOutcome : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void names_data()
    {
        QTest::addColumn<Outcome>("outcome");
        QTest::addColumn<QString>("name");
        QTest::newRow("succeeded") << S << QStringLiteral("succeeded");
        QTest::newRow("failed") << F << QStringLiteral("failed");
        QTest::newRow("errored") << E << QStringLiteral("errored");
        QTest::newRow("aborted") << A << QStringLiteral("aborted");
    }
    void names()
    {
        QFETCH(Outcome, outcome);
        QFETCH(QString, name);
        QCOMPARE(outcomeName(outcome), name);
        QCOMPARE(parseOutcome(name), std::optional<Outcome>(outcome));
    }
    void parseUnknown()
    {
        QVERIFY(!parseOutcome(QStringLiteral("green")));
        QVERIFY(!parseOutcome(QStringLiteral("Succeeded")));
    }

    void fromError_data()
    {
        QTest::addColumn<ErrorCode>("code");
        QTest::addColumn<bool>("aborted");
        QTest::addColumn<bool>("timedOut");
        QTest::addColumn<Outcome>("expected");
        struct Row {
            const char *name;
            ErrorCode code;
            Outcome expected;
        };
        const Row rows[] = {
            {"Invalid (configuration mistake)", ErrorCode::Invalid, E},
            {"NotFound (image missing)", ErrorCode::NotFound, E},
            {"Conflict", ErrorCode::Conflict, E},
            {"TooLarge", ErrorCode::TooLarge, E},
            {"Unauthorized", ErrorCode::Unauthorized, E},
            {"Forbidden", ErrorCode::Forbidden, E},
            {"Unavailable (engine down)", ErrorCode::Unavailable, E},
            {"Timeout", ErrorCode::Timeout, E},
            {"Cancelled", ErrorCode::Cancelled, A},
            {"Failed (script said no)", ErrorCode::Failed, F},
            {"Internal", ErrorCode::Internal, E},
        };
        for (const Row &r : rows) {
            QTest::addRow("%s", r.name) << r.code << false << false << r.expected;
            // The run's abort explains whatever the step said while being torn down.
            QTest::addRow("%s, run aborted", r.name) << r.code << true << false << A;
            QTest::addRow("%s, run aborted while timing out", r.name) << r.code << true << true << A;
            // A step timeout is an error, even when the runner reports it as a cancellation.
            QTest::addRow("%s, step timed out", r.name) << r.code << false << true << E;
        }
    }
    void fromError()
    {
        QFETCH(ErrorCode, code);
        QFETCH(bool, aborted);
        QFETCH(bool, timedOut);
        QFETCH(Outcome, expected);
        const Interruption why{aborted, timedOut};
        const Error error{code, QStringLiteral("m")};
        QCOMPARE(outcomeOfError(error, why), expected);
        QCOMPARE(outcomeOfStatus(Status(std::unexpected(error)), why), expected);
        QCOMPARE(outcomeOfTask(Result<TaskResult>(std::unexpected(error)), why), expected);
    }

    void fromTask_data()
    {
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<bool>("taskTimedOut");
        QTest::addColumn<bool>("aborted");
        QTest::addColumn<bool>("stepTimedOut");
        QTest::addColumn<Outcome>("expected");
        QTest::newRow("exit 0") << 0 << false << false << false << S;
        QTest::newRow("exit 1") << 1 << false << false << false << F;
        QTest::newRow("exit 2") << 2 << false << false << false << F;
        QTest::newRow("exit 137 (killed)") << 137 << false << false << false << F;
        QTest::newRow("exit -1 (no code)") << -1 << false << false << false << F;
        QTest::newRow("runner's timeout") << -1 << true << false << false << E;
        QTest::newRow("step timeout, exit 0") << 0 << false << false << true << E;
        QTest::newRow("step timeout, exit 143") << 143 << false << false << true << E;
        QTest::newRow("aborted, exit 137") << 137 << false << true << false << A;
        QTest::newRow("aborted, exit 0") << 0 << false << true << false << A;
        QTest::newRow("aborted while timing out") << -1 << true << true << true << A;
    }
    void fromTask()
    {
        QFETCH(int, exitCode);
        QFETCH(bool, taskTimedOut);
        QFETCH(bool, aborted);
        QFETCH(bool, stepTimedOut);
        QFETCH(Outcome, expected);
        TaskResult result;
        result.exitCode = exitCode;
        result.timedOut = taskTimedOut;
        const Interruption why{aborted, stepTimedOut};
        QCOMPARE(outcomeOfTask(result, why), expected);
        QCOMPARE(outcomeOfTask(Result<TaskResult>(result), why), expected);
    }

    void fromStatus_data()
    {
        QTest::addColumn<bool>("aborted");
        QTest::addColumn<bool>("timedOut");
        QTest::addColumn<Outcome>("expected");
        QTest::newRow("ok") << false << false << S;
        QTest::newRow("ok but aborted") << true << false << A;
        QTest::newRow("ok but timed out") << false << true << E;
    }
    void fromStatus()
    {
        QFETCH(bool, aborted);
        QFETCH(bool, timedOut);
        QFETCH(Outcome, expected);
        QCOMPARE(outcomeOfStatus(Status{}, Interruption{aborted, timedOut}), expected);
    }

    void parallel_data()
    {
        QTest::addColumn<QList<Outcome>>("children");
        QTest::addColumn<Outcome>("expected");
        QTest::newRow("no children") << QList<Outcome>{} << S;
        QTest::newRow("all succeeded") << QList<Outcome>{S, S, S} << S;
        QTest::newRow("one failed") << QList<Outcome>{S, F, S} << F;
        QTest::newRow("failed and errored") << QList<Outcome>{F, E} << E;
        QTest::newRow("errored then failed") << QList<Outcome>{E, F, S} << E;
        QTest::newRow("aborted beats errored") << QList<Outcome>{E, A, F} << A;
        QTest::newRow("aborted alone") << QList<Outcome>{A} << A;
        QTest::newRow("aborted first") << QList<Outcome>{A, S} << A;
    }
    void parallel()
    {
        QFETCH(QList<Outcome>, children);
        QFETCH(Outcome, expected);
        QCOMPARE(combineParallel(children), expected);
        // The order children finished in never matters.
        QList<Outcome> reversed(children.crbegin(), children.crend());
        QCOMPARE(combineParallel(reversed), expected);
    }

    void sequence_data()
    {
        QTest::addColumn<QList<Outcome>>("children");
        QTest::addColumn<Outcome>("expected");
        QTest::newRow("empty plan") << QList<Outcome>{} << S;
        QTest::newRow("all succeeded") << QList<Outcome>{S, S} << S;
        QTest::newRow("stops at failure") << QList<Outcome>{S, F} << F;
        QTest::newRow("first non-success wins") << QList<Outcome>{F, E} << F;
        QTest::newRow("errored") << QList<Outcome>{S, E, S} << E;
        QTest::newRow("aborted") << QList<Outcome>{S, A} << A;
    }
    void sequence()
    {
        QFETCH(QList<Outcome>, children);
        QFETCH(Outcome, expected);
        QCOMPARE(combineSequence(children), expected);
    }

    void tryStep_data()
    {
        QTest::addColumn<Outcome>("child");
        QTest::addColumn<Outcome>("expected");
        QTest::newRow("succeeded") << S << S;
        QTest::newRow("failed is masked") << F << S;
        QTest::newRow("errored is masked") << E << S;
        QTest::newRow("aborted is not") << A << A;
    }
    void tryStep()
    {
        QFETCH(Outcome, child);
        QFETCH(Outcome, expected);
        QCOMPARE(combineTry(child), expected);
    }

    void withHook_data()
    {
        QTest::addColumn<Outcome>("step");
        QTest::addColumn<Outcome>("hook");
        QTest::addColumn<Outcome>("expected");
        const Outcome all[] = {S, F, E, A};
        for (Outcome step : all) {
            for (Outcome hook : all) {
                const Outcome expected = severity(hook) > severity(step) ? hook : step;
                QTest::addRow("step %s, hook %s", qPrintable(outcomeName(step)), qPrintable(outcomeName(hook)))
                    << step << hook << expected;
            }
        }
    }
    void withHook()
    {
        QFETCH(Outcome, step);
        QFETCH(Outcome, hook);
        QFETCH(Outcome, expected);
        QCOMPARE(combineWithHook(step, hook), expected);
    }
    void hookRowsSpelledOut()
    {
        // The table rows people ask about, spelled out.
        QCOMPARE(combineWithHook(S, F), F); // a failing on_success hook fails the step
        QCOMPARE(combineWithHook(F, S), F); // on_failure does not recover the failure
        QCOMPARE(combineWithHook(F, E), E); // an erroring on_failure hook errors the step
        QCOMPARE(combineWithHook(E, S), E);
        QCOMPARE(combineWithHook(A, S), A);
    }

    void hooks_data()
    {
        QTest::addColumn<Outcome>("outcome");
        QTest::addColumn<QList<Hook>>("hooks");
        QTest::addColumn<QStringList>("keys");
        QTest::newRow("succeeded") << S << QList<Hook>{Hook::OnSuccess, Hook::Ensure}
                                   << QStringList{QStringLiteral("on_success"), QStringLiteral("ensure")};
        QTest::newRow("failed") << F << QList<Hook>{Hook::OnFailure, Hook::Ensure}
                                << QStringList{QStringLiteral("on_failure"), QStringLiteral("ensure")};
        QTest::newRow("errored") << E << QList<Hook>{Hook::OnError, Hook::Ensure}
                                 << QStringList{QStringLiteral("on_error"), QStringLiteral("ensure")};
        QTest::newRow("aborted") << A << QList<Hook>{Hook::OnAbort, Hook::Ensure}
                                 << QStringList{QStringLiteral("on_abort"), QStringLiteral("ensure")};
    }
    void hooks()
    {
        QFETCH(Outcome, outcome);
        QFETCH(QList<Hook>, hooks);
        QFETCH(QStringList, keys);
        QCOMPARE(hooksFor(outcome), hooks);
        QStringList got;
        for (Hook h : hooksFor(outcome))
            got << hookKey(h);
        QCOMPARE(got, keys);
    }

    void attempts_data()
    {
        QTest::addColumn<Outcome>("outcome");
        QTest::addColumn<bool>("retry");
        QTest::addColumn<bool>("infrastructure");
        QTest::newRow("succeeded") << S << false << false;
        QTest::newRow("failed") << F << true << false;
        QTest::newRow("errored") << E << true << true;
        QTest::newRow("aborted") << A << false << false;
    }
    void attempts()
    {
        QFETCH(Outcome, outcome);
        QFETCH(bool, retry);
        QFETCH(bool, infrastructure);
        QCOMPARE(shouldRetryAttempt(outcome), retry);
        QCOMPARE(isInfrastructureError(outcome), infrastructure);
    }

    void severityOrder()
    {
        QVERIFY(severity(S) < severity(F));
        QVERIFY(severity(F) < severity(E));
        QVERIFY(severity(E) < severity(A));
        QCOMPARE(worst(S, A), A);
        QCOMPARE(worst(A, S), A);
        QCOMPARE(worst(F, F), F);
    }
};

QTEST_GUILESS_MAIN(TestOutcome)
#include "tst_outcome.moc"
