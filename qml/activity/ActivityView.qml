// The Activity view: what happened on the install while this window watched, newest first, one
// line each with the shared state mark. A line about an app opens it in the Apps view; one about
// an approval opens it in Approvals, by a click or by Enter (the list is one Tab stop, the arrow
// keys move among the lines).
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Activity
import Pando.States

Pane {
    id: root
    required property ActivityModel activityModel
    signal appRequested(string name)
    signal approvalRequested(string id)
    padding: 0

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        RowLayout {
            Layout.fillWidth: true
            Layout.margins: 8
            Label {
                text: qsTr("Activity")
                font.bold: true
                font.pointSize: 13
                Layout.fillWidth: true
            }
            ToolButton {
                objectName: "clearActivity"
                text: qsTr("Clear")
                Accessible.name: qsTr("Clear the activity")
                enabled: root.activityModel.count > 0
                onClicked: root.activityModel.clear()
            }
        }

        ListView {
            id: list
            objectName: "activityList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: root.activityModel
            // One Tab stop: the arrow keys move among the lines, Enter opens one as a click does.
            activeFocusOnTab: true
            keyNavigationEnabled: true
            highlightMoveDuration: 0
            ScrollBar.vertical: ScrollBar {}
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Activity")
            delegate: ListRow {
                id: entry
                required property int state
                required property string title
                required property string detail
                required property string timeText
                required property string kind
                required property string app
                required property string target
                width: ListView.view.width
                // Where the keyboard is, while the list has the focus.
                highlighted: ListView.isCurrentItem && ListView.view.activeFocus
                focusPolicy: Qt.NoFocus
                // The list gives its current line the focus: Enter opens it.
                Keys.onReturnPressed: entry.clicked()
                Keys.onEnterPressed: entry.clicked()
                Accessible.role: Accessible.ListItem
                Accessible.name: entry.detail.length > 0 ? qsTr("%1: %2, %3").arg(entry.timeText).arg(entry.title).arg(entry.detail)
                                                         : qsTr("%1: %2").arg(entry.timeText).arg(entry.title)
                onClicked: {
                    if (entry.kind === "approval")
                        root.approvalRequested(entry.target);
                    else if (entry.app.length > 0)
                        root.appRequested(entry.app);
                }
                contentItem: RowLayout {
                    spacing: 8
                    // The title says what happened in words ("deploy failed"); the mark keeps the
                    // state's word for accessibility.
                    StateMark {
                        objectName: "stateMark"
                        displayState: entry.state
                        showWord: false
                        size: 14
                        Layout.preferredWidth: 20
                    }
                    ColumnLayout {
                        spacing: 0
                        Layout.fillWidth: true
                        Label {
                            text: entry.title
                            font.bold: true
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                        Label {
                            visible: entry.detail.length > 0
                            text: entry.detail
                            opacity: 0.75
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                    }
                    Label {
                        text: entry.timeText
                        opacity: 0.7
                    }
                }
            }
        }
    }

    FocusRing {
        target: list
    }

    Label {
        anchors.centerIn: parent
        width: Math.min(parent.width - 48, 520)
        visible: root.activityModel.count === 0
        horizontalAlignment: Text.AlignHCenter
        wrapMode: Text.Wrap
        opacity: 0.7
        text: qsTr("Nothing has happened since Pando Desktop started. Deploys, runs, approvals and changes to apps show here as they happen.")
    }
}
