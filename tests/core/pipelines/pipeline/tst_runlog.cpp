// RunLog's batching as a follower sees it: a step that starts, or prints a line and then goes
// quiet, reaches the store and the event bus within the batch interval, though nothing else is
// written after it and the run's clock stands still; a step's end goes out at once with its
// output; and every event is stored in order, once.
#include "core/pipelines/pipeline/runlog.h"
#include "core/state/pipelinerepositories.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;
using namespace pando::core::pipelines;

class TestRunLog : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<Database> m_db;
    ManualClock m_clock;
    EventBus m_bus;
    RunRecord m_run;

    // What followers got, in the test's thread, as "type:text-or-status".
    QStringList m_seen;

    RunStepRecord step(RunStepStatus status)
    {
        RunStepRecord s;
        s.runId = m_run.id;
        s.stepId = u"plan[0].task:build"_s;
        s.name = u"build"_s;
        s.kind = u"task"_s;
        s.status = status;
        s.startedMs = m_clock.nowMs();
        return s;
    }

private Q_SLOTS:
    void initTestCase()
    {
        connect(&m_bus, &EventBus::published, this, [this](const Event &e) {
            const QJsonObject data = e.data.value(u"data"_s).toObject();
            m_seen.append(
                e.data.value(u"type"_s).toString() + u':' +
                (data.contains(u"text"_s) ? data.value(u"text"_s).toString() : data.value(u"status"_s).toString()));
        });
    }

    void init()
    {
        m_tmp = std::make_unique<QTemporaryDir>();
        QVERIFY(m_tmp->isValid());
        m_db = std::make_unique<Database>(
            DatabaseConfig::fromUrl(u"sqlite://"_s + m_tmp->filePath(u"state.db"_s)).value());
        auto opened = m_db->open();
        QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
        auto set = PipelineRepository(*m_db).set(u"ci"_s, u"jobs: []\n"_s, {}, m_clock.nowMs());
        QVERIFY(set);
        RunRecord run;
        run.pipeline = u"ci"_s;
        run.job = u"build"_s;
        run.trigger = u"manual"_s;
        run.inputsJson = u"{}"_s;
        run.configVersion = set->configVersion;
        run.createdMs = m_clock.nowMs();
        auto queued = RunRepository(*m_db).enqueue(run);
        QVERIFY2(queued, qPrintable(queued ? QString() : queued.error().text()));
        m_run = *queued;
        m_seen.clear();
    }

    void cleanup()
    {
        m_db.reset();
        m_tmp.reset();
    }

    void quietStepIsSeenWithinTheInterval()
    {
        RunLog log(*m_db, m_clock, m_bus, m_run, makeRedactor({}));
        QElapsedTimer timer;
        timer.start();
        log.step(step(RunStepStatus::Running));
        QTRY_COMPARE_WITH_TIMEOUT(m_seen, QStringList{u"step:running"_s}, 2000);
        const qint64 started = timer.elapsed();
        qInfo("a quiet step's start reached followers after %lld ms", started);
        QVERIFY2(started < 1000, qPrintable(QString::number(started)));

        // One line, then silence: the line is not held back until the step ends.
        log.output(u"plan[0].task:build"_s, false, "compiling\n");
        QTRY_COMPARE_WITH_TIMEOUT(m_seen.size(), 2, 2000);
        QCOMPARE(m_seen.last(), u"output:compiling"_s);

        // The end goes out at once, with the partial last line before it.
        log.output(u"plan[0].task:build"_s, true, "no newline");
        log.step(step(RunStepStatus::Succeeded));
        QTRY_COMPARE(m_seen.size(), 4);
        QCOMPARE(m_seen.mid(2), QStringList({u"output:no newline"_s, u"step:succeeded"_s}));

        auto stored = RunRepository(*m_db).events(m_run.id, 0, 100);
        QVERIFY2(stored, qPrintable(stored ? QString() : stored.error().text()));
        QCOMPARE(stored->size(), 4);
        for (qsizetype i = 0; i < stored->size(); ++i)
            QCOMPARE(stored->at(i).seq, i + 1);
    }

    void destroyedWithAPendingBatchWritesIt()
    {
        {
            RunLog log(*m_db, m_clock, m_bus, m_run, makeRedactor({}));
            log.note(u"plan[0].task:build"_s, u"restored unchanged outputs"_s);
        }
        QTRY_COMPARE(m_seen, QStringList{u"output:restored unchanged outputs"_s});
    }
};

QTEST_GUILESS_MAIN(TestRunLog)
#include "tst_runlog.moc"
