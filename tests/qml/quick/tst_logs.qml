// The Logs tab: a running app's lines appear (what its container wrote before, then live); typing
// in the search field counts the matches, Return goes to the match and highlights its line.
import QtQuick
import QtTest
import Pando.Logs
import Pando.Test

Item {
    id: root
    width: 1280
    height: 800

    Component {
        id: logView
        LogView {
            anchors.fill: parent
        }
    }

    UserTestCase {
        name: "LogView"

        function initTestCase() {
            const created = Fixture.createApp("hello");
            verify(!created.error, created.error);
            const queued = Fixture.deploy("hello");
            verify(!queued.error, queued.error);
            tryVerify(() => Fixture.deployStatus(queued.id) === "succeeded", 30000, "hello was not deployed");
        }

        function test_linesAppearAndSearchCountsMatches() {
            const view = createTemporaryObject(logView, root, {session: Fixture.session, app: "hello"});
            verify(view);
            const lines = named("logLines", view);
            tryCompare(lines, "count", 2, 20000);
            tryVerify(() => lines.itemAtIndex(1) !== null, 5000);
            compare(lines.itemAtIndex(0).text, "hello from the fake");
            compare(lines.itemAtIndex(1).text, "hello again from the fake");

            const search = named("logSearch", view);
            const matches = named("logMatches", view);
            verify(!matches.visible);
            mouseClick(search);
            typeText("again");
            tryCompare(matches, "visible", true);
            tryCompare(view.logModel, "matchCount", 1, 5000);
            compare(matches.text, qsTr("%n match(es)", "", 1));
            tryVerify(() => lines.itemAtIndex(1).matchRanges.length === 1, 5000, "the matching line marks no match");
            compare(lines.itemAtIndex(0).matchRanges.length, 0);

            keyClick(Qt.Key_Return);
            tryCompare(matches, "text", qsTr("%1 of %2").arg(1).arg(1));
            compare(view.currentMatch, 1);
            verify(lines.itemAtIndex(1).color.a > 0, "the current match's line is not highlighted");
            compare(lines.itemAtIndex(0).color.a, 0);

            keyClick(Qt.Key_A, Qt.ControlModifier);
            typeText("zebra");
            tryCompare(matches, "text", qsTr("no matches"));
        }
    }
}
