// A log as every view of the desktop shows one (an app's Logs tab, a pipeline step's output):
// monospace lines with ANSI colours and line numbers, search with highlight, next/previous and
// "3 of 17", follow that pauses when the user scrolls up and resumes with one click, and copy of
// the selected lines (click, shift-click; Ctrl+C). What it shows comes from its LogSource.
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Logs
import Pando.States

Item {
    id: root
    required property LogSource source
    // What the empty log says.
    property string emptyText: qsTr("No log lines yet")
    // Said to assistive technologies for the lines, e.g. "Output of unit".
    property string accessibleName: qsTr("Log lines")
    readonly property LogModel logModel: root.source.model
    property int currentMatch: -1
    property int selectionStart: -1
    property int selectionEnd: -1

    function findNext(forward: bool) {
        const from = root.currentMatch >= 0 ? root.currentMatch : (forward ? -1 : root.logModel.count);
        const row = forward ? root.logModel.nextMatch(from) : root.logModel.previousMatch(from);
        if (row < 0)
            return;
        root.currentMatch = row;
        root.logModel.following = false;
        lines.positionViewAtIndex(row, ListView.Center);
    }
    function copySelection() {
        if (root.selectionStart < 0)
            root.source.copyRows(0, root.logModel.count - 1);
        else
            root.source.copyRows(root.selectionStart, root.selectionEnd);
    }
    function resume() {
        root.logModel.following = true;
        lines.positionViewAtEnd();
    }

    Binding {
        target: root.source
        property: "dark"
        value: root.palette.window.hslLightness < 0.5
    }

    // Qt 6.4's qmllint does not resolve QtQuick's StandardKey (a value type's enum) and calls
    // it unqualified; the platform's Find and Copy keys are worth more than a hand-written list.
    // qmllint disable unqualified
    Shortcut {
        sequences: [StandardKey.Find]
        enabled: root.visible
        onActivated: search.forceActiveFocus()
    }
    Shortcut {
        sequences: [StandardKey.Copy]
        enabled: root.visible && !search.activeFocus
        onActivated: root.copySelection()
    }
    // qmllint enable unqualified

    ColumnLayout {
        anchors.fill: parent
        spacing: 4

        RowLayout {
            Layout.fillWidth: true
            spacing: 8
            TextField {
                id: search
                objectName: "logSearch"
                placeholderText: qsTr("Search the log")
                Accessible.name: qsTr("Search the log")
                Layout.preferredWidth: 280
                Layout.minimumWidth: 80
                Layout.fillWidth: true
                Layout.maximumWidth: 280
                onTextChanged: {
                    root.logModel.searchTerm = text;
                    root.currentMatch = -1;
                }
                Keys.onReturnPressed: event => root.findNext(!(event.modifiers & Qt.ShiftModifier))
            }
            ToolButton {
                text: qsTr("Previous")
                enabled: root.logModel.matchCount > 0
                onClicked: root.findNext(false)
            }
            ToolButton {
                text: qsTr("Next")
                enabled: root.logModel.matchCount > 0
                onClicked: root.findNext(true)
            }
            Label {
                objectName: "logMatches"
                visible: search.text.length > 0
                text: root.logModel.matchCount === 0 ? qsTr("no matches") : root.currentMatch >= 0 ? qsTr("%1 of %2").arg(root.logModel.matchOrdinal(root.currentMatch)).arg(root.logModel.matchCount) : qsTr("%n match(es)", "", root.logModel.matchCount)
                opacity: 0.8
            }
            Item {
                Layout.fillWidth: true
            }
            Label {
                text: root.source.status
                visible: root.source.status.length > 0
                opacity: 0.7
                elide: Text.ElideRight
                Layout.fillWidth: true
                Layout.minimumWidth: Math.min(implicitWidth, 60)
                Layout.maximumWidth: 360
            }
            ToolButton {
                text: qsTr("Copy")
                onClicked: root.copySelection()
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Copy the selected lines, or the whole log (Ctrl+C)")
            }
        }

        Rectangle {
            Layout.fillWidth: true
            Layout.fillHeight: true
            color: root.palette.base
            border.color: root.palette.mid

            FontMetrics {
                id: metrics
                font.family: "monospace"
            }

            ListView {
                id: lines
                objectName: "logLines"
                Accessible.name: root.accessibleName
                Accessible.role: Accessible.List
                anchors.fill: parent
                anchors.margins: 1
                clip: true
                model: root.logModel
                boundsBehavior: Flickable.StopAtBounds
                reuseItems: true
                ScrollBar.vertical: ScrollBar {}

                // The user scrolling up pauses follow; it resumes from the button below.
                onMovementStarted: root.logModel.following = false
                onAtYEndChanged: {
                    if (atYEnd && moving)
                        root.logModel.following = true;
                }
                onCountChanged: {
                    if (root.logModel.following)
                        toEnd.restart();
                }
                // After the rows just added are laid out, once however many arrive in one go (what
                // Qt.callLater does, which qmllint cannot check in Qt 6.4).
                Timer {
                    id: toEnd
                    interval: 0
                    onTriggered: lines.positionViewAtEnd()
                }

                delegate: Rectangle {
                    id: line
                    required property int index
                    required property string text
                    required property var spans
                    required property var matchRanges
                    required property real lineNumber
                    required property int stream
                    readonly property bool selected: root.selectionStart >= 0 && line.index >= Math.min(root.selectionStart, root.selectionEnd) && line.index <= Math.max(root.selectionStart, root.selectionEnd)
                    width: ListView.view.width
                    // One height for every row: the view lays out a million rows by arithmetic.
                    height: metrics.height
                    color: line.selected ? root.palette.highlight : line.index === root.currentMatch ? Qt.alpha(root.palette.highlight, 0.25) : "transparent"

                    // Search hits and ANSI backgrounds, behind the text (monospace: by character).
                    Repeater {
                        model: root.source.highlights(line.spans, line.matchRanges)
                        Rectangle {
                            required property var modelData
                            x: lineText.x + modelData.start * metrics.averageCharacterWidth
                            width: modelData.length * metrics.averageCharacterWidth
                            height: line.height
                            color: modelData.color
                        }
                    }

                    Text {
                        id: number
                        objectName: "lineNumber"
                        width: 64
                        text: line.lineNumber
                        horizontalAlignment: Text.AlignRight
                        font.family: "monospace"
                        color: root.palette.placeholderText
                    }
                    Text {
                        id: lineText
                        objectName: "lineText"
                        anchors.left: number.right
                        anchors.leftMargin: 12
                        anchors.right: parent.right
                        text: root.source.styledText(line.text, line.spans)
                        textFormat: Text.StyledText
                        font.family: "monospace"
                        color: line.selected ? root.palette.highlightedText : line.stream === LogModel.Stderr ? StateStyle.danger : root.palette.text
                        wrapMode: Text.NoWrap
                        elide: Text.ElideRight
                    }
                    MouseArea {
                        anchors.fill: parent
                        onClicked: mouse => {
                            if ((mouse.modifiers & Qt.ShiftModifier) && root.selectionStart >= 0) {
                                root.selectionEnd = line.index;
                            } else {
                                root.selectionStart = line.index;
                                root.selectionEnd = line.index;
                            }
                        }
                    }
                }
            }

            Label {
                anchors.centerIn: parent
                visible: root.logModel.count === 0
                text: root.emptyText
                opacity: 0.6
            }

            Button {
                anchors.right: parent.right
                anchors.bottom: parent.bottom
                anchors.margins: 12
                visible: !root.logModel.following
                highlighted: true
                text: qsTr("Resume (%n new)", "", root.logModel.unseenCount)
                onClicked: root.resume()
            }
        }
    }
}
