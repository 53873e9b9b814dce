// Keeps the item with the keyboard focus in view inside a Flickable (a ScrollView's): Tab to a
// control below the fold scrolls to it, as a scroll area of widgets does. Declared beside the
// ScrollView it serves.
import QtQuick

Item {
    id: root
    required property Flickable flickable
    // Room left above and below the item scrolled to.
    property real margin: 8

    function reveal(item: Item) {
        const content = root.flickable.contentItem;
        let inside = false;
        for (let at = item; at && !inside; at = at.parent)
            inside = at === content;
        if (!inside)
            return;
        const top = item.mapToItem(content, 0, 0).y;
        const bottom = top + item.height;
        const view = root.flickable;
        if (top - root.margin < view.contentY)
            view.contentY = Math.max(0, top - root.margin);
        else if (bottom + root.margin > view.contentY + view.height)
            view.contentY = Math.min(bottom + root.margin - view.height, Math.max(0, view.contentHeight - view.height));
    }

    Window.onActiveFocusItemChanged: {
        if (Window.activeFocusItem)
            root.reveal(Window.activeFocusItem);
    }
}
