// The first start: how to deploy the first app, and whether the engine answers (and what to do
// when it does not).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Apps
import Pando.States

Pane {
    id: root
    required property AppsModel appsModel
    // mode: 0 from a repository, 1 from a spec file
    signal newAppRequested(int mode)

    ColumnLayout {
        anchors.centerIn: parent
        width: Math.min(parent.width - 48, 560)
        spacing: 12

        Label {
            text: qsTr("Deploy your first app")
            font.pointSize: 20
            font.bold: true
            Layout.alignment: Qt.AlignHCenter
        }
        Label {
            text: qsTr("Pando builds an app from a git repository and runs it on this computer's Docker engine. There are two ways to start:")
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        Label {
            text: qsTr("<b>From a repository URL</b>: name the app, give the repository and the port the app listens on; Pando writes the spec.")
            textFormat: Text.StyledText
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        Label {
            text: qsTr("<b>From a spec file</b>: <tt>pando apps create -f hello.yaml</tt>, then <tt>pando deploy hello</tt>. The app appears here and its deploy shows live.")
            textFormat: Text.StyledText
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        RowLayout {
            spacing: 8
            Button {
                id: fromRepository
                objectName: "newFromRepository"
                text: qsTr("From a repository…")
                highlighted: true
                // Fusion outlines a highlighted button as if it had the focus: a ring tells them apart.
                FocusRing {
                    target: fromRepository
                    shown: fromRepository.visualFocus
                }
                enabled: root.appsModel.engineReachable
                onClicked: root.newAppRequested(0)
            }
            Button {
                objectName: "newFromSpecFile"
                text: qsTr("From a spec file…")
                enabled: root.appsModel.engineReachable
                onClicked: root.newAppRequested(1)
            }
        }
        RowLayout {
            spacing: 8
            Layout.topMargin: 8
            StateMark {
                displayState: root.appsModel.engineReachable ? DisplayState.Healthy : DisplayState.Failed
                // The engine's line beside it wraps; the mark keeps the word for accessibility.
                word: root.appsModel.engineText
                showWord: false
            }
            Label {
                text: root.appsModel.engineText
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }
        Label {
            visible: text.length > 0
            text: root.appsModel.engineHint
            wrapMode: Text.Wrap
            opacity: 0.8
            Layout.fillWidth: true
        }
        Label {
            visible: text.length > 0
            text: root.appsModel.error
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
    }
}
