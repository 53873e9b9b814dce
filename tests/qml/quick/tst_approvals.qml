// The Approvals view: a deploy the install's policy holds (asked for by the operator) shows as a
// pending approval with what waits; the administrator's Approve removes it and the deploy goes on.
import QtQuick
import QtTest
import Pando.Approvals
import Pando.Shell
import Pando.Test

Item {
    id: root
    width: 1280
    height: 800

    ApprovalsView {
        id: view
        anchors.fill: parent
        approvalsModel: Desktop.approvals
    }

    UserTestCase {
        name: "ApprovalsView"
        scope: view

        function test_pendingApprovalIsShownAndApproveRemovesIt() {
            tryCompare(named("noApprovals"), "visible", true, 10000);
            const app = Fixture.createApp("gated-web", "operator");
            verify(!app.error, app.error);
            const held = Fixture.deploy("gated-web", "operator");
            verify(!held.error, held.error);

            const list = named("approvalsList");
            tryCompare(list, "count", 1, 20000);
            verify(!named("noApprovals").visible);
            clickRow(list, 0);
            tryCompare(list, "currentIndex", 0);
            const title = named("approvalTitle");
            tryVerify(() => title.text.indexOf("gated-web") >= 0, 5000, title.text);
            compare(Fixture.deployStatus(held.id), "awaiting-approval");

            mouseClick(named("approveButton"));
            tryCompare(list, "count", 0, 20000);
            tryCompare(named("noApprovals"), "visible", true);
            tryVerify(() => Fixture.deployStatus(held.id) === "succeeded", 30000, "the approved deploy did not go on");
        }
    }
}
