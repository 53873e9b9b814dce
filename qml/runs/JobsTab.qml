// The Jobs tab of a pipeline: its jobs in the order of the passed: graph, stage by stage (a job
// sits one stage after the latest job whose output feeds it, and is indented by its stage), each
// with the jobs it comes after,
// its inputs, its last run (mark and word) and Trigger. Arrow keys move through the jobs, Enter
// triggers the current one; Tab reaches every Trigger button.
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Runs
import Pando.States

Pane {
    id: root
    required property JobsModel jobsModel
    // A paused pipeline starts no runs: Trigger says why instead of failing.
    property bool paused: false
    padding: 8

    ColumnLayout {
        anchors.fill: parent
        spacing: 8

        Label {
            text: root.jobsModel.stageCount > 1
                  ? qsTr("%n stage(s): a job runs with what the jobs before it passed", "", root.jobsModel.stageCount)
                  : qsTr("No job waits for another (no passed: in the config)")
            opacity: 0.75
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        Label {
            visible: text.length > 0
            text: root.jobsModel.error
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        ListView {
            id: jobs
            objectName: "jobsList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            focus: true
            activeFocusOnTab: true
            keyNavigationEnabled: true
            model: root.jobsModel
            currentIndex: 0
            Accessible.name: qsTr("Jobs of the pipeline")
            Accessible.role: Accessible.List
            ScrollBar.vertical: ScrollBar {}
            Keys.onReturnPressed: root.jobsModel.trigger(jobs.currentIndex)
            Keys.onEnterPressed: root.jobsModel.trigger(jobs.currentIndex)

            delegate: ItemDelegate {
                id: job
                required property int index
                required property string name
                required property int stage
                required property string stageText
                required property string upstreamText
                required property string inputsText
                required property int lastRunState
                required property string lastRunText
                required property bool busy
                required property string actionError
                width: ListView.view.width
                highlighted: ListView.isCurrentItem
                Accessible.name: qsTr("%1, %2, %3").arg(job.name).arg(job.upstreamText).arg(job.lastRunText)
                onClicked: jobs.currentIndex = job.index

                contentItem: RowLayout {
                    spacing: 8
                    // The job's column in the passed: graph, indented by it.
                    Item {
                        implicitWidth: job.stage * 24
                    }
                    Label {
                        objectName: "jobStage"
                        text: job.stageText
                        opacity: 0.75
                        color: job.highlighted ? job.palette.highlightedText : job.palette.text
                    }
                    StateMark {
                        objectName: "jobStateMark"
                        displayState: job.lastRunState
                        word: job.lastRunText
                        showWord: false
                        Layout.alignment: Qt.AlignVCenter
                    }
                    ColumnLayout {
                        spacing: 0
                        Layout.fillWidth: true
                        Label {
                            objectName: "jobName"
                            text: job.name
                            font.bold: true
                            elide: Text.ElideRight
                            color: job.highlighted ? job.palette.highlightedText : job.palette.text
                            Layout.fillWidth: true
                        }
                        Label {
                            objectName: "jobUpstream"
                            text: job.upstreamText
                            elide: Text.ElideRight
                            color: job.highlighted ? job.palette.highlightedText : job.palette.text
                            Layout.fillWidth: true
                        }
                        Label {
                            text: job.inputsText
                            elide: Text.ElideRight
                            opacity: 0.8
                            color: job.highlighted ? job.palette.highlightedText : job.palette.text
                            Layout.fillWidth: true
                        }
                        Label {
                            visible: text.length > 0
                            text: job.actionError
                            color: StateStyle.danger
                            wrapMode: Text.Wrap
                            Layout.fillWidth: true
                        }
                    }
                    Label {
                        objectName: "jobLastRun"
                        text: job.lastRunText
                        elide: Text.ElideRight
                        color: job.highlighted ? job.palette.highlightedText : job.palette.text
                        Layout.maximumWidth: 200
                    }
                    Button {
                        objectName: "jobTrigger"
                        text: qsTr("Trigger")
                        Accessible.name: qsTr("Trigger %1").arg(job.name)
                        enabled: !job.busy && !root.paused
                        ToolTip.visible: hovered
                        ToolTip.text: root.paused ? qsTr("The pipeline is paused; unpause it to start runs")
                                                  : qsTr("Start a run of %1").arg(job.name)
                        onClicked: {
                            jobs.currentIndex = job.index
                            root.jobsModel.trigger(job.index)
                        }
                    }
                }
            }
        }
    }
}
