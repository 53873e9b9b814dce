// A TestCase with what a user does: find an item by its objectName, type text into what has the
// focus, click a list's row. Each test ends with no QML warning from the views.
import QtQuick
import QtTest
import Pando.States
import Pando.Test

TestCase {
    id: testCase
    when: windowShown
    // Where named() looks by default.
    property Item scope: parent

    // The selection colour pando-desktop's window uses (Main.qml), before any test runs.
    onWindowShownChanged: {
        const window = testCase.Window.window;
        if (windowShown && window)
            window.palette.highlight = StateStyle.selection(window.palette.highlight, window.palette.highlightedText);
    }

    function named(name: string, where): QtObject {
        const item = findChild(where ? where : testCase.scope, name);
        verify(item !== null, "no item named " + name);
        return item;
    }

    function typeText(text: string) {
        for (let i = 0; i < text.length; ++i)
            keyClick(text.charAt(i));
    }

    // Selects what the field holds and types text over it.
    function retype(field, text: string) {
        mouseClick(field);
        verify(field.activeFocus, (field.objectName || "the field") + " did not take the focus");
        keyClick(Qt.Key_A, Qt.ControlModifier);
        typeText(text);
        compare(field.text, text);
    }

    // The shared state mark (Pando.States) in where: its word, its icon shape and its colour, so
    // the state is never told by colour alone; shape and word read at 4.5:1 or more on what the
    // mark is drawn on.
    function checkMark(mark: QtObject, state: int, word: string, shape: string) {
        verify(mark !== null, "no state mark");
        compare(mark.displayState, state, "state");
        compare(mark.word, word, "word");
        compare(mark.shape, shape, "shape");
        compare(mark.colour, StateStyle.on(state, mark.background), "colour");
        const drawn = named("markShape", mark);
        compare(drawn.shape, shape, "drawn shape");
        compare(drawn.colour, mark.colour, "drawn colour");
        verify(StateStyle.contrast(drawn.colour, mark.background) >= 4.5,
               word + " mark at " + StateStyle.contrast(drawn.colour, mark.background).toFixed(2) + ":1");
        const label = named("stateWord", mark);
        if (label.visible)
            verify(StateStyle.contrast(label.color, mark.background) >= 4.5,
                   word + " word at " + StateStyle.contrast(label.color, mark.background).toFixed(2) + ":1");
    }

    function clickRow(view: Item, row: int) {
        tryVerify(() => view.itemAtIndex(row) !== null, 5000, "row " + row + " of " + view.objectName + " is not shown");
        mouseClick(view.itemAtIndex(row));
    }

    function cleanup() {
        compare(Fixture.takeWarnings(), "", "QML warnings");
    }
}
