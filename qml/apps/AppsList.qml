// The master list: one row per app with its state mark, word, and last deploy. The list is one Tab
// stop with a focus ring; the arrow keys move the selection.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Apps
import Pando.States

Pane {
    id: root
    // The view in front gives its list the keyboard: the arrow keys move the selection.
    function takeFocus() {
        list.forceActiveFocus();
    }
    required property AppsModel appsModel
    signal newAppRequested
    padding: 0

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        RowLayout {
            Layout.fillWidth: true
            Layout.margins: 8
            spacing: 8
            Label {
                text: qsTr("Apps")
                font.bold: true
                font.pointSize: 13
                Layout.fillWidth: true
            }
            BusyIndicator {
                running: root.appsModel.loading
                visible: running
                Layout.preferredHeight: 20
                Layout.preferredWidth: 20
            }
            ToolButton {
                text: qsTr("Refresh")
                Accessible.name: qsTr("Refresh the apps")
                onClicked: root.appsModel.refresh()
            }
            Button {
                objectName: "newAppButton"
                text: qsTr("New app")
                onClicked: root.newAppRequested()
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Create an app from a repository or a spec file (Ctrl+N)")
            }
        }

        ListView {
            id: list
            objectName: "appsList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            // Rows scrolled out are kept for the rows scrolled in: making an ItemDelegate with its
            // layouts and StateMark costs more than a frame's budget when a flick brings several.
            reuseItems: true
            model: root.appsModel
            currentIndex: root.appsModel.selectedRow
            keyNavigationEnabled: true
            focus: true
            // One Tab stop: the arrow keys move among the rows.
            activeFocusOnTab: true
            // The list follows the model's selection; only a row it moved to goes back (a list
            // made after an app was chosen elsewhere starts with no row, which is not a choice).
            onCurrentIndexChanged: if (currentIndex >= 0)
                root.appsModel.selectedRow = currentIndex
            ScrollBar.vertical: ScrollBar {}
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Apps")

            delegate: ListRow {
                id: row
                required property int index
                required property string name
                required property int state
                required property string statusText
                required property string statusReason
                required property string lastDeployText
                required property string progress
                required property bool busy
                readonly property AppsModel appsModel: ListView.view.model as AppsModel

                width: ListView.view.width
                highlighted: ListView.isCurrentItem
                focusPolicy: Qt.NoFocus
                Accessible.role: Accessible.ListItem
                Accessible.name: qsTr("%1, %2").arg(row.name).arg(row.statusText)
                onClicked: {
                    row.appsModel.selectedRow = row.index;
                    row.ListView.view.forceActiveFocus();
                }

                contentItem: RowLayout {
                    spacing: 8
                    ColumnLayout {
                        spacing: 0
                        Layout.fillWidth: true
                        Label {
                            objectName: "appRowName"
                            text: row.name
                            font.bold: true
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                        Label {
                            // Why it is unhealthy (or stopped) comes before its last deploy.
                            text: row.busy && row.progress.length > 0 ? row.progress
                                : row.statusReason.length > 0 ? row.statusReason : row.lastDeployText
                            opacity: 0.7
                            font.pointSize: 9
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                    }
                    StateMark {
                        objectName: "stateMark"
                        displayState: row.state
                        word: row.statusText
                        Layout.alignment: Qt.AlignVCenter
                    }
                }
            }
        }
    }
    FocusRing {
        target: list
    }
}
