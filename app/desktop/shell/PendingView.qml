// A view this build does not have yet: says so plainly instead of showing an empty page.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Pane {
    id: root
    required property string title

    ColumnLayout {
        anchors.centerIn: parent
        spacing: 8
        Label {
            text: root.title
            font.pointSize: 18
            font.bold: true
            Layout.alignment: Qt.AlignHCenter
        }
        Label {
            text: qsTr("This view is not in this build of Pando Desktop yet; the command-line client (pando) has it.")
            opacity: 0.7
        }
    }
}
