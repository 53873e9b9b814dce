// The Pipelines view: a pipeline set over the API appears (after a refresh, as Ctrl+R does), a job
// is triggered from the Trigger menu, and selecting a run shows its step tree: the first run's
// steps ran, the second one's were skipped as unchanged. The Jobs tab shows the passed: graph
// and triggers a job; the Resources tab checks a resource now and from a chosen version, and pins
// a version, which the next run gets; the Config tab shows the YAML and the changed line of the
// last set; a step's output shows its colours, line numbers and search hits; its context menu
// renames the pipeline, which keeps its runs.
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

    // A resource type on the host whose first check finds n 1 (a first check keeps only the newest,
    // as Concourse's does) and later ones 2 and 3 after it, and whose get writes the version it
    // got to num/version; build, then test after build, then ship after both.
    function graphPipeline(shipTask: string): string {
        const task = (name) => "  - task: " + name + "\n    config:\n      platform: host\n      inputs: [{name: num}]\n" +
                                "      run: {path: sh, args: [\"-c\", \"printf '\\\\033[32mfetched\\\\033[0m\\\\n'; echo got $(cat num/version)\"]}\n";
        return "resource_types:\n" +
               "- name: counter\n" +
               "  commands:\n" +
               "    check: |\n" +
               "      in=$(cat)\n" +
               "      if echo \"$in\" | grep -q '\"n\": *\"2\"'; then echo '[{\"n\": \"2\"}, {\"n\": \"3\"}, {\"n\": \"4\"}]'\n" +
               "      elif echo \"$in\" | grep -q '\"n\"'; then echo '[{\"n\": \"1\"}, {\"n\": \"2\"}, {\"n\": \"3\"}]'; else echo '[{\"n\": \"1\"}]'; fi\n" +
               "    in: |\n" +
               "      v=$(sed 's/.*\"version\":\\({[^}]*}\\).*/\\1/'); echo \"$v\" > \"$1/version\"; echo \"{\\\"version\\\": $v}\"\n" +
               "resources:\n- name: num\n  type: counter\n  check_every: never\n" +
               "jobs:\n" +
               "- name: build\n  plan:\n  - get: num\n" + task("print") +
               "- name: test\n  plan:\n  - get: num\n    passed: [build]\n" + task("print") +
               "- name: ship\n  disable_manual_trigger: true\n  plan:\n  - in_parallel:\n    - get: num\n      passed: [build, test]\n" + task(shipTask);
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
            // The Jobs, Config and Resources tabs are made when first shown, not with the view.
            for (const name of ["jobBoxes", "configYaml", "resourcesList"])
                verify(findChild(view, name) === null, name + " was made before its tab was shown");
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
    
        function selectGraph() {
            const set = Fixture.setPipeline("graph", root.graphPipeline("deploy"));
            verify(!set.error, set.error);
            Desktop.refresh();
            const list = named("pipelinesList");
            tryCompare(list, "count", 2, 10000);
            clickRow(list, 1); // ci, graph
            tryCompare(Desktop.pipelines, "selectedName", "graph");
        }

        function test_3_jobsTabShowsThePassedGraph() {
            selectGraph();
            mouseClick(named("jobsTab"));
            const jobs = named("jobBoxes");
            tryCompare(jobs, "count", 3, 10000);
            tryCompare(view.jobsModel, "stageCount", 3);
            // A column per stage, in the order of the graph; the job's words in its box.
            const expected = [["build", 0, "first: no job feeds it"], ["test", 1, "after build"], ["ship", 2, "after build, test"]];
            for (let row = 0; row < expected.length; ++row) {
                const box = jobs.itemAt(row);
                verify(box !== null, "job " + row + " is not shown");
                compare(named("jobName", box).text, expected[row][0]);
                compare(box.stage, expected[row][1]);
                compare(named("jobLastRun", box).text, "never run");
                compare(Fixture.accessibleName(box), expected[row][0] + ", " + expected[row][2] + ", never run");
                if (row > 0)
                    verify(box.x > jobs.itemAt(row - 1).x + jobs.itemAt(row - 1).width, "stage " + row + " is not right of the one before");
            }
            // The edges are the config's passed: build → test, build → ship, test → ship.
            const edges = view.jobsModel.edges.map(e => e.fromName + ">" + e.toName);
            compare(edges.join(" "), "build>test build>ship test>ship");
            compare(view.jobsModel.edges.map(e => e.span).join(" "), "1 2 1");
            // Each is drawn from the right side of the job that feeds to the left side of the one fed.
            const canvas = named("jobEdges");
            tryCompare(canvas.drawn, "length", 3, 5000);
            for (const line of canvas.drawn) {
                const from = jobs.itemAt(line.from);
                const to = jobs.itemAt(line.to);
                compare(line.x1, from.x + from.width);
                compare(line.y1, from.y + from.height / 2);
                compare(line.x2, to.x);
                compare(line.y2, to.y + to.height / 2);
                // build → ship passes over test's column: below the boxes, not under test.
                compare(line.lane, line.from === 0 && line.to === 2);
            }
            // The boxes are Tab stops; the arrow keys follow the graph and Enter triggers.
            jobs.itemAt(0).forceActiveFocus(Qt.TabFocusReason);
            keyClick(Qt.Key_Right);
            verify(jobs.itemAt(1).activeFocus, "Right does not go to the job build feeds");
            keyClick(Qt.Key_Right);
            verify(jobs.itemAt(2).activeFocus, "Right does not go to the job test feeds");
            keyClick(Qt.Key_Left);
            verify(jobs.itemAt(0).activeFocus, "Left does not go to the first job feeding ship");
            keyClick(Qt.Key_Down);
            verify(jobs.itemAt(1).activeFocus, "Down does not go to the next job");
            verify(jobs.itemAt(1).highlighted);
            keyClick(Qt.Key_Tab);
            verify(named("jobTrigger", jobs.itemAt(1)).activeFocus, "Tab does not reach the job's Trigger");
            // ship has disable_manual_trigger: its Trigger is off and its box says why.
            verify(named("jobTrigger", jobs.itemAt(0)).enabled && named("jobTrigger", jobs.itemAt(1)).enabled);
            verify(!named("jobTrigger", jobs.itemAt(2)).enabled, "ship's Trigger is on");
            verify(jobs.itemAt(2).hint.indexOf("not started by hand") >= 0, jobs.itemAt(2).hint);
            // Pause holds one job back: the box says so and its Trigger goes off; Unpause brings it back.
            const pause = named("jobPause", jobs.itemAt(1));
            compare(pause.text, "Pause");
            verify(!named("jobPaused", jobs.itemAt(1)).visible);
            mouseClick(pause);
            tryCompare(jobs.itemAt(1), "paused", true, 10000);
            verify(named("jobPaused", jobs.itemAt(1)).visible);
            verify(!named("jobTrigger", jobs.itemAt(1)).enabled, "a paused job's Trigger is on");
            verify(jobs.itemAt(1).hint.indexOf("paused (paused by ") >= 0, jobs.itemAt(1).hint);
            compare(pause.text, "Unpause");
            verify(named("jobTrigger", jobs.itemAt(0)).enabled, "pausing test held build back");
            mouseClick(pause);
            tryCompare(jobs.itemAt(1), "paused", false, 10000);
            verify(named("jobTrigger", jobs.itemAt(1)).enabled);
            compare(jobs.itemAt(1).actionError, "");
        }

        function test_4_aPinnedVersionIsTheOneTheNextRunGets() {
            mouseClick(named("resourcesTab"));
            const resources = named("resourcesList");
            tryCompare(resources, "count", 1, 10000);
            tryCompare(view.resourcesModel, "selectedName", "num");
            const versions = named("versionsList");
            compare(versions.count, 0);
            mouseClick(named("checkNowButton"));
            tryCompare(versions, "count", 1, 20000);
            tryCompare(named("checkNowButton"), "enabled", true, 20000);
            mouseClick(named("checkNowButton"));
            tryCompare(versions, "count", 3, 20000);
            // Newest first; pin n 2.
            tryVerify(() => versions.itemAtIndex(1) !== null, 5000, "version 2 is not shown");
            mouseClick(named("pinButton", versions.itemAtIndex(1)));
            tryVerify(() => versions.itemAtIndex(1) !== null && named("versionPinnedMark", versions.itemAtIndex(1)).visible,
                      10000, "version 2 is not marked pinned");
            tryVerify(() => resources.itemAtIndex(0) !== null && named("resourcePinned", resources.itemAtIndex(0)).text.indexOf("n: 2") >= 0,
                      10000, "the resource does not say it is pinned");
            compare(view.resourcesModel.actionError, "");

            // Triggered from the Jobs tab: the run gets the pinned version, not the newest.
            mouseClick(named("jobsTab"));
            const jobs = named("jobBoxes");
            mouseClick(named("jobTrigger", jobs.itemAt(0)));
            tryVerify(() => named("jobLastRun", jobs.itemAt(0)).text.indexOf("#1") === 0, 10000,
                      named("jobLastRun", jobs.itemAt(0)).text);
            tryCompare(Desktop.runTree, "status", "succeeded", 30000);
            tryVerify(() => named("jobLastRun", jobs.itemAt(0)).text === "#1 · succeeded", 10000,
                      named("jobLastRun", jobs.itemAt(0)).text);
            // The Trigger button's right-click menu offers the same.
            const trigger = named("jobTrigger", jobs.itemAt(0));
            mouseClick(trigger, trigger.width / 2, trigger.height / 2, Qt.RightButton);
            tryVerify(() => trigger.allSteps.opened, 5000, "right-click opens no menu");
            keyClick(Qt.Key_Escape);
            tryVerify(() => !trigger.allSteps.opened, 5000, "the menu stays open");
            // Shift+Enter on the job: the same job again, every step run, nothing restored.
            jobs.itemAt(0).forceActiveFocus();
            keyClick(Qt.Key_Return, Qt.ShiftModifier);
            tryVerify(() => named("jobLastRun", jobs.itemAt(0)).text === "#2 · succeeded", 30000,
                      named("jobLastRun", jobs.itemAt(0)).text);
            tryCompare(Desktop.runTree, "status", "succeeded", 30000);
            compare(Desktop.runTree.cachedCount, 0);
            mouseClick(named("runsTab"));
            const output = named("stepOutput");
            const log = output.logModel;
            tryVerify(() => log.count > 0, 10000, "no output");
            output.source.model.searchTerm = "got ";
            tryCompare(log, "matchCount", 1, 5000);
            const got = log.plainText(log.nextMatch(-1));
            verify(got.indexOf('"2"') > 0, got);
        }

        function test_5_stepOutputHasColoursLineNumbersAndSearch() {
            const output = named("stepOutput");
            const log = output.logModel;
            const lines = named("logLines", output);
            tryVerify(() => lines.itemAtIndex(0) !== null, 5000, "no line is shown");
            compare(named("lineNumber", lines.itemAtIndex(0)).text, "1");
            // The colour escape is rendered, not shown.
            let fetched = -1;
            for (let row = 0; row < log.count; ++row)
                if (log.plainText(row) === "fetched")
                    fetched = row;
            verify(fetched >= 0, "no line says fetched (escapes shown raw?)");
            lines.positionViewAtIndex(fetched, ListView.Center);
            tryVerify(() => lines.itemAtIndex(fetched) !== null, 5000);
            verify(named("lineText", lines.itemAtIndex(fetched)).text.indexOf("<font color=") === 0,
                   named("lineText", lines.itemAtIndex(fetched)).text);
            // Search from the field: the hit is counted and shown.
            const search = named("logSearch", output);
            retype(search, "fetched");
            tryCompare(log, "matchCount", 1, 5000);
            keyClick(Qt.Key_Return);
            tryVerify(() => named("logMatches", output).text === "1 of 1", 5000, named("logMatches", output).text);
        }

        function test_6_configTabShowsTheChangedLine() {
            const set = Fixture.setPipeline("graph", root.graphPipeline("release"));
            verify(!set.error, set.error);
            Desktop.refresh();
            mouseClick(named("configTab"));
            const yaml = named("configYaml");
            tryVerify(() => yaml.text.indexOf("task: release") >= 0, 10000, "the YAML is not the one set last");
            compare(yaml.font.family, "monospace");
            verify(yaml.readOnly);
            mouseClick(named("configDiffButton"));
            const diff = named("configDiff");
            tryVerify(() => diff.count > 0, 10000, "no diff");
            const lines = diff.model;
            verify(lines.indexOf("-   - task: deploy") >= 0, lines.join("\n"));
            verify(lines.indexOf("+   - task: release") >= 0, lines.join("\n"));
        }
    
        // Inside its view: the item's right edge is not beyond the view's, so nothing is cut off.
        function checkInside(item: Item, view: Item) {
            verify(item.visible && item.width > 0, item.objectName + " is not shown");
            // Layouts settle on the next polish after a resize.
            tryVerify(() => item.mapToItem(view, item.width, 0).x <= view.width + 0.5, 5000,
                      item.objectName + " ends at " + item.mapToItem(view, item.width, 0).x + " of " + view.width);
        }

        // At the smallest window the desktop supports, every tab's controls stay within it.
        function test_7_tabsFitAt1024x700() {
            root.width = 1024;
            root.height = 700;
            mouseClick(named("jobsTab"));
            const jobs = named("jobBoxes");
            for (let row = 0; row < jobs.count; ++row) {
                // Inside its box; the graph scrolls to show the box.
                checkInside(named("jobTrigger", jobs.itemAt(row)), jobs.itemAt(row));
                const name = named("jobName", jobs.itemAt(row));
                verify(!name.truncated, name.text + " is cut off");
            }
            mouseClick(named("resourcesTab"));
            const versions = named("versionsList");
            tryVerify(() => versions.itemAtIndex(0) !== null, 5000);
            checkInside(named("pinButton", versions.itemAtIndex(0)), versions);
            checkInside(named("checkNowButton"), view);
            mouseClick(named("configTab"));
            checkInside(named("configDiffButton"), view);
            mouseClick(named("runsTab"));
            checkInside(named("logSearch", named("stepOutput")), view);
            root.width = 1280;
            root.height = 800;
        }

        function test_8_checkFromTheSelectedVersion() {
            // The counter's check from n 2 finds n 4 too; from the newest (n 3) it finds nothing new.
            mouseClick(named("resourcesTab"));
            const versions = named("versionsList");
            tryCompare(versions, "count", 3, 10000);
            tryVerify(() => versions.itemAtIndex(1) !== null, 5000);
            verify(!named("checkFromButton", versions.itemAtIndex(1)).visible, "only the selected version offers it");
            mouseClick(versions.itemAtIndex(1));
            tryVerify(() => named("checkFromButton", versions.itemAtIndex(1)).visible, 5000);
            compare(versions.itemAtIndex(1).versionText.indexOf("2") >= 0, true, versions.itemAtIndex(1).versionText);
            mouseClick(named("checkFromButton", versions.itemAtIndex(1)));
            tryCompare(versions, "count", 4, 20000);
            tryVerify(() => versions.itemAtIndex(0) !== null && versions.itemAtIndex(0).versionText.indexOf("4") >= 0, 10000,
                      "n 4 is not the newest");
            compare(view.resourcesModel.actionError, "");
        }

        function test_9_renameFromThePipelinesContextMenu() {
            // The first row is ci (graph is selected): its context menu selects it and renames it.
            const list = named("pipelinesList");
            tryVerify(() => list.itemAtIndex(0) !== null, 5000);
            mouseClick(list.itemAtIndex(0), 20, 10, Qt.RightButton);
            const menu = named("pipelineMenu");
            tryCompare(menu, "opened", true);
            tryVerify(() => !isPolishScheduled(menu.contentItem), 5000, "the menu is not laid out");
            mouseClick(named("renamePipelineItem"));
            const dialog = named("renameDialog");
            tryCompare(dialog, "opened", true);
            const field = named("newPipelineName");
            compare(field.text, "ci");
            tryCompare(field, "activeFocus", true);
            typeText("release");
            keyClick(Qt.Key_Return);
            tryCompare(dialog, "visible", false);
            tryCompare(view.pipelinesModel, "selectedName", "release", 10000);
            // In its place in the order (graph, release), the old name gone.
            compare(list.count, 2);
            compare(view.pipelinesModel.rowOf("ci"), -1);
            compare(view.pipelinesModel.rowOf("release"), 1);
            // Its runs went with it.
            tryVerify(() => named("runsList").count > 0, 10000, "the renamed pipeline shows no runs");
            compare(view.pipelinesModel.selected.actionError, "");
        }
    }
}
