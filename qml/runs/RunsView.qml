// The Pipelines view: the install's pipelines on the left, the selected pipeline's detail on the
// right in tabs: Runs (its runs, and the selected run's step tree and output), Jobs (the passed:
// graph: each job's box with its last run and Trigger, arrows to the jobs it feeds), Config (the
// YAML as set, and the diff of its last change) and Resources (versions, pin, Check now). Trigger a job (Ctrl+T), abort the
// selected run (Ctrl+Shift+A), pause or unpause the pipeline (Ctrl+Shift+P), switch tabs with
// Ctrl+1..4. Says so plainly when there are no pipelines yet, and when the install runs without
// the pipeline runner. Everything it shows comes from the models.
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
    // The selected pipeline's Jobs/Config and Resources tabs, on the same session.
    readonly property JobsModel jobsModel: JobsModel {
        session: root.pipelinesModel.session
        pipeline: root.pipelinesModel.selectedName
        configVersion: root.pipeline.configVersion
    }
    readonly property ResourcesModel resourcesModel: ResourcesModel {
        session: root.pipelinesModel.session
        pipeline: root.pipelinesModel.selectedName
    }
    property alias currentTab: tabs.currentIndex

    function triggerJob() {
        if (root.pipelinesModel.selectedRow < 0)
            return
        // The job menu is the Runs tab's; the Jobs tab has a Trigger button on every job.
        if (tabs.currentIndex !== 1) {
            tabs.currentIndex = 0
            runsList.openJobMenu()
        }
    }
    function abortRun() {
        if (root.run.live)
            root.runsModel.abort(root.runsModel.selectedRow)
    }
    function togglePaused() {
        const row = root.pipelinesModel.selectedRow
        if (row >= 0 && !root.pipeline.archived)
            root.pipelinesModel.setPaused(row, !root.pipeline.paused)
    }
    function renamePipeline(row: int) {
        if (row < 0 || row !== root.pipelinesModel.selectedRow)
            return
        renameDialog.row = row
        renameDialog.open()
    }

    function archivePipeline(row: int) {
        if (row < 0 || row !== root.pipelinesModel.selectedRow)
            return
        archiveDialog.row = row
        archiveDialog.open()
    }

    // As fly archive-pipeline, which asks first too: the config goes, the runs stay.
    Dialog {
        id: archiveDialog
        objectName: "archiveDialog"
        property int row: -1
        property string current
        onAboutToShow: current = root.pipeline.name ?? ""
        title: qsTr("Archive %1?").arg(archiveDialog.current)
        modal: true
        anchors.centerIn: parent
        standardButtons: Dialog.Ok | Dialog.Cancel
        Component.onCompleted: standardButton(Dialog.Ok).text = qsTr("Archive")
        onAccepted: root.pipelinesModel.archive(archiveDialog.row)
        Label {
            width: 420
            text: qsTr("It stops for good: its queued and running runs are aborted, its config is dropped and the pipelines it set are archived too. Its runs, versions and secrets stay. Setting it again brings it back, paused.")
            wrapMode: Text.Wrap
        }
    }

    function archiveGroup(group: string) {
        archiveGroupDialog.group = group
        archiveGroupDialog.instances = root.pipelinesModel.instancesOf(group).length
        archiveGroupDialog.open()
    }

    // Every instance of an instance group at once, asked first as one archive is.
    Dialog {
        id: archiveGroupDialog
        objectName: "archiveGroupDialog"
        property string group
        property int instances
        title: qsTr("Archive every instance of %1?").arg(archiveGroupDialog.group)
        modal: true
        anchors.centerIn: parent
        standardButtons: Dialog.Ok | Dialog.Cancel
        Component.onCompleted: standardButton(Dialog.Ok).text = qsTr("Archive all")
        onAccepted: root.pipelinesModel.archiveGroup(archiveGroupDialog.group)
        Label {
            width: 420
            text: qsTr("%n instance(s) stop for good: their queued and running runs are aborted and their configs dropped. Their runs, versions and secrets stay; setting an instance again brings it back, paused.", "", archiveGroupDialog.instances)
            wrapMode: Text.Wrap
        }
    }

    // As fly rename-pipeline: the runs, versions, secrets and grants go with it.
    Dialog {
        id: renameDialog
        objectName: "renameDialog"
        // The row it was opened for (the selected one): the selection may change while it is open.
        property int row: -1
        property string current
        onAboutToShow: current = root.pipeline.name ?? ""
        title: qsTr("Rename %1").arg(renameDialog.current)
        modal: true
        anchors.centerIn: parent
        standardButtons: Dialog.Ok | Dialog.Cancel
        onOpened: {
            newName.text = renameDialog.current
            newName.selectAll()
            newName.forceActiveFocus()
        }
        Component.onCompleted: standardButton(Dialog.Ok).text = qsTr("Rename")
        onAccepted: root.pipelinesModel.rename(renameDialog.row, newName.text)
        ColumnLayout {
            width: 420
            TextField {
                id: newName
                objectName: "newPipelineName"
                Layout.fillWidth: true
                Accessible.name: qsTr("New name")
                onAccepted: renameDialog.accept()
            }
            Label {
                text: qsTr("Its runs, versions, secrets and who may use it go with it. Forges that call its webhooks need the new address.")
                wrapMode: Text.Wrap
                opacity: 0.8
                Layout.fillWidth: true
            }
        }
    }

    // A tab made when it is first shown, then kept (its scroll and choices stay as the user left
    // them): the Pipelines view's first visit pays for the Runs tab only.
    // Loaded by URL with its properties, as the app detail's tabs are: an inline component would
    // reach this file's ids from outside its creation context, which qmllint refuses.
    component TabPage: Loader {
        id: page
        required property url view
        property var initial: ({})
        readonly property bool current: StackLayout.isCurrentItem
        onCurrentChanged: page.load()
        Component.onCompleted: page.load()
        function load() {
            if (page.current && page.status === Loader.Null)
                page.setSource(page.view, page.initial);
        }
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
    // A refresh of the pipelines (Ctrl+R) reads the selected one's jobs and resources again too.
    Connections {
        target: root.pipelinesModel
        function onLoadingChanged() {
            if (!root.pipelinesModel.loading) {
                root.jobsModel.refresh()
                root.resourcesModel.refresh()
            }
        }
    }
    Connections {
        target: root.jobsModel
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
        sequence: "Ctrl+1"
        enabled: root.visible && root.hasPipelines
        onActivated: tabs.currentIndex = 0
    }
    Shortcut {
        sequence: "Ctrl+2"
        enabled: root.visible && root.hasPipelines
        onActivated: tabs.currentIndex = 1
    }
    Shortcut {
        sequence: "Ctrl+3"
        enabled: root.visible && root.hasPipelines
        onActivated: tabs.currentIndex = 2
    }
    Shortcut {
        sequence: "Ctrl+4"
        enabled: root.visible && root.hasPipelines
        onActivated: tabs.currentIndex = 3
    }
    Shortcut {
        sequence: "Ctrl+Shift+P"
        enabled: root.visible && root.hasPipelines
        onActivated: root.togglePaused()
    }
    Shortcut {
        sequence: "F2"
        enabled: root.visible && root.hasPipelines
        onActivated: root.renamePipeline(root.pipelinesModel.selectedRow)
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
            onRenameRequested: row => root.renamePipeline(row)
            onArchiveRequested: row => root.archivePipeline(row)
            onArchiveGroupRequested: group => root.archiveGroup(group)
        }
        ColumnLayout {
            SplitView.fillWidth: true
            SplitView.minimumWidth: 320
            // Not the widest tab's content (a long config line): the window decides the width.
            implicitWidth: 640
            spacing: 0

            TabBar {
                id: tabs
                objectName: "pipelineTabs"
                Layout.fillWidth: true
                TabButton {
                    objectName: "runsTab"
                    text: qsTr("Runs")
                    Accessible.name: qsTr("Runs (Ctrl+1)")
                }
                TabButton {
                    objectName: "jobsTab"
                    text: qsTr("Jobs")
                    Accessible.name: qsTr("Jobs (Ctrl+2)")
                }
                TabButton {
                    objectName: "configTab"
                    text: qsTr("Config")
                    Accessible.name: qsTr("Config (Ctrl+3)")
                }
                TabButton {
                    objectName: "resourcesTab"
                    text: qsTr("Resources")
                    Accessible.name: qsTr("Resources (Ctrl+4)")
                }
            }

            StackLayout {
                currentIndex: tabs.currentIndex
                Layout.fillWidth: true
                Layout.fillHeight: true

                SplitView {
                    // The runs beside the selected one where there is room; above it in a narrow
                    // pane, which the run's tree and output need whole.
                    orientation: width < 900 ? Qt.Vertical : Qt.Horizontal
                    RunsList {
                        id: runsList
                        SplitView.preferredWidth: 340
                        SplitView.minimumWidth: 240
                        SplitView.preferredHeight: 180
                        SplitView.minimumHeight: 100
                        pipelinesModel: root.pipelinesModel
                        runsModel: root.runsModel
                    }
                    RunDetail {
                        SplitView.fillWidth: true
                        SplitView.fillHeight: true
                        runsModel: root.runsModel
                        runTree: root.runTree
                    }
                }
                TabPage {
                    view: Qt.resolvedUrl("JobsTab.qml")
                    initial: ({
                            jobsModel: root.jobsModel,
                            paused: Qt.binding(() => root.pipeline.paused)
                        })
                }
                TabPage {
                    view: Qt.resolvedUrl("ConfigTab.qml")
                    initial: ({
                            jobsModel: root.jobsModel
                        })
                }
                TabPage {
                    view: Qt.resolvedUrl("ResourcesTab.qml")
                    initial: ({
                            resourcesModel: root.resourcesModel
                        })
                }
            }
        }
    }
}
