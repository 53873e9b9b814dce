// The selected run: its state, duration, what triggered it and its counts, Abort while it runs;
// the step tree as the plan nests it (state mark and word, duration, "unchanged" for steps
// skipped because nothing changed); below, the selected step's output (or the whole run's) in the
// desktop's log view: ANSI colours, line numbers, search, following the end while the run goes on.
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Logs
import Pando.Runs
import Pando.States

Pane {
    id: root
    required property RunsModel runsModel
    required property RunTreeModel runTree
    readonly property bool hasRun: root.runTree.runId.length > 0
    readonly property var step: root.runTree.selected
    readonly property var run: root.runsModel.selected

    RunOutputSource {
        id: outputSource
        output: root.runTree.output
    }

    Label {
        anchors.centerIn: parent
        visible: !root.hasRun
        text: qsTr("Select a run to see its steps")
        opacity: 0.7
    }

    ColumnLayout {
        anchors.fill: parent
        visible: root.hasRun
        spacing: 8

        // The title, then its state and Abort: beside it where there is room, below it in a
        // narrow pane.
        GridLayout {
            columns: width < titleRow.implicitWidth + runActions.implicitWidth + columnSpacing ? 1 : 2
            columnSpacing: 8
            rowSpacing: 4
            Layout.fillWidth: true
            RowLayout {
                id: titleRow
                spacing: 8
                Layout.fillWidth: true
                // The word is in the run's line at the right.
                StateMark {
                    objectName: "runStateMark"
                    displayState: root.runTree.state
                    word: root.runTree.statusText
                    showWord: false
                    size: 16
                }
                Label {
                    objectName: "runTitle"
                    text: root.runTree.title
                    font.pointSize: 16
                    font.bold: true
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                    Layout.minimumWidth: Math.min(implicitWidth, 120)
                }
            }
            RowLayout {
                id: runActions
                spacing: 8
            Label {
                text: qsTr("%1 · %2").arg(root.runTree.statusText).arg(root.runTree.durationText)
            }
            Button {
                text: qsTr("Abort")
                enabled: root.run.live && !root.run.busy
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Stop the run; steps that run are cancelled (Ctrl+Shift+A)")
                onClicked: root.runsModel.abort(root.runsModel.selectedRow)
            }
            }
        }
        Label {
            text: qsTr("%1 · %2").arg(root.runTree.triggerText).arg(root.runTree.summaryText)
            opacity: 0.75
            elide: Text.ElideRight
            Layout.fillWidth: true
        }
        Label {
            visible: text.length > 0
            text: root.runTree.runError.length > 0 ? root.runTree.runError : root.runTree.error
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        Label {
            objectName: "logNote"
            visible: text.length > 0
            text: root.runTree.logNote
            opacity: 0.75
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        SplitView {
            orientation: Qt.Vertical
            Layout.fillWidth: true
            Layout.fillHeight: true

            TreeView {
                id: tree
                objectName: "runTree"
                SplitView.preferredHeight: parent.height * 0.5
                SplitView.minimumHeight: 80
                clip: true
                model: root.runTree
                columnWidthProvider: () => tree.width
                onWidthChanged: tree.forceLayout()
                ScrollBar.vertical: ScrollBar {}

                Connections {
                    target: root.runTree
                    function onModelReset() {
                        Qt.callLater(tree.expandRecursively)
                    }
                    function onRowsInserted() {
                        Qt.callLater(tree.expandRecursively)
                    }
                }

                delegate: ItemDelegate {
                    id: node
                    required property TreeView treeView
                    required property bool isTreeNode
                    required property bool expanded
                    required property bool hasChildren
                    required property int depth
                    required property int row
                    required property string stepId
                    required property string label
                    required property int stepState
                    required property string statusText
                    required property bool cached
                    required property string durationText
                    required property int attempt
                    required property int exitCode

                    implicitWidth: tree.width
                    implicitHeight: 28
                    highlighted: node.stepId === root.runTree.selectedStep
                    onClicked: root.runTree.selectedStep = node.stepId

                    contentItem: RowLayout {
                        spacing: 8
                        Item {
                            implicitWidth: node.depth * 16
                        }
                        Label {
                            text: node.hasChildren ? (node.expanded ? "▾" : "▸") : ""
                            Layout.preferredWidth: 12
                            TapHandler {
                                onTapped: node.treeView.toggleExpanded(node.row)
                            }
                        }
                        StateMark {
                            objectName: "stateMark"
                            displayState: node.stepState
                            word: node.statusText
                            showWord: false
                            Layout.alignment: Qt.AlignVCenter
                        }
                        Label {
                            text: node.label
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                        Label {
                            visible: node.cached
                            text: qsTr("cached")
                            font.pointSize: 8
                            padding: 2
                            leftPadding: 6
                            rightPadding: 6
                            opacity: 0.85
                            background: Rectangle {
                                radius: height / 2
                                color: "transparent"
                                border.color: StateStyle.colour(DisplayState.Cached)
                            }
                        }
                        Label {
                            text: node.attempt > 1 ? qsTr("attempt %1").arg(node.attempt) : ""
                            visible: text.length > 0
                            font.pointSize: 9
                            opacity: 0.75
                        }
                        Label {
                            text: node.statusText
                            Layout.preferredWidth: 130
                            elide: Text.ElideRight
                            opacity: 0.85
                        }
                        Label {
                            text: node.durationText
                            Layout.preferredWidth: 80
                            horizontalAlignment: Text.AlignRight
                        }
                    }
                }
            }

            ColumnLayout {
                SplitView.fillHeight: true
                spacing: 4
                // Flows onto two lines in a narrow pane rather than squeezing the title.
                Flow {
                    Layout.fillWidth: true
                    spacing: 8
                    Label {
                        text: root.step.stepId.length > 0 ? qsTr("Output of %1").arg(root.step.label)
                                                          : qsTr("Output of the whole run")
                        font.bold: true
                        elide: Text.ElideRight
                        width: Math.min(implicitWidth, parent.width)
                    }
                    Label {
                        visible: root.step.exitCode >= 0
                        text: qsTr("exit code %1").arg(root.step.exitCode)
                        opacity: 0.75
                    }
                    ToolButton {
                        visible: root.step.stepId.length > 0
                        text: qsTr("Whole run")
                        onClicked: root.runTree.selectedStep = ""
                    }
                }
                Label {
                    visible: root.step.error.length > 0
                    text: root.step.error
                    color: StateStyle.danger
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                // A pending approval is signed off here; the run's requester is refused in place.
                RowLayout {
                    objectName: "stepApproval"
                    visible: root.step.approvalStatus === "pending"
                    Layout.fillWidth: true
                    spacing: 8
                    StateMark {
                        displayState: DisplayState.Waiting
                    }
                    TextField {
                        id: comment
                        objectName: "stepApprovalComment"
                        placeholderText: qsTr("Comment (optional)")
                        Layout.fillWidth: true
                    }
                    Button {
                        objectName: "stepApproveButton"
                        text: qsTr("Approve")
                        highlighted: true
                        enabled: !root.runTree.deciding
                        onClicked: root.runTree.decide(true, comment.text)
                    }
                    Button {
                        objectName: "stepRejectButton"
                        text: qsTr("Reject")
                        enabled: !root.runTree.deciding
                        onClicked: root.runTree.decide(false, comment.text)
                    }
                }
                Label {
                    objectName: "stepDecisionError"
                    visible: text.length > 0
                    text: root.runTree.decisionError
                    color: StateStyle.danger
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                // The desktop's log view: ANSI colours, line numbers, search, follow and copy.
                LogLines {
                    objectName: "stepOutput"
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    source: outputSource
                    emptyText: root.runTree.live ? qsTr("No output yet") : qsTr("No output")
                    accessibleName: root.step.stepId.length > 0 ? qsTr("Output of %1").arg(root.step.label)
                                                                : qsTr("Output of the whole run")
                }
            }
        }
    }
}
