// The Events tab of an app: its history, newest first — when, what happened, who did it — from
// the audit log, with what the live event stream brings while the tab is open on top. An account
// that may not read the audit log is told so plainly instead of seeing an empty history. The last
// 20 deploys' lines come first; "Show older" below the list adds the next 20.
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Apps
import Pando.States

ColumnLayout {
    id: root
    required property QtObject session
    required property string app
    property alias eventsModel: events
    spacing: 8

    AppEventsModel {
        id: events
        session: root.session
        app: root.app
    }

    RowLayout {
        Layout.fillWidth: true
        Label {
            text: qsTr("Newest first")
            opacity: 0.7
            Layout.fillWidth: true
            elide: Text.ElideRight
        }
        BusyIndicator {
            visible: events.loading
            running: visible
            Layout.preferredWidth: 24
            Layout.preferredHeight: 24
        }
        Button {
            objectName: "refreshEventsButton"
            text: qsTr("Refresh")
            onClicked: events.refresh()
            Accessible.name: qsTr("Read the app's history again")
        }
    }

    Label {
        objectName: "historyError"
        visible: events.historyError.length > 0
        text: events.historyError
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }

    Label {
        visible: events.count === 0 && !events.loading
        text: qsTr("Nothing happened to %1 yet").arg(root.app)
        opacity: 0.7
        Layout.fillWidth: true
        wrapMode: Text.Wrap
    }

    ListView {
        id: list
        objectName: "eventsList"
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        model: events
        activeFocusOnTab: true
        keyNavigationEnabled: true
        currentIndex: 0
        Accessible.role: Accessible.List
        Accessible.name: qsTr("Events of %1").arg(root.app)
        ScrollBar.vertical: ScrollBar {}
        delegate: ItemDelegate {
            id: row
            required property int index
            required property string timeText
            required property string title
            required property string detail
            required property string actor
            required property int state
            required property bool live
            width: ListView.view.width
            onClicked: list.currentIndex = index
            // The row the arrow keys are on, while the list has the keyboard. Not the list's
            // highlight: Qt 6.4 makes none from a component bound to this file.
            background: Rectangle {
                objectName: "eventRowMark"
                color: row.palette.highlight
                opacity: row.ListView.isCurrentItem && list.activeFocus ? 0.25 : 0
            }
            Accessible.name: qsTr("%1, %2, by %3").arg(title).arg(timeText).arg(actor.length > 0 ? actor : qsTr("unknown"))
            contentItem: RowLayout {
                spacing: 8
                Label {
                    text: row.timeText
                    opacity: 0.7
                    Layout.alignment: Qt.AlignTop
                }
                StateMark {
                    displayState: row.state
                    showWord: false
                    Layout.alignment: Qt.AlignTop | Qt.AlignHCenter
                    Layout.topMargin: 2
                }
                ColumnLayout {
                    spacing: 2
                    Layout.fillWidth: true
                    // A long line (a failed health check quotes the app's last output) is cut at a
                    // few lines in a narrow window; the whole of it shows on hover.
                    Label {
                        objectName: "eventTitle"
                        text: row.title
                        font.bold: row.live
                        wrapMode: Text.Wrap
                        maximumLineCount: 4
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                        ToolTip.visible: truncated && row.hovered
                        ToolTip.text: row.title
                    }
                    Label {
                        visible: row.detail.length > 0
                        text: row.detail
                        opacity: 0.8
                        wrapMode: Text.Wrap
                        maximumLineCount: 4
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                        ToolTip.visible: truncated && row.hovered
                        ToolTip.text: row.detail
                    }
                }
                Label {
                    objectName: "eventActor"
                    text: row.actor
                    opacity: 0.7
                    elide: Text.ElideRight
                    Layout.maximumWidth: 160
                    Layout.alignment: Qt.AlignTop
                }
            }
        }
    }

    // Below the list while the app has deploys not read yet. Not the list's footer: Qt 6.4 makes
    // no footer from a component bound to this file ("Component is not ready").
    Button {
        objectName: "olderEventsButton"
        visible: events.hasOlder
        text: qsTr("Show older")
        enabled: !events.loading
        onClicked: events.loadOlder()
        Accessible.name: qsTr("Show the events of older deploys")
        Layout.alignment: Qt.AlignHCenter
    }
}
