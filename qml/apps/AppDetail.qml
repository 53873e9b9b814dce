// The selected app: status, URL (click opens it), last deploy with its failure reason in one line,
// and Deploy with its progress in place.
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Apps
import Pando.States

Pane {
    id: root
    required property AppsModel appsModel
    readonly property var app: appsModel.selected
    readonly property bool hasApp: app.name.length > 0
    padding: 16

    Label {
        anchors.centerIn: parent
        visible: !root.hasApp
        text: qsTr("Select an app to see its details")
        opacity: 0.7
    }

    Shortcut {
        sequence: "Ctrl+L"
        enabled: root.hasApp
        onActivated: tabs.currentIndex = 2
    }

    Dialog {
        id: removeDialog
        objectName: "removeDialog"
        title: qsTr("Remove %1?").arg(root.hasApp ? root.app.name : "")
        modal: true
        anchors.centerIn: parent
        // The row it was opened for: the selection may change while it is open.
        property int row: -1
        onAboutToShow: row = root.appsModel.selectedRow
        Label {
            width: 420
            wrapMode: Text.Wrap
            text: qsTr("Its containers stop and its route goes. The repository is not touched.")
        }
        standardButtons: Dialog.Ok | Dialog.Cancel
        Component.onCompleted: standardButton(Dialog.Ok).text = qsTr("Remove")
        onAccepted: root.appsModel.remove(row)
    }

    TabBar {
        id: tabs
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.top: parent.top
        visible: root.hasApp
        TabButton {
            text: qsTr("Overview")
        }
        TabButton {
            objectName: "deploysTab"
            text: qsTr("Deploys")
        }
        TabButton {
            objectName: "logsTab"
            text: qsTr("Logs")
        }
        TabButton {
            objectName: "settingsTab"
            text: qsTr("Settings")
        }
        TabButton {
            objectName: "eventsTab"
            text: qsTr("Events")
        }
        TabButton {
            objectName: "addressesTab"
            text: qsTr("Addresses")
        }
        TabButton {
            objectName: "hookTab"
            text: qsTr("Deploy on push")
            // Its whole name where the bar has room for it and 64 px for each other tab (which share
            // the rest); an equal share where it has not.
            // (The pane's width, not the bar's: the bar's own width would loop through its implicit one.)
            width: Math.max(root.availableWidth / tabs.count,
                            Math.min(implicitWidth, root.availableWidth - (tabs.count - 1) * 64))
        }
        TabButton {
            objectName: "runTab"
            text: qsTr("Run")
        }
    }

    // A tab's view, made only while the tab is shown, so a hidden tab follows no stream. Loaded by
    // URL rather than as an inline sourceComponent: Qt 6.4's Loader refuses to create a bound
    // component ("Cannot instantiate bound component outside its creation context"), which left
    // every tab but Overview empty.
    component TabLoader: Loader {
        id: loader
        required property bool shown
        required property url view
        property QtObject session
        property string app
        anchors.fill: parent
        visible: shown
        onShownChanged: load()
        Component.onCompleted: load()
        function load() {
            if (!loader.shown) {
                loader.source = "";
                return;
            }
            loader.setSource(loader.view, {
                session: Qt.binding(() => loader.session),
                app: Qt.binding(() => loader.app)
            });
        }
    }
    TabLoader {
        anchors.topMargin: tabs.height + 12
        objectName: "deploysLoader"
        shown: root.hasApp && tabs.currentIndex === 1
        view: "qrc:/qt/qml/Pando/Deploys/DeploysView.qml"
        session: root.appsModel.session
        app: root.hasApp ? root.app.name : ""
    }
    TabLoader {
        anchors.topMargin: tabs.height + 12
        objectName: "logsLoader"
        shown: root.hasApp && tabs.currentIndex === 2
        view: "qrc:/qt/qml/Pando/Logs/LogView.qml"
        session: root.appsModel.session
        app: root.hasApp ? root.app.name : ""
    }
    TabLoader {
        anchors.topMargin: tabs.height + 12
        objectName: "settingsLoader"
        shown: root.hasApp && tabs.currentIndex === 3
        view: Qt.resolvedUrl("AppSettingsTab.qml")
        session: root.appsModel.session
        app: root.hasApp ? root.app.name : ""
    }
    TabLoader {
        anchors.topMargin: tabs.height + 12
        objectName: "eventsLoader"
        shown: root.hasApp && tabs.currentIndex === 4
        view: Qt.resolvedUrl("AppEventsTab.qml")
        session: root.appsModel.session
        app: root.hasApp ? root.app.name : ""
    }
    TabLoader {
        anchors.topMargin: tabs.height + 12
        objectName: "addressesLoader"
        shown: root.hasApp && tabs.currentIndex === 5
        view: Qt.resolvedUrl("AppAddressesTab.qml")
        session: root.appsModel.session
        app: root.hasApp ? root.app.name : ""
    }
    TabLoader {
        anchors.topMargin: tabs.height + 12
        objectName: "hookLoader"
        shown: root.hasApp && tabs.currentIndex === 6
        view: Qt.resolvedUrl("AppHookTab.qml")
        session: root.appsModel.session
        app: root.hasApp ? root.app.name : ""
    }
    TabLoader {
        anchors.topMargin: tabs.height + 12
        objectName: "runLoader"
        shown: root.hasApp && tabs.currentIndex === 7
        view: Qt.resolvedUrl("AppRunTab.qml")
        session: root.appsModel.session
        app: root.hasApp ? root.app.name : ""
    }

    ColumnLayout {
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.top: tabs.bottom
        anchors.topMargin: 12
        spacing: 12
        visible: root.hasApp && tabs.currentIndex === 0

        // The name and state, then the actions: beside them where there is room, below them in
        // a narrow pane.
        GridLayout {
            id: header
            columns: width < nameRow.implicitWidth + actions.implicitWidth + columnSpacing ? 1 : 2
            columnSpacing: 8
            rowSpacing: 8
            Layout.fillWidth: true
            RowLayout {
                id: nameRow
                spacing: 8
                Layout.fillWidth: true
                Label {
                    objectName: "appName"
                    text: root.hasApp ? root.app.name : ""
                    font.pointSize: 16
                    font.bold: true
                    Layout.fillWidth: true
                    elide: Text.ElideRight
                }
                StateMark {
                    objectName: "appStateMark"
                    displayState: root.hasApp ? root.app.state : DisplayState.Neutral
                    word: root.hasApp ? root.app.statusText : ""
                    size: 16
                }
            }
            RowLayout {
                id: actions
                spacing: 8
            Button {
                text: qsTr("Deploy")
                highlighted: true
                enabled: root.hasApp && !root.app.busy && root.appsModel.engineReachable
                onClicked: root.appsModel.deploy(root.appsModel.selectedRow)
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Deploy the spec's ref again (Ctrl+D)")
            }
            Button {
                objectName: "startButton"
                text: qsTr("Start")
                visible: root.hasApp && root.app.canStart
                enabled: root.appsModel.engineReachable
                onClicked: root.appsModel.start(root.appsModel.selectedRow)
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Run the serving version again")
            }
            Button {
                objectName: "restartButton"
                text: qsTr("Restart")
                visible: root.hasApp && root.app.canStop
                enabled: root.appsModel.engineReachable
                onClicked: root.appsModel.restart(root.appsModel.selectedRow)
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Stop its container and start it again")
            }
            Button {
                objectName: "stopButton"
                text: qsTr("Stop")
                visible: root.hasApp && root.app.canStop
                enabled: root.appsModel.engineReachable
                onClicked: root.appsModel.stop(root.appsModel.selectedRow)
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Stop it until it is started or deployed again")
            }
            Button {
                objectName: "removeButton"
                text: qsTr("Remove…")
                enabled: root.hasApp && !root.app.busy && root.appsModel.engineReachable
                onClicked: removeDialog.open()
            }
            }
        }

        RowLayout {
            spacing: 8
            visible: root.hasApp && root.app.busy
            BusyIndicator {
                running: parent.visible
                Layout.preferredWidth: 24
                Layout.preferredHeight: 24
            }
            Label {
                text: root.hasApp ? root.app.progress : ""
            }
        }

        Label {
            visible: root.hasApp && root.app.actionError.length > 0
            text: root.hasApp ? root.app.actionError : ""
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        GridLayout {
            columns: 2
            columnSpacing: 16
            rowSpacing: 8
            Layout.fillWidth: true

            Label {
                text: qsTr("Status")
                opacity: 0.7
            }
            Label {
                objectName: "appStatus"
                // The reason beside the word: what the health probe got, why Pando stopped it.
                text: !root.hasApp ? "" : root.app.statusReason.length > 0
                                          ? qsTr("%1: %2").arg(root.app.statusText).arg(root.app.statusReason)
                                          : root.app.statusText
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }

            Label {
                text: qsTr("URL")
                opacity: 0.7
            }
            // Opens the app here: its own URL on this computer's engine, else a forward through
            // the server (AppLink), which the text and tooltip say.
            ColumnLayout {
                spacing: 4
                Layout.fillWidth: true

                AppLink {
                    id: appLink
                    session: root.appsModel.session
                    app: root.hasApp ? root.app.name : ""
                    url: root.hasApp ? root.app.url : ""
                }
                Label {
                    id: linkLabel
                    objectName: "appLink"
                    readonly property bool linked: appLink.url.length > 0
                    text: linked ? "<a href=\"open\">" + appLink.text + "</a>" : appLink.text
                    wrapMode: Text.WrapAnywhere
                    Layout.fillWidth: true
                    textFormat: linked ? Text.StyledText : Text.PlainText
                    activeFocusOnTab: linked
                    Accessible.role: Accessible.Link
                    Accessible.name: appLink.text
                    Accessible.description: appLink.toolTip
                    onLinkActivated: appLink.open()
                    Keys.onReturnPressed: appLink.open()
                    Keys.onSpacePressed: appLink.open()
                    ToolTip.visible: linkArea.containsMouse
                    ToolTip.text: appLink.toolTip
                    MouseArea {
                        id: linkArea
                        anchors.fill: parent
                        acceptedButtons: Qt.NoButton
                        hoverEnabled: true
                        cursorShape: linkLabel.linked ? Qt.PointingHandCursor : Qt.ArrowCursor
                    }
                }
                Label {
                    id: linkState
                    objectName: "appLinkState"
                    visible: appLink.opening || appLink.error.length > 0
                    text: appLink.opening ? qsTr("Starting the forward through %1…").arg(appLink.through)
                                          : appLink.error
                    color: appLink.error.length > 0 ? StateStyle.danger : linkState.palette.windowText
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
            }

            Label {
                text: qsTr("Ref")
                opacity: 0.7
            }
            Label {
                text: root.hasApp ? root.app.ref : ""
                wrapMode: Text.WrapAnywhere
                Layout.fillWidth: true
            }

            Label {
                text: qsTr("Last deploy")
                opacity: 0.7
            }
            Label {
                text: root.hasApp ? root.app.lastDeployText : ""
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }

        Label {
            visible: root.hasApp && root.app.lastDeployError.length > 0
            text: root.hasApp ? root.app.lastDeployError : ""
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
    }
}
