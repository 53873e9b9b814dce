// The selected request: what will change (the deploy's plan or the pipeline step's message and
// inputs), who asked and when it expires, an optional comment, Approve and Reject, and the
// install's refusal in place when it says no.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Approvals
import Pando.States

Pane {
    id: root
    required property ApprovalsModel approvalsModel
    readonly property var selected: approvalsModel.selected
    readonly property bool hasSelection: root.selected.id.length > 0
    // A comment belongs to one request: another selection starts with an empty field.
    readonly property string shownId: root.selected.id
    onShownIdChanged: comment.clear()

    Label {
        anchors.centerIn: parent
        visible: !root.hasSelection
        text: qsTr("Select a request to see what it will change")
        opacity: 0.7
    }

    ScrollView {
        id: scroll
        anchors.fill: parent
        visible: root.hasSelection
        contentWidth: availableWidth

        ColumnLayout {
            width: scroll.availableWidth
            spacing: 8

            RowLayout {
                spacing: 8
                Layout.fillWidth: true
                Label {
                    objectName: "approvalTitle"
                    text: root.selected.title
                    font.pointSize: 16
                    font.bold: true
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
                Label {
                    text: qsTr("waiting for approval")
                    color: "#a87700"
                }
            }
            Label {
                text: root.selected.summary
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Label {
                text: qsTr("Asked by %1, %2 · %3").arg(root.selected.requesterText).arg(root.selected.createdText).arg(root.selected.expiresText)
                opacity: 0.75
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Label {
                visible: root.selected.approvers.length > 0
                text: qsTr("Who may decide: %1").arg(root.selected.approvers.join(", "))
                opacity: 0.75
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }

            MenuSeparator {
                Layout.fillWidth: true
            }
            Label {
                text: qsTr("What will change")
                font.bold: true
            }
            BusyIndicator {
                visible: root.approvalsModel.planLoading
                running: visible
                Layout.preferredHeight: 24
                Layout.preferredWidth: 24
            }
            Label {
                visible: text.length > 0
                text: root.approvalsModel.planError
                color: StateStyle.danger
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            GridLayout {
                columns: 2
                columnSpacing: 16
                rowSpacing: 4
                Layout.fillWidth: true
                Repeater {
                    model: root.approvalsModel.planLines
                    delegate: Label {
                        required property var modelData
                        required property int index
                        Layout.row: index
                        Layout.column: 0
                        Layout.alignment: Qt.AlignTop
                        text: modelData.label
                        opacity: 0.7
                    }
                }
                Repeater {
                    model: root.approvalsModel.planLines
                    delegate: Label {
                        required property var modelData
                        required property int index
                        Layout.row: index
                        Layout.column: 1
                        Layout.fillWidth: true
                        text: modelData.value
                        wrapMode: Text.Wrap
                        textFormat: Text.PlainText
                    }
                }
            }

            MenuSeparator {
                Layout.fillWidth: true
            }
            TextField {
                id: comment
                objectName: "approvalComment"
                placeholderText: qsTr("Comment (optional)")
                Accessible.name: qsTr("Comment")
                Layout.fillWidth: true
            }
            RowLayout {
                spacing: 8
                Button {
                    id: approveButton
                    objectName: "approveButton"
                    text: qsTr("Approve")
                    highlighted: true
                    // Fusion outlines a highlighted button as if it had the focus: a ring tells them apart.
                    FocusRing {
                        target: approveButton
                        shown: approveButton.visualFocus
                    }
                    enabled: !root.selected.busy
                    onClicked: root.approvalsModel.approve(root.approvalsModel.selectedRow, comment.text)
                }
                Button {
                    objectName: "rejectButton"
                    text: qsTr("Reject")
                    enabled: !root.selected.busy
                    onClicked: root.approvalsModel.reject(root.approvalsModel.selectedRow, comment.text)
                }
                BusyIndicator {
                    visible: root.selected.busy
                    running: visible
                    Layout.preferredHeight: 24
                    Layout.preferredWidth: 24
                }
            }
            Label {
                visible: text.length > 0
                text: root.selected.actionError
                color: StateStyle.danger
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }
    }

    // Tab to a control below the fold scrolls it into view.
    FocusReveal {
        flickable: scroll.contentItem as Flickable
    }
}
