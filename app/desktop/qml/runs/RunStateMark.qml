// The state vocabulary's mark for runs and steps: a shape and a colour per state (see DESKTOP.md),
// never colour alone — the views put the state's word next to it.
pragma ComponentBehavior: Bound

import QtQuick
import Pando.Runs

Item {
    id: root
    required property int runState
    property real size: 12

    implicitWidth: size
    implicitHeight: size

    // Succeeded: a filled green circle.
    Rectangle {
        anchors.fill: parent
        visible: root.runState === RunState.Healthy
        radius: width / 2
        color: "#2e9d4f"
    }
    // Running: a blue ring with a dot that turns.
    Item {
        anchors.fill: parent
        visible: root.runState === RunState.Progress
        Rectangle {
            anchors.fill: parent
            radius: width / 2
            color: "transparent"
            border.color: "#2f6fdb"
            border.width: Math.max(2, root.size / 6)
        }
        Rectangle {
            width: root.size / 3
            height: root.size / 3
            radius: width / 2
            color: "#2f6fdb"
            x: parent.width / 2 - width / 2
            y: 0
        }
        RotationAnimator on rotation {
            from: 0
            to: 360
            duration: 1200
            loops: Animation.Infinite
            running: root.runState === RunState.Progress && root.visible
        }
    }
    // Waiting for approval: an amber diamond.
    Rectangle {
        anchors.centerIn: parent
        visible: root.runState === RunState.Waiting
        width: root.size * 0.72
        height: width
        rotation: 45
        color: "#d99a00"
    }
    // Failed: a red square with a white bar across (a "no" sign).
    Rectangle {
        anchors.fill: parent
        visible: root.runState === RunState.Failed
        radius: root.size / 6
        color: "#d2352b"
        Rectangle {
            anchors.centerIn: parent
            width: parent.width * 0.6
            height: Math.max(2, parent.height / 6)
            color: "white"
        }
    }
    // Skipped as unchanged: a grey circle with two bars ("the same as before").
    Rectangle {
        anchors.fill: parent
        visible: root.runState === RunState.Cached
        radius: width / 2
        color: "#8a8a8a"
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
    // Aborted: a hollow circle.
    Rectangle {
        anchors.fill: parent
        visible: root.runState === RunState.Stopped
        radius: width / 2
        color: "transparent"
        border.color: "#7a7a7a"
        border.width: Math.max(1.5, root.size / 8)
    }
    // Queued, pending, skipped: a short grey dash.
    Rectangle {
        anchors.centerIn: parent
        visible: root.runState === RunState.Neutral
        width: root.size * 0.8
        height: Math.max(2, root.size / 5)
        radius: height / 2
        color: "#9a9a9a"
    }
}
