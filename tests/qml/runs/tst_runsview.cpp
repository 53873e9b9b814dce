// The Pipelines view against a real API server whose engine runs the real pipeline runner (host
// tasks through sh; the deploy side on fake adapters), through RemoteSession: a pipeline set over
// the API appears with its jobs; a triggered run appears in the runs list from the event stream,
// its step tree fills live from the run's follow to the end with durations and output, and the
// same job run again shows every step skipped as unchanged; a failed run opens on its failing
// step; abort, pause and unpause go through the models; an install without the runner says so;
// and the view is rendered offscreen at 1280×800 (saved under the build dir's screenshots/).

#include "app/desktop/session/remotesession.h"
#include "app/desktop/shell/desktopstate.h"
#include "qml/runs/pipelinesmodel.h"
#include "qml/runs/runsmodel.h"
#include "qml/runs/runstate.h"
#include "qml/runs/runtreemodel.h"
#include "tests/app/desktop/session/screenshots.h"
#include "tests/app/desktop/session/sessionharness.h"
#include "tests/app/server/fakes.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QImage>
#include <QQmlEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickView>
#include <QSet>
#include <QSignalSpy>
#include <QTest>

using namespace pando;
using namespace pando::desktop;
using namespace Qt::StringLiterals;

namespace {

QByteArray hostTask(const QByteArray &name, const QByteArray &script, const QByteArray &indent)
{
    return indent + "- task: " + name + "\n" + indent + "  config: {platform: host, run: {path: sh, args: [\"-c\", \"" +
           script + "\"]}}\n";
}

// build: compile, then unit and lint side by side. slow: waits to be aborted. check: the same
// compile, then a test that fails. ship: waits for someone to approve it.
QByteArray pipelineYaml()
{
    return "jobs:\n"
           "- name: build\n"
           "  plan:\n" +
           hostTask("compile", "echo compiling; echo compiled 12 files", "  ") + "  - in_parallel:\n" +
           hostTask("unit", "echo running 3 tests; echo 3 passed", "    ") +
           hostTask("lint", "echo lint clean", "    ") +
           "- name: slow\n"
           "  plan:\n" +
           hostTask("wait", "echo waiting; sleep 60", "  ") +
           "- name: check\n"
           "  plan:\n" +
           hostTask("compile", "echo compiling; echo compiled 12 files", "  ") +
           hostTask("test", "echo 1 test failed >&2; exit 3", "  ") +
           "- name: ship\n"
           "  plan:\n" +
           hostTask("colour", "printf '\\e[32mall green\\e[0m\\n'", "  ") +
           "  - approve: ship-it\n"
           "    message: \"Ship it?\"\n";
}

// The tree as text, for failure messages: "task compile succeeded; in_parallel succeeded
// [task unit succeeded; task lint succeeded]".
QString treeText(const QAbstractItemModel &model, const QModelIndex &parent = {})
{
    QStringList items;
    for (int row = 0; row < model.rowCount(parent); ++row) {
        const QModelIndex at = model.index(row, 0, parent);
        QString item =
            at.data(RunTreeModel::LabelRole).toString() + u' ' + at.data(RunTreeModel::StatusRole).toString();
        if (model.rowCount(at) > 0)
            item += u" ["_s + treeText(model, at) + u']';
        items.append(item);
    }
    return items.join(u"; "_s);
}

QStringList outputLines(const StepOutputModel &output)
{
    QStringList lines;
    for (int row = 0; row < output.rowCount(); ++row)
        lines.append(output.index(row).data(StepOutputModel::TextRole).toString());
    return lines;
}

} // namespace

class TestRunsView : public QObject {
    Q_OBJECT

private:
    test::TestInstall m_install;
    std::unique_ptr<RemoteSession> m_session;

    QString status(RunsModel &runs, const QString &id) const
    {
        const int row = runs.rowOf(id);
        return row < 0 ? u"<not listed>"_s : runs.index(row).data(RunsModel::StatusRole).toString();
    }

    // Triggers the job through the model and answers the new run's id.
    QString trigger(PipelinesModel &pipelines, const QString &job)
    {
        QSignalSpy triggered(&pipelines, &PipelinesModel::triggered);
        pipelines.triggerJob(pipelines.rowOf(u"ci"_s), job);
        if (!triggered.wait(20000))
            return {};
        return triggered.first().at(1).toString();
    }

    // The texts of the visible items of this name under root. List rows and section headers are
    // items of the list, not QObject children: walked as items.
    static QStringList visibleTexts(QQuickItem *root, const QString &name)
    {
        QStringList texts;
        if (root->objectName() == name && root->isVisible())
            texts << root->property("text").toString();
        for (QQuickItem *child : root->childItems())
            texts << visibleTexts(child, name);
        return texts;
    }

    // Each pipeline set with the test's config; false (with the error said) when one is refused.
    bool setPipelines(const QStringList &names)
    {
        for (const QString &name : names) {
            auto set = test::awaitObject([&](auto done) { m_session->setPipeline(name, pipelineYaml(), {}, done); });
            if (!set) {
                qWarning("setting %s: %s", qPrintable(name), qPrintable(test::describe(set.error())));
                return false;
            }
        }
        return true;
    }

    // The visible list row (an item with the row's roles) showing this pipeline, walked as items.
    static QQuickItem *pipelineRow(QQuickItem *root, const QString &name)
    {
        if (root->property("name").toString() == name && root->property("instanceGroup").isValid() && root->isVisible())
            return root;
        for (QQuickItem *child : root->childItems())
            if (QQuickItem *row = pipelineRow(child, name))
                return row;
        return nullptr;
    }

    // RunsView on the three models, 1280×800, its QML warnings collected.
    void showRunsView(QQuickView &view, PipelinesModel &pipelines, RunsModel &runs, RunTreeModel &tree,
                      QStringList &warnings)
    {
        connect(view.engine(), &QQmlEngine::warnings, this, [&warnings](const QList<QQmlError> &list) {
            for (const QQmlError &e : list)
                warnings.append(e.toString());
        });
        view.engine()->addImportPath(u"qrc:/qt/qml"_s);
        view.setInitialProperties({{u"pipelinesModel"_s, QVariant::fromValue<QObject *>(&pipelines)},
                                   {u"runsModel"_s, QVariant::fromValue<QObject *>(&runs)},
                                   {u"runTree"_s, QVariant::fromValue<QObject *>(&tree)}});
        view.setResizeMode(QQuickView::SizeRootObjectToView);
        view.setSource(QUrl(u"qrc:/qt/qml/Pando/Runs/RunsView.qml"_s));
        view.resize(1280, 800);
        view.show();
    }

private Q_SLOTS:
    void initTestCase()
    {
        // The real pipeline runner, as pandod and the desktop's own engine wire it.
        m_install.realPipelines = true;
        QVERIFY2(m_install.start(), qPrintable(m_install.error));
        m_session = std::make_unique<RemoteSession>(QUrl(m_install.baseUrl()), m_install.token);
        QString why;
        m_session->open();
        QVERIFY2(test::awaitConnected(*m_session, &why), qPrintable(why));
    }

    void installWithoutRunner()
    {
        test::TestInstall bare;
        QVERIFY2(bare.start(), qPrintable(bare.error));
        RemoteSession session(QUrl(bare.baseUrl()), bare.token);
        QString why;
        session.open();
        QVERIFY2(test::awaitConnected(session, &why), qPrintable(why));
        PipelinesModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSession(&session);
        QTRY_VERIFY(model.isLoaded());
        QVERIFY(model.isUnavailable());
        QCOMPARE(model.rowCount(), 0);
        QVERIFY2(model.error().contains(u"the pipeline runner is not enabled"_s), qPrintable(model.error()));
    }

    void emptyThenSetPipeline()
    {
        PipelinesModel pipelines;
        QAbstractItemModelTester tester(&pipelines, QAbstractItemModelTester::FailureReportingMode::QtTest);
        pipelines.setSession(m_session.get());
        QTRY_VERIFY(pipelines.isLoaded());
        QCOMPARE(pipelines.rowCount(), 0);
        QVERIFY(!pipelines.isUnavailable());
        QCOMPARE(pipelines.error(), QString());
        // Host execution is off on a new install, and the desktop says so.
        QTRY_VERIFY(pipelines.hostExecutionText().startsWith(PipelinesModel::tr("off")));
        // So are file://, the ssh-agent and internal hosts for members' apps (issue 12), and
        // previews of forks; a deploy's output is kept 90 days.
        QVERIFY2(pipelines.appAccessText().count(PipelinesModel::tr("not allowed")) == 4 &&
                     pipelines.appAccessText().contains(u"20000-29999"_s) &&
                     pipelines.appAccessText().contains(u"90"_s),
                 qPrintable(pipelines.appAccessText()));

        auto set = test::awaitObject([&](auto done) { m_session->setPipeline(u"ci"_s, pipelineYaml(), {}, done); });
        QVERIFY2(set, qPrintable(set ? QString() : test::describe(set.error())));
        QVERIFY(m_install.allowHostExecution(u"ci"_s)); // the plan's tasks run on the host
        pipelines.refresh();
        QTRY_COMPARE(pipelines.rowCount(), 1);
        const QModelIndex row = pipelines.index(0);
        QCOMPARE(row.data(PipelinesModel::NameRole).toString(), u"ci"_s);
        QCOMPARE(row.data(PipelinesModel::JobsRole).toStringList(),
                 (QStringList{u"build"_s, u"slow"_s, u"check"_s, u"ship"_s}));
        // New pipelines start paused, as fly's set-pipeline makes them; the row says why, and
        // its switch starts it.
        QCOMPARE(row.data(PipelinesModel::PausedRole).toBool(), true);
        QVERIFY2(row.data(PipelinesModel::PausedReasonRole).toString().endsWith(u"new pipelines start paused"_s),
                 qPrintable(row.data(PipelinesModel::PausedReasonRole).toString()));
        pipelines.setPaused(0, false);
        QTRY_COMPARE(pipelines.index(0).data(PipelinesModel::PausedRole).toBool(), false);
        QCOMPARE(pipelines.index(0).data(PipelinesModel::PausedReasonRole).toString(), QString());
        // The administrator's choice, as the desktop shows it.
        QCOMPARE(row.data(PipelinesModel::HostExecutionRole).toBool(), true);
        QVERIFY2(pipelines.hostExecutionText().startsWith(PipelinesModel::tr("on")),
                 qPrintable(pipelines.hostExecutionText()));
        QCOMPARE(row.data(PipelinesModel::LastRunIdRole).toString(), QString());
        QCOMPARE(row.data(PipelinesModel::LastRunTextRole).toString(), PipelinesModel::tr("never run"));
        // A person set it, not another pipeline's set_pipeline step.
        QCOMPARE(row.data(PipelinesModel::SetByRole).toString(), QString());
        // The first pipeline is selected by itself.
        QCOMPARE(pipelines.selectedName(), u"ci"_s);
    }

    void triggerAndFollowTheTree()
    {
        PipelinesModel pipelines;
        QAbstractItemModelTester pipelinesTester(&pipelines, QAbstractItemModelTester::FailureReportingMode::QtTest);
        pipelines.setSession(m_session.get());
        RunsModel runs;
        QAbstractItemModelTester runsTester(&runs, QAbstractItemModelTester::FailureReportingMode::QtTest);
        runs.setSession(m_session.get());
        runs.setPipeline(u"ci"_s);
        RunTreeModel tree;
        QAbstractItemModelTester treeTester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
        tree.setSession(m_session.get());
        QTRY_COMPARE(pipelines.rowCount(), 1);
        QTRY_VERIFY(!runs.isLoading());
        const int before = runs.rowCount();

        const QString id = trigger(pipelines, u"build"_s);
        QVERIFY(!id.isEmpty());
        // Loaded already and not refreshed since: the row comes from run.queued.
        QTRY_COMPARE_WITH_TIMEOUT(runs.rowCount(), before + 1, 20000);
        QCOMPARE(runs.index(0).data(RunsModel::IdRole).toString(), id);
        QCOMPARE(runs.index(0).data(RunsModel::JobRole).toString(), u"build"_s);
        QCOMPARE(runs.index(0).data(RunsModel::TitleRole).toString(), RunsModel::tr("%1 #%2").arg(u"build"_s).arg(1));

        // The tree fills live from the follow, to the run's end.
        tree.setRunId(id);
        QTRY_COMPARE_WITH_TIMEOUT(tree.status(), u"succeeded"_s, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(!tree.isFollowing(), 10000);
        QCOMPARE(tree.error(), QString());
        QCOMPARE(tree.rowCount(), 2);
        const QModelIndex compile = tree.index(0, 0);
        const QModelIndex parallel = tree.index(1, 0);
        QCOMPARE(compile.data(RunTreeModel::LabelRole).toString(), u"task compile"_s);
        QCOMPARE(parallel.data(RunTreeModel::KindRole).toString(), u"in_parallel"_s);
        QCOMPARE(tree.rowCount(parallel), 2);
        QVERIFY2(treeText(tree).contains(u"task unit succeeded"_s) && treeText(tree).contains(u"task lint succeeded"_s),
                 qPrintable(treeText(tree)));
        QCOMPARE(tree.parent(tree.index(0, 0, parallel)), parallel);
        QCOMPARE(compile.data(RunTreeModel::StateRole).toInt(), int(DisplayState::Healthy));
        QCOMPARE(compile.data(RunTreeModel::StatusTextRole).toString(), RunState::word(u"succeeded"_s));
        QCOMPARE(compile.data(RunTreeModel::CachedRole).toBool(), false);
        QCOMPARE(compile.data(RunTreeModel::ExitCodeRole).toInt(), 0);
        QVERIFY(compile.data(RunTreeModel::DurationMsRole).toLongLong() > 0);
        QVERIFY(compile.data(RunTreeModel::HasOutputRole).toBool());
        QCOMPARE(tree.stepCount(), 4);
        QCOMPARE(tree.cachedCount(), 0);
        QCOMPARE(tree.failedCount(), 0);

        // The whole run's output, then one step's.
        QVERIFY2(outputLines(*tree.output()).contains(u"3 passed"_s),
                 qPrintable(outputLines(*tree.output()).join(u'|')));
        // Side by side, the two start in either order: the tree shows them as they started.
        const int unitRow = tree.index(0, 0, parallel).data(RunTreeModel::NameRole).toString() == u"unit"_s ? 0 : 1;
        const QString unit = tree.index(unitRow, 0, parallel).data(RunTreeModel::IdRole).toString();
        tree.setSelectedStep(unit);
        QCOMPARE(tree.selected().value(u"label"_s).toString(), u"task unit"_s);
        const QStringList unitLines = outputLines(*tree.output());
        QVERIFY2(unitLines.contains(u"running 3 tests"_s) && unitLines.contains(u"3 passed"_s) &&
                     !unitLines.contains(u"lint clean"_s),
                 qPrintable(unitLines.join(u'|')));

        // The list and the pipeline's last run follow the end.
        QTRY_COMPARE_WITH_TIMEOUT(status(runs, id), u"succeeded"_s, 10000);
        QTRY_VERIFY(runs.index(runs.rowOf(id)).data(RunsModel::DurationMsRole).toLongLong() > 0);
        QTRY_COMPARE(pipelines.index(0).data(PipelinesModel::LastRunStatusRole).toString(), u"succeeded"_s);
        QCOMPARE(pipelines.index(0).data(PipelinesModel::LastRunIdRole).toString(), id);

        // The same job again: nothing changed, so every task is skipped as unchanged.
        const QString again = trigger(pipelines, u"build"_s);
        QVERIFY(!again.isEmpty());
        tree.setRunId(again);
        QTRY_COMPARE_WITH_TIMEOUT(tree.status(), u"succeeded"_s, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(!tree.isFollowing(), 10000);
        QVERIFY2(tree.cachedCount() == 3, qPrintable(treeText(tree)));
        const QModelIndex cached = tree.index(0, 0);
        QCOMPARE(cached.data(RunTreeModel::CachedRole).toBool(), true);
        QCOMPARE(cached.data(RunTreeModel::StateRole).toInt(), int(DisplayState::Cached));
        QCOMPARE(cached.data(RunTreeModel::StatusTextRole).toString(), RunState::word(u"cached"_s));
        QCOMPARE(cached.data(RunTreeModel::DurationTextRole).toString(), RunState::durationText(0));
        QVERIFY2(tree.summaryText().contains(RunTreeModel::tr("%n unchanged", nullptr, 3)),
                 qPrintable(tree.summaryText()));
        QTRY_COMPARE(runs.index(0).data(RunsModel::IdRole).toString(), again);
    }

    void failedRunOpensOnItsFailingStep()
    {
        PipelinesModel pipelines;
        pipelines.setSession(m_session.get());
        QTRY_COMPARE(pipelines.rowCount(), 1);
        RunTreeModel tree;
        QAbstractItemModelTester treeTester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
        tree.setSession(m_session.get());
        const QString id = trigger(pipelines, u"check"_s);
        QVERIFY(!id.isEmpty());
        tree.setRunId(id);
        QTRY_COMPARE_WITH_TIMEOUT(tree.status(), u"failed"_s, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(!tree.isFollowing(), 10000);
        QCOMPARE(tree.failedCount(), 1);
        QCOMPARE(tree.state(), int(DisplayState::Failed));
        // The failing step is selected by itself, with its reason and its own output.
        QCOMPARE(tree.selected().value(u"label"_s).toString(), u"task test"_s);
        QCOMPARE(tree.selected().value(u"exitCode"_s).toInt(), 3);
        QVERIFY2(tree.selected().value(u"error"_s).toString().contains(u"3"_s),
                 qPrintable(tree.selected().value(u"error"_s).toString()));
        QTRY_VERIFY(outputLines(*tree.output()).contains(u"1 test failed"_s));
        QCOMPARE(tree.output()->index(tree.output()->rowCount() - 1).data(StepOutputModel::StreamRole).toString(),
                 u"stderr"_s);
        QTRY_COMPARE(pipelines.index(0).data(PipelinesModel::LastRunStateRole).toInt(), int(DisplayState::Failed));
        // The status line and the tray count it: a failed run never counted before.
        DesktopState state(m_session.get());
        QTRY_COMPARE(state.pipelines()->failingCount(), 1);
        QTRY_COMPARE(state.overall(), DisplayState::Failed);
        QVERIFY2(state.overallText().contains(DesktopState::tr("%n pipeline(s) failing", nullptr, 1)),
                 qPrintable(state.overallText()));
    }

    // An approve step is signed off in the run's detail: its requester is refused in place (it
    // used to show only the CLI command), someone else's rejection says "rejected", not "failed".
    void approveStepIsSignedOffInTheRun()
    {
        PipelinesModel pipelines;
        pipelines.setSession(m_session.get());
        QTRY_COMPARE(pipelines.rowCount(), 1);
        RunsModel runs;
        runs.setSession(m_session.get());
        runs.setPipeline(u"ci"_s);
        QTRY_VERIFY(!runs.isLoading());
        const QString id = trigger(pipelines, u"ship"_s);
        QVERIFY(!id.isEmpty());
        // Listed as waiting for approval while the step waits, not as running (the list and the
        // pipeline's last run alike).
        QTRY_COMPARE_WITH_TIMEOUT(runs.index(runs.rowOf(id)).data(RunsModel::StateRole).toInt(),
                                  int(DisplayState::Waiting), 20000);
        QCOMPARE(runs.index(runs.rowOf(id)).data(RunsModel::StatusTextRole).toString(), RunState::word(u"waiting"_s));
        QTRY_COMPARE(pipelines.index(0).data(PipelinesModel::LastRunStateRole).toInt(), int(DisplayState::Waiting));
        {
            // Events and answers cross: the run's end arrives first, then an answer read while the
            // run still waited (made here by an approval event, which has the model ask again).
            PipelinesModel crossed;
            crossed.setSession(m_session.get());
            QTRY_COMPARE(crossed.index(0).data(PipelinesModel::LastRunStateRole).toInt(), int(DisplayState::Waiting));
            Q_EMIT m_session->eventReceived(QJsonObject{
                {u"type"_s, u"run.finished"_s},
                {u"data"_s, QJsonObject{{u"pipeline"_s, u"ci"_s}, {u"run"_s, id}, {u"status"_s, u"failed"_s}}}});
            QCOMPARE(crossed.index(0).data(PipelinesModel::LastRunStateRole).toInt(), int(DisplayState::Failed));
            Q_EMIT m_session->eventReceived(
                QJsonObject{{u"type"_s, u"approval.requested"_s},
                            {u"data"_s, QJsonObject{{u"object"_s, u"run/%1/step/approve"_s.arg(id)}}}});
            QTest::qWait(500); // the answer (still waiting) comes and is not taken
            QCOMPARE(crossed.index(0).data(PipelinesModel::LastRunStateRole).toInt(), int(DisplayState::Failed));
        }
        const auto approveStep = [](const RunTreeModel &tree) {
            for (int row = 0; row < tree.rowCount(); ++row)
                if (tree.index(row, 0).data(RunTreeModel::KindRole).toString() == u"approve"_s)
                    return tree.index(row, 0);
            return QModelIndex();
        };

        RunTreeModel mine; // the requester's
        mine.setSession(m_session.get());
        mine.setRunId(id);
        QTRY_VERIFY_WITH_TIMEOUT(approveStep(mine).data(RunTreeModel::ApprovalStatusRole).toString() == u"pending"_s,
                                 20000);
        // The step before it printed in colour: the output shows the text, not the escapes.
        QTRY_VERIFY_WITH_TIMEOUT(outputLines(*mine.output()).contains(u"all green"_s), 10000);
        mine.setSelectedStep(approveStep(mine).data(RunTreeModel::IdRole).toString());
        QCOMPARE(mine.selected().value(u"approvalId"_s).toString().isEmpty(), false);
        QCOMPARE(mine.selected().value(u"error"_s).toString(), QString()); // no CLI command to copy
        QCOMPARE(mine.selected().value(u"statusText"_s).toString(), RunState::word(u"waiting"_s));
        mine.decide(true, u"my own"_s);
        QTRY_VERIFY_WITH_TIMEOUT(!mine.decisionError().isEmpty(), 10000);
        QVERIFY2(mine.decisionError().contains(u"may not approve"_s), qPrintable(mine.decisionError()));
        QCOMPARE(mine.isDeciding(), false);
        QCOMPARE(approveStep(mine).data(RunTreeModel::ApprovalStatusRole).toString(), u"pending"_s);

        RemoteSession operatorSession(QUrl(m_install.baseUrl()), m_install.tokens.value(u"operator"_s));
        operatorSession.open();
        QString why;
        QVERIFY2(test::awaitConnected(operatorSession, &why), qPrintable(why));
        RunTreeModel theirs;
        theirs.setSession(&operatorSession);
        theirs.setRunId(id);
        QTRY_VERIFY_WITH_TIMEOUT(approveStep(theirs).isValid(), 20000);
        theirs.setSelectedStep(approveStep(theirs).data(RunTreeModel::IdRole).toString());
        theirs.decide(false, u"not today"_s);
        QTRY_COMPARE_WITH_TIMEOUT(theirs.status(), u"failed"_s, 20000);
        QCOMPARE(theirs.decisionError(), QString());
        QTRY_COMPARE(approveStep(theirs).data(RunTreeModel::StatusTextRole).toString(), RunTreeModel::tr("rejected"));
        QTRY_COMPARE_WITH_TIMEOUT(approveStep(mine).data(RunTreeModel::ApprovalStatusRole).toString(), u"rejected"_s,
                                  20000);
        QTRY_COMPARE_WITH_TIMEOUT(runs.index(runs.rowOf(id)).data(RunsModel::StateRole).toInt(),
                                  int(DisplayState::Failed), 20000);
        QTRY_COMPARE(pipelines.index(0).data(PipelinesModel::LastRunStateRole).toInt(), int(DisplayState::Failed));
    }

    void abortPauseAndUnpause()
    {
        PipelinesModel pipelines;
        QAbstractItemModelTester pipelinesTester(&pipelines, QAbstractItemModelTester::FailureReportingMode::QtTest);
        pipelines.setSession(m_session.get());
        RunsModel runs;
        QAbstractItemModelTester runsTester(&runs, QAbstractItemModelTester::FailureReportingMode::QtTest);
        runs.setSession(m_session.get());
        runs.setPipeline(u"ci"_s);
        RunTreeModel tree;
        QAbstractItemModelTester treeTester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
        tree.setSession(m_session.get());
        QTRY_COMPARE(pipelines.rowCount(), 1);

        // A running run is aborted through the list.
        const QString slow = trigger(pipelines, u"slow"_s);
        QVERIFY(!slow.isEmpty());
        tree.setRunId(slow);
        QTRY_COMPARE_WITH_TIMEOUT(status(runs, slow), u"running"_s, 20000);
        // The run's start comes on the event stream. (A step's own start may wait in the runner's
        // output batch until the step prints again or ends, so the tree is not asked for it here.)
        QTRY_COMPARE_WITH_TIMEOUT(tree.status(), u"running"_s, 20000);
        QVERIFY(runs.index(runs.rowOf(slow)).data(RunsModel::LiveRole).toBool());
        runs.abort(runs.rowOf(slow));
        QTRY_COMPARE_WITH_TIMEOUT(status(runs, slow), u"aborted"_s, 20000);
        QCOMPARE(runs.index(runs.rowOf(slow)).data(RunsModel::ActionErrorRole).toString(), QString());
        QCOMPARE(runs.index(runs.rowOf(slow)).data(RunsModel::StateRole).toInt(), int(DisplayState::Stopped));
        QTRY_COMPARE_WITH_TIMEOUT(tree.status(), u"aborted"_s, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(!tree.isFollowing(), 10000);
        QVERIFY2(tree.index(0, 0).data(RunTreeModel::StatusRole).toString() == u"aborted"_s,
                 qPrintable(treeText(tree)));

        // Aborting it again is refused in place, in the install's words.
        runs.abort(runs.rowOf(slow));
        QTRY_VERIFY(!runs.index(runs.rowOf(slow)).data(RunsModel::ActionErrorRole).toString().isEmpty());
        QVERIFY2(runs.index(runs.rowOf(slow)).data(RunsModel::ActionErrorRole).toString().contains(u"aborted"_s),
                 qPrintable(runs.index(runs.rowOf(slow)).data(RunsModel::ActionErrorRole).toString()));

        // Paused: a trigger is refused in place, saying so and how to go on; unpaused, it runs.
        pipelines.setPaused(0, true);
        QTRY_COMPARE(pipelines.index(0).data(PipelinesModel::PausedRole).toBool(), true);
        QCOMPARE(pipelines.index(0).data(PipelinesModel::BusyRole).toBool(), false);
        QVERIFY2(pipelines.index(0).data(PipelinesModel::PausedReasonRole).toString().contains(u"admin"_s),
                 qPrintable(pipelines.index(0).data(PipelinesModel::PausedReasonRole).toString()));
        pipelines.triggerJob(0, u"build"_s);
        QTRY_VERIFY(!pipelines.index(0).data(PipelinesModel::ActionErrorRole).toString().isEmpty());
        QVERIFY2(pipelines.index(0).data(PipelinesModel::ActionErrorRole).toString().contains(u"paused"_s),
                 qPrintable(pipelines.index(0).data(PipelinesModel::ActionErrorRole).toString()));
        pipelines.setPaused(0, false);
        QTRY_COMPARE(pipelines.index(0).data(PipelinesModel::PausedRole).toBool(), false);
        const QString waiting = trigger(pipelines, u"build"_s);
        QVERIFY(!waiting.isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(status(runs, waiting), u"succeeded"_s, 30000);
        QTRY_COMPARE(pipelines.index(0).data(PipelinesModel::LastRunIdRole).toString(), waiting);

        // An unknown job is refused in place.
        pipelines.triggerJob(0, u"nope"_s);
        QTRY_VERIFY(!pipelines.index(0).data(PipelinesModel::ActionErrorRole).toString().isEmpty());
        QVERIFY2(pipelines.index(0).data(PipelinesModel::ActionErrorRole).toString().contains(u"nope"_s),
                 qPrintable(pipelines.index(0).data(PipelinesModel::ActionErrorRole).toString()));
    }

    void runsViewScreenshot()
    {
        PipelinesModel pipelines;
        RunsModel runs;
        RunTreeModel tree;
        pipelines.setSession(m_session.get());
        runs.setSession(m_session.get());
        tree.setSession(m_session.get());
        QTRY_COMPARE(pipelines.rowCount(), 1);

        QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
        QQuickStyle::setStyle(u"Fusion"_s);
        QQuickView view;
        QStringList warnings;
        showRunsView(view, pipelines, runs, tree, warnings);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY2(view.status() == QQuickView::Ready, qPrintable(warnings.join(u'\n')));

        // The view binds the runs to the selected pipeline and the tree to the selected run.
        QTRY_COMPARE(runs.pipeline(), u"ci"_s);
        QTRY_VERIFY(runs.rowCount() >= 4);
        QTRY_COMPARE(tree.runId(), runs.selectedId());
        const int failed = [&runs] {
            for (int row = 0; row < runs.rowCount(); ++row)
                if (runs.index(row).data(RunsModel::StatusRole).toString() == u"failed"_s &&
                    runs.index(row).data(RunsModel::JobRole).toString() == u"check"_s)
                    return row;
            return -1;
        }();
        QVERIFY(failed >= 0);
        // Selecting a run shows its tree.
        runs.setSelectedRow(failed);
        QTRY_COMPARE(tree.runId(), runs.index(failed).data(RunsModel::IdRole).toString());
        QTRY_COMPARE_WITH_TIMEOUT(tree.status(), u"failed"_s, 10000);
        QTRY_COMPARE(tree.rowCount(), 2);
        QTRY_VERIFY(tree.output()->rowCount() > 0);

        // Ctrl+Shift+P pauses the selected pipeline, and again unpauses it.
        QTest::keyClick(&view, Qt::Key_P, Qt::ControlModifier | Qt::ShiftModifier);
        QTRY_COMPARE(pipelines.index(0).data(PipelinesModel::PausedRole).toBool(), true);
        QTest::qWait(500);
        const QImage image = view.grabWindow();
        QTest::keyClick(&view, Qt::Key_P, Qt::ControlModifier | Qt::ShiftModifier);
        QTRY_COMPARE(pipelines.index(0).data(PipelinesModel::PausedRole).toBool(), false);

        QVERIFY2(!test::saveScreenshot(image, u"desktop-runs"_s).isEmpty(), "the screenshot could not be saved");
        QCOMPARE(image.size() / image.devicePixelRatio(), QSize(1280, 800));
        const int colours = test::distinctColours(image);
        QVERIFY2(colours > 16, qPrintable(u"only %1 colours"_s.arg(colours)));
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));
    }

    // An instanced pipeline's instances sit under their group's name, each row showing its vars.
    void instancesSitUnderTheirGroup()
    {
        QVERIFY(setPipelines({u"preview/branch:a"_s, u"preview/branch:b"_s, u"solo"_s}));
        PipelinesModel pipelines;
        RunsModel runs;
        RunTreeModel tree;
        pipelines.setSession(m_session.get());
        QTRY_VERIFY(pipelines.rowOf(u"preview/branch:b"_s) >= 0 && pipelines.rowOf(u"solo"_s) >= 0);
        const QModelIndex instance = pipelines.index(pipelines.rowOf(u"preview/branch:b"_s));
        QCOMPARE(instance.data(PipelinesModel::InstanceGroupRole).toString(), u"preview"_s);
        QCOMPARE(instance.data(PipelinesModel::InstanceVarsRole).toString(), u"branch:b"_s);
        QCOMPARE(pipelines.index(pipelines.rowOf(u"solo"_s)).data(PipelinesModel::InstanceGroupRole).toString(),
                 QString());

        QQuickView view;
        QStringList warnings;
        showRunsView(view, pipelines, runs, tree, warnings);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY2(view.status() == QQuickView::Ready, qPrintable(warnings.join(u'\n')));
        QTRY_VERIFY(!visibleTexts(view.rootObject(), u"instanceGroupHeader"_s).isEmpty());
        QCOMPARE(visibleTexts(view.rootObject(), u"instanceGroupHeader"_s), QStringList{u"preview"_s});
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));
    }

    // An instance's menu pauses, unpauses and archives every instance of its group (archiving asks
    // first); a pipeline that is no instance has no such items, and is left alone.
    void instanceGroupActionsFromTheMenu()
    {
        QVERIFY(setPipelines({u"fleet/n:1"_s, u"fleet/n:2"_s, u"alone"_s}));
        PipelinesModel pipelines;
        QAbstractItemModelTester tester(&pipelines, QAbstractItemModelTester::FailureReportingMode::QtTest);
        RunsModel runs;
        RunTreeModel tree;
        pipelines.setSession(m_session.get());
        QTRY_VERIFY(pipelines.rowOf(u"fleet/n:2"_s) >= 0 && pipelines.rowOf(u"alone"_s) >= 0);
        QCOMPARE(pipelines.instancesOf(u"fleet"_s), (QStringList{u"fleet/n:1"_s, u"fleet/n:2"_s}));
        const auto paused = [&pipelines](const QString &name) {
            return pipelines.index(pipelines.rowOf(name)).data(PipelinesModel::PausedRole).toBool();
        };
        // New pipelines start paused: running ones first.
        for (const QString &name : {u"fleet/n:1"_s, u"fleet/n:2"_s, u"alone"_s})
            pipelines.setPaused(pipelines.rowOf(name), false);
        QTRY_VERIFY(!paused(u"fleet/n:1"_s) && !paused(u"fleet/n:2"_s) && !paused(u"alone"_s));

        QQuickView view;
        QStringList warnings;
        showRunsView(view, pipelines, runs, tree, warnings);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY2(view.status() == QQuickView::Ready, qPrintable(warnings.join(u'\n')));
        const auto openMenuOn = [&](const QString &name) -> QObject * {
            QQuickItem *row = nullptr;
            if (!QTest::qWaitFor([&] { return (row = pipelineRow(view.rootObject(), name)) != nullptr; }))
                return nullptr;
            QTest::mouseClick(&view, Qt::RightButton, {},
                              row->mapToScene(QPointF(row->width() / 2, row->height() / 2)).toPoint());
            auto *menu = view.rootObject()->findChild<QObject *>(u"pipelineMenu"_s);
            return menu && QTest::qWaitFor([menu] { return menu->property("opened").toBool(); }) ? menu : nullptr;
        };
        auto *pauseAll = view.rootObject()->findChild<QObject *>(u"pauseGroupItem"_s);
        QVERIFY(pauseAll);
        QObject *menu = openMenuOn(u"alone"_s);
        QVERIFY(menu);
        QVERIFY(!pauseAll->property("visible").toBool());
        QVERIFY(QMetaObject::invokeMethod(menu, "close"));
        menu = openMenuOn(u"fleet/n:2"_s);
        QVERIFY(menu);
        QTRY_VERIFY(pauseAll->property("visible").toBool());
        QCOMPARE(pauseAll->property("text").toString(), u"Pause every instance of fleet"_s);
        QVERIFY(QMetaObject::invokeMethod(pauseAll, "triggered"));
        QTRY_VERIFY_WITH_TIMEOUT(paused(u"fleet/n:1"_s) && paused(u"fleet/n:2"_s), 10000);
        QVERIFY(!paused(u"alone"_s));
        QVERIFY(QMetaObject::invokeMethod(menu, "close"));

        QVERIFY(QMetaObject::invokeMethod(view.rootObject(), "archiveGroup", Q_ARG(QString, u"fleet"_s)));
        auto *dialog = view.rootObject()->findChild<QObject *>(u"archiveGroupDialog"_s);
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->property("opened").toBool());
        QCOMPARE(dialog->property("title").toString(), u"Archive every instance of fleet?"_s);
        QCOMPARE(dialog->property("instances").toInt(), 2);
        QVERIFY(pipelines.rowOf(u"fleet/n:1"_s) >= 0); // nothing happens before the answer
        QVERIFY(QMetaObject::invokeMethod(dialog, "accept"));
        QTRY_VERIFY_WITH_TIMEOUT(pipelines.rowOf(u"fleet/n:1"_s) < 0 && pipelines.rowOf(u"fleet/n:2"_s) < 0, 10000);
        QVERIFY(pipelines.rowOf(u"alone"_s) >= 0);
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));
    }

    // Archive… asks first, then the pipeline leaves the list; the Archived button lists it again,
    // marked archived, with its Pause off (a set brings it back, not an unpause).
    void archiveFromTheList()
    {
        QVERIFY(setPipelines({u"shelf"_s}));
        PipelinesModel pipelines;
        QAbstractItemModelTester tester(&pipelines, QAbstractItemModelTester::FailureReportingMode::QtTest);
        RunsModel runs;
        RunTreeModel tree;
        pipelines.setSession(m_session.get());
        QTRY_VERIFY(pipelines.rowOf(u"shelf"_s) >= 0);
        QQuickView view;
        QStringList warnings;
        showRunsView(view, pipelines, runs, tree, warnings);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY2(view.status() == QQuickView::Ready, qPrintable(warnings.join(u'\n')));
        QVERIFY(pipelines.selectName(u"shelf"_s));

        QVERIFY(
            QMetaObject::invokeMethod(view.rootObject(), "archivePipeline", Q_ARG(int, pipelines.rowOf(u"shelf"_s))));
        auto *dialog = view.rootObject()->findChild<QObject *>(u"archiveDialog"_s);
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->property("opened").toBool());
        QVERIFY2(dialog->property("title").toString().contains(u"shelf"_s),
                 qPrintable(dialog->property("title").toString()));
        QVERIFY(pipelines.rowOf(u"shelf"_s) >= 0); // nothing happens before the answer
        QVERIFY(QMetaObject::invokeMethod(dialog, "accept"));
        QTRY_VERIFY_WITH_TIMEOUT(pipelines.rowOf(u"shelf"_s) < 0, 10000);

        auto *shown = view.rootObject()->findChild<QQuickItem *>(u"showArchived"_s);
        QVERIFY(shown);
        QTest::mouseClick(&view, Qt::LeftButton, {},
                          shown->mapToScene(QPointF(shown->width() / 2, shown->height() / 2)).toPoint());
        QTRY_VERIFY(pipelines.showArchived());
        QTRY_VERIFY_WITH_TIMEOUT(pipelines.rowOf(u"shelf"_s) >= 0, 10000);
        const QModelIndex row = pipelines.index(pipelines.rowOf(u"shelf"_s));
        QVERIFY(row.data(PipelinesModel::ArchivedRole).toBool());
        QVERIFY2(row.data(PipelinesModel::PausedReasonRole).toString().startsWith(u"archived by "_s),
                 qPrintable(row.data(PipelinesModel::PausedReasonRole).toString()));
        QVERIFY(pipelines.selectName(u"shelf"_s));
        QTRY_VERIFY(visibleTexts(view.rootObject(), u"pipelineStateWord"_s).contains(u"archived"_s));
        auto *pause = view.rootObject()->findChild<QQuickItem *>(u"pauseButton"_s);
        QVERIFY(pause);
        QTRY_VERIFY(!pause->isEnabled());
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(u'\n')));
    }

    void cleanupTestCase() { m_session.reset(); }
};

QTEST_MAIN(TestRunsView)
#include "tst_runsview.moc"
