// The narrow sidebar: the current connection at the top, the views, Connections and Settings at
// the bottom. Approvals carries the count of what waits. Each entry is a Tab stop with a focus ring
// and opens its view with Space or Enter.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Shell
import Pando.States

Pane {
    id: root
    enum Page { Apps, Pipelines, Approvals, Activity, Sources, Connections, Settings }
    property int current: Sidebar.Page.Apps
    padding: 4

    component Entry: ItemDelegate {
        id: entry
        required property int page
        property int current
        property int badge: 0
        Layout.fillWidth: true
        highlighted: current === page
        // Reached by Tab (an ItemDelegate is not by default) but not focused by a click, so the
        // view's list keeps the arrow keys; Space or Enter opens the view.
        focusPolicy: Qt.TabFocus
        Keys.onReturnPressed: entry.clicked()
        Keys.onEnterPressed: entry.clicked()
        Accessible.role: Accessible.PageTab
        Accessible.name: entry.badge > 0 ? qsTr("%1, %n waiting", "", entry.badge).arg(entry.text) : entry.text
        FocusRing {
            target: entry
            shown: entry.visualFocus
            selected: entry.highlighted
        }
        contentItem: RowLayout {
            spacing: 8
            Label {
                text: entry.text
                Layout.fillWidth: true
                elide: Text.ElideRight
            }
            Label {
                objectName: "badge"
                visible: entry.badge > 0
                text: entry.badge
                color: "white"
                font.bold: true
                leftPadding: 6
                rightPadding: 6
                background: Rectangle {
                    radius: height / 2
                    color: "#d99a00"
                }
            }
        }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 4

        ItemDelegate {
            id: connectionEntry
            objectName: "connectionEntry"
            Layout.fillWidth: true
            focusPolicy: Qt.TabFocus
            Keys.onReturnPressed: connectionEntry.clicked()
            Keys.onEnterPressed: connectionEntry.clicked()
            Accessible.role: Accessible.Button
            Accessible.name: qsTr("Connected to %1. Switch connection").arg(Desktop.connectionName)
            FocusRing {
                target: connectionEntry
                shown: connectionEntry.visualFocus
            }
            onClicked: root.current = Sidebar.Page.Connections
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Switch connection")
            contentItem: ColumnLayout {
                spacing: 0
                Label {
                    text: qsTr("Connected to")
                    opacity: 0.7
                    font.pointSize: 8
                }
                RowLayout {
                    spacing: 6
                    StateMark {
                        displayState: Desktop.overall
                        showWord: false
                    }
                    Label {
                        text: Desktop.connectionName
                        font.bold: true
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                    }
                }
            }
        }
        MenuSeparator {
            Layout.fillWidth: true
        }
        Entry {
            page: Sidebar.Page.Apps
            objectName: "sidebarApps"
            current: root.current
            onClicked: root.current = Sidebar.Page.Apps
            text: qsTr("Apps")
        }
        Entry {
            page: Sidebar.Page.Pipelines
            objectName: "sidebarPipelines"
            current: root.current
            onClicked: root.current = Sidebar.Page.Pipelines
            text: qsTr("Pipelines")
        }
        Entry {
            page: Sidebar.Page.Approvals
            objectName: "sidebarApprovals"
            current: root.current
            onClicked: root.current = Sidebar.Page.Approvals
            text: qsTr("Approvals")
            badge: Desktop.pendingApprovals
        }
        Entry {
            page: Sidebar.Page.Activity
            objectName: "sidebarActivity"
            current: root.current
            onClicked: root.current = Sidebar.Page.Activity
            text: qsTr("Activity")
        }
        Entry {
            page: Sidebar.Page.Sources
            objectName: "sidebarSources"
            current: root.current
            onClicked: root.current = Sidebar.Page.Sources
            text: qsTr("Sources")
        }
        Item {
            Layout.fillHeight: true
        }
        Entry {
            page: Sidebar.Page.Connections
            objectName: "sidebarConnections"
            current: root.current
            onClicked: root.current = Sidebar.Page.Connections
            text: qsTr("Connections")
        }
        Entry {
            page: Sidebar.Page.Settings
            objectName: "sidebarSettings"
            current: root.current
            onClicked: root.current = Sidebar.Page.Settings
            text: qsTr("Settings")
        }
    }
}
