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
import Pando.Sources
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
    // Esc closes the detail of the view in front: the selected app, run (then pipeline) or
    // approval. Dialogs and the palette take their own Esc first.
    Shortcut {
        sequence: "Esc"
        onActivated: window.closeDetail()
    }
    Shortcut {
        sequence: "Ctrl+K"
        onActivated: palette.open()
    }

    function closeDetail() {
        switch (sidebar.current) {
        case Sidebar.Page.Apps:
            Desktop.apps.selectedRow = -1;
            break;
        case Sidebar.Page.Pipelines:
            if (Desktop.runs.selectedRow >= 0)
                Desktop.runs.selectedRow = -1;
            else
                Desktop.pipelines.selectedRow = -1;
            break;
        case Sidebar.Page.Approvals:
            Desktop.approvals.selectedRow = -1;
            break;
        }
    }

    // What the Ctrl+K palette chose (CommandPalette's kinds and keys).
    function go(kind: string, key: string) {
        if (kind === "view") {
            sidebar.current = Number(key);
        } else if (kind === "app") {
            Desktop.apps.selectApp(key);
            sidebar.current = Sidebar.Page.Apps;
        } else if (kind === "pipeline") {
            Desktop.pipelines.selectedRow = Desktop.pipelines.rowOf(key);
            sidebar.current = Sidebar.Page.Pipelines;
        } else if (key === "new-app") {
            sidebar.current = Sidebar.Page.Apps;
            (appsView.item as AppsView).newApp(0);
        } else if (key === "deploy") {
            Desktop.apps.deploy(Desktop.apps.selectedRow);
        } else if (key === "refresh") {
            Desktop.refresh();
        }
    }

    // True: every view is made at once (--check opens every view's dialogs).
    property bool loadEveryView: false
    Component.onCompleted: {
        // Selected rows' text at 7:1 (Fusion's blue gives white 3.6:1), and room for a state's
        // mark to keep its hue on the selection. Set once: a binding would read what it writes.
        window.palette.highlight = StateStyle.selection(window.palette.highlight, window.palette.highlightedText);
        if (window.loadEveryView) {
            for (let i = 0; i < views.children.length; ++i)
                (views.children[i] as Loader).active = true;
        }
    }

    // One page of the main pane: made when first shown, then kept (its selection, scroll and
    // streams stay as the user left them).
    component View: Loader {
        readonly property bool current: StackLayout.isCurrentItem
        active: false
        onCurrentChanged: if (current)
            active = true
        Component.onCompleted: if (current)
            active = true
    }

    CommandPalette {
        id: palette
        objectName: "commandPalette"
        onActivated: (kind, key) => window.go(kind, key)
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
        // Each view is made the first time it is shown and kept from then on, so the first frame
        // pays for the Apps view only (bench_desktop; docs/benchmarks.md).
        StackLayout {
            id: views
            Layout.fillWidth: true
            Layout.fillHeight: true
            currentIndex: sidebar.current

            View {
                id: appsView
                sourceComponent: AppsView {
                    appsModel: Desktop.apps
                }
            }
            View {
                sourceComponent: RunsView {
                    pipelinesModel: Desktop.pipelines
                    runsModel: Desktop.runs
                    runTree: Desktop.runTree
                }
            }
            View {
                sourceComponent: ApprovalsView {
                    approvalsModel: Desktop.approvals
                }
            }
            View {
                sourceComponent: ActivityView {
                    activityModel: Desktop.activity
                    onAppRequested: name => {
                        Desktop.apps.selectApp(name);
                        sidebar.current = Sidebar.Page.Apps;
                    }
                    onApprovalRequested: id => Desktop.showApproval(id)
                }
            }
            View {
                sourceComponent: SourcesView {
                    sourcesModel: Desktop.sources
                    onCreateAppRequested: (name, repo, ref, connection) => {
                        sidebar.current = Sidebar.Page.Apps;
                        (appsView.item as AppsView).newAppFrom(name, repo, ref, connection);
                    }
                }
            }
            View {
                sourceComponent: ConnectionsView {
                    connectionsModel: Desktop.connections
                }
            }
            View {
                sourceComponent: SettingsView {
                    objectName: "settingsView"
                    server: Desktop.embeddedServer
                    hostExecutionText: Desktop.pipelines.hostExecutionText
                    appAccessText: Desktop.pipelines.appAccessText
                    assertionKeysText: Desktop.runtimes.assertionKeysText
                    engineSettings: Desktop.engineSettings
                    session: Desktop.apps.session
                }
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
