// The Jobs tab of a pipeline: the passed: graph. Each job is a box in its stage's column (a job
// sits one stage after the latest job whose output feeds it), with its inputs, its last run (mark
// and word) and Trigger; an arrow goes from each job to every job that names it in passed: (one
// that passes over a stage runs in a lane of its own below the boxes, not under them). The
// graph scrolls both ways when it is larger than the tab. Every box is a Tab stop: Enter triggers
// the job, Up and Down move through the jobs, Left and Right follow the arrows (to the first job
// feeding this one, to the first it feeds).
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
    // The job shown as chosen (clicked or focused).
    property int current: 0
    padding: 8

    // The graph's geometry: a column per stage, as wide as the tab allows (between 120 and 280
    // px: a graph of many stages scrolls sideways), a slot per job of a stage, all boxes as tall
    // as the tallest one's content (a larger font makes them taller, never cut).
    readonly property real columnGap: 32
    readonly property real columnWidth: {
        const stages = Math.max(1, root.jobsModel.stageCount);
        const room = (graph.width - 2 * root.margin - (stages - 1) * root.columnGap) / stages;
        return Math.max(120, Math.min(280, Math.floor(room)));
    }
    readonly property real slotGap: 12
    readonly property real margin: 8
    property int heightsRevision: 0
    readonly property real slotHeight: {
        root.heightsRevision;
        let tallest = 0;
        for (let row = 0; row < boxes.count; ++row) {
            const box = boxes.itemAt(row);
            if (box)
                tallest = Math.max(tallest, box.implicitHeight);
        }
        return tallest;
    }
    function boxX(stage: int): real {
        return root.margin + stage * (root.columnWidth + root.columnGap);
    }
    function boxY(slot: int): real {
        return root.margin + slot * (root.slotHeight + root.slotGap);
    }
    // How many edges pass over a stage, each with a lane below the boxes.
    readonly property int longEdges: {
        let count = 0;
        for (const edge of root.jobsModel.edges)
            if (edge.span > 1)
                ++count;
        return count;
    }
    readonly property real laneGap: 8
    // Where the arrow of an edge ({from, to} rows) is drawn: from the middle of the upstream box's
    // right side to the middle of the downstream box's left side; null while a box is missing.
    function edgeLine(edge): var {
        const from = boxes.itemAt(edge.from);
        const to = boxes.itemAt(edge.to);
        if (!from || !to)
            return null;
        return {
            x1: from.x + from.width,
            y1: from.y + from.height / 2,
            x2: to.x,
            y2: to.y + to.height / 2
        };
    }
    // Gives the keyboard to a job's box, scrolled into view.
    function focusJob(row: int) {
        const box = boxes.itemAt(row);
        if (!box)
            return;
        root.current = row;
        box.forceActiveFocus(Qt.TabFocusReason);
        graph.contentX = Math.max(0, Math.min(graph.contentX, box.x - root.margin),
                                  box.x + box.width + root.margin - graph.width);
        graph.contentY = Math.max(0, Math.min(graph.contentY, box.y - root.margin),
                                  box.y + box.height + root.margin - graph.height);
    }
    // The first job an arrow leads to from row (downstream) or from (upstream); -1 when none.
    function neighbour(row: int, downstream: bool): int {
        for (const edge of root.jobsModel.edges) {
            if (downstream && edge.from === row)
                return edge.to;
            if (!downstream && edge.to === row)
                return edge.from;
        }
        return -1;
    }

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

        Flickable {
            id: graph
            objectName: "jobsGraph"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            contentWidth: plane.width
            contentHeight: plane.height
            boundsBehavior: Flickable.StopAtBounds
            ScrollBar.vertical: ScrollBar {}
            ScrollBar.horizontal: ScrollBar {}
            Accessible.role: Accessible.Graphic
            Accessible.name: qsTr("Jobs of the pipeline and what feeds each")

            Item {
                id: plane
                width: root.boxX(root.jobsModel.stageCount) - root.columnGap + root.margin
                height: root.boxY(root.jobsModel.tallestStage) - root.slotGap + root.margin +
                        root.longEdges * root.laneGap

                // The arrows, under the boxes.
                Canvas {
                    id: edges
                    objectName: "jobEdges"
                    anchors.fill: parent
                    // What was drawn last: one {x1, y1, x2, y2, from, to} per edge.
                    property var drawn: []
                    onPaint: {
                        const ctx = getContext("2d");
                        ctx.reset();
                        ctx.strokeStyle = root.palette.windowText;
                        ctx.fillStyle = root.palette.windowText;
                        ctx.globalAlpha = 0.6;
                        ctx.lineWidth = 1.5;
                        const boxesEnd = root.boxY(root.jobsModel.tallestStage) - root.slotGap;
                        const lines = [];
                        let lane = 0;
                        for (const edge of root.jobsModel.edges) {
                            const line = root.edgeLine(edge);
                            if (!line)
                                continue;
                            const half = root.columnGap / 2;
                            ctx.beginPath();
                            ctx.moveTo(line.x1, line.y1);
                            if (edge.span > 1) {
                                // Down the gap after its job, along its lane, up the gap before the
                                // job it feeds.
                                const laneY = boxesEnd + (++lane) * root.laneGap;
                                ctx.lineTo(line.x1 + half, line.y1);
                                ctx.lineTo(line.x1 + half, laneY);
                                ctx.lineTo(line.x2 - half, laneY);
                                ctx.lineTo(line.x2 - half, line.y2);
                                ctx.lineTo(line.x2 - 6, line.y2);
                            } else {
                                const bend = (line.x2 - line.x1) / 2;
                                ctx.bezierCurveTo(line.x1 + bend, line.y1, line.x2 - bend, line.y2, line.x2 - 6, line.y2);
                            }
                            ctx.stroke();
                            ctx.beginPath();
                            ctx.moveTo(line.x2, line.y2);
                            ctx.lineTo(line.x2 - 8, line.y2 - 4);
                            ctx.lineTo(line.x2 - 8, line.y2 + 4);
                            ctx.closePath();
                            ctx.fill();
                            line.from = edge.from;
                            line.to = edge.to;
                            line.lane = edge.span > 1;
                            lines.push(line);
                        }
                        edges.drawn = lines;
                    }
                    Connections {
                        target: root.jobsModel
                        function onCountChanged() {
                            edges.requestPaint();
                        }
                    }
                    // Drawn again whenever a box comes, goes or moves, whatever order the
                    // model's and the boxes' changes arrive in.
                    onVisibleChanged: if (visible)
                        requestPaint()
                    Connections {
                        target: root
                        function onHeightsRevisionChanged() {
                            edges.requestPaint();
                        }
                        function onColumnWidthChanged() {
                            edges.requestPaint();
                        }
                        function onSlotHeightChanged() {
                            edges.requestPaint();
                        }
                        function onPaletteChanged() {
                            edges.requestPaint();
                        }
                    }
                }

                Repeater {
                    id: boxes
                    objectName: "jobBoxes"
                    model: root.jobsModel
                    onItemAdded: root.heightsRevision++
                    onItemRemoved: root.heightsRevision++

                    delegate: ItemDelegate {
                        id: job
                        required property int index
                        required property string name
                        required property int stage
                        required property int slot
                        required property string upstreamText
                        required property string inputsText
                        required property int lastRunState
                        required property string lastRunText
                        required property bool busy
                        required property string actionError
                        required property bool manualTrigger
                        required property bool paused
                        required property string pausedReason
                        // What the box's tooltip says: what feeds the job, and why it has no Trigger.
                        readonly property string hint: job.paused
                            ? qsTr("%1: %2; paused (%3): its runs wait until it is unpaused")
                                  .arg(job.name).arg(job.upstreamText).arg(job.pausedReason)
                            : job.manualTrigger
                            ? qsTr("%1: %2").arg(job.name).arg(job.upstreamText)
                            : qsTr("%1: %2; not started by hand (disable_manual_trigger): its resources start it")
                                  .arg(job.name).arg(job.upstreamText)
                        x: root.boxX(job.stage)
                        y: root.boxY(job.slot)
                        width: root.columnWidth
                        height: root.slotHeight
                        highlighted: job.index === root.current
                        focusPolicy: Qt.StrongFocus
                        // The state mark and labels read on the box: the selection colour on the
                        // chosen job, the base colour on the others.
                        palette.windowText: job.highlighted ? root.palette.highlightedText : root.palette.text
                        palette.window: job.highlighted ? root.palette.highlight : root.palette.base
                        Accessible.name: qsTr("%1, %2, %3").arg(job.name).arg(job.upstreamText).arg(job.lastRunText)
                        ToolTip.visible: job.hovered
                        ToolTip.text: job.hint
                        ToolTip.delay: 600
                        onImplicitHeightChanged: root.heightsRevision++
                        onClicked: root.current = job.index
                        onActiveFocusChanged: if (job.activeFocus)
                            root.current = job.index
                        onXChanged: edges.requestPaint()
                        onWidthChanged: edges.requestPaint()
                        onYChanged: edges.requestPaint()
                        // Shift+Enter: every step runs again, the unchanged ones too.
                        Keys.onReturnPressed: event => {
                            if (job.manualTrigger && !job.paused)
                                root.jobsModel.trigger(job.index, (event.modifiers & Qt.ShiftModifier) !== 0);
                        }
                        Keys.onEnterPressed: event => {
                            if (job.manualTrigger && !job.paused)
                                root.jobsModel.trigger(job.index, (event.modifiers & Qt.ShiftModifier) !== 0);
                        }
                        Keys.onUpPressed: root.focusJob(Math.max(0, job.index - 1))
                        Keys.onDownPressed: root.focusJob(Math.min(boxes.count - 1, job.index + 1))
                        Keys.onLeftPressed: root.focusJob(root.neighbour(job.index, false))
                        Keys.onRightPressed: root.focusJob(root.neighbour(job.index, true))

                        background: Rectangle {
                            color: job.palette.window
                            border.color: job.highlighted ? job.palette.highlight : root.palette.mid
                            border.width: 1
                            radius: 4
                        }

                        contentItem: ColumnLayout {
                            spacing: 4
                            RowLayout {
                                spacing: 8
                                Layout.fillWidth: true
                                StateMark {
                                    objectName: "jobStateMark"
                                    displayState: job.lastRunState
                                    word: job.lastRunText
                                    showWord: false
                                    Layout.alignment: Qt.AlignVCenter
                                }
                                Label {
                                    objectName: "jobName"
                                    text: job.name
                                    font.bold: true
                                    elide: Text.ElideRight
                                    color: job.palette.windowText
                                    Layout.fillWidth: true
                                }
                            }
                            Label {
                                objectName: "jobInputs"
                                text: job.inputsText
                                elide: Text.ElideRight
                                opacity: 0.8
                                color: job.palette.windowText
                                Layout.fillWidth: true
                            }
                            Label {
                                objectName: "jobLastRun"
                                text: job.lastRunText
                                elide: Text.ElideRight
                                color: job.palette.windowText
                                Layout.fillWidth: true
                            }
                            Label {
                                objectName: "jobPaused"
                                visible: job.paused
                                text: qsTr("Paused: its runs wait")
                                font.italic: true
                                elide: Text.ElideRight
                                color: job.palette.windowText
                                Layout.fillWidth: true
                            }
                            Button {
                                objectName: "jobTrigger"
                                Layout.alignment: Qt.AlignLeft
                                text: qsTr("Trigger")
                                Accessible.name: qsTr("Trigger %1").arg(job.name)
                                enabled: !job.busy && !root.paused && !job.paused && job.manualTrigger
                                // A disabled button shows no tooltip of its own: the box's says why.
                                ToolTip.visible: hovered
                                ToolTip.text: root.paused
                                    ? qsTr("The pipeline is paused; unpause it to start runs")
                                    : job.paused
                                    ? qsTr("The job is paused; unpause it to start runs")
                                    : qsTr("Start a run of %1 (right-click or Shift+Enter: run every step again, also those unchanged since a run that succeeded)")
                                          .arg(job.name)
                                onClicked: {
                                    root.current = job.index;
                                    root.jobsModel.trigger(job.index);
                                }
                                // No ids in a box's content (a deferred property): the menu hangs on the button.
                                readonly property Menu allSteps: Menu {
                                    MenuItem {
                                        objectName: "jobTriggerForce"
                                        text: qsTr("Run all steps")
                                        Accessible.name: qsTr("Trigger %1, running every step").arg(job.name)
                                        onTriggered: {
                                            root.current = job.index;
                                            root.jobsModel.trigger(job.index, true);
                                        }
                                    }
                                }
                                TapHandler {
                                    acceptedButtons: Qt.RightButton
                                    onTapped: {
                                        if (!parent.enabled)
                                            return;
                                        parent.allSteps.parent = parent;
                                        parent.allSteps.popup();
                                    }
                                }
                            }
                            Button {
                                objectName: "jobPause"
                                Layout.alignment: Qt.AlignLeft
                                flat: true
                                text: job.paused ? qsTr("Unpause") : qsTr("Pause")
                                Accessible.name: job.paused ? qsTr("Unpause %1").arg(job.name)
                                                            : qsTr("Pause %1").arg(job.name)
                                enabled: !job.busy
                                ToolTip.visible: hovered
                                ToolTip.text: job.paused
                                    ? qsTr("Start %1's runs again, with the versions found while it was paused").arg(job.name)
                                    : qsTr("Hold back %1's runs: queued ones wait, new versions queue none (running ones go on)").arg(job.name)
                                onClicked: {
                                    root.current = job.index;
                                    root.jobsModel.setPaused(job.index, !job.paused);
                                }
                            }
                            Label {
                                visible: text.length > 0
                                text: job.actionError
                                color: StateStyle.danger
                                wrapMode: Text.Wrap
                                Layout.fillWidth: true
                            }
                        }

                        FocusRing {
                            target: job
                            selected: job.highlighted
                        }
                    }
                }
            }
        }
    }
}
