// The Deploys tab of an app: its history on the left, the selected deploy's steps as a timeline on
// the right. A failed deploy opens on its failing step with the reason (and the hint) in one line
// at the top; a step that waits for approval says so in amber with the approval's id. Above them,
// a chart of the deploys' durations over time (failed ones as red squares). Both lists are Tab stops
// with a focus ring, their arrow keys moving the selection.
pragma ComponentBehavior: Bound

import QtCharts
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Deploys
import Pando.States

Item {
    id: root
    required property QtObject session
    required property string app

    function duration(ms: real): string {
        if (ms < 1000)
            return qsTr("%1 ms").arg(Math.round(ms));
        if (ms < 60000)
            return qsTr("%1 s").arg((ms / 1000).toFixed(1));
        return qsTr("%1 min %2 s").arg(Math.floor(ms / 60000)).arg(Math.round((ms % 60000) / 1000));
    }

    DeploysModel {
        id: deploys
        session: root.session
        app: root.app
    }
    DeployStepsModel {
        id: steps
        session: root.session
        deployId: deploys.selectedId
    }

    Label {
        anchors.centerIn: parent
        visible: deploys.count === 0
        text: deploys.error.length > 0 ? deploys.error : qsTr("%1 was never deployed").arg(root.app)
        opacity: 0.7
    }

    DeployDurations {
        id: durations
        model: deploys
        succeeded: succeededSeries
        failed: failedSeries
    }

    ColumnLayout {
        anchors.fill: parent
        visible: deploys.count > 0
        spacing: 0

        ChartView {
            id: chart
            objectName: "durationsChart"
            Layout.fillWidth: true
            Layout.preferredHeight: 170
            visible: durations.points >= 2
            antialiasing: true
            backgroundColor: root.palette.base
            plotAreaColor: root.palette.base
            legend.alignment: Qt.AlignRight
            legend.labelColor: root.palette.text
            margins.top: 4
            margins.bottom: 4
            Accessible.name: qsTr("Deploy durations")

            DateTimeAxis {
                id: timeAxis
                tickCount: 5
                labelsColor: root.palette.text
                gridLineColor: Qt.alpha(root.palette.text, 0.12)
            }
            // The seconds axis is DeployDurations' (see deploydurations.h); styled like the time axis.
            Binding {
                target: durations.secondsAxis
                property: "labelsColor"
                value: root.palette.text
            }
            Binding {
                target: durations.secondsAxis
                property: "gridLineColor"
                value: Qt.alpha(root.palette.text, 0.12)
            }
            ScatterSeries {
                id: succeededSeries
                name: qsTr("succeeded")
                axisX: timeAxis
                axisY: durations.secondsAxis
                color: StateStyle.colour(DisplayState.Healthy)
                borderColor: color
                markerSize: 9
            }
            ScatterSeries {
                id: failedSeries
                name: qsTr("failed")
                axisX: timeAxis
                axisY: durations.secondsAxis
                color: StateStyle.colour(DisplayState.Failed)
                borderColor: color
                markerShape: ScatterSeries.MarkerShapeRectangle
                markerSize: 9
            }
        }

        SplitView {
            Layout.fillWidth: true
            Layout.fillHeight: true
            // Side by side where there is room; the history above the steps in a narrow pane.
            orientation: width < 760 ? Qt.Vertical : Qt.Horizontal

            ListView {
                id: history
                objectName: "deployHistory"
                SplitView.preferredWidth: 300
                SplitView.minimumWidth: 200
                SplitView.preferredHeight: 160
                SplitView.minimumHeight: 80
                clip: true
                model: deploys
                currentIndex: deploys.selectedRow
                // One Tab stop: the arrow keys choose the deploy whose steps show. They move the
                // model's selection (the list follows it), so the list never selects by itself.
                activeFocusOnTab: true
                keyNavigationEnabled: false
                highlightMoveDuration: 0
                Keys.onUpPressed: deploys.selectedRow = Math.max(0, deploys.selectedRow - 1)
                Keys.onDownPressed: deploys.selectedRow = Math.min(history.count - 1, deploys.selectedRow + 1)
                ScrollBar.vertical: ScrollBar {}
                Accessible.role: Accessible.List
                Accessible.name: qsTr("Deploys")
                FocusRing {
                    target: history
                }
                delegate: ListRow {
                    id: deployRow
                    required property int index
                    required property string id
                    required property int state
                    required property string statusText
                    required property string ref
                    required property string commit
                    required property string whenText
                    required property real durationMs
                    width: ListView.view.width
                    highlighted: ListView.isCurrentItem
                    focusPolicy: Qt.NoFocus
                    Accessible.role: Accessible.ListItem
                    Accessible.name: qsTr("%1 · %2").arg(deployRow.ref).arg(deployRow.commit.substring(0, 8)) + ", "
                                     + qsTr("%1 · %2 · %3").arg(deployRow.statusText).arg(deployRow.whenText).arg(root.duration(deployRow.durationMs))
                    onClicked: {
                        deploys.selectedRow = deployRow.index;
                        history.forceActiveFocus();
                    }
                    contentItem: RowLayout {
                        spacing: 8
                        // The word is the first part of the line below.
                        StateMark {
                            objectName: "stateMark"
                            displayState: deployRow.state
                            word: deployRow.statusText
                            showWord: false
                            size: 14
                        }
                        ColumnLayout {
                            spacing: 0
                            Layout.fillWidth: true
                            Label {
                                text: qsTr("%1 · %2").arg(deployRow.ref).arg(deployRow.commit.substring(0, 8))
                                font.bold: true
                                elide: Text.ElideRight
                                Layout.fillWidth: true
                            }
                            Label {
                                text: qsTr("%1 · %2 · %3").arg(deployRow.statusText).arg(deployRow.whenText).arg(root.duration(deployRow.durationMs))
                                opacity: 0.7
                                elide: Text.ElideRight
                                Layout.fillWidth: true
                            }
                        }
                    }
                }
            }

            ColumnLayout {
                SplitView.fillWidth: true
                SplitView.fillHeight: true
                spacing: 8

                // The selected deploy's version, and going back to it.
                RowLayout {
                    Layout.fillWidth: true
                    Layout.leftMargin: 8
                    Layout.rightMargin: 8
                    spacing: 8
                    Label {
                        Layout.fillWidth: true
                        text: deploys.selectedCommit.length > 0 ? qsTr("Commit %1").arg(deploys.selectedCommit.substring(0, 12)) : ""
                        font.family: "monospace"
                        elide: Text.ElideRight
                    }
                    Button {
                        objectName: "redeployButton"
                        text: qsTr("Redeploy this version")
                        enabled: deploys.selectedCommit.length > 0
                        onClicked: deploys.redeploy(deploys.selectedRow)
                        ToolTip.visible: hovered
                        ToolTip.text: qsTr("Deploy commit %1 again, whatever its ref points at now (Ctrl+Shift+D)").arg(deploys.selectedCommit.substring(0, 12))
                    }
                    Shortcut {
                        sequence: "Ctrl+Shift+D"
                        enabled: deploys.selectedCommit.length > 0
                        onActivated: deploys.redeploy(deploys.selectedRow)
                    }
                    Button {
                        objectName: "cancelDeployButton"
                        visible: deploys.selectedCancellable
                        text: qsTr("Cancel deploy")
                        onClicked: deploys.cancel(deploys.selectedRow)
                        ToolTip.visible: hovered
                        ToolTip.text: qsTr("Stop this deploy and remove what it started; the version serving now stays")
                    }
                }
                Label {
                    Layout.fillWidth: true
                    Layout.leftMargin: 8
                    visible: deploys.actionError.length > 0
                    text: deploys.actionError
                    color: StateStyle.danger
                    wrapMode: Text.Wrap
                }

                // The reason in one line, front and centre, with what to do next.
                Pane {
                    Layout.fillWidth: true
                    visible: steps.reason.length > 0
                    background: Rectangle {
                        color: Qt.alpha(StateStyle.colour(DisplayState.Failed), 0.12)
                        border.color: StateStyle.colour(DisplayState.Failed)
                        radius: 4
                    }
                    ColumnLayout {
                        anchors.left: parent.left
                        anchors.right: parent.right
                        spacing: 4
                        Label {
                            objectName: "deployReason"
                            Layout.fillWidth: true
                            text: steps.failedStep.length > 0 ? qsTr("✖ %1 failed: %2").arg(steps.failedStep).arg(steps.reason) : qsTr("✖ %1").arg(steps.reason)
                            color: StateStyle.danger
                            font.bold: true
                            wrapMode: Text.Wrap
                            // In a short window the steps below keep their room: fewer lines,
                            // the whole reason on hover.
                            maximumLineCount: root.height < 640 ? 2 : 4
                            elide: Text.ElideRight
                            HoverHandler {
                                id: reasonHover
                            }
                            ToolTip.visible: truncated && reasonHover.hovered
                            ToolTip.text: text
                        }
                        // Cut at a few lines in a small window, as the reason is; whole on hover.
                        Label {
                            objectName: "deployHint"
                            Layout.fillWidth: true
                            visible: steps.hint.length > 0
                            text: qsTr("What to do: %1").arg(steps.hint)
                            wrapMode: Text.Wrap
                            maximumLineCount: root.height < 640 ? 1 : 3
                            elide: Text.ElideRight
                            HoverHandler {
                                id: hintHover
                            }
                            ToolTip.visible: truncated && hintHover.hovered
                            ToolTip.text: steps.hint
                        }
                    }
                }

                ListView {
                    id: timeline
                    objectName: "deploySteps"
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    clip: true
                    model: steps
                    currentIndex: steps.selectedRow
                    spacing: 2
                    // One Tab stop: the arrow keys choose the step whose detail shows (through the
                    // model, as for the deploys).
                    activeFocusOnTab: true
                    keyNavigationEnabled: false
                    highlightMoveDuration: 0
                    Keys.onUpPressed: steps.selectedRow = Math.max(0, steps.selectedRow - 1)
                    Keys.onDownPressed: steps.selectedRow = Math.min(timeline.count - 1, steps.selectedRow + 1)
                    ScrollBar.vertical: ScrollBar {}
                    Accessible.role: Accessible.List
                    Accessible.name: qsTr("Steps")
                    FocusRing {
                        target: timeline
                    }
                    delegate: ListRow {
                        id: stepRow
                        required property int index
                        required property string title
                        required property int state
                        required property string statusText
                        required property string detail
                        required property real durationMs
                        required property real fraction
                        required property string approvalId
                        // The state's word, and the approval's id while the step waits for it.
                        readonly property string word: state === DisplayState.Waiting && approvalId.length > 0 ? qsTr("waiting for approval %1").arg(approvalId) : statusText
                        width: ListView.view.width
                        highlighted: ListView.isCurrentItem
                        focusPolicy: Qt.NoFocus
                        Accessible.role: Accessible.ListItem
                        Accessible.name: qsTr("%1: %2, %3").arg(stepRow.title).arg(stepRow.word).arg(root.duration(stepRow.durationMs))
                        onClicked: {
                            steps.selectedRow = stepRow.index;
                            timeline.forceActiveFocus();
                        }
                        contentItem: ColumnLayout {
                            spacing: 4
                            RowLayout {
                                spacing: 8
                                // The word is in its own column, after the step's title.
                                StateMark {
                                    objectName: "stateMark"
                                    displayState: stepRow.state
                                    word: stepRow.word
                                    showWord: false
                                    size: 14
                                    Layout.preferredWidth: 20
                                }
                                // Title and word share what the row has, up to 200 and 260 px;
                                // the bar takes the rest, and goes first when there is little.
                                Label {
                                    text: stepRow.title
                                    font.bold: true
                                    Layout.fillWidth: true
                                    Layout.minimumWidth: Math.min(implicitWidth, 90)
                                    Layout.maximumWidth: Math.max(200, implicitWidth)
                                    elide: Text.ElideRight
                                }
                                Label {
                                    text: stepRow.word
                                    color: StateStyle.on(stepRow.state, stepRow.palette.window)
                                    Layout.fillWidth: true
                                    Layout.minimumWidth: Math.min(implicitWidth, 60)
                                    Layout.maximumWidth: 260
                                    elide: Text.ElideRight
                                }
                                Item {
                                    Layout.fillWidth: true
                                    Layout.minimumWidth: 0
                                    Layout.preferredHeight: 10
                                    Rectangle {
                                        height: parent.height
                                        radius: 2
                                        width: Math.max(2, parent.width * stepRow.fraction)
                                        color: StateStyle.colour(stepRow.state)
                                        opacity: 0.8
                                    }
                                }
                                Label {
                                    text: root.duration(stepRow.durationMs)
                                    horizontalAlignment: Text.AlignRight
                                    Layout.minimumWidth: implicitWidth
                                    font.family: "monospace"
                                }
                            }
                            Label {
                                visible: stepRow.detail.length > 0 && (stepRow.highlighted || stepRow.state === DisplayState.Failed || stepRow.state === DisplayState.Waiting)
                                text: stepRow.detail
                                wrapMode: Text.Wrap
                                maximumLineCount: 3
                                elide: Text.ElideRight
                                opacity: 0.8
                                Layout.fillWidth: true
                                Layout.leftMargin: 28
                                ToolTip.visible: truncated && stepRow.hovered
                                ToolTip.text: stepRow.detail
                            }
                        }
                    }
                }

                // What the selected step printed (the build's output, the crashed container's
                // last lines), at its end: where a failure's cause is.
                ColumnLayout {
                    Layout.fillWidth: true
                    Layout.preferredHeight: Math.min(stepLog.contentHeight + logTitle.implicitHeight + 12, root.height * 0.4)
                    visible: steps.selectedLog.length > 0 || steps.selectedLogError.length > 0
                    spacing: 4
                    Label {
                        id: logTitle
                        Layout.leftMargin: 8
                        text: qsTr("Output: %n line(s)", "", steps.selectedLog.length)
                        font.bold: true
                    }
                    // Output that cannot be shown says why (removed after the install's retention).
                    Label {
                        objectName: "stepLogError"
                        Layout.leftMargin: 8
                        Layout.fillWidth: true
                        visible: steps.selectedLogError.length > 0
                        text: steps.selectedLogError
                        textFormat: Text.PlainText
                        wrapMode: Text.Wrap
                        opacity: 0.7
                    }
                    ListView {
                        id: stepLog
                        objectName: "stepLog"
                        Layout.fillWidth: true
                        Layout.fillHeight: true
                        clip: true
                        model: steps.selectedLog
                        activeFocusOnTab: true
                        Accessible.role: Accessible.List
                        Accessible.name: qsTr("Output of the selected step")
                        ScrollBar.vertical: ScrollBar {}
                        onCountChanged: positionViewAtEnd()
                        FocusRing {
                            target: stepLog
                        }
                        delegate: Label {
                            required property string modelData
                            width: ListView.view.width
                            leftPadding: 8
                            rightPadding: 8
                            text: modelData
                            textFormat: Text.PlainText
                            wrapMode: Text.WrapAnywhere
                            font.family: "monospace"
                        }
                    }
                }
            }
        }
    }
}
