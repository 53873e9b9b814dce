// A list's row (a ListView's ItemDelegate) whose contents read on the selection: while it is
// highlighted its labels take the palette's selected-text colour, and the palette's window colour
// (what a StateMark in it is drawn for) becomes the selection colour, so words and marks keep
// 4.5:1. The colours are the list's own: a row reading its own palette would bind to itself.
import QtQuick
import QtQuick.Controls

ItemDelegate {
    id: row
    readonly property var listPalette: row.ListView.view ? row.ListView.view.palette : null
    palette.windowText: !row.listPalette ? "black" : row.highlighted ? row.listPalette.highlightedText : row.listPalette.windowText
    palette.window: !row.listPalette ? "white" : row.highlighted ? row.listPalette.highlight : row.listPalette.base
}
