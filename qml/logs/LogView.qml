// The Logs tab of an app: its last lines, then the live ones, in the desktop's log view
// (LogLines: colours, line numbers, search, follow, copy).
import QtQuick
import Pando.Logs

Item {
    id: root
    required property QtObject session
    required property string app
    readonly property LogModel logModel: appSource.model
    // The row of the search hit in front; -1 when none is.
    readonly property alias currentMatch: logLines.currentMatch

    AppLogSource {
        id: appSource
        session: root.session
        app: root.app
    }

    LogLines {
        id: logLines
        anchors.fill: parent
        source: appSource
    }
}
