// The pipelines: one row per pipeline with its last run's mark and words, and "paused" when it
// takes no new runs. A row's context menu renames its pipeline (renameRequested; F2 in the view)
// or archives it (archiveRequested; the view asks first); an instance's menu also pauses,
// unpauses or archives every instance of its group (archiveGroupRequested; the view asks first).
// Archived pipelines are listed when the Show archived box is on.
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Runs
import Pando.States

Pane {
    id: root
    // The view in front gives its list the keyboard: the arrow keys move the selection.
    function takeFocus() {
        list.forceActiveFocus();
    }
    required property PipelinesModel pipelinesModel
    padding: 0
    // The view asks for the new name.
    signal renameRequested(int row)
    signal archiveRequested(int row)
    signal archiveGroupRequested(string group)

    Menu {
        id: rowMenu
        objectName: "pipelineMenu"
        property int row: -1
        property string group
        MenuItem {
            objectName: "renamePipelineItem"
            text: qsTr("Rename…")
            onTriggered: root.renameRequested(rowMenu.row)
        }
        MenuItem {
            objectName: "archivePipelineItem"
            text: qsTr("Archive…")
            onTriggered: root.archiveRequested(rowMenu.row)
        }
        // The instance group's actions, for an instance's row only.
        MenuSeparator {
            visible: rowMenu.group !== ""
            height: visible ? implicitHeight : 0
        }
        MenuItem {
            objectName: "pauseGroupItem"
            visible: rowMenu.group !== ""
            height: visible ? implicitHeight : 0
            text: qsTr("Pause every instance of %1").arg(rowMenu.group)
            onTriggered: root.pipelinesModel.setGroupPaused(rowMenu.group, true)
        }
        MenuItem {
            objectName: "unpauseGroupItem"
            visible: rowMenu.group !== ""
            height: visible ? implicitHeight : 0
            text: qsTr("Unpause every instance of %1").arg(rowMenu.group)
            onTriggered: root.pipelinesModel.setGroupPaused(rowMenu.group, false)
        }
        MenuItem {
            objectName: "archiveGroupItem"
            visible: rowMenu.group !== ""
            height: visible ? implicitHeight : 0
            text: qsTr("Archive every instance of %1…").arg(rowMenu.group)
            onTriggered: root.archiveGroupRequested(rowMenu.group)
        }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        RowLayout {
            Layout.fillWidth: true
            Layout.margins: 8
            spacing: 8
            Label {
                text: qsTr("Pipelines")
                font.bold: true
                font.pointSize: 13
                Layout.fillWidth: true
            }
            BusyIndicator {
                running: root.pipelinesModel.loading
                visible: running
                Layout.preferredHeight: 20
                Layout.preferredWidth: 20
            }
            ToolButton {
                objectName: "refreshPipelines"
                text: qsTr("Refresh")
                onClicked: root.pipelinesModel.refresh()
            }
        }
        Label {
            visible: text.length > 0
            text: root.pipelinesModel.error
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
            Layout.leftMargin: 8
            Layout.rightMargin: 8
        }

        ListView {
            id: list
            objectName: "pipelinesList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: root.pipelinesModel
            currentIndex: root.pipelinesModel.selectedRow
            keyNavigationEnabled: true
            // As the apps list: only a row the list moved to goes back to the model (a list made
            // anew starts with no row, which is not a choice).
            onCurrentIndexChanged: if (currentIndex >= 0)
                root.pipelinesModel.selectedRow = currentIndex
            ScrollBar.vertical: ScrollBar {}
            // An instanced pipeline's instances sit under their group's name, as in Concourse: the
            // first row of a group carries the header (the view's section, without a section
            // delegate, which Qt 6.4 does not create in a Bound file).
            section.property: "instanceGroup"
            section.criteria: ViewSection.FullString

            delegate: ItemDelegate {
                id: row
                required property int index
                required property string name
                required property bool paused
                required property bool archived
                required property int lastRunState
                required property string lastRunText
                required property string instanceVars
                required property string instanceGroup
                readonly property PipelinesModel pipelinesModel: ListView.view.model as PipelinesModel
                readonly property bool groupStart: row.instanceGroup !== ""
                                                   && row.ListView.section !== row.ListView.previousSection

                width: ListView.view.width
                highlighted: ListView.isCurrentItem
                onClicked: row.pipelinesModel.selectedRow = row.index
                TapHandler {
                    acceptedButtons: Qt.RightButton
                    onTapped: {
                        row.pipelinesModel.selectedRow = row.index;
                        rowMenu.row = row.index;
                        rowMenu.group = row.instanceGroup;
                        rowMenu.popup();
                    }
                }

                contentItem: ColumnLayout {
                    spacing: 4
                    Label {
                        objectName: "instanceGroupHeader"
                        visible: row.groupStart
                        text: row.instanceGroup
                        font.bold: true
                        opacity: 0.8
                        Accessible.name: qsTr("Instances of %1").arg(row.instanceGroup)
                    }
                    RowLayout {
                        spacing: 8
                        Layout.fillWidth: true
                        // The last run's word is in the line beside it.
                        StateMark {
                            objectName: "stateMark"
                            displayState: row.lastRunState
                            showWord: false
                            Layout.alignment: Qt.AlignVCenter
                        }
                        ColumnLayout {
                            spacing: 0
                            Layout.fillWidth: true
                            Label {
                                // An instance shows its vars under its group's header.
                                text: row.instanceVars !== "" ? row.instanceVars : row.name
                                leftPadding: row.instanceVars !== "" ? 12 : 0
                                font.bold: true
                                elide: Text.ElideRight
                                Layout.fillWidth: true
                            }
                            Label {
                                text: row.lastRunText
                                opacity: 0.75
                                font.pointSize: 9
                                elide: Text.ElideRight
                                Layout.fillWidth: true
                            }
                        }
                        Label {
                            objectName: "pipelineStateWord"
                            visible: row.paused
                            text: row.archived ? qsTr("archived") : qsTr("paused")
                            font.pointSize: 9
                            opacity: 0.8
                        }
                    }
                }
            }
        }
        CheckBox {
            objectName: "showArchived"
            text: qsTr("Show archived")
            checked: root.pipelinesModel.showArchived
            onToggled: root.pipelinesModel.showArchived = checked
            ToolTip.visible: hovered
            ToolTip.text: qsTr("List archived pipelines too")
            Layout.leftMargin: 4
        }
    }
}
