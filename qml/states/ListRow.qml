// A list's row (an ItemDelegate) whose contents read on the selection: while it is highlighted
// its labels take the palette's selected-text colour, and the palette's window colour (what a
// StateMark in it is drawn for) becomes the selection colour, so words and marks keep 4.5:1.
import QtQuick
import QtQuick.Controls

ItemDelegate {
    id: row
    palette.windowText: row.highlighted ? row.palette.highlightedText : (row.parent ? row.parent.palette.windowText : row.palette.text)
    palette.window: row.highlighted ? row.palette.highlight : (row.parent ? row.parent.palette.base : row.palette.base)
}
