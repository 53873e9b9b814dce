// The run tree a reader sees: nesting as planned, order, counts, and output per step.
#include "core/pipelines/runview/runview.h"

#include <QJsonArray>
#include <QTest>

using namespace pando::core;
using namespace pando::core::pipelines;

namespace {
RunStepRecord step(const QString &id, const QString &parent, int seq, RunStepStatus status,
                   const QString &kind = QStringLiteral("task"))
{
    RunStepRecord s;
    s.runId = QStringLiteral("r1");
    s.stepId = id;
    s.parentId = parent;
    s.seq = seq;
    s.name = id.section(QLatin1Char('.'), -1);
    s.kind = kind;
    s.status = status;
    s.startedMs = 100 + seq;
    s.finishedMs = 200 + seq;
    return s;
}
} // namespace

class TestRunView : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void nestsAsPlanned()
    {
        RunRecord run;
        run.id = QStringLiteral("r1");
        run.status = RunStatus::Failed;
        // Recorded out of order, as parallel steps finish.
        const QList<RunStepRecord> steps{
            step(QStringLiteral("p.par.unit"), QStringLiteral("p.par"), 2, RunStepStatus::Failed),
            step(QStringLiteral("p.repo"), {}, 0, RunStepStatus::Succeeded, QStringLiteral("get")),
            step(QStringLiteral("p.par"), {}, 1, RunStepStatus::Failed, QStringLiteral("in_parallel")),
            step(QStringLiteral("p.par.lint"), QStringLiteral("p.par"), 3, RunStepStatus::Cached),
            step(QStringLiteral("p.deploy"), {}, 4, RunStepStatus::Skipped),
        };
        const RunTree tree = foldRun(run, steps);
        QCOMPARE(tree.roots.size(), 3);
        QCOMPARE(tree.roots[0].step.stepId, QStringLiteral("p.repo"));
        QCOMPARE(tree.roots[1].children.size(), 2);
        QCOMPARE(tree.roots[1].children[0].step.name, QStringLiteral("unit"));
        QCOMPARE(tree.roots[1].children[1].step.name, QStringLiteral("lint"));
        QCOMPARE(tree.roots[1].children[0].durationMs(), 100);
        QCOMPARE(tree.stepCount, 5);
        QCOMPARE(tree.cachedCount, 1);
        QCOMPARE(tree.failedCount, 2);

        const QJsonObject json = tree.toJson();
        const QJsonArray roots = json.value(QStringLiteral("steps")).toArray();
        QCOMPARE(roots.size(), 3);
        const QJsonArray children = roots[1].toObject().value(QStringLiteral("children")).toArray();
        QCOMPARE(children[1].toObject().value(QStringLiteral("cached")).toBool(), true);
        QCOMPARE(json.value(QStringLiteral("cached_count")).toInt(), 1);
    }

    void orphansAndCyclesStillShow()
    {
        const QList<RunStepRecord> steps{
            step(QStringLiteral("a"), QStringLiteral("missing"), 0, RunStepStatus::Running),
            step(QStringLiteral("b"), QStringLiteral("c"), 1, RunStepStatus::Running),
            step(QStringLiteral("c"), QStringLiteral("b"), 2, RunStepStatus::Running)};
        const RunTree tree = foldRun(RunRecord{}, steps);
        QCOMPARE(tree.roots.size(), 1); // b and c name each other: neither is a root, none is lost in a loop
        QCOMPARE(tree.stepCount, 3);
    }

    void outputPerStep()
    {
        const QList<RunEventRecord> events{
            {QStringLiteral("r1"), 1, 1, QStringLiteral("a"), QStringLiteral("output"),
             QStringLiteral(R"({"stream":"stdout","text":"one"})")},
            {QStringLiteral("r1"), 2, 2, QStringLiteral("b"), QStringLiteral("output"),
             QStringLiteral(R"({"stream":"stderr","text":"two"})")},
            {QStringLiteral("r1"), 3, 3, QStringLiteral("a"), QStringLiteral("step"),
             QStringLiteral(R"({"status":"succeeded"})")},
        };
        QCOMPARE(outputOf(events, QStringLiteral("a")), QStringList{QStringLiteral("one")});
        QCOMPARE(outputOf(events), (QStringList{QStringLiteral("one"), QStringLiteral("two")}));
    }
};

QTEST_GUILESS_MAIN(TestRunView)
#include "tests/support/vocabtesting.h"
#include "tst_runview.moc"
