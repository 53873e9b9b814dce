// The Pipelines view: a pipeline set over the API appears (after a refresh, as Ctrl+R does), a job
// is triggered from the Trigger menu, and selecting a run shows its step tree: the first run's
// steps ran, the second one's were skipped as unchanged.
import QtQuick
import QtTest
import Pando.Runs
import Pando.Shell
import Pando.States
import Pando.Test

Item {
    id: root
    width: 1280
    height: 800

    RunsView {
        id: view
        anchors.fill: parent
        pipelinesModel: Desktop.pipelines
        runsModel: Desktop.runs
        runTree: Desktop.runTree
    }

    UserTestCase {
        name: "RunsView"
        scope: view

        function trigger(job: string) {
            mouseClick(named("triggerButton"));
            const menu = named("jobMenu");
            tryCompare(menu, "opened", true);
            const item = named("job:" + job);
            tryCompare(item, "visible", true);
            // The menu lays its items out on the next polish; a click before lands nowhere.
            tryVerify(() => !isPolishScheduled(menu.contentItem), 5000, "the menu is not laid out");
            mouseClick(item);
            tryCompare(menu, "visible", false);
        }

        // The first step mark in the tree that shows a step skipped as unchanged; null when none.
        function cachedMark(tree: Item): QtObject {
            for (let row = 0; row < tree.rows; ++row) {
                const item = tree.itemAtCell(Qt.point(0, row));
                if (!item)
                    continue;
                const mark = findChild(item, "stateMark");
                if (mark && mark.displayState === DisplayState.Cached)
                    return mark;
            }
            return null;
        }

        function test_1_pipelineAppears() {
            const set = Fixture.setBuildPipeline("ci");
            verify(!set.error, set.error);
            Desktop.refresh();
            const list = named("pipelinesList");
            tryCompare(list, "count", 1, 10000);
            // The first pipeline is selected by itself.
            tryCompare(list, "currentIndex", 0);
            tryCompare(named("triggerButton"), "enabled", true);
        }

        function test_2_selectingARunShowsItsTree() {
            const runs = named("runsList");
            const tree = named("runTree");
            const title = named("runTitle");

            trigger("build");
            tryCompare(runs, "count", 1, 20000);
            tryCompare(Desktop.runTree, "status", "succeeded", 30000);
            trigger("build");
            tryCompare(runs, "count", 2, 20000);
            tryCompare(Desktop.runTree, "status", "succeeded", 30000);

            // The older run (the list is newest first): every task ran.
            clickRow(runs, 1);
            tryVerify(() => title.text.indexOf("#1") >= 0, 10000, title.text);
            // compile, then in_parallel with unit and lint, all expanded.
            tryCompare(tree, "rows", 4, 10000);
            tryCompare(Desktop.runTree, "status", "succeeded", 10000);
            compare(Desktop.runTree.cachedCount, 0);
            checkMark(named("runStateMark"), DisplayState.Healthy, "succeeded", "disc");
            tryVerify(() => runs.itemAtIndex(1) !== null, 5000, "run 1 is not shown");
            checkMark(named("stateMark", runs.itemAtIndex(1)), DisplayState.Healthy, "succeeded", "disc");

            // The newer one: nothing changed, so every task was skipped as unchanged.
            clickRow(runs, 0);
            tryVerify(() => title.text.indexOf("#2") >= 0, 10000, title.text);
            tryCompare(tree, "rows", 4, 10000);
            tryCompare(Desktop.runTree, "cachedCount", 3, 10000);
            // A task skipped as unchanged: the grey "cached" mark and its word.
            tryVerify(() => cachedMark(tree) !== null, 10000, "no step is marked unchanged");
            checkMark(cachedMark(tree), DisplayState.Cached, "unchanged", "cached");
        }
    }
}
