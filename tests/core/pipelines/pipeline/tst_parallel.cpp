// in_parallel on a bounded pool: the pool and its groups alone (nesting deeper than the pool
// completes, a group's limit holds, threads at once never pass the ceiling), then the real
// JobRunner over a task runner that counts how many tasks run at once: nested in_parallel
// deeper than the pool completes within the bound, `limit:` holds, `fail_fast:` aborts the
// siblings, and a run's abort reaches every branch, queued or running.
#include "core/pipelines/pipeline/jobrunner.h"
#include "core/pipelines/pipeline/parallelpool.h"
#include "core/state/pipelinerepositories.h"
#include "tests/core/pipelines/pipeline/queuedrun.h"

#include <QElapsedTimer>
#include <QMutex>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <atomic>
#include <functional>
#include <thread>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;
using namespace pando::core::pipelines;

namespace {

// How many run at once, and the most there ever were.
class Gauge {
public:
    void enter()
    {
        const int now = ++m_now;
        int seen = m_most.load();
        while (now > seen && !m_most.compare_exchange_weak(seen, now)) {
        }
    }
    void leave() { --m_now; }
    int most() const { return m_most.load(); }

private:
    std::atomic_int m_now = 0;
    std::atomic_int m_most = 0;
};

// Runs "work <ms> [fail]" scripts: holds its thread for <ms> (or until cancelled) and exits 1
// when told to fail. Counts the tasks running at once.
class CountingTaskRunner : public adapters::TaskRunner {
public:
    Gauge gauge;
    std::atomic_int cancelled = 0;

    QString kind() const override { return u"host"_s; }
    pando::Result<QString> imageDigest(const QString &) override { return u"host"_s; }
    pando::Result<adapters::TaskResult> run(const adapters::TaskSpec &spec, const CancelToken &cancel,
                                            const std::function<void(const adapters::OutputChunk &)> &) override
    {
        const QStringList words = spec.argv.value(2).split(u' ');
        const int ms = words.value(1).toInt();
        gauge.enter();
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < ms && !cancel.isCancelled())
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        gauge.leave();
        if (cancel.isCancelled()) {
            ++cancelled;
            return fail(ErrorCode::Cancelled, u"cancelled"_s);
        }
        adapters::TaskResult result;
        result.exitCode = words.contains(u"fail"_s) ? 1 : 0;
        return result;
    }
    pando::Result<int> removeLeftovers(const QMap<QString, QString> &) override { return 0; }
};

QByteArray task(const QByteArray &name, const QByteArray &script, const QByteArray &indent)
{
    // The name goes into the script too: tasks of one config would share a cache entry.
    return indent + "- task: " + name + "\n" + indent + "  config: {platform: host, run: {path: sh, args: [\"-c\", \"" +
           script + " " + name + "\"]}}\n";
}

// An in_parallel of `width` branches at `indent`, one of them an in_parallel again, `depth` deep.
QByteArray nested(int depth, int width, const QByteArray &indent, const QByteArray &prefix)
{
    QByteArray yaml = indent + "- in_parallel:\n";
    const QByteArray inner = indent + "  ";
    for (int i = 0; i < width - (depth > 1 ? 1 : 0); ++i)
        yaml += task(prefix + "-" + QByteArray::number(i), "work 30", inner);
    if (depth > 1)
        yaml += nested(depth - 1, width, inner, prefix + "-" + QByteArray::number(depth - 1));
    return yaml;
}

QByteArray job(const QByteArray &plan)
{
    return "jobs:\n- name: ship\n  plan:\n" + plan;
}

} // namespace

class TestParallel : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<Database> m_db;
    std::unique_ptr<ManualClock> m_clock;
    std::unique_ptr<EventBus> m_bus;
    std::unique_ptr<CountingTaskRunner> m_tasks;
    std::unique_ptr<BlobStore> m_blobs;
    std::unique_ptr<Workspace> m_workspace;

    JobRunnerDeps deps(ParallelPool &pool)
    {
        JobRunnerDeps d{*m_db,
                        *m_clock,
                        *m_bus,
                        *m_tasks,
                        *m_tasks,
                        *m_blobs,
                        *m_workspace,
                        [](const QString &) -> std::shared_ptr<adapters::ResourceType> { return nullptr; },
                        [](const QString &, const QString &) -> std::optional<QString> { return std::nullopt; },
                        QByteArray("test-secret-key"),
                        m_tmp->filePath(u"caches"_s),
                        u"test-install"_s};
        d.parallelPool = &pool;
        return d;
    }

    // The plans' tasks say platform: host (the counting runner stands in for the host).
    RunRecord queue(const QByteArray &yaml)
    {
        RunRecord run = test::queueShipRun(*m_db, *m_clock, yaml);
        test::allowHostExecution(*m_db);
        return run;
    }

    QHash<QString, QString> statusByName(const QString &runId)
    {
        QHash<QString, QString> out;
        const QList<RunStepRecord> steps = RunRepository(*m_db).steps(runId).value();
        for (const RunStepRecord &s : steps)
            out.insert(s.name, toString(s.status));
        return out;
    }

private Q_SLOTS:
    void init()
    {
        m_tmp = std::make_unique<QTemporaryDir>();
        QVERIFY(m_tmp->isValid());
        m_db = std::make_unique<Database>(
            DatabaseConfig::fromUrl(u"sqlite://"_s + m_tmp->path() + u"/pando.db"_s).value());
        auto opened = m_db->open();
        QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
        m_clock = std::make_unique<ManualClock>();
        m_bus = std::make_unique<EventBus>();
        m_tasks = std::make_unique<CountingTaskRunner>();
        m_blobs = std::make_unique<BlobStore>(m_tmp->filePath(u"blobs"_s));
        m_workspace = std::make_unique<Workspace>(m_tmp->filePath(u"runs"_s));
    }

    void cleanup()
    {
        m_workspace.reset();
        m_blobs.reset();
        m_tasks.reset();
        m_bus.reset();
        m_clock.reset();
        m_db.reset();
        m_tmp.reset();
    }

    // The pool alone: groups nested deeper than the pool has threads, each waiting for its
    // branches, still complete, on no more threads than the pool's and the caller's.
    void groupsNestedDeeperThanThePoolComplete()
    {
        ParallelPool pool(2);
        std::atomic_int leaves = 0;
        QMutex mutex;
        QSet<std::thread::id> threads;
        std::function<void(int)> level = [&](int depth) {
            ParallelGroup group(pool, 0);
            for (int i = 0; i < 3; ++i) {
                group.run([&, depth] {
                    {
                        QMutexLocker lock(&mutex);
                        threads.insert(std::this_thread::get_id());
                    }
                    if (depth > 0) {
                        level(depth - 1);
                    } else {
                        std::this_thread::sleep_for(std::chrono::milliseconds(5));
                        ++leaves;
                    }
                });
            }
        };
        level(5); // 3^6 = 729 leaves, six groups deep on two threads
        QCOMPARE(leaves.load(), 729);
        // Every branch ran on one of the pool's threads or on this one (nested groups run inline
        // on whichever thread waits for them).
        QVERIFY2(threads.size() <= pool.ceiling() + 1, qPrintable(QString::number(threads.size())));
    }

    void aGroupsLimitHolds()
    {
        ParallelPool pool(8);
        Gauge gauge;
        {
            ParallelGroup group(pool, 2);
            for (int i = 0; i < 8; ++i)
                group.run([&] {
                    gauge.enter();
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                    gauge.leave();
                });
        }
        QCOMPARE(gauge.most(), 2);
    }

    void nestedInParallelDeeperThanThePoolCompletesWithinTheBound()
    {
        ParallelPool pool(2);
        JobRunner runner(deps(pool));
        const RunRecord run = queue(job(nested(4, 3, "  ", "t")));
        const auto result = runner.execute(run, CancelToken());
        QCOMPARE(outcomeName(result.outcome), u"succeeded"_s);
        // Every task ran: 2 per level above the last, 3 in the last.
        const QHash<QString, QString> steps = statusByName(run.id);
        int tasks = 0;
        for (auto it = steps.cbegin(); it != steps.cend(); ++it)
            if (it.key().startsWith(u"t-"_s)) {
                ++tasks;
                QCOMPARE(it.value(), u"succeeded"_s);
            }
        QCOMPARE(tasks, 2 * 3 + 3);
        // The pool's threads, plus the run's own thread running branches inline.
        QVERIFY2(m_tasks->gauge.most() <= pool.ceiling() + 1, qPrintable(QString::number(m_tasks->gauge.most())));
    }

    void aWideInParallelRunsOnlyAsManyAsThePoolHas()
    {
        ParallelPool pool(3);
        JobRunner runner(deps(pool));
        QByteArray plan = "  - in_parallel:\n";
        for (int i = 0; i < 12; ++i)
            plan += task("w" + QByteArray::number(i), "work 40", "    ");
        const RunRecord run = queue(job(plan));
        const auto result = runner.execute(run, CancelToken());
        QCOMPARE(outcomeName(result.outcome), u"succeeded"_s);
        QVERIFY2(m_tasks->gauge.most() <= 4, qPrintable(QString::number(m_tasks->gauge.most())));
        QVERIFY2(m_tasks->gauge.most() >= 2, "the branches ran in parallel at all");
    }

    void limitHolds()
    {
        ParallelPool pool(8);
        JobRunner runner(deps(pool));
        QByteArray plan = "  - in_parallel:\n      limit: 2\n      steps:\n";
        for (int i = 0; i < 6; ++i)
            plan += task("l" + QByteArray::number(i), "work 60", "      ");
        const RunRecord run = queue(job(plan));
        const auto result = runner.execute(run, CancelToken());
        QCOMPARE(outcomeName(result.outcome), u"succeeded"_s);
        QCOMPARE(m_tasks->gauge.most(), 2);
    }

    void failFastAbortsTheSiblings()
    {
        ParallelPool pool(4);
        JobRunner runner(deps(pool));
        const QByteArray plan = "  - in_parallel:\n      fail_fast: true\n      steps:\n" +
                                task("slow", "work 20000", "      ") + task("breaks", "work 50 fail", "      ");
        const RunRecord run = queue(job(plan));
        QElapsedTimer timer;
        timer.start();
        const auto result = runner.execute(run, CancelToken());
        QVERIFY2(timer.elapsed() < 10000, "the slow sibling was not aborted");
        QCOMPARE(outcomeName(result.outcome), u"failed"_s);
        const QHash<QString, QString> steps = statusByName(run.id);
        QCOMPARE(steps.value(u"breaks"_s), u"failed"_s);
        QCOMPARE(steps.value(u"slow"_s), u"aborted"_s);
    }

    void anAbortReachesEveryBranch()
    {
        // Six long branches on a pool of two: some run on the pool, one on the run's thread,
        // the rest wait their turn; the abort ends them all.
        ParallelPool pool(2);
        JobRunner runner(deps(pool));
        QByteArray plan = "  - in_parallel:\n";
        for (int i = 0; i < 6; ++i)
            plan += task("a" + QByteArray::number(i), "work 20000", "    ");
        const RunRecord run = queue(job(plan));
        CancelToken cancel;
        std::thread aborter([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            cancel.cancel();
        });
        QElapsedTimer timer;
        timer.start();
        const auto result = runner.execute(run, cancel);
        aborter.join();
        QVERIFY2(timer.elapsed() < 10000, "a branch went on after the abort");
        QCOMPARE(outcomeName(result.outcome), u"aborted"_s);
        const QHash<QString, QString> steps = statusByName(run.id);
        for (int i = 0; i < 6; ++i)
            QCOMPARE(steps.value(u"a%1"_s.arg(i), u"(never started)"_s), u"aborted"_s);
    }
};

QTEST_GUILESS_MAIN(TestParallel)
#include "tst_parallel.moc"
