// The Apps view: the list on the left, the selected app on the right; the empty state teaches the
// first deploy. Everything it shows comes from AppsModel.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Apps

Item {
    id: root
    required property AppsModel appsModel

    EmptyState {
        anchors.fill: parent
        visible: root.appsModel.count === 0
        appsModel: root.appsModel
    }

    SplitView {
        anchors.fill: parent
        visible: root.appsModel.count > 0

        AppsList {
            SplitView.preferredWidth: 340
            SplitView.minimumWidth: 220
            appsModel: root.appsModel
        }
        AppDetail {
            SplitView.fillWidth: true
            appsModel: root.appsModel
        }
    }
}
