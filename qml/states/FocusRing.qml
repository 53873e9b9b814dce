// The keyboard focus's mark where the Fusion style draws none (lists, their rows, the sidebar's
// entries, tab buttons): a ring in the palette's highlight colour just inside the target's edge,
// shown while the target has the focus. Declared anywhere, it puts itself on its target, above the
// target's content (once made: a list or a pane would otherwise take it among its contents).
import QtQuick

Rectangle {
    id: root
    required property Item target
    // When to show it: while the target has the active focus, unless the view passes its
    // control's visualFocus (focus from the keyboard, not from a click).
    property bool shown: root.target !== null && root.target.activeFocus
    // On a selected (highlighted) target the highlight colour would vanish: the ring takes the
    // text colour drawn on the selection instead.
    property bool selected: false

    objectName: "focusRing"
    anchors.fill: parent
    anchors.margins: 1
    z: 100
    visible: root.shown
    color: "transparent"
    radius: 3
    border.width: 2
    border.color: root.selected ? root.palette.highlightedText : root.palette.highlight

    Component.onCompleted: root.parent = root.target
}
