// A view made (again) by its Loader, as the window makes a view when it is shown, keeps the
// selection its models hold: a pipeline chosen elsewhere (Ctrl+K) before the Pipelines view exists,
// and a run and a resource chosen in a view that was unloaded and made again. A list made anew
// starts with no current row; that is not the user's choice and must not clear the model's.
import QtQuick
import QtTest
import Pando.Runs
import Pando.Shell
import Pando.Test

Item {
    id: root
    width: 1280
    height: 800

    Loader {
        id: loader
        anchors.fill: parent
        active: false
        sourceComponent: RunsView {
            pipelinesModel: Desktop.pipelines
            runsModel: Desktop.runs
            runTree: Desktop.runTree
        }
    }

    UserTestCase {
        name: "LazySelection"
        scope: loader

        // Unloads the view and makes it again, waiting until the new one is laid out.
        function remake(): Item {
            loader.active = false;
            verify(loader.item === null);
            loader.active = true;
            verify(loader.item !== null);
            tryVerify(() => loader.item.width > 0, 5000);
            return loader.item;
        }

        function test_1_aPipelineChosenBeforeTheViewIsMadeStaysChosen() {
            for (const name of ["alpha", "beta", "gamma"]) {
                const set = Fixture.setBuildPipeline(name);
                verify(!set.error, set.error);
            }
            Desktop.refresh();
            tryCompare(Desktop.pipelines, "count", 3, 10000);
            // As the palette does: the model is told, then the view is shown.
            Desktop.pipelines.selectedRow = Desktop.pipelines.rowOf("gamma");
            compare(Desktop.pipelines.selectedName, "gamma");
            loader.active = true;
            const list = named("pipelinesList");
            tryCompare(list, "count", 3, 5000);
            compare(Desktop.pipelines.selectedName, "gamma");
            compare(list.currentIndex, Desktop.pipelines.rowOf("gamma"));
        }

        function test_2_aRunStaysChosenWhenTheViewIsMadeAgain() {
            const row = Desktop.pipelines.rowOf("gamma");
            Desktop.pipelines.triggerJob(row, "build");
            tryCompare(Desktop.runs, "count", 1, 20000);
            tryCompare(Desktop.runTree, "status", "succeeded", 30000);
            Desktop.pipelines.triggerJob(row, "build");
            tryCompare(Desktop.runs, "count", 2, 20000);
            tryCompare(Desktop.runTree, "status", "succeeded", 30000);
            // The older run (newest first), chosen in the list.
            clickRow(named("runsList"), 1);
            tryCompare(Desktop.runs, "selectedRow", 1);
            const chosen = Desktop.runs.selectedId;
            verify(chosen.length > 0);

            remake();
            const runs = named("runsList");
            tryCompare(runs, "count", 2, 5000);
            compare(Desktop.pipelines.selectedName, "gamma");
            compare(Desktop.runs.selectedId, chosen);
            compare(runs.currentIndex, 1);
            compare(named("pipelinesList").currentIndex, Desktop.pipelines.rowOf("gamma"));
        }
    }
}
