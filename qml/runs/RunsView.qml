// The Pipelines view: the install's pipelines on the left, the selected pipeline's runs in the
// middle, the selected run's step tree and output on the right. Trigger a job (Ctrl+T), abort the
// selected run (Ctrl+Shift+A), pause or unpause the pipeline (Ctrl+Shift+P). Says so plainly when
// there are no pipelines yet, and when the install runs without the pipeline runner. Everything
// it shows comes from the three models.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Runs
import Pando.States

Item {
    id: root
    required property PipelinesModel pipelinesModel
    required property RunsModel runsModel
    required property RunTreeModel runTree
    readonly property bool hasPipelines: root.pipelinesModel.count > 0
    readonly property var pipeline: root.pipelinesModel.selected
    readonly property var run: root.runsModel.selected

    function triggerJob() {
        if (root.pipelinesModel.selectedRow >= 0)
            runsList.openJobMenu()
    }
    function abortRun() {
        if (root.run.live)
            root.runsModel.abort(root.runsModel.selectedRow)
    }
    function togglePaused() {
        const row = root.pipelinesModel.selectedRow
        if (row >= 0)
            root.pipelinesModel.setPaused(row, !root.pipeline.paused)
    }

    // The middle column shows the selected pipeline's runs; the right one the selected run.
    Binding {
        target: root.runsModel
        property: "pipeline"
        value: root.pipelinesModel.selectedName
    }
    Binding {
        target: root.runTree
        property: "runId"
        value: root.runsModel.selectedId
    }
    // A run triggered from here is selected once the install has queued it.
    Connections {
        target: root.pipelinesModel
        function onTriggered(pipeline: string, runId: string) {
            if (pipeline === root.runsModel.pipeline)
                root.runsModel.selectId(runId)
        }
    }

    onVisibleChanged: if (visible && root.hasPipelines)
        pipelinesList.takeFocus()

    Shortcut {
        sequence: "Ctrl+T"
        enabled: root.visible && root.hasPipelines
        onActivated: root.triggerJob()
    }
    Shortcut {
        sequence: "Ctrl+Shift+A"
        enabled: root.visible && root.hasPipelines
        onActivated: root.abortRun()
    }
    Shortcut {
        sequence: "Ctrl+Shift+P"
        enabled: root.visible && root.hasPipelines
        onActivated: root.togglePaused()
    }

    // No pipeline runner in this install, or no pipelines yet: say what to do.
    Pane {
        anchors.fill: parent
        visible: !root.hasPipelines

        ColumnLayout {
            anchors.centerIn: parent
            width: Math.min(parent.width - 48, 560)
            spacing: 12
            Label {
                text: root.pipelinesModel.unavailable ? qsTr("This install has no pipeline runner")
                                                      : qsTr("No pipelines yet")
                font.pointSize: 20
                font.bold: true
                Layout.alignment: Qt.AlignHCenter
            }
            Label {
                visible: !root.pipelinesModel.unavailable
                text: qsTr("A pipeline is a YAML file of resources and jobs; each job's plan fetches, runs tasks and puts results, and steps whose inputs did not change are skipped. Set one with <tt>pando pipelines set NAME -c pipeline.yml</tt>; it appears here with its jobs and runs.")
                textFormat: Text.StyledText
                wrapMode: Text.Wrap
                horizontalAlignment: Text.AlignHCenter
                opacity: 0.8
                Layout.fillWidth: true
            }
            Label {
                visible: text.length > 0
                text: root.pipelinesModel.error
                color: root.pipelinesModel.unavailable ? root.palette.text : StateStyle.danger
                wrapMode: Text.Wrap
                horizontalAlignment: Text.AlignHCenter
                Layout.fillWidth: true
            }
            BusyIndicator {
                running: root.pipelinesModel.loading
                visible: running
                Layout.alignment: Qt.AlignHCenter
            }
        }
    }

    SplitView {
        anchors.fill: parent
        visible: root.hasPipelines

        PipelinesList {
            id: pipelinesList
            SplitView.preferredWidth: 240
            SplitView.minimumWidth: 180
            pipelinesModel: root.pipelinesModel
        }
        RunsList {
            id: runsList
            SplitView.preferredWidth: 340
            SplitView.minimumWidth: 240
            pipelinesModel: root.pipelinesModel
            runsModel: root.runsModel
        }
        RunDetail {
            SplitView.fillWidth: true
            runsModel: root.runsModel
            runTree: root.runTree
        }
    }
}
