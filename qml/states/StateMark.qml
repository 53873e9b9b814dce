// The state vocabulary's mark (DESKTOP.md): colour, icon shape and word together, never colour
// alone. Every view, the approvals list and the activity feed draw states with it; StateStyle
// holds the colours, shapes and words, the tray's SVG icons draw the same shapes.
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
    property alias wordColor: label.color
    property alias wordFont: label.font
    readonly property string shape: StateStyle.shape(displayState)
    readonly property color colour: StateStyle.colour(displayState)

    implicitWidth: row.implicitWidth
    implicitHeight: Math.max(size, row.implicitHeight)
    Accessible.role: Accessible.Indicator
    Accessible.name: word

    Row {
        id: row
        anchors.verticalCenter: parent.verticalCenter
        spacing: 4

        Item {
            id: mark
            width: root.size
            height: root.size
            anchors.verticalCenter: parent.verticalCenter

            // Healthy: a filled circle.
            Rectangle {
                anchors.fill: parent
                visible: root.shape === "disc"
                radius: width / 2
                color: root.colour
            }
            // In progress: a ring with a dot that turns while something moves.
            Item {
                anchors.fill: parent
                visible: root.shape === "ring"
                Rectangle {
                    anchors.fill: parent
                    radius: width / 2
                    color: "transparent"
                    border.color: root.colour
                    border.width: Math.max(2, root.size / 6)
                }
                Rectangle {
                    width: root.size / 3
                    height: root.size / 3
                    radius: width / 2
                    color: root.colour
                    x: parent.width / 2 - width / 2
                    y: 0
                }
                RotationAnimator on rotation {
                    from: 0
                    to: 360
                    duration: 1200
                    loops: Animation.Infinite
                    running: root.moving && root.visible && root.shape === "ring"
                }
            }
            // Waiting for approval: a diamond.
            Rectangle {
                anchors.centerIn: parent
                visible: root.shape === "diamond"
                width: root.size * 0.72
                height: width
                rotation: 45
                color: root.colour
            }
            // Failed: a rounded square with a white bar across (a "no" sign).
            Rectangle {
                anchors.fill: parent
                visible: root.shape === "noSign"
                radius: root.size / 6
                color: root.colour
                Rectangle {
                    anchors.centerIn: parent
                    width: parent.width * 0.6
                    height: Math.max(2, parent.height / 6)
                    color: "white"
                }
            }
            // Skipped as unchanged: a grey circle with two bars, the small "cached" mark.
            Rectangle {
                anchors.fill: parent
                visible: root.shape === "cached"
                radius: width / 2
                color: root.colour
                Column {
                    anchors.centerIn: parent
                    spacing: Math.max(1, root.size / 10)
                    Repeater {
                        model: 2
                        delegate: Rectangle {
                            width: root.size * 0.5
                            height: Math.max(1, root.size / 9)
                            color: "white"
                        }
                    }
                }
            }
            // Stopped: a hollow circle.
            Rectangle {
                anchors.fill: parent
                visible: root.shape === "hollow"
                radius: width / 2
                color: "transparent"
                border.color: root.colour
                border.width: Math.max(1.5, root.size / 8)
            }
            // Not started: a short dash.
            Rectangle {
                anchors.centerIn: parent
                visible: root.shape === "dash"
                width: root.size * 0.8
                height: Math.max(2, root.size / 5)
                radius: height / 2
                color: root.colour
            }
        }

        Label {
            id: label
            objectName: "stateWord"
            anchors.verticalCenter: parent.verticalCenter
            visible: root.showWord && root.word.length > 0
            text: root.word
        }
    }
}
