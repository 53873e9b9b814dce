// Ctrl+K: type a few letters of an app, a pipeline, a view or an action; the arrow keys move, Enter
// goes there, Esc closes. Tab goes between the query and the matches. The matches come from Desktop.palette; Main.qml carries out the choice.
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Shell
import Pando.States

Popup {
    id: root
    // kind: "view", "app", "pipeline" or "action"; key: the view's index, the name, the action.
    signal activated(string kind, string key)

    modal: true
    focus: true
    x: parent ? (parent.width - width) / 2 : 0
    y: 48
    width: parent ? Math.min(parent.width - 64, 560) : 560
    height: Math.min(content.implicitHeight + topPadding + bottomPadding, parent ? parent.height - 96 : 480)
    padding: 8

    onAboutToShow: {
        query.clear();
        results.currentIndex = 0;
    }
    onOpened: query.forceActiveFocus()

    function choose(index: int) {
        const entry = results.model[index];
        if (!entry)
            return;
        root.close();
        root.activated(entry.kind, String(entry.key));
    }

    ColumnLayout {
        id: content
        anchors.fill: parent
        spacing: 8

        TextField {
            id: query
            objectName: "paletteQuery"
            Layout.fillWidth: true
            placeholderText: qsTr("Go to an app, a pipeline, a view or an action…")
            Accessible.name: qsTr("Search")
            onTextChanged: results.currentIndex = 0
            Keys.onDownPressed: results.incrementCurrentIndex()
            Keys.onUpPressed: results.decrementCurrentIndex()
            Keys.onReturnPressed: root.choose(results.currentIndex)
            Keys.onEnterPressed: root.choose(results.currentIndex)
        }

        ListView {
            id: results
            objectName: "paletteResults"
            Layout.fillWidth: true
            Layout.preferredHeight: Math.min(contentHeight, 360)
            clip: true
            model: Desktop.palette.entries(query.text)
            highlightMoveDuration: 0
            ScrollBar.vertical: ScrollBar {}
            // Tab from the query comes here (and goes back): the arrow keys move, Enter chooses.
            activeFocusOnTab: true
            keyNavigationEnabled: true
            Keys.onReturnPressed: root.choose(results.currentIndex)
            Keys.onEnterPressed: root.choose(results.currentIndex)
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Matches")
            FocusRing {
                target: results
            }

            delegate: ListRow {
                id: entry
                required property int index
                required property var modelData
                width: ListView.view.width
                highlighted: ListView.isCurrentItem
                onClicked: root.choose(entry.index)
                focusPolicy: Qt.NoFocus
                Accessible.role: Accessible.ListItem
                Accessible.name: entry.modelData.hint.length > 0 ? qsTr("%1, %2").arg(entry.modelData.label).arg(entry.modelData.hint)
                                                               : entry.modelData.label

                contentItem: RowLayout {
                    spacing: 8
                    StateMark {
                        visible: entry.modelData.state >= 0
                        displayState: Math.max(0, entry.modelData.state)
                        showWord: false
                    }
                    Label {
                        text: entry.modelData.label
                        font.bold: true
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                    }
                    Label {
                        text: entry.modelData.hint
                        opacity: 0.7
                        elide: Text.ElideRight
                        Layout.maximumWidth: entry.width / 2
                    }
                }
            }
        }

        Label {
            objectName: "paletteNothing"
            visible: results.count === 0
            text: qsTr("Nothing matches “%1”.").arg(query.text)
            opacity: 0.7
        }
    }
}
