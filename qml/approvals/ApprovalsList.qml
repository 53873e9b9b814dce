// The master list: one row per request with the amber "waiting" mark and word, what waits, who
// asked and when it expires. The list is one Tab stop with a focus ring; the arrow keys move the
// selection.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Approvals
import Pando.States

Pane {
    id: root
    // The view in front gives its list the keyboard: the arrow keys move the selection.
    function takeFocus() {
        list.forceActiveFocus();
    }
    required property ApprovalsModel approvalsModel
    padding: 0

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        RowLayout {
            Layout.fillWidth: true
            Layout.margins: 8
            spacing: 8
            Label {
                text: qsTr("Approvals")
                font.bold: true
                font.pointSize: 13
                Layout.fillWidth: true
            }
            BusyIndicator {
                running: root.approvalsModel.loading
                visible: running
                Layout.preferredHeight: 20
                Layout.preferredWidth: 20
            }
            ToolButton {
                text: qsTr("Refresh")
                Accessible.name: qsTr("Refresh the requests")
                onClicked: root.approvalsModel.refresh()
            }
        }
        Label {
            visible: text.length > 0
            text: root.approvalsModel.error
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
            Layout.leftMargin: 8
            Layout.rightMargin: 8
        }

        ListView {
            id: list
            objectName: "approvalsList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: root.approvalsModel
            currentIndex: root.approvalsModel.selectedRow
            keyNavigationEnabled: true
            focus: true
            // One Tab stop: the arrow keys move among the rows.
            activeFocusOnTab: true
            // As the apps list: only a row the list moved to goes back to the model.
            onCurrentIndexChanged: if (currentIndex >= 0)
                root.approvalsModel.selectedRow = currentIndex
            ScrollBar.vertical: ScrollBar {}
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Requests waiting for approval")

            delegate: ListRow {
                id: row
                required property int index
                required property string title
                required property string summary
                required property string requesterText
                required property string expiresText
                required property string actionError
                readonly property ApprovalsModel approvalsModel: ListView.view.model as ApprovalsModel

                width: ListView.view.width
                highlighted: ListView.isCurrentItem
                focusPolicy: Qt.NoFocus
                Accessible.role: Accessible.ListItem
                Accessible.name: qsTr("%1, waiting for approval: %2").arg(row.title).arg(row.summary)
                onClicked: {
                    row.approvalsModel.selectedRow = row.index;
                    row.ListView.view.forceActiveFocus();
                }

                contentItem: RowLayout {
                    spacing: 8
                    // Every row waits for approval; the expiry line beside it says so in words.
                    StateMark {
                        objectName: "stateMark"
                        displayState: DisplayState.Waiting
                        showWord: false
                        Layout.alignment: Qt.AlignVCenter
                    }
                    ColumnLayout {
                        spacing: 0
                        Layout.fillWidth: true
                        Label {
                            text: row.title
                            font.bold: true
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                        Label {
                            text: row.summary
                            opacity: 0.8
                            font.pointSize: 9
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                        Label {
                            text: row.actionError.length > 0 ? row.actionError
                                                             : qsTr("%1 · %2").arg(row.requesterText).arg(row.expiresText)
                            color: row.actionError.length > 0 ? StateStyle.danger : palette.text
                            opacity: row.actionError.length > 0 ? 1 : 0.7
                            font.pointSize: 9
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                    }
                    Label {
                        text: qsTr("waiting")
                        color: "#a87700"
                    }
                }
            }
        }
    }
    FocusRing {
        target: list
    }
}
