// The pando-desktop window: the sidebar, the selected view, and the status line.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Activity
import Pando.Apps
import Pando.Approvals
import Pando.Connections
import Pando.Runs
import Pando.Settings
import Pando.Shell
import Pando.States

ApplicationWindow {
    id: window
    width: 1280
    height: 800
    minimumWidth: 720
    minimumHeight: 480
    title: qsTr("Pando — %1").arg(Desktop.connectionName)

    Shortcut {
        sequence: "Ctrl+R"
        onActivated: Desktop.refresh()
    }
    Shortcut {
        sequence: "Ctrl+D"
        enabled: sidebar.current === Sidebar.Page.Apps
        onActivated: Desktop.apps.deploy(Desktop.apps.selectedRow)
    }
    Shortcut {
        sequence: "Esc"
        onActivated: Desktop.apps.selectedRow = -1
    }

    // The tray asks for the Approvals view (an approval notification or menu entry was clicked).
    Connections {
        target: Desktop
        function onShowApprovalsRequested() {
            sidebar.current = Sidebar.Page.Approvals
        }
    }
    Binding {
        target: Desktop
        property: "currentView"
        value: sidebar.current
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        Sidebar {
            id: sidebar
            Layout.fillHeight: true
            Layout.preferredWidth: 200
        }
        ToolSeparator {
            orientation: Qt.Vertical
            Layout.fillHeight: true
            padding: 0
        }
        StackLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            currentIndex: sidebar.current

            AppsView {
                appsModel: Desktop.apps
            }
            RunsView {
                pipelinesModel: Desktop.pipelines
                runsModel: Desktop.runs
                runTree: Desktop.runTree
            }
            ApprovalsView {
                approvalsModel: Desktop.approvals
            }
            ActivityView {
                activityModel: Desktop.activity
                onAppRequested: name => {
                    Desktop.apps.selectApp(name);
                    sidebar.current = Sidebar.Page.Apps;
                }
                onApprovalRequested: id => Desktop.showApproval(id)
            }
            ConnectionsView {
                connectionsModel: Desktop.connections
            }
            SettingsView {
                server: Desktop.embeddedServer
                hostExecutionText: Desktop.pipelines.hostExecutionText
                appAccessText: Desktop.pipelines.appAccessText
            }
        }
    }

    footer: ToolBar {
        RowLayout {
            anchors.fill: parent
            anchors.leftMargin: 8
            anchors.rightMargin: 8
            spacing: 8
            StateMark {
                objectName: "overallMark"
                displayState: Desktop.overall
                word: Desktop.overallText
                size: 14
                Layout.maximumWidth: window.width * 0.4
            }
            Item {
                Layout.fillWidth: true
            }
            // Docker's and Incus's reachability; why one does not answer on hover.
            StateMark {
                objectName: "runtimesMark"
                visible: Desktop.runtimes.text.length > 0
                displayState: Desktop.runtimes.state
                word: Desktop.runtimes.text
                size: 12
                ToolTip.visible: runtimesHover.hovered && Desktop.runtimes.detail.length > 0
                ToolTip.text: Desktop.runtimes.detail
                HoverHandler {
                    id: runtimesHover
                }
            }
            ToolSeparator {
                visible: serverLabel.visible
            }
            Label {
                id: serverLabel
                objectName: "serverText"
                visible: text.length > 0
                text: Desktop.serverText
                opacity: 0.7
                elide: Text.ElideRight
                Layout.maximumWidth: window.width / 4
            }
            ToolSeparator {}
            Label {
                text: Desktop.engineText
                opacity: 0.7
                elide: Text.ElideLeft
                Layout.maximumWidth: window.width / 4
            }
        }
    }
}
