// The window (Main.qml): it opens on the Apps view; a deploy waiting for approval shows as the
// Approvals entry's badge, and clicking the entry shows the Approvals view with the request; Ctrl+K
// jumps to an app or a view, and Esc closes the selected app's detail.
import QtQuick
import QtTest
import Pando.Shell
import Pando.Test

Item {
    id: root
    width: 200
    height: 200

    Component {
        id: mainWindow
        Main {
            visible: true
        }
    }

    UserTestCase {
        name: "Shell"

        function test_approvalBadgeAndNavigation() {
            const window = createTemporaryObject(mainWindow, root);
            verify(window);
            tryCompare(window, "visible", true);
            const apps = named("sidebarApps", window.contentItem);
            const approvals = named("sidebarApprovals", window.contentItem);
            verify(apps.highlighted, "the window does not open on Apps");
            verify(!approvals.highlighted);
            const badge = named("badge", approvals);
            compare(badge.visible, false);

            const app = Fixture.createApp("gated-api", "operator");
            verify(!app.error, app.error);
            const held = Fixture.deploy("gated-api", "operator");
            verify(!held.error, held.error);
            tryCompare(badge, "visible", true, 20000);
            compare(badge.text, "1");

            mouseClick(approvals);
            tryCompare(approvals, "highlighted", true);
            verify(!apps.highlighted);
            const list = named("approvalsList", window.contentItem);
            tryCompare(list, "visible", true);
            tryCompare(list, "count", 1, 10000);
            verify(!named("noApprovals", window.contentItem).visible);
        }

        // Ctrl+K jumps to an app or a view by a few of its letters; Esc closes the app's detail.
        function test_paletteJumpsAndEscapeCloses() {
            const window = createTemporaryObject(mainWindow, root);
            verify(window);
            window.requestActivate();
            tryCompare(window, "active", true);
            const created = Fixture.createApp("palette-app", "operator");
            verify(!created.error, created.error);
            tryVerify(() => Desktop.palette.entries("palapp").length === 1, 10000);
            const palette = named("commandPalette", window);
            const approvals = named("sidebarApprovals", window.contentItem);
            const apps = named("sidebarApps", window.contentItem);

            mouseClick(approvals);
            tryCompare(approvals, "highlighted", true);
            keySequence("Ctrl+K");
            tryCompare(palette, "opened", true);
            tryCompare(named("paletteQuery", window.contentItem), "activeFocus", true);
            typeText("palapp");
            tryCompare(named("paletteResults", window.contentItem), "count", 1);
            keyClick(Qt.Key_Return);
            tryCompare(palette, "visible", false);
            tryCompare(apps, "highlighted", true);
            tryVerify(() => Desktop.apps.selected.name === "palette-app", 5000, Desktop.apps.selected.name);

            // A view by name, the arrow keys choosing among several matches.
            keySequence("Ctrl+K");
            tryCompare(palette, "opened", true);
            typeText("s");
            const results = named("paletteResults", window.contentItem);
            verify(results.count > 1, results.count);
            keyClick(Qt.Key_Down);
            compare(results.currentIndex, 1);
            keyClick(Qt.Key_Up);
            compare(results.currentIndex, 0);
            keyClick(Qt.Key_Escape);
            tryCompare(palette, "visible", false);
            keySequence("Ctrl+K");
            tryCompare(palette, "opened", true);
            compare(named("paletteQuery", window.contentItem).text, "", "the last query stayed");
            typeText("approv");
            keyClick(Qt.Key_Return);
            tryCompare(approvals, "highlighted", true);

            // Esc closes the detail of the view in front.
            mouseClick(apps);
            tryCompare(apps, "highlighted", true);
            verify(Desktop.apps.selectedRow >= 0);
            keyClick(Qt.Key_Escape);
            tryCompare(Desktop.apps, "selectedRow", -1);
            // The arrow keys move the selection in the view's list.
            keyClick(Qt.Key_Down);
            tryCompare(Desktop.apps, "selectedRow", 0);
        }
    }
}
