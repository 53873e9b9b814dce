// The Deploys tab: an app's deploys on the left, newest first and selected; selecting another
// shows that deploy's steps (a failed one with its failing step and reason in one line at the
// top); "Redeploy this version" adds a deploy.
import QtQuick
import QtTest
import Pando.Deploys
import Pando.States
import Pando.Test

Item {
    id: root
    width: 1280
    height: 800

    Component {
        id: deploysView
        DeploysView {
            anchors.fill: parent
        }
    }

    UserTestCase {
        id: testCase
        name: "DeploysView"

        // Deploys the app; returns the deploy's id once it ended as status.
        function deployed(app: string, status: string): string {
            const queued = Fixture.deploy(app);
            verify(!queued.error, queued.error);
            tryVerify(() => Fixture.deployStatus(queued.id) === status, 30000, app + " did not end " + status);
            return queued.id;
        }

        function stepTitles(steps: Item): list<string> {
            const titles = [];
            for (let row = 0; row < steps.count; ++row) {
                tryVerify(() => steps.itemAtIndex(row) !== null, 5000, "step " + row + " is not shown");
                titles.push(steps.itemAtIndex(row).title);
            }
            return titles;
        }

        function test_1_selectingADeployShowsItsSteps() {
            const created = Fixture.createApp("web");
            verify(!created.error, created.error);
            deployed("web", "succeeded");
            // The next one probes a page nobody serves: it fails at the health check.
            const broken = Fixture.breakHealth("web");
            verify(!broken.error, broken.error);
            deployed("web", "failed");

            const view = createTemporaryObject(deploysView, root, {session: Fixture.session, app: "web"});
            verify(view);
            const history = named("deployHistory", view);
            const steps = named("deploySteps", view);
            const reason = named("deployReason", view);
            tryCompare(history, "count", 2, 10000);
            // The newest is selected: the failed one, its reason on top.
            tryCompare(history, "currentIndex", 0);
            tryCompare(reason, "visible", true, 10000);
            verify(reason.text.startsWith("✖ health failed: ") && reason.text.indexOf("/no-such-page") >= 0, reason.text);
            // The history's marks: the failed deploy a red "no" sign, the one before a green disc.
            tryVerify(() => history.itemAtIndex(1) !== null, 5000, "row 1 is not shown");
            checkMark(named("stateMark", history.itemAtIndex(0)), DisplayState.Failed, "failed", "noSign");
            checkMark(named("stateMark", history.itemAtIndex(1)), DisplayState.Healthy, "succeeded", "disc");
            // The failed step's mark in the timeline, with the same colour as its word.
            tryVerify(() => {
                for (let row = 0; row < steps.count; ++row) {
                    const item = steps.itemAtIndex(row);
                    if (item && item.title === "Check health")
                        return named("stateMark", item).displayState === DisplayState.Failed;
                }
                return false;
            }, 10000, "the health step is not marked failed");
            // The chart marks failed deploys in the failed colour.
            const chart = named("durationsChart", view);
            let failedSeries = null;
            for (let i = 0; i < chart.count; ++i) {
                if (chart.series(i).name === "failed")
                    failedSeries = chart.series(i);
            }
            verify(failedSeries !== null, "the chart has no failed series");
            compare(failedSeries.color, StateStyle.colour(DisplayState.Failed));

            clickRow(history, 1);
            tryCompare(history, "currentIndex", 1);
            tryCompare(reason, "visible", false, 10000);
            tryVerify(() => stepTitles(steps).indexOf("Check health") >= 0, 10000, stepTitles(steps).join(", "));
            verify(stepTitles(steps).indexOf("Build the image") >= 0, stepTitles(steps).join(", "));

            clickRow(history, 0);
            tryCompare(reason, "visible", true, 10000);
        }

        function test_2_redeployThisVersionAddsADeploy() {
            const view = createTemporaryObject(deploysView, root, {session: Fixture.session, app: "web"});
            const history = named("deployHistory", view);
            tryCompare(history, "count", 2, 10000);
            clickRow(history, 1);
            tryCompare(history, "currentIndex", 1);
            const redeploy = named("redeployButton", view);
            tryCompare(redeploy, "enabled", true);
            mouseClick(redeploy);
            tryCompare(history, "count", 3, 20000);
        }

        function test_3_failedBuildShowsItsReason() {
            const created = Fixture.createApp("buildfails");
            verify(!created.error, created.error);
            deployed("buildfails", "failed");
            const view = createTemporaryObject(deploysView, root, {session: Fixture.session, app: "buildfails"});
            const history = named("deployHistory", view);
            tryCompare(history, "count", 1, 10000);
            const reason = named("deployReason", view);
            tryCompare(reason, "visible", true, 10000);
            compare(reason.text, "✖ build failed: the Dockerfile's RUN step exited with 1");
            // The failing step is selected with the build's own output, scrolled to its end.
            const output = named("stepLog", view);
            tryCompare(output, "count", 3, 10000);
            verify(output.visible);
            tryVerify(() => output.itemAtIndex(2) !== null, 5000, "the last line is not shown");
            compare(output.itemAtIndex(2).text, "make: *** No rule to make target 'all'.  Stop.");
            verify(output.atYEnd);
        }
    }
}
