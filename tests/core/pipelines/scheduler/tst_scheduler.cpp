// The run scheduler with a scripted executor: max-runs, pause, abort, the circuit breaker,
// restart recovery and the shutdown grace, on a real SQLite state store.
#include "core/pipelines/scheduler/scheduler.h"
#include "core/state/pipelinerepositories.h"
#include "tests/support/vocabtesting.h"

#include <QElapsedTimer>
#include <QMutex>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <atomic>

using namespace pando;
using namespace pando::core;
using namespace pando::core::pipelines;

namespace {

// Each run does what its job name says: "ok", "fail", "error", "block" (until released or
// cancelled), "slow" (200 ms).
class ScriptedExecutor : public RunExecutor {
public:
    std::atomic_int running = 0;
    std::atomic_int peak = 0;
    std::atomic_bool release = false;
    QMutex mutex;
    QStringList executed;
    struct Span {
        QString job;
        qint64 from, to;
    };
    QList<Span> spans; // when each run ran, on one clock
    QElapsedTimer clock;
    ScriptedExecutor() { clock.start(); }

    // The most runs of these jobs that ran at one moment.
    int peakOf(const QStringList &jobs)
    {
        QMutexLocker lock(&mutex);
        int peak = 0;
        for (const Span &at : std::as_const(spans)) {
            int together = 0;
            for (const Span &other : std::as_const(spans))
                together += jobs.contains(other.job) && other.from <= at.from && at.from < other.to;
            peak = std::max(peak, together);
        }
        return peak;
    }

    Result execute(const RunRecord &run, const CancelToken &cancel) override
    {
        {
            QMutexLocker lock(&mutex);
            executed << run.id;
        }
        peak = std::max(peak.load(), ++running);
        Result result;
        if (run.job == QLatin1String("fail")) {
            result = {Outcome::Failed, {}};
        } else if (run.job == QLatin1String("error")) {
            result = {Outcome::Errored, QStringLiteral("engine down"), true};
        } else if (run.job == QLatin1String("broken")) {
            // What a pushed task file can do: an error of the pipeline's own making.
            result = {Outcome::Errored, QStringLiteral("task file ci/t.yml: unknown key"), false};
        } else if (run.job == QLatin1String("block")) {
            while (!release && !cancel.isCancelled())
                QThread::msleep(2);
            result = cancel.isCancelled() ? Result{Outcome::Aborted, {}} : Result{Outcome::Succeeded, {}};
        } else if (run.job.startsWith(QLatin1String("slow"))) {
            const qint64 from = clock.elapsed();
            QThread::msleep(200);
            QMutexLocker lock(&mutex);
            spans.append(Span{run.job, from, clock.elapsed()});
        }
        --running;
        return result;
    }
    int count()
    {
        QMutexLocker lock(&mutex);
        return int(executed.size());
    }
};

bool waitFor(const std::function<bool()> &condition, int timeoutMs = 10000)
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

} // namespace

class TestScheduler : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<Database> m_db;
    EventBus m_events;

    RunStatus status(const QString &id) { return RunRepository(*m_db).find(id)->status; }

private Q_SLOTS:
    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        DatabaseConfig config;
        config.sqlitePath = m_dir->path() + QStringLiteral("/pando.db");
        m_db = std::make_unique<Database>(config);
        QVERIFY(m_db->open());
        QVERIFY(PipelineRepository(*m_db).set(QStringLiteral("ci"), QStringLiteral("jobs: []"), {}, 1));
    }

    void cleanup()
    {
        m_db.reset();
        m_dir.reset();
    }

    void runsToTheEndAndRecordsOutcomes()
    {
        ScriptedExecutor executor;
        Scheduler scheduler(*m_db, SystemClock::instance(), m_events, executor, {.workers = 2});
        QVERIFY(scheduler.start());
        const auto ok =
            scheduler.enqueue(QStringLiteral("ci"), QStringLiteral("ok"), QStringLiteral("manual"), {}, {}, 1);
        const auto bad =
            scheduler.enqueue(QStringLiteral("ci"), QStringLiteral("fail"), QStringLiteral("manual"), {}, {}, 1);
        QVERIFY(ok && bad);
        QVERIFY(
            waitFor([&] { return status(ok->id) == RunStatus::Succeeded && status(bad->id) == RunStatus::Failed; }));
    }

    void maxRunsLimitsConcurrentRuns()
    {
        ScriptedExecutor executor;
        Scheduler scheduler(*m_db, SystemClock::instance(), m_events, executor, {.workers = 4});
        QVERIFY(PipelineRepository(*m_db).setMaxRuns(QStringLiteral("ci"), 2, 1));
        QVERIFY(scheduler.start());
        for (int i = 0; i < 6; ++i)
            QVERIFY(scheduler.enqueue(QStringLiteral("ci"), QStringLiteral("slow%1").arg(i), QStringLiteral("manual"),
                                      {}, {}, 1));
        QVERIFY(waitFor([&] { return executor.count() == 6 && executor.running == 0; }, 20000));
        QCOMPARE(executor.peak.load(), 2);
    }

    // Each job's max_in_flight and serial_groups, with the workers to run more at once.
    void jobsRunAsManyAtOnceAsTheirSettingsSay()
    {
        QMap<QString, JobSettings> jobs;
        jobs.insert(QStringLiteral("slow-unit"), JobSettings{});
        jobs.insert(QStringLiteral("slow-e2e"), JobSettings{.maxInFlight = 2});
        jobs.insert(QStringLiteral("slow-staging"),
                    JobSettings{.maxInFlight = 1, .serialGroups = {QStringLiteral("deploy")}});
        jobs.insert(QStringLiteral("slow-prod"),
                    JobSettings{.maxInFlight = 1, .serialGroups = {QStringLiteral("deploy")}});
        QVERIFY(
            PipelineRepository(*m_db).set(QStringLiteral("ci"), QStringLiteral("jobs: [x]"), {}, 2, {.jobs = jobs}));
        ScriptedExecutor executor;
        Scheduler scheduler(*m_db, SystemClock::instance(), m_events, executor, {.workers = 8});
        QVERIFY(scheduler.pause(QStringLiteral("ci"), QStringLiteral("until all are queued")));
        QVERIFY(scheduler.start());
        QStringList deploys;
        for (int i = 0; i < 3; ++i) {
            for (const char *job : {"slow-unit", "slow-e2e", "slow-staging", "slow-prod"}) {
                auto run = scheduler.enqueue(QStringLiteral("ci"), QString::fromLatin1(job), QStringLiteral("manual"),
                                             {}, {}, 1);
                QVERIFY(run);
                if (run->job.contains(QLatin1String("staging")) || run->job.contains(QLatin1String("prod")))
                    deploys << run->id;
            }
        }
        QVERIFY(scheduler.unpause(QStringLiteral("ci")));
        QVERIFY(waitFor([&] { return executor.count() == 12 && executor.running == 0; }, 20000));
        QVERIFY(executor.peakOf({QStringLiteral("slow-unit")}) >= 2); // no limit: side by side
        QCOMPARE(executor.peakOf({QStringLiteral("slow-e2e")}), 2);
        QCOMPARE(executor.peakOf({QStringLiteral("slow-staging"), QStringLiteral("slow-prod")}), 1);
        // The group's runs went in the order they were queued.
        QStringList ran;
        for (const QString &id : std::as_const(executor.executed))
            if (deploys.contains(id))
                ran << id;
        QCOMPARE(ran, deploys);
    }

    // build_log_retention is applied as each run of the job ends.
    void aFinishedRunRemovesTheLogsItsJobNoLongerKeeps()
    {
        QMap<QString, JobSettings> jobs;
        jobs.insert(QStringLiteral("ok"), JobSettings{.keepLogsOfRuns = 2});
        QVERIFY(
            PipelineRepository(*m_db).set(QStringLiteral("ci"), QStringLiteral("jobs: [ok]"), {}, 2, {.jobs = jobs}));
        ScriptedExecutor executor;
        Scheduler scheduler(*m_db, SystemClock::instance(), m_events, executor, {.workers = 1});
        QVERIFY(scheduler.start());
        RunRepository runs(*m_db);
        QStringList ids;
        for (int i = 0; i < 4; ++i) {
            auto run =
                scheduler.enqueue(QStringLiteral("ci"), QStringLiteral("ok"), QStringLiteral("manual"), {}, {}, 1);
            QVERIFY(run);
            QVERIFY(runs.appendEvents(run->id, {RunEventRecord{run->id, 0, 1, {}, QStringLiteral("output"), {}}}));
            ids << run->id;
            QVERIFY(waitFor([&] { return status(run->id) == RunStatus::Succeeded; }));
        }
        QVERIFY(waitFor([&] { return runs.find(ids[1])->logRemovedMs > 0; }));
        QVERIFY(runs.events(ids[0], 0, 10)->isEmpty());
        QVERIFY(runs.events(ids[1], 0, 10)->isEmpty());
        QCOMPARE(runs.events(ids[2], 0, 10)->size(), 1);
        QCOMPARE(runs.events(ids[3], 0, 10)->size(), 1);
    }

    void pausedPipelinesWait()
    {
        ScriptedExecutor executor;
        Scheduler scheduler(*m_db, SystemClock::instance(), m_events, executor, {.workers = 2, .idlePollMs = 50});
        QVERIFY(scheduler.pause(QStringLiteral("ci"), QStringLiteral("by test")));
        QVERIFY(scheduler.start());
        const auto run =
            scheduler.enqueue(QStringLiteral("ci"), QStringLiteral("ok"), QStringLiteral("manual"), {}, {}, 1);
        QTest::qWait(200);
        QCOMPARE(status(run->id), RunStatus::Queued);
        QVERIFY(scheduler.unpause(QStringLiteral("ci")));
        QVERIFY(waitFor([&] { return status(run->id) == RunStatus::Succeeded; }));
    }

    void abortQueuedAndRunning()
    {
        ScriptedExecutor executor;
        Scheduler scheduler(*m_db, SystemClock::instance(), m_events, executor, {.workers = 1});
        QVERIFY(scheduler.start());
        const auto blocking =
            scheduler.enqueue(QStringLiteral("ci"), QStringLiteral("block"), QStringLiteral("manual"), {}, {}, 1);
        QVERIFY(waitFor([&] { return executor.running == 1; }));
        const auto queued =
            scheduler.enqueue(QStringLiteral("ci"), QStringLiteral("ok"), QStringLiteral("manual"), {}, {}, 1);
        QVERIFY(scheduler.abort(queued->id, QStringLiteral("token:admin")));
        QCOMPARE(status(queued->id), RunStatus::Aborted);
        QVERIFY(scheduler.abort(blocking->id, QStringLiteral("token:admin")));
        QVERIFY(waitFor([&] { return status(blocking->id) == RunStatus::Aborted; }));
        QTest::qWait(100);
        QCOMPARE(executor.count(), 1); // the aborted queued run never ran
        QCOMPARE(scheduler.abort(blocking->id, {}).error().code, ErrorCode::Conflict);
    }

    void circuitBreakerPausesAfterRepeatedErrors()
    {
        ScriptedExecutor executor;
        Scheduler scheduler(*m_db, SystemClock::instance(), m_events, executor, {.workers = 1, .breakerThreshold = 3});
        QVERIFY(scheduler.start());
        // A failure (the task said no) does not count; errors in a row do.
        for (const char *job : {"error", "fail", "error", "error", "error", "ok"})
            QVERIFY(
                scheduler.enqueue(QStringLiteral("ci"), QString::fromLatin1(job), QStringLiteral("manual"), {}, {}, 1));
        QVERIFY(waitFor([&] { return PipelineRepository(*m_db).find(QStringLiteral("ci"))->paused; }));
        const PipelineRecord p = *PipelineRepository(*m_db).find(QStringLiteral("ci"));
        QVERIFY2(p.pausedReason.contains(QLatin1String("engine down")), qPrintable(p.pausedReason));
        QTest::qWait(100);
        QCOMPARE(executor.count(), 5); // the run after the breaker opened waits
    }

    void errorsOfThePipelinesOwnMakingDoNotOpenTheBreaker()
    {
        ScriptedExecutor executor;
        Scheduler scheduler(*m_db, SystemClock::instance(), m_events, executor, {.workers = 1, .breakerThreshold = 3});
        QVERIFY(scheduler.start());
        // Anyone who can push a broken task file errors runs; that pauses nothing, and does not
        // keep a count towards the next infrastructure error either.
        for (const char *job : {"broken", "broken", "broken", "error", "broken", "error", "broken", "ok"})
            QVERIFY(
                scheduler.enqueue(QStringLiteral("ci"), QString::fromLatin1(job), QStringLiteral("manual"), {}, {}, 1));
        QVERIFY(waitFor([&] { return executor.count() == 8; }));
        QTest::qWait(100);
        const PipelineRecord p = *PipelineRepository(*m_db).find(QStringLiteral("ci"));
        QVERIFY2(!p.paused, qPrintable(p.pausedReason));
    }

    void restartSettlesInterruptedRunsAndKeepsQueuedOnes()
    {
        // A run claimed by a process that died, and one still queued.
        RunRepository runs(*m_db);
        RunRecord r;
        r.pipeline = QStringLiteral("ci");
        r.job = QStringLiteral("ok");
        const RunRecord interrupted = runs.enqueue(r).value();
        const RunRecord queued = runs.enqueue(r).value();
        QVERIFY(runs.claimNext(QStringLiteral("ci"), 1, QStringLiteral("dead-process"), 1).value());

        ScriptedExecutor executor;
        Scheduler scheduler(*m_db, SystemClock::instance(), m_events, executor, {.workers = 2});
        QVERIFY(scheduler.start());
        QCOMPARE(status(interrupted.id), RunStatus::Errored);
        QVERIFY(runs.find(interrupted.id)->error.contains(QLatin1String("interrupted")));
        QVERIFY(waitFor([&] { return status(queued.id) == RunStatus::Succeeded; }));
        QCOMPARE(executor.executed, QStringList{queued.id}); // the interrupted run is not run again
    }

    void shutdownGivesGraceThenAborts()
    {
        ScriptedExecutor executor;
        Scheduler scheduler(*m_db, SystemClock::instance(), m_events, executor, {.workers = 1, .shutdownGraceMs = 200});
        QVERIFY(scheduler.start());
        const auto blocking =
            scheduler.enqueue(QStringLiteral("ci"), QStringLiteral("block"), QStringLiteral("manual"), {}, {}, 1);
        QVERIFY(waitFor([&] { return executor.running == 1; }));
        const auto queued =
            scheduler.enqueue(QStringLiteral("ci"), QStringLiteral("ok"), QStringLiteral("manual"), {}, {}, 1);
        QElapsedTimer timer;
        timer.start();
        scheduler.shutdown();
        QVERIFY(timer.elapsed() >= 150);
        QCOMPARE(status(blocking->id), RunStatus::Aborted);
        QCOMPARE(status(queued->id), RunStatus::Queued);
    }
};

QTEST_GUILESS_MAIN(TestScheduler)
#include "tst_scheduler.moc"
