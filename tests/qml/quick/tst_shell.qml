// The window (Main.qml): it opens on the Apps view; a deploy waiting for approval shows as the
// Approvals entry's badge, and clicking the entry shows the Approvals view with the request.
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
    }
}
