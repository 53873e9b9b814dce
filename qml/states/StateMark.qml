// The state vocabulary's mark (DESKTOP.md): colour, icon shape and word together, never colour
// alone. Every view, the approvals list and the activity feed draw states with it; StateStyle
// holds the colours, shapes and words, and the shape is the same SVG drawing the tray icon is
// made of. Shape and word reach 4.5:1 against `background`: a mark on a selected row says so.
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import Pando.States

Item {
    id: root
    // A DisplayState value; the view models expose it as their "state" roles.
    required property int displayState
    // The word beside the shape; a view with a more exact one (its model's "errored", "aborted")
    // passes it.
    property string word: StateStyle.word(displayState)
    // The word drawn beside the shape; a view that lays the word out itself keeps it for
    // accessibility and hides it here.
    property bool showWord: true
    // Animated only while something moves.
    property bool moving: displayState === DisplayState.Progress
    property real size: 12
    // What the mark is drawn on: the window by default; a selected row passes its highlight.
    property color background: palette.window
    // The word's colour before it is made readable on the background.
    property color wordColor: palette.windowText
    property alias wordFont: label.font
    readonly property string shape: StateStyle.shape(displayState)
    readonly property color colour: StateStyle.on(displayState, background)

    implicitWidth: row.implicitWidth
    implicitHeight: Math.max(size, row.implicitHeight)
    Accessible.role: Accessible.Indicator
    Accessible.name: word

    Row {
        id: row
        anchors.verticalCenter: parent.verticalCenter
        spacing: 4

        MarkShape {
            id: mark
            objectName: "markShape"
            width: root.size
            height: root.size
            anchors.verticalCenter: parent.verticalCenter
            shape: root.shape
            colour: root.colour
            inner: root.background

            RotationAnimator on rotation {
                from: 0
                to: 360
                duration: 1200
                loops: Animation.Infinite
                running: root.moving && root.visible && root.shape === "ring"
            }
        }

        Label {
            id: label
            objectName: "stateWord"
            anchors.verticalCenter: parent.verticalCenter
            visible: root.showWord && root.word.length > 0
            text: root.word
            color: StateStyle.readable(root.wordColor, root.background)
        }
    }
}
