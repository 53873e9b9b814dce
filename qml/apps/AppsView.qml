// The Apps view: the list on the left, the selected app on the right; the empty state teaches the
// first deploy. New app (Ctrl+N) opens from the list's header or the empty state. Everything it
// shows comes from AppsModel and AppCreator.
import QtQuick
import QtQuick.Controls
import Pando.Apps

Item {
    id: root
    required property AppsModel appsModel

    function newApp(mode: int) {
        createDialog.presetName = "";
        createDialog.presetRepo = "";
        createDialog.presetRef = "";
        createDialog.presetConnection = "";
        createDialog.mode = mode;
        createDialog.open();
    }

    // New app from a repository, its fields filled in (the Sources view's "Create app…"), its
    // branches listed through the connection it came from.
    function newAppFrom(name: string, repo: string, ref: string, connection: string) {
        createDialog.presetName = name;
        createDialog.presetRepo = repo;
        createDialog.presetRef = ref;
        createDialog.presetConnection = connection;
        createDialog.mode = 0;
        createDialog.open();
    }

    onVisibleChanged: if (visible && root.appsModel.count > 0)
        appsList.takeFocus()

    Shortcut {
        sequence: "Ctrl+N"
        onActivated: root.newApp(0)
    }

    AppCreator {
        id: creator
        session: root.appsModel.session
    }

    EmptyState {
        objectName: "emptyState"
        anchors.fill: parent
        visible: root.appsModel.count === 0
        appsModel: root.appsModel
        onNewAppRequested: mode => root.newApp(mode)
    }

    SplitView {
        anchors.fill: parent
        visible: root.appsModel.count > 0

        AppsList {
            id: appsList
            SplitView.preferredWidth: 340
            SplitView.minimumWidth: 220
            appsModel: root.appsModel
            onNewAppRequested: root.newApp(0)
        }
        AppDetail {
            objectName: "appDetail"
            SplitView.fillWidth: true
            appsModel: root.appsModel
        }
    }

    CreateAppDialog {
        id: createDialog
        objectName: "createAppDialog"
        creator: creator
        onAppCreated: name => root.appsModel.selectApp(name)
    }
}
