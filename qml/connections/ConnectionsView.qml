// The Connections view: this computer and every paired remote install, the one shown now marked;
// switch with a click, remove a remote one, or add one by pasting the pairing link its
// administrator sent. Each remote install says until when its access lasts, warns (amber, with the
// waiting mark) in its last week and says when it has expired (red). Everything it shows and does
// goes through ConnectionsModel.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Connections
import Pando.States

Pane {
    id: root
    required property ConnectionsModel connectionsModel

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 8
        spacing: 12

        Label {
            text: qsTr("Connections")
            font.pointSize: 18
            font.bold: true
        }
        Label {
            text: qsTr("This computer runs its own engine. Remote installs — a pandod, or a teammate's desktop that serves its engine — are added with the pairing link their administrator sends you.")
            wrapMode: Text.Wrap
            opacity: 0.8
            Layout.fillWidth: true
        }

        ListView {
            id: list
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 4
            model: root.connectionsModel
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Connections")
            // The rows are not Tab stops: their Switch and Remove buttons are.
            delegate: ListRow {
                id: row
                required property int index
                required property string name
                required property string address
                required property string fingerprint
                required property string account
                required property bool local
                required property bool current
                required property string fingerprintArt
                required property string accessText
                required property int accessState
                // Ending within a week or expired: the state's colour and mark, and the text says
                // what to do.
                readonly property bool accessWarns: row.accessState === DisplayState.Waiting
                                                    || row.accessState === DisplayState.Failed
                readonly property ConnectionsModel connectionsModel: ListView.view.model as ConnectionsModel
                width: ListView.view.width
                ToolTip.visible: row.hovered && !row.local
                ToolTip.text: qsTr("The install's certificate:") + "\n" + row.fingerprintArt
                ToolTip.delay: 500
                highlighted: row.current
                focusPolicy: Qt.NoFocus
                Accessible.role: Accessible.ListItem
                Accessible.name: row.current ? qsTr("%1, shown now").arg(row.name) : row.name
                onClicked: row.connectionsModel.activate(row.index)
                contentItem: RowLayout {
                    spacing: 12
                    ColumnLayout {
                        spacing: 2
                        Layout.fillWidth: true
                        Label {
                            text: row.name
                            font.bold: true
                        }
                        Label {
                            text: row.local ? qsTr("The engine inside this app: SQLite and the local Docker")
                                            : qsTr("%1 as %2 · certificate %3…").arg(row.address).arg(row.account).arg(row.fingerprint.substring(0, 16))
                            opacity: 0.7
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                        RowLayout {
                            visible: row.accessText.length > 0
                            spacing: 4
                            Layout.fillWidth: true
                            StateMark {
                                visible: row.accessWarns
                                displayState: row.accessState
                                word: row.accessText
                                showWord: false
                                size: 10
                            }
                            Label {
                                objectName: "accessText"
                                text: row.accessText
                                color: row.accessWarns ? StateStyle.colour(row.accessState) : palette.text
                                opacity: row.accessWarns ? 1 : 0.7
                                elide: Text.ElideRight
                                Layout.fillWidth: true
                            }
                        }
                    }
                    Label {
                        visible: row.current
                        text: qsTr("Shown now")
                        font.bold: true
                    }
                    Button {
                        visible: !row.current
                        text: qsTr("Switch")
                        Accessible.name: qsTr("Switch to %1").arg(row.name)
                        onClicked: row.connectionsModel.activate(row.index)
                    }
                    Button {
                        visible: !row.local
                        text: qsTr("Remove")
                        Accessible.name: qsTr("Remove %1").arg(row.name)
                        onClicked: row.connectionsModel.remove(row.index)
                    }
                }
            }
        }

        GroupBox {
            title: qsTr("Add a remote install")
            Layout.fillWidth: true

            GridLayout {
                anchors.fill: parent
                columns: 2
                columnSpacing: 8
                rowSpacing: 8

                Label {
                    id: linkLabel
                    text: qsTr("Pairing link")
                }
                TextField {
                    id: linkField
                    objectName: "pairingLinkField"
                    Accessible.name: linkLabel.text
                    placeholderText: qsTr("pando://host:port/pair?fp=…&token=…")
                    Layout.fillWidth: true
                    enabled: !root.connectionsModel.busy
                    onAccepted: addButton.clicked()
                    onTextChanged: root.connectionsModel.clearError()
                }
                Label {
                    id: nameLabel
                    text: qsTr("Name")
                }
                TextField {
                    id: nameField
                    objectName: "connectionNameField"
                    Accessible.name: nameLabel.text
                    placeholderText: qsTr("optional; the host by default")
                    Layout.fillWidth: true
                    enabled: !root.connectionsModel.busy
                    onAccepted: addButton.clicked()
                }
                Item {
                    Layout.preferredWidth: 1
                }
                RowLayout {
                    spacing: 8
                    Button {
                        id: addButton
                        objectName: "addConnectionButton"
                        text: qsTr("Add")
                        enabled: linkField.text.length > 0 && !root.connectionsModel.busy
                        onClicked: root.connectionsModel.addFromLink(linkField.text, nameField.text)
                    }
                    BusyIndicator {
                        running: root.connectionsModel.busy
                        visible: running
                        Layout.preferredHeight: addButton.height
                    }
                    Label {
                        text: root.connectionsModel.busy ? qsTr("Pairing…") : ""
                    }
                }
                Item {
                    Layout.preferredWidth: 1
                    visible: errorLabel.visible
                }
                Label {
                    id: errorLabel
                    objectName: "connectionError"
                    visible: text.length > 0
                    text: root.connectionsModel.error
                    color: StateStyle.danger
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
            }
        }
    }

    // A paired install clears the form for the next one.
    Component.onCompleted: root.connectionsModel.added.connect(function() {
        linkField.text = ""
        nameField.text = ""
    })
    Shortcut {
        sequence: "Ctrl+Shift+N"
        enabled: root.visible
        onActivated: linkField.forceActiveFocus()
    }
}
