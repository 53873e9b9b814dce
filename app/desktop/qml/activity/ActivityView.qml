// The Activity view: what happened on the install while this window watched, newest first, one
// line each with the shared state mark. A line about an app opens it in the Apps view; one about
// an approval opens it in Approvals.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Activity

Pane {
    id: root
    required property ActivityModel activityModel
    signal appRequested(string name)
    signal approvalRequested(string id)
    padding: 0

    function stateColour(state: int): color {
        switch (state) {
        case ActivityModel.Healthy:
            return "#2e9d4f";
        case ActivityModel.Progress:
            return "#2f74d0";
        case ActivityModel.Waiting:
            return "#d08a00";
        case ActivityModel.Failed:
            return "#d2352b";
        default:
            return "#8a8a8a";
        }
    }
    function stateGlyph(state: int): string {
        switch (state) {
        case ActivityModel.Healthy:
            return "✔";
        case ActivityModel.Progress:
            return "◐";
        case ActivityModel.Waiting:
            return "⏸";
        case ActivityModel.Failed:
            return "✖";
        default:
            return "·";
        }
    }

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
            ScrollBar.vertical: ScrollBar {}
            delegate: ItemDelegate {
                id: entry
                required property int state
                required property string title
                required property string detail
                required property string timeText
                required property string kind
                required property string app
                required property string target
                width: ListView.view.width
                onClicked: {
                    if (entry.kind === "approval")
                        root.approvalRequested(entry.target);
                    else if (entry.app.length > 0)
                        root.appRequested(entry.app);
                }
                contentItem: RowLayout {
                    spacing: 8
                    Label {
                        text: root.stateGlyph(entry.state)
                        color: root.stateColour(entry.state)
                        font.pixelSize: 16
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
