// The Approvals view: what waits for sign-off on the left, the selected request's plan with
// Approve and Reject on the right; "Nothing waits for approval" when the list is empty.
// Everything it shows comes from ApprovalsModel.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Approvals
import Pando.States

Item {
    id: root
    required property ApprovalsModel approvalsModel

    onVisibleChanged: if (visible && root.approvalsModel.count > 0)
        approvalsList.takeFocus()

    Pane {
        objectName: "noApprovals"
        anchors.fill: parent
        visible: root.approvalsModel.count === 0

        ColumnLayout {
            anchors.centerIn: parent
            width: Math.min(parent.width - 48, 520)
            spacing: 12
            Label {
                text: qsTr("Nothing waits for approval")
                font.pointSize: 20
                font.bold: true
                Layout.alignment: Qt.AlignHCenter
            }
            Label {
                text: qsTr("Deploys held by the install's approval policy and pipeline steps that ask for a sign-off appear here, with what they will change. Someone other than the person who asked approves or rejects them.")
                wrapMode: Text.Wrap
                horizontalAlignment: Text.AlignHCenter
                opacity: 0.8
                Layout.fillWidth: true
            }
            Label {
                visible: text.length > 0
                text: root.approvalsModel.error
                color: StateStyle.danger
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }
    }

    SplitView {
        anchors.fill: parent
        visible: root.approvalsModel.count > 0

        ApprovalsList {
            id: approvalsList
            SplitView.preferredWidth: 360
            SplitView.minimumWidth: 240
            approvalsModel: root.approvalsModel
        }
        ApprovalDetail {
            SplitView.fillWidth: true
            approvalsModel: root.approvalsModel
        }
    }
}
