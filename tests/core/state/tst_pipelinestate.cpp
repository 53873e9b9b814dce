// The pipeline runner's state on both drivers (every test runs once per global row): the
// durable run queue with its max-runs and per-job order, step trees, events, `passed:`
// bookkeeping, resource versions, the step cache and sealed secrets.
#include "core/state/database.h"
#include "core/state/pipelinerepositories.h"
#include "core/state/sql.h"
#include "tests/support/component.h"
#include "tests/support/drivers.h"
#include "tests/support/pgharness.h"

#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <memory>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

class TestPipelineState : public QObject {
    Q_OBJECT

    test::PostgresHarness m_pg;
    bool m_pgStarted = false;
    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<Database> m_db;

    RunRecord queue(const QString &job, qint64 ms)
    {
        RunRecord r;
        r.pipeline = u"ci"_s;
        r.job = job;
        r.trigger = u"manual"_s;
        r.actor = u"token:admin"_s;
        r.createdMs = ms;
        return RunRepository(*m_db).enqueue(r).value();
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
        QVERIFY(PipelineRepository(*m_db).set(u"ci"_s, u"jobs: []\n"_s, {}, 1000));
    }

    void cleanup()
    {
        m_db.reset();
        m_tmp.reset();
    }

    void pipelinesSetBumpsVersionAndPauses()
    {
        PipelineRepository pipelines(*m_db);
        auto second = pipelines.set(u"ci"_s, u"jobs: [a]\n"_s, u"x: 1\n"_s, 2000);
        QVERIFY(second);
        QCOMPARE(second->configVersion, 2);
        QCOMPARE(second->varsYaml, u"x: 1\n"_s);
        QCOMPARE(second->createdMs, 1000);
        QVERIFY(pipelines.setPaused(u"ci"_s, true, u"by token:admin"_s, 3000));
        QVERIFY(pipelines.find(u"ci"_s)->paused);
        QCOMPARE(pipelines.recordRunOutcome(u"ci"_s, true, 1).value(), 1);
        QCOMPARE(pipelines.recordRunOutcome(u"ci"_s, true, 1).value(), 2);
        QVERIFY(pipelines.setPaused(u"ci"_s, false, {}, 4000));
        QCOMPARE(pipelines.find(u"ci"_s)->consecutiveErrors, 0); // unpausing closes the breaker
        QCOMPARE(pipelines.setPaused(u"nope"_s, true, {}, 1).error().code, ErrorCode::NotFound);
        QCOMPARE(pipelines.list()->size(), 1);
    }

    // The config before the last change is kept (the desktop's Config tab diffs the two); a set
    // that changes only the vars keeps it.
    void theConfigBeforeTheLastChangeIsKept()
    {
        PipelineRepository pipelines(*m_db);
        QCOMPARE(pipelines.find(u"ci"_s)->previousConfigYaml, QString());
        QVERIFY(pipelines.set(u"ci"_s, u"jobs: [a]\n"_s, {}, 2000));
        QCOMPARE(pipelines.find(u"ci"_s)->previousConfigYaml, u"jobs: []\n"_s);
        QVERIFY(pipelines.set(u"ci"_s, u"jobs: [a]\n"_s, u"x: 1\n"_s, 3000));
        QCOMPARE(pipelines.find(u"ci"_s)->previousConfigYaml, u"jobs: []\n"_s);
        QVERIFY(pipelines.set(u"ci"_s, u"jobs: [b]\n"_s, u"x: 1\n"_s, 4000));
        QCOMPARE(pipelines.find(u"ci"_s)->previousConfigYaml, u"jobs: [a]\n"_s);
        QCOMPARE(pipelines.list()->first().previousConfigYaml, u"jobs: [a]\n"_s);
    }

    void aPinReplacesTheLastAndGoesWithItsPipeline()
    {
        ResourceVersionRepository versions(*m_db);
        QVERIFY(!versions.pinned(u"ci"_s, u"repo"_s).value());
        QCOMPARE(versions.unpin(u"ci"_s, u"repo"_s).error().code, ErrorCode::NotFound);
        QVERIFY(versions.pin({u"ci"_s, u"repo"_s, uR"({"ref":"a"})"_s, u"admin"_s, 10}));
        QVERIFY(versions.pin({u"ci"_s, u"repo"_s, uR"({"ref":"b"})"_s, u"bob"_s, 20}));
        auto pin = versions.pinned(u"ci"_s, u"repo"_s).value();
        QVERIFY(pin);
        QCOMPARE(pin->versionJson, uR"({"ref":"b"})"_s);
        QCOMPARE(pin->actor, u"bob"_s);
        QCOMPARE(pin->pinnedMs, 20);
        QVERIFY(!versions.pinned(u"ci"_s, u"other"_s).value());
        QVERIFY(versions.unpin(u"ci"_s, u"repo"_s));
        QVERIFY(!versions.pinned(u"ci"_s, u"repo"_s).value());
        // A pipeline removed and set again starts unpinned.
        QVERIFY(versions.pin({u"ci"_s, u"repo"_s, uR"({"ref":"a"})"_s, u"admin"_s, 30}));
        QVERIFY(PipelineRepository(*m_db).remove(u"ci"_s));
        QVERIFY(PipelineRepository(*m_db).set(u"ci"_s, u"jobs: []\n"_s, {}, 40));
        QVERIFY(!versions.pinned(u"ci"_s, u"repo"_s).value());
    }

    void runsAreNumberedPerJob()
    {
        QCOMPARE(queue(u"unit"_s, 1).number, 1);
        QCOMPARE(queue(u"unit"_s, 2).number, 2);
        QCOMPARE(queue(u"deploy"_s, 3).number, 1);
        auto all = RunRepository(*m_db).list(u"ci"_s, {}, 10);
        QCOMPARE(all->size(), 3);
        QCOMPARE(all->first().job, u"deploy"_s); // newest first
        QCOMPARE(RunRepository(*m_db).list(u"ci"_s, u"unit"_s, 10)->size(), 2);
    }

    void claimHonoursMaxRunsAndJobOrder()
    {
        RunRepository runs(*m_db);
        const RunRecord a1 = queue(u"a"_s, 1);
        const RunRecord a2 = queue(u"a"_s, 2);
        const RunRecord b1 = queue(u"b"_s, 3);
        auto first = runs.claimNext(u"ci"_s, 2, u"p1"_s, 10);
        QCOMPARE(first.value()->id, a1.id);
        // a2 waits for a1 (one job's runs go in order); b1 may start.
        auto second = runs.claimNext(u"ci"_s, 2, u"p1"_s, 11);
        QCOMPARE(second.value()->id, b1.id);
        // max-runs 2 reached.
        QVERIFY(!runs.claimNext(u"ci"_s, 2, u"p1"_s, 12).value().has_value());
        QVERIFY(runs.finish(a1.id, RunStatus::Succeeded, {}, 20));
        auto third = runs.claimNext(u"ci"_s, 2, u"p1"_s, 21);
        QCOMPARE(third.value()->id, a2.id);
        QCOMPARE(third.value()->owner, u"p1"_s);
    }

    // max_in_flight and serial_groups as the pipeline's jobs say (PipelineRecord::jobs).
    void claimHonoursEachJobsSettings()
    {
        QMap<QString, JobSettings> jobs;
        jobs.insert(u"unit"_s, JobSettings{}); // no limit
        jobs.insert(u"e2e"_s, JobSettings{.maxInFlight = 2});
        jobs.insert(u"staging"_s, JobSettings{.maxInFlight = 1, .serialGroups = {u"deploy"_s}});
        jobs.insert(u"prod"_s, JobSettings{.maxInFlight = 1, .serialGroups = {u"deploy"_s, u"prod"_s}});
        QVERIFY(PipelineRepository(*m_db).set(u"ci"_s, u"jobs: [x]\n"_s, {}, 1500, {.jobs = jobs}));
        QCOMPARE(PipelineRepository(*m_db).find(u"ci"_s)->jobs, jobs);

        RunRepository runs(*m_db);
        const RunRecord unit1 = queue(u"unit"_s, 1), unit2 = queue(u"unit"_s, 2);
        const RunRecord e2e1 = queue(u"e2e"_s, 3), e2e2 = queue(u"e2e"_s, 4), e2e3 = queue(u"e2e"_s, 5);
        const RunRecord prod1 = queue(u"prod"_s, 6), staging1 = queue(u"staging"_s, 7);
        const RunRecord prod2 = queue(u"prod"_s, 8);
        const RunRecord old = queue(u"gone"_s, 9), old2 = queue(u"gone"_s, 10); // a job the config lost
        QStringList claimed;
        while (auto next = runs.claimNext(u"ci"_s, 0, u"p"_s, 20).value())
            claimed << next->id;
        // Both unit runs, two of e2e, one of the deploy group (the oldest), one of the lost job.
        QCOMPARE(claimed, (QStringList{unit1.id, unit2.id, e2e1.id, e2e2.id, prod1.id, old.id}));
        QVERIFY(runs.finish(e2e1.id, RunStatus::Succeeded, {}, 30));
        QVERIFY(runs.finish(old.id, RunStatus::Succeeded, {}, 30));
        QCOMPARE(runs.claimNext(u"ci"_s, 0, u"p"_s, 31).value()->id, e2e3.id);
        QCOMPARE(runs.claimNext(u"ci"_s, 0, u"p"_s, 31).value()->id, old2.id);
        QVERIFY(!runs.claimNext(u"ci"_s, 0, u"p"_s, 31).value().has_value());
        // The group goes in the order it was queued: staging before the second prod run.
        QVERIFY(runs.finish(prod1.id, RunStatus::Failed, {}, 40));
        QCOMPARE(runs.claimNext(u"ci"_s, 0, u"p"_s, 41).value()->id, staging1.id);
        QVERIFY(!runs.claimNext(u"ci"_s, 0, u"p"_s, 41).value().has_value());
        QVERIFY(runs.finish(staging1.id, RunStatus::Succeeded, {}, 50));
        QCOMPARE(runs.claimNext(u"ci"_s, 0, u"p"_s, 51).value()->id, prod2.id);
    }

    // build_log_retention: the output of runs past the count or the age goes, the runs stay.
    void oldLogsAreRemovedAsTheJobSays()
    {
        RunRepository runs(*m_db);
        const qint64 day = 86'400'000;
        const qint64 now = 100 * day;
        // Six finished runs, oldest first: succeeded, failed, succeeded, failed, failed, and a
        // running one that is never touched.
        const QList<RunStatus> ends{RunStatus::Succeeded, RunStatus::Failed,  RunStatus::Succeeded,
                                    RunStatus::Failed,    RunStatus::Errored, RunStatus::Failed};
        QList<RunRecord> done;
        for (int i = 0; i < ends.size(); ++i) {
            const RunRecord r = queue(u"unit"_s, i);
            QVERIFY(runs.claimNext(u"ci"_s, 0, u"p"_s, i).value());
            QVERIFY(runs.appendEvents(r.id, {RunEventRecord{r.id, 0, i, u"plan[0]"_s, u"output"_s, u"x"_s}}));
            QVERIFY(runs.finish(r.id, ends[i], {}, now - qint64(ends.size() - i) * day));
            done << r;
        }
        const RunRecord running = queue(u"unit"_s, 50);
        QVERIFY(runs.claimNext(u"ci"_s, 0, u"p"_s, 50).value());
        QVERIFY(runs.appendEvents(running.id, {RunEventRecord{running.id, 0, 1, {}, u"output"_s, u"x"_s}}));
        const auto hasLog = [&](const RunRecord &r) {
            return !runs.events(r.id, 0, 10)->isEmpty();
        };

        QCOMPARE(runs.removeOldLogs(u"ci"_s, u"unit"_s, JobSettings{}, now).value(), 0);
        // The three newest finished runs keep their logs, and the newest succeeded one besides.
        QCOMPARE(runs.removeOldLogs(u"ci"_s, u"unit"_s, JobSettings{.keepLogsOfRuns = 3, .keepSucceededLogs = 1}, now)
                     .value(),
                 2);
        QVERIFY(!hasLog(done[0]));
        QVERIFY(!hasLog(done[1]));
        for (int i = 2; i < done.size(); ++i)
            QVERIFY2(hasLog(done[i]), qPrintable(QString::number(i)));
        QVERIFY(hasLog(running));
        QCOMPARE(runs.find(done[0].id)->logRemovedMs, now);
        QCOMPARE(runs.find(done[0].id)->status, RunStatus::Succeeded); // the run itself stays
        QCOMPARE(runs.find(done[2].id)->logRemovedMs, 0);
        // Age: runs that finished more than two days ago, the newest succeeded one kept.
        QCOMPARE(runs.removeOldLogs(u"ci"_s, u"unit"_s, JobSettings{.keepLogsForDays = 2, .keepSucceededLogs = 1}, now)
                     .value(),
                 1);
        QVERIFY(hasLog(done[2])); // the newest succeeded run
        QVERIFY(!hasLog(done[3]));
        QVERIFY(hasLog(done[4]) && hasLog(done[5]));
        // Nothing is removed twice.
        QCOMPARE(runs.removeOldLogs(u"ci"_s, u"unit"_s, JobSettings{.keepLogsForDays = 2, .keepSucceededLogs = 1}, now)
                     .value(),
                 0);
    }

    // old_name: the renamed job keeps its runs, numbering on; setting the file again changes nothing.
    void oldNameCarriesTheRunsOver()
    {
        const RunRecord a = queue(u"ship"_s, 1);
        queue(u"ship"_s, 2);
        queue(u"other"_s, 3);
        QMap<QString, JobSettings> jobs;
        jobs.insert(u"deploy"_s, JobSettings{.oldName = u"ship"_s});
        QVERIFY(PipelineRepository(*m_db).set(u"ci"_s, u"jobs: [deploy]\n"_s, {}, 2000, {.jobs = jobs}));
        RunRepository runs(*m_db);
        QCOMPARE(runs.list(u"ci"_s, u"deploy"_s, 10)->size(), 2);
        QVERIFY(runs.list(u"ci"_s, u"ship"_s, 10)->isEmpty());
        QCOMPARE(runs.find(a.id)->job, u"deploy"_s);
        QCOMPARE(queue(u"deploy"_s, 4).number, 3);
        // A later run of a new "ship" job is its own, and stays so when the file is set again.
        const RunRecord fresh = queue(u"ship"_s, 5);
        QVERIFY(PipelineRepository(*m_db).set(u"ci"_s, u"jobs: [deploy, ship]\n"_s, {}, 3000, {.jobs = jobs}));
        QCOMPARE(runs.find(fresh.id)->job, u"ship"_s);
        QCOMPARE(runs.list(u"ci"_s, u"deploy"_s, 10)->size(), 3);
    }

    // A resource's old_name: its versions, last check, pin and the inputs runs recorded move over.
    void oldNameCarriesAResourcesVersionsOver()
    {
        ResourceVersionRepository versions(*m_db);
        QVERIFY(versions.add(u"ci"_s, u"src"_s, {{u"{\"ref\":\"a\"}"_s, {}}, {u"{\"ref\":\"b\"}"_s, {}}}, 10));
        QVERIFY(versions.recordCheck(u"ci"_s, u"src"_s, 11, {}));
        QVERIFY(versions.pin(ResourcePinRecord{u"ci"_s, u"src"_s, u"{\"ref\":\"a\"}"_s, u"alice"_s, 12}));
        const RunRecord r = queue(u"build"_s, 13);
        RunRepository runs(*m_db);
        QVERIFY(runs.recordInput(r.id, u"src"_s, u"{\"ref\":\"a\"}"_s));
        QVERIFY(runs.finish(r.id, RunStatus::Succeeded, {}, 14));

        QVERIFY(PipelineRepository(*m_db).set(u"ci"_s, u"resources: [code]\n"_s, {}, 2000,
                                              {.resourceOldNames = {{u"code"_s, u"src"_s}}}));
        QCOMPARE(versions.list(u"ci"_s, u"code"_s, 10)->size(), 2);
        QVERIFY(versions.list(u"ci"_s, u"src"_s, 10)->isEmpty());
        QCOMPARE(versions.lastCheck(u"ci"_s, u"code"_s)->first, 11);
        QVERIFY(versions.pinned(u"ci"_s, u"code"_s).value().has_value());
        QCOMPARE(runs.passedVersions(u"ci"_s, u"build"_s, u"code"_s, 10)->size(), 1);
        // Set again with old_name still written: nothing moves back or twice.
        QVERIFY(versions.add(u"ci"_s, u"src"_s, {{u"{\"ref\":\"z\"}"_s, {}}}, 20));
        QVERIFY(PipelineRepository(*m_db).set(u"ci"_s, u"resources: [code, src]\n"_s, {}, 3000,
                                              {.resourceOldNames = {{u"code"_s, u"src"_s}}}));
        QCOMPARE(versions.list(u"ci"_s, u"src"_s, 10)->size(), 1);
        QCOMPARE(versions.list(u"ci"_s, u"code"_s, 10)->size(), 2);
    }

    void pausedPipelinesAreNotClaimed()
    {
        RunRepository runs(*m_db);
        const RunRecord r = queue(u"a"_s, 1);
        QVERIFY(PipelineRepository(*m_db).setPaused(u"ci"_s, true, u"test"_s, 2));
        QVERIFY(!runs.claimNext(u"ci"_s, 5, u"p"_s, 3).value().has_value());
        QVERIFY(PipelineRepository(*m_db).setPaused(u"ci"_s, false, {}, 4));
        QCOMPARE(runs.claimNext(u"ci"_s, 5, u"p"_s, 5).value()->id, r.id);
    }

    // A paused job's queued runs wait; the other jobs' go past them. The pause keeps its first
    // reason, follows the job's old_name and goes with the pipeline.
    void pausedJobsAreNotClaimed()
    {
        RunRepository runs(*m_db);
        PipelineRepository pipelines(*m_db);
        const RunRecord held = queue(u"ship"_s, 1);
        const RunRecord other = queue(u"unit"_s, 2);
        QVERIFY(pipelines.setJobPaused(u"ci"_s, u"ship"_s, true, u"paused by alice"_s, 3));
        QVERIFY(pipelines.setJobPaused(u"ci"_s, u"ship"_s, true, u"paused by bob"_s, 4));
        QCOMPARE(pipelines.pausedJobs(u"ci"_s)->value(u"ship"_s).reason, u"paused by alice"_s);
        QCOMPARE(pipelines.pausedJobs(u"ci"_s)->value(u"ship"_s).pausedMs, 3);
        QCOMPARE(runs.claimNext(u"ci"_s, 5, u"p"_s, 5).value()->id, other.id);
        QVERIFY(!runs.claimNext(u"ci"_s, 5, u"p"_s, 6).value().has_value());
        QCOMPARE(pipelines.setJobPaused(u"nope"_s, u"ship"_s, true, u"x"_s, 7).error().code, ErrorCode::NotFound);

        QMap<QString, JobSettings> jobs;
        jobs.insert(u"deploy"_s, JobSettings{.oldName = u"ship"_s});
        QVERIFY(pipelines.set(u"ci"_s, u"jobs: [deploy]\n"_s, {}, 8, {.jobs = jobs}));
        QCOMPARE(pipelines.pausedJobs(u"ci"_s)->keys(), QStringList{u"deploy"_s});
        QVERIFY(!runs.claimNext(u"ci"_s, 5, u"p"_s, 9).value().has_value());
        QVERIFY(pipelines.setJobPaused(u"ci"_s, u"deploy"_s, false, {}, 10));
        QCOMPARE(runs.claimNext(u"ci"_s, 5, u"p"_s, 11).value()->id, held.id);

        QVERIFY(pipelines.setJobPaused(u"ci"_s, u"deploy"_s, true, u"again"_s, 12));
        QVERIFY(pipelines.remove(u"ci"_s));
        QVERIFY(pipelines.set(u"ci"_s, u"jobs: [deploy]\n"_s, {}, 13));
        QVERIFY(pipelines.pausedJobs(u"ci"_s)->isEmpty());
    }

    // A new pipeline may start paused, saying why; setting it again does not change that.
    void aNewPipelineMayStartPaused()
    {
        PipelineRepository pipelines(*m_db);
        auto created = pipelines.set(u"fresh"_s, u"jobs: []\n"_s, {}, 1, {.pausedReason = u"set by alice"_s});
        QVERIFY(created && created->paused);
        QCOMPARE(created->pausedReason, u"set by alice"_s);
        auto again = pipelines.set(u"fresh"_s, u"jobs: [a]\n"_s, {}, 2, {.pausedReason = u"ignored"_s});
        QVERIFY(again && again->paused);
        QCOMPARE(again->pausedReason, u"set by alice"_s);
        QVERIFY(pipelines.setPaused(u"fresh"_s, false, {}, 3));
        QVERIFY(!pipelines.set(u"fresh"_s, u"jobs: [b]\n"_s, {}, 4, {.pausedReason = u"ignored"_s})->paused);
    }

    void concurrentClaimersNeverExceedMaxRuns()
    {
        for (int i = 0; i < 40; ++i)
            queue(u"j"_s + QString::number(i), i);
        std::atomic_int claimed = 0;
        std::vector<std::unique_ptr<QThread>> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back(QThread::create([&] {
                RunRepository runs(*m_db);
                for (int i = 0; i < 20; ++i)
                    if (auto r = runs.claimNext(u"ci"_s, 3, u"p"_s, 100); r && r->has_value())
                        ++claimed;
            }));
        for (auto &t : threads)
            t->start();
        for (auto &t : threads)
            t->wait();
        QCOMPARE(claimed.load(), 3);
        QCOMPARE(RunRepository(*m_db).withStatus(RunStatus::Running)->size(), 3);
    }

    void abandonedRunsAreFoundAndRequeued()
    {
        RunRepository runs(*m_db);
        const RunRecord r = queue(u"a"_s, 1);
        QVERIFY(runs.claimNext(u"ci"_s, 1, u"dead"_s, 2).value());
        QVERIFY(runs.upsertStep(RunStepRecord{r.id, u"plan[0]"_s, {}, 0, u"t"_s, u"task"_s, RunStepStatus::Running}));
        QVERIFY(runs.appendEvents(r.id, {RunEventRecord{r.id, 0, 5, u"plan[0]"_s, u"output"_s, u"{}"_s}}));
        auto abandoned = runs.abandoned(u"alive"_s);
        QCOMPARE(abandoned->size(), 1);
        QVERIFY(runs.abandoned(u"dead"_s)->isEmpty());
        QVERIFY(runs.requeue(r.id));
        QCOMPARE(runs.find(r.id)->status, RunStatus::Queued);
        QVERIFY(runs.steps(r.id)->isEmpty());
        QVERIFY(runs.events(r.id, 0, 10)->isEmpty());
    }

    void stepsAndEventsKeepOrder()
    {
        RunRepository runs(*m_db);
        const RunRecord r = queue(u"a"_s, 1);
        RunStepRecord step{r.id, u"plan[1]"_s, {}, 1, u"unit"_s, u"task"_s, RunStepStatus::Running};
        QVERIFY(runs.upsertStep(step));
        QVERIFY(
            runs.upsertStep(RunStepRecord{r.id, u"plan[0]"_s, {}, 0, u"repo"_s, u"get"_s, RunStepStatus::Succeeded}));
        step.status = RunStepStatus::Failed;
        step.exitCode = 2;
        QVERIFY(runs.upsertStep(step));
        auto steps = runs.steps(r.id);
        QCOMPARE(steps->size(), 2);
        QCOMPARE(steps->at(0).name, u"repo"_s);
        QCOMPARE(steps->at(1).status, RunStepStatus::Failed);
        QCOMPARE(steps->at(1).exitCode, 2);

        QList<RunEventRecord> batch;
        for (int i = 0; i < 5; ++i)
            batch.append(RunEventRecord{r.id, 0, i, u"plan[1]"_s, u"output"_s, QString::number(i)});
        QCOMPARE(runs.appendEvents(r.id, batch).value(), 5);
        QCOMPARE(runs.appendEvents(r.id, batch.mid(0, 2)).value(), 7);
        auto after = runs.events(r.id, 3, 100);
        QCOMPARE(after->size(), 4);
        QCOMPARE(after->first().seq, 4);
        QCOMPARE(after->first().dataJson, u"3"_s);
    }

    void passedVersionsComeFromSucceededRuns()
    {
        RunRepository runs(*m_db);
        const RunRecord good = queue(u"unit"_s, 1);
        const RunRecord bad = queue(u"unit"_s, 2);
        QVERIFY(runs.recordInput(good.id, u"repo"_s, u"{\"ref\":\"a\"}"_s));
        QVERIFY(runs.recordInput(bad.id, u"repo"_s, u"{\"ref\":\"b\"}"_s));
        QVERIFY(runs.finish(good.id, RunStatus::Succeeded, {}, 10));
        QVERIFY(runs.finish(bad.id, RunStatus::Failed, {}, 11));
        QCOMPARE(runs.passedVersions(u"ci"_s, u"unit"_s, u"repo"_s, 10).value(), QStringList{u"{\"ref\":\"a\"}"_s});
        QVERIFY(runs.passedVersions(u"ci"_s, u"deploy"_s, u"repo"_s, 10)->isEmpty());
    }

    void resourceVersionsAreRecordedOnce()
    {
        ResourceVersionRepository versions(*m_db);
        auto added = versions.add(u"ci"_s, u"repo"_s, {{u"{\"ref\":\"a\"}"_s, {}}, {u"{\"ref\":\"b\"}"_s, {}}}, 5);
        QCOMPARE(added->size(), 2);
        added = versions.add(u"ci"_s, u"repo"_s, {{u"{\"ref\":\"b\"}"_s, {}}, {u"{\"ref\":\"c\"}"_s, u"[]"_s}}, 6);
        QCOMPARE(added->size(), 1);
        QCOMPARE(added->first().seq, 3);
        QCOMPARE(versions.latest(u"ci"_s, u"repo"_s).value()->versionJson, u"{\"ref\":\"c\"}"_s);
        QVERIFY(!versions.latest(u"ci"_s, u"other"_s).value().has_value());
        QCOMPARE(versions.lastCheck(u"ci"_s, u"repo"_s)->first, 0);
        QVERIFY(versions.recordCheck(u"ci"_s, u"repo"_s, 7, u"boom"_s));
        QVERIFY(versions.recordCheck(u"ci"_s, u"repo"_s, 8, {}));
        QCOMPARE(versions.lastCheck(u"ci"_s, u"repo"_s)->first, 8);
    }

    void aCheckFromAnOlderVersionKeepsTheNewestNewest()
    {
        // A check from c found c and d; one from a (fly check-resource --from) finds a to d, in
        // order: the older ones are recorded, and d, returned last, is the newest still.
        ResourceVersionRepository versions(*m_db);
        const auto v = [](const char *ref) {
            return QPair<QString, QString>{u"{\"ref\":\"%1\"}"_s.arg(QLatin1String(ref)), {}};
        };
        QVERIFY(versions.add(u"ci"_s, u"repo"_s, {v("c"), v("d")}, 5));
        auto added = versions.add(u"ci"_s, u"repo"_s, {v("a"), v("b"), v("c"), v("d")}, 6);
        QCOMPARE(added->size(), 2);
        QStringList newestFirst;
        const auto listed = versions.list(u"ci"_s, u"repo"_s, 10);
        for (const ResourceVersionRecord &r : listed.value())
            newestFirst << r.versionJson;
        QCOMPARE(newestFirst, (QStringList{v("d").first, v("c").first, v("b").first, v("a").first}));
        // A check from the newest (d, then e) leaves d where it was: nothing new came before it.
        const qint64 dSeq = versions.latest(u"ci"_s, u"repo"_s).value()->seq;
        QVERIFY(versions.add(u"ci"_s, u"repo"_s, {v("d"), v("e")}, 7));
        const auto now = versions.list(u"ci"_s, u"repo"_s, 2).value();
        QCOMPARE(now.at(0).versionJson, v("e").first);
        QCOMPARE(now.at(1).versionJson, v("d").first);
        QCOMPARE(now.at(1).seq, dSeq);
    }

    void stepCacheKeepsTheFirstResult()
    {
        StepCacheRepository cache(*m_db);
        QVERIFY(!cache.find(u"h1"_s).value().has_value());
        QVERIFY(cache.put(StepCacheRecord{u"h1"_s, u"{\"out\":\"b1\"}"_s, u"r1"_s, u"plan[0]"_s, 1}));
        QVERIFY(cache.put(StepCacheRecord{u"h1"_s, u"{\"out\":\"b2\"}"_s, u"r2"_s, u"plan[0]"_s, 2}));
        QCOMPARE(cache.find(u"h1"_s).value()->outputsJson, u"{\"out\":\"b1\"}"_s);
        QVERIFY(cache.remove(u"h1"_s));
        QVERIFY(!cache.find(u"h1"_s).value().has_value());
    }

    void secretsAndPipelineRemoval()
    {
        SecretRepository secrets(*m_db);
        QVERIFY(secrets.put(SecretRecord{u"ci"_s, u"token"_s, u"pando-seal-v1:abc"_s, 1, 1}));
        QVERIFY(secrets.put(SecretRecord{u""_s, u"global"_s, u"pando-seal-v1:def"_s, 1, 1}));
        QVERIFY(secrets.put(SecretRecord{u"ci"_s, u"token"_s, u"pando-seal-v1:xyz"_s, 1, 2}));
        QCOMPARE(secrets.find(u"ci"_s, u"token"_s)->sealed, u"pando-seal-v1:xyz"_s);
        QVERIFY(secrets.list(u"ci"_s)->first().sealed.isEmpty()); // names only
        const RunRecord r = queue(u"a"_s, 1);
        QVERIFY(ResourceVersionRepository(*m_db).add(u"ci"_s, u"repo"_s, {{u"{}"_s, {}}}, 1));

        QVERIFY(PipelineRepository(*m_db).remove(u"ci"_s));
        QCOMPARE(RunRepository(*m_db).find(r.id).error().code, ErrorCode::NotFound);
        QCOMPARE(secrets.find(u"ci"_s, u"token"_s).error().code, ErrorCode::NotFound);
        QVERIFY(secrets.find(u""_s, u"global"_s)); // the install's secrets stay
        QVERIFY(ResourceVersionRepository(*m_db).list(u"ci"_s, u"repo"_s, 10)->isEmpty());
    }

    // The grants on a pipeline, as "user role" words.
    QStringList grantsOn(const QString &pipeline)
    {
        auto q = detail::run(*m_db, u"SELECT user_id, role FROM grants WHERE object_kind = 'pipeline' AND object = ?"_s,
                             {pipeline}, u"read grants"_s);
        QStringList out;
        while (q && q->next())
            out << q->value(0).toString() + u' ' + q->value(1).toString();
        return out;
    }

    void aRenameTakesEverythingAlong()
    {
        PipelineRepository pipelines(*m_db);
        const RunRecord run = queue(u"unit"_s, 1);
        ResourceVersionRepository versions(*m_db);
        QVERIFY(versions.add(u"ci"_s, u"repo"_s, {{u"{\"ref\":\"a\"}"_s, {}}}, 1));
        QVERIFY(versions.recordCheck(u"ci"_s, u"repo"_s, 2, {}));
        QVERIFY(versions.pin(ResourcePinRecord{u"ci"_s, u"repo"_s, u"{\"ref\":\"a\"}"_s, u"alice"_s, 3}));
        QVERIFY(pipelines.setJobPaused(u"ci"_s, u"unit"_s, true, u"paused by alice"_s, 4));
        SecretRepository secrets(*m_db);
        QVERIFY(secrets.put(SecretRecord{u"ci"_s, u"token"_s, u"pando-seal-v1:abc"_s, 1, 1}));
        QVERIFY(secrets.put(SecretRecord{u""_s, u"deploy-key"_s, u"pando-seal-v1:def"_s, 1, 1}));
        QVERIFY(secrets.setAccess(u"deploy-key"_s, SecretAccess{false, {u"ci"_s}}));
        QVERIFY(detail::run(*m_db, u"INSERT INTO users (id, username) VALUES ('u1', 'alice')"_s, {}, u"user"_s));
        QVERIFY(detail::run(
            *m_db,
            u"INSERT INTO grants (object_kind, object, user_id, role) VALUES ('pipeline', 'ci', 'u1', 'owner')"_s, {},
            u"grant"_s));
        QVERIFY(pipelines.set(u"child"_s, u"jobs: []\n"_s, {}, 5, {.setBy = u"ci"_s}));
        const int version = pipelines.find(u"ci"_s)->configVersion;

        auto renamed = pipelines.rename(u"ci"_s, u"build"_s, 9000);
        QVERIFY2(renamed, qPrintable(renamed ? QString() : renamed.error().text()));
        QCOMPARE(pipelines.find(u"ci"_s).error().code, ErrorCode::NotFound);
        const auto now = pipelines.find(u"build"_s);
        QVERIFY(now);
        QCOMPARE(now->configVersion, version);
        QCOMPARE(now->updatedMs, qint64(9000));
        QCOMPARE(RunRepository(*m_db).find(run.id)->pipeline, u"build"_s);
        QCOMPARE(versions.latest(u"build"_s, u"repo"_s).value()->versionJson, u"{\"ref\":\"a\"}"_s);
        QCOMPARE(versions.lastCheck(u"build"_s, u"repo"_s)->first, 2);
        QVERIFY(versions.pinned(u"build"_s, u"repo"_s).value().has_value());
        QVERIFY(pipelines.pausedJobs(u"build"_s)->contains(u"unit"_s));
        QVERIFY(secrets.find(u"build"_s, u"token"_s));
        QCOMPARE(secrets.find(u"ci"_s, u"token"_s).error().code, ErrorCode::NotFound);
        QCOMPARE(secrets.access(u"deploy-key"_s)->pipelines, QStringList{u"build"_s});
        QCOMPARE(grantsOn(u"build"_s), QStringList{u"u1 owner"_s});
        QVERIFY(grantsOn(u"ci"_s).isEmpty());
        QCOMPARE(pipelines.find(u"child"_s)->setBy, u"build"_s);
        // The next run of the job numbers on from the runs it had.
        RunRecord next = run;
        next.id.clear();
        next.pipeline = u"build"_s;
        QCOMPARE(RunRepository(*m_db).enqueue(next)->number, 2);

        // Refused, with nothing changed: a name that exists, one that grants wait for, one that is gone.
        QCOMPARE(pipelines.rename(u"build"_s, u"child"_s, 9001).error().code, ErrorCode::Conflict);
        QVERIFY(detail::run(
            *m_db,
            u"INSERT INTO grants (object_kind, object, user_id, role) VALUES ('pipeline', 'later', 'u1', 'viewer')"_s,
            {}, u"grant"_s));
        const auto waiting = pipelines.rename(u"build"_s, u"later"_s, 9002);
        QCOMPARE(waiting.error().code, ErrorCode::Conflict);
        QVERIFY2(waiting.error().message.contains(u"grants"_s), qPrintable(waiting.error().text()));
        QCOMPARE(pipelines.rename(u"nope"_s, u"other"_s, 9003).error().code, ErrorCode::NotFound);
        QVERIFY(pipelines.find(u"build"_s));
        QCOMPARE(RunRepository(*m_db).find(run.id)->pipeline, u"build"_s);
        QCOMPARE(pipelines.find(u"other"_s).error().code, ErrorCode::NotFound);
    }

    void installSecretsHaveAccessLists()
    {
        SecretRepository secrets(*m_db);
        // A new install-wide secret is read by no pipeline.
        QVERIFY(secrets.put(SecretRecord{u""_s, u"deploy-key"_s, u"pando-seal-v1:abc"_s, 1, 1}));
        QVERIFY(secrets.access(u"deploy-key"_s)->pipelines.isEmpty());
        QVERIFY(!secrets.access(u"deploy-key"_s)->allows(u"ci"_s));
        QVERIFY(secrets.unscoped()->isEmpty());
        // A pipeline may be named before it exists; the list is replaced, not merged.
        auto firstSet = secrets.setAccess(u"deploy-key"_s, SecretAccess{false, {u"ci"_s, u"later"_s}});
        QVERIFY2(firstSet, qPrintable(firstSet ? QString() : firstSet.error().text()));
        QCOMPARE(secrets.access(u"deploy-key"_s)->pipelines, (QStringList{u"ci"_s, u"later"_s}));
        QVERIFY(secrets.setAccess(u"deploy-key"_s, SecretAccess{false, {u"later"_s}}));
        QVERIFY(!secrets.access(u"deploy-key"_s)->allows(u"ci"_s));
        QVERIFY(secrets.setAccess(u"deploy-key"_s, SecretAccess{true, {}}));
        QVERIFY(secrets.access(u"deploy-key"_s)->allows(u"anything"_s));
        // Setting the value again keeps the list.
        QVERIFY(secrets.put(SecretRecord{u""_s, u"deploy-key"_s, u"pando-seal-v1:new"_s, 1, 2}));
        QVERIFY(secrets.access(u"deploy-key"_s)->all);
        QCOMPARE(secrets.setAccess(u"nope"_s, SecretAccess{}).error().code, ErrorCode::NotFound);
        QCOMPARE(secrets.access(u"nope"_s).error().code, ErrorCode::NotFound);

        // A removed pipeline leaves every list; a removed secret takes its list with it.
        QVERIFY(secrets.setAccess(u"deploy-key"_s, SecretAccess{false, {u"ci"_s}}));
        QVERIFY(PipelineRepository(*m_db).remove(u"ci"_s));
        QVERIFY(secrets.access(u"deploy-key"_s)->pipelines.isEmpty());
        QVERIFY(secrets.setAccess(u"deploy-key"_s, SecretAccess{false, {u"other"_s}}));
        QVERIFY(secrets.remove(u""_s, u"deploy-key"_s));
        QVERIFY(secrets.put(SecretRecord{u""_s, u"deploy-key"_s, u"pando-seal-v1:again"_s, 1, 3}));
        QVERIFY(secrets.access(u"deploy-key"_s)->pipelines.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestPipelineState)
#include "tests/support/vocabtesting.h"
#include "tst_pipelinestate.moc"
