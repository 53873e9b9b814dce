// The selected pipeline: its name, whether it is paused (and why), Trigger (pick a job) and
// Pause/Unpause, then its runs newest first with their mark, words and durations.
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Runs
import Pando.States

Pane {
    id: root
    required property PipelinesModel pipelinesModel
    required property RunsModel runsModel
    readonly property var pipeline: root.pipelinesModel.selected
    padding: 0

    function openJobMenu() {
        jobMenu.popup(triggerButton, 0, triggerButton.height)
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 4

        RowLayout {
            Layout.fillWidth: true
            Layout.margins: 8
            spacing: 8
            Label {
                text: root.pipeline.name
                font.bold: true
                font.pointSize: 13
                elide: Text.ElideRight
                Layout.fillWidth: true
            }
            Button {
                id: triggerButton
                objectName: "triggerButton"
                text: qsTr("Trigger…")
                enabled: !root.pipeline.busy && root.pipeline.jobs.length > 0
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Start a run of one of the pipeline's jobs (Ctrl+T)")
                onClicked: root.openJobMenu()
            }
            Button {
                objectName: "pauseButton"
                text: root.pipeline.paused ? qsTr("Unpause") : qsTr("Pause")
                // An archived pipeline comes back by being set again, not by an unpause.
                enabled: !root.pipeline.busy && root.pipeline.name.length > 0 && !root.pipeline.archived
                ToolTip.visible: hovered
                ToolTip.text: root.pipeline.paused ? qsTr("Let the pipeline start runs again (Ctrl+Shift+P)")
                                                   : qsTr("Start no new runs until unpaused; running ones go on (Ctrl+Shift+P)")
                onClicked: root.pipelinesModel.setPaused(root.pipelinesModel.selectedRow, !root.pipeline.paused)
            }
        }
        Label {
            objectName: "pausedLabel"
            visible: root.pipeline.paused
            text: root.pipeline.archived ? qsTr("Archived: %1. Set it again to bring it back: pando pipelines set %2 -c FILE").arg(root.pipeline.pausedReason).arg(root.pipeline.name)
                : root.pipeline.pausedReason.length > 0 ? qsTr("Paused: %1").arg(root.pipeline.pausedReason)
                                                        : qsTr("Paused")
            wrapMode: Text.Wrap
            opacity: 0.8
            Layout.fillWidth: true
            Layout.leftMargin: 8
            Layout.rightMargin: 8
        }
        Label {
            objectName: "setByLabel"
            visible: root.pipeline.setBy.length > 0
            text: qsTr("Set by pipeline %1's set_pipeline step").arg(root.pipeline.setBy)
            wrapMode: Text.Wrap
            opacity: 0.8
            Layout.fillWidth: true
            Layout.leftMargin: 8
            Layout.rightMargin: 8
        }
        Label {
            visible: text.length > 0
            text: root.pipeline.actionError.length > 0 ? root.pipeline.actionError : root.runsModel.error
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
            Layout.leftMargin: 8
            Layout.rightMargin: 8
        }

        Menu {
            id: jobMenu
            objectName: "jobMenu"
            Instantiator {
                model: root.pipeline.jobs
                delegate: MenuItem {
                    required property string modelData
                    objectName: "job:" + modelData
                    text: modelData
                    onTriggered: root.pipelinesModel.triggerJob(root.pipelinesModel.selectedRow, modelData)
                }
                onObjectAdded: (index, object) => jobMenu.insertItem(index, object)
                onObjectRemoved: (index, object) => jobMenu.removeItem(object)
            }
        }

        Label {
            visible: root.runsModel.count === 0 && !root.runsModel.loading
            text: qsTr("No runs yet. Trigger a job, or wait for a resource to change.")
            wrapMode: Text.Wrap
            opacity: 0.7
            Layout.fillWidth: true
            Layout.margins: 8
        }

        ListView {
            objectName: "runsList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: root.runsModel
            currentIndex: root.runsModel.selectedRow
            keyNavigationEnabled: true
            // As the apps list: only a row the list moved to goes back to the model (a list made
            // anew starts with no row, which is not a choice).
            onCurrentIndexChanged: if (currentIndex >= 0)
                root.runsModel.selectedRow = currentIndex
            ScrollBar.vertical: ScrollBar {}

            delegate: ItemDelegate {
                id: row
                required property int index
                required property string title
                required property int runState
                required property string statusText
                required property string durationText
                required property string createdText
                required property string actionError
                readonly property RunsModel runsModel: ListView.view.model as RunsModel

                width: ListView.view.width
                highlighted: ListView.isCurrentItem
                onClicked: row.runsModel.selectedRow = row.index

                contentItem: RowLayout {
                    spacing: 8
                    // The word is in the line beside it.
                    StateMark {
                        objectName: "stateMark"
                        displayState: row.runState
                        word: row.statusText
                        showWord: false
                        Layout.alignment: Qt.AlignVCenter
                    }
                    ColumnLayout {
                        spacing: 0
                        Layout.fillWidth: true
                        Label {
                            text: row.title
                            font.bold: true
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                        Label {
                            text: row.actionError.length > 0 ? row.actionError
                                                             : qsTr("%1 · %2").arg(row.statusText).arg(row.createdText)
                            color: row.actionError.length > 0 ? StateStyle.danger : row.palette.text
                            opacity: row.actionError.length > 0 ? 1 : 0.75
                            font.pointSize: 9
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                    }
                    Label {
                        text: row.durationText
                        font.pointSize: 9
                        opacity: 0.8
                    }
                }
            }
        }
    }
}
