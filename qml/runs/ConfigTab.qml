// The Config tab of a pipeline: its YAML as it was set (read-only, monospace, selectable), and the
// diff of its last change: lines taken out in red with "-", lines put in in green with "+".
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Runs
import Pando.States

Pane {
    id: root
    required property JobsModel jobsModel
    padding: 8

    ColumnLayout {
        anchors.fill: parent
        spacing: 8

        RowLayout {
            Layout.fillWidth: true
            spacing: 8
            Label {
                text: qsTr("Version %1").arg(root.jobsModel.configVersion)
                font.bold: true
            }
            Label {
                text: qsTr("Change it with pando pipelines set; the desktop shows it read-only.")
                opacity: 0.75
                elide: Text.ElideRight
                Layout.fillWidth: true
            }
            TabBar {
                id: mode
                objectName: "configMode"
                TabButton {
                    objectName: "configYamlButton"
                    text: qsTr("YAML")
                    width: implicitWidth
                }
                TabButton {
                    objectName: "configDiffButton"
                    text: qsTr("Last change")
                    width: implicitWidth
                    Accessible.name: qsTr("The last change, as a diff")
                }
            }
        }

        StackLayout {
            currentIndex: mode.currentIndex
            Layout.fillWidth: true
            Layout.fillHeight: true

            ScrollView {
                TextArea {
                    objectName: "configYaml"
                    text: root.jobsModel.configYaml
                    readOnly: true
                    selectByMouse: true
                    font.family: "monospace"
                    textFormat: TextEdit.PlainText
                    wrapMode: TextEdit.NoWrap
                    Accessible.name: qsTr("The pipeline's config")
                }
            }

            Frame {
                padding: 4
                Label {
                    anchors.centerIn: parent
                    visible: diffLines.count === 0
                    text: qsTr("Not changed since it was set first")
                    opacity: 0.6
                }
                ListView {
                    id: diffLines
                    objectName: "configDiff"
                    anchors.fill: parent
                    clip: true
                    activeFocusOnTab: true
                    model: root.jobsModel.configDiff
                    Accessible.name: qsTr("The last change to the config")
                    Accessible.role: Accessible.List
                    ScrollBar.vertical: ScrollBar {}
                    ScrollBar.horizontal: ScrollBar {}
                    contentWidth: diffLines.contentItem.childrenRect.width
                    flickableDirection: Flickable.AutoFlickIfNeeded
                    delegate: Text {
                        required property string modelData
                        readonly property bool added: modelData.startsWith("+") && !modelData.startsWith("+++")
                        readonly property bool removed: modelData.startsWith("-") && !modelData.startsWith("---")
                        text: modelData
                        font.family: "monospace"
                        font.bold: modelData.startsWith("@@")
                        textFormat: Text.PlainText
                        color: added ? StateStyle.colour(DisplayState.Healthy)
                                     : removed ? StateStyle.danger : root.palette.text
                    }
                }
            }
        }
    }
}
