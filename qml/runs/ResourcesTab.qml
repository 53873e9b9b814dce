// The Resources tab of a pipeline: its resources on the left (type, last check, its error, the
// pinned version), the selected one's versions on the right, newest first, with the version gets
// use marked. Pin a version (every get of the resource uses it until it is unpinned), Unpin,
// Check now and, on the selected version, Check from here (the versions follow once the check
// has answered).
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Runs
import Pando.States

Pane {
    id: root
    required property ResourcesModel resourcesModel
    padding: 0

    Label {
        anchors.centerIn: parent
        visible: root.resourcesModel.count === 0
        width: Math.min(parent.width - 32, 480)
        horizontalAlignment: Text.AlignHCenter
        wrapMode: Text.Wrap
        text: root.resourcesModel.error.length > 0 ? root.resourcesModel.error
                                                   : qsTr("This pipeline has no resources")
        opacity: 0.7
    }

    SplitView {
        anchors.fill: parent
        visible: root.resourcesModel.count > 0

        ListView {
            id: resources
            objectName: "resourcesList"
            // Room for the versions beside it in a narrow window.
            SplitView.preferredWidth: Math.min(260, root.width * 0.4)
            SplitView.minimumWidth: 160
            clip: true
            activeFocusOnTab: true
            keyNavigationEnabled: true
            model: root.resourcesModel
            currentIndex: root.resourcesModel.selectedRow
            // As the apps list: only a row the list moved to goes back to the model (a list made
            // anew starts with no row, which is not a choice).
            onCurrentIndexChanged: if (currentIndex >= 0)
                root.resourcesModel.selectedRow = currentIndex
            Accessible.name: qsTr("Resources of the pipeline")
            Accessible.role: Accessible.List
            ScrollBar.vertical: ScrollBar {}

            delegate: ItemDelegate {
                id: resource
                required property int index
                required property string name
                required property string type
                required property string checkText
                required property string checkError
                required property string pinnedText
                width: ListView.view.width
                highlighted: ListView.isCurrentItem
                Accessible.name: qsTr("%1, %2").arg(resource.name).arg(resource.checkText)
                onClicked: root.resourcesModel.selectedRow = resource.index

                contentItem: ColumnLayout {
                    spacing: 0
                    Label {
                        text: qsTr("%1 (%2)").arg(resource.name).arg(resource.type)
                        font.bold: true
                        elide: Text.ElideRight
                        color: resource.highlighted ? resource.palette.highlightedText : resource.palette.text
                        Layout.fillWidth: true
                    }
                    Label {
                        text: resource.checkText
                        elide: Text.ElideRight
                        opacity: 0.8
                        color: resource.highlighted ? resource.palette.highlightedText : resource.palette.text
                        Layout.fillWidth: true
                    }
                    Label {
                        visible: text.length > 0
                        text: resource.checkError.length > 0 ? qsTr("check failed: %1").arg(resource.checkError) : ""
                        color: StateStyle.danger
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    Label {
                        objectName: "resourcePinned"
                        visible: text.length > 0
                        text: resource.pinnedText
                        wrapMode: Text.Wrap
                        color: resource.highlighted ? resource.palette.highlightedText : resource.palette.text
                        Layout.fillWidth: true
                    }
                }
            }
        }

        ColumnLayout {
            SplitView.fillWidth: true
            SplitView.minimumWidth: 240
            implicitWidth: 360
            spacing: 8

            RowLayout {
                Layout.fillWidth: true
                Layout.margins: 8
                spacing: 8
                Label {
                    text: qsTr("Versions of %1").arg(root.resourcesModel.selectedName)
                    font.bold: true
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
                BusyIndicator {
                    running: root.resourcesModel.busy
                    visible: running
                    Layout.preferredHeight: 24
                    Layout.preferredWidth: 24
                }
                Button {
                    objectName: "checkNowButton"
                    text: qsTr("Check now")
                    enabled: !root.resourcesModel.busy && root.resourcesModel.selectedName.length > 0
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("Look for new versions of %1 now").arg(root.resourcesModel.selectedName)
                    onClicked: root.resourcesModel.checkNow()
                }
                Button {
                    objectName: "unpinButton"
                    text: qsTr("Unpin")
                    visible: root.resourcesModel.selectedPinned
                    enabled: !root.resourcesModel.busy && !root.resourcesModel.selectedPinnedInConfig
                    ToolTip.visible: hovered
                    ToolTip.text: root.resourcesModel.selectedPinnedInConfig
                                  ? qsTr("The config pins this version (version:); change it there")
                                  : qsTr("Let gets use the newest version again")
                    onClicked: root.resourcesModel.unpin()
                }
            }
            Label {
                objectName: "resourceActionError"
                visible: text.length > 0
                text: root.resourcesModel.actionError
                color: StateStyle.danger
                wrapMode: Text.Wrap
                Layout.fillWidth: true
                Layout.leftMargin: 8
                Layout.rightMargin: 8
            }

            Label {
                visible: versions.count === 0
                text: qsTr("No versions found yet: Check now looks for them")
                opacity: 0.6
                wrapMode: Text.Wrap
                Layout.fillWidth: true
                Layout.margins: 8
            }
            ListView {
                id: versions
                objectName: "versionsList"
                Layout.fillWidth: true
                Layout.fillHeight: true
                clip: true
                activeFocusOnTab: true
                keyNavigationEnabled: true
                model: root.resourcesModel.versions
                Accessible.name: qsTr("Versions, newest first")
                Accessible.role: Accessible.List
                ScrollBar.vertical: ScrollBar {}


                delegate: ItemDelegate {
                    id: version
                    required property int index
                    required property string versionText
                    required property string foundText
                    required property bool pinned
                    width: ListView.view.width
                    highlighted: ListView.isCurrentItem
                    Accessible.name: version.pinned ? qsTr("%1, pinned").arg(version.versionText) : version.versionText
                    onClicked: versions.currentIndex = version.index

                    contentItem: RowLayout {
                        spacing: 8
                        // When it was found under the version, which a narrow pane needs whole.
                        ColumnLayout {
                            spacing: 0
                            Layout.fillWidth: true
                            Label {
                                text: version.versionText
                                font.family: "monospace"
                                elide: Text.ElideRight
                                color: version.highlighted ? version.palette.highlightedText : version.palette.text
                                Layout.fillWidth: true
                            }
                            Label {
                                text: version.foundText
                                opacity: 0.75
                                elide: Text.ElideRight
                                color: version.highlighted ? version.palette.highlightedText : version.palette.text
                                Layout.fillWidth: true
                            }
                        }
                        Label {
                            objectName: "versionPinnedMark"
                            visible: version.pinned
                            text: qsTr("pinned")
                            font.bold: true
                            padding: 2
                            leftPadding: 6
                            rightPadding: 6
                            color: version.highlighted ? version.palette.highlightedText : version.palette.text
                            background: Rectangle {
                                radius: height / 2
                                color: "transparent"
                                border.color: StateStyle.colour(DisplayState.Waiting)
                            }
                        }
                        Button {
                            objectName: "pinButton"
                            text: qsTr("Pin")
                            visible: !version.pinned
                            enabled: !root.resourcesModel.busy && !root.resourcesModel.selectedPinnedInConfig
                            Accessible.name: qsTr("Pin %1").arg(version.versionText)
                            ToolTip.visible: hovered
                            ToolTip.text: qsTr("Every get of %1 uses this version until it is unpinned").arg(root.resourcesModel.selectedName)
                            onClicked: root.resourcesModel.pin(version.index)
                        }
                        Button {
                            objectName: "checkFromButton"
                            text: qsTr("Check from here")
                            visible: version.highlighted
                            enabled: !root.resourcesModel.busy
                            Accessible.name: qsTr("Check from %1").arg(version.versionText)
                            ToolTip.visible: hovered
                            ToolTip.text: qsTr("Check %1 starting at this version, to find what came after it again").arg(root.resourcesModel.selectedName)
                            onClicked: root.resourcesModel.checkFrom(version.index)
                        }
                    }
                }
            }
        }
    }
}
