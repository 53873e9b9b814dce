// New app: from a repository URL and a few fields, from an image, or from a spec file. The dialog stays open with
// the server's reason (naming the field or the file's line) until the app exists.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Pando.Apps
import Pando.States

Dialog {
    id: root
    required property AppCreator creator
    // Which way the dialog opens: 0 from a repository, 1 from a spec file, 2 from an image.
    property alias mode: modes.currentIndex
    // What the next opening fills in (a repository chosen in the Sources view); empty: nothing.
    property string presetName: ""
    property string presetRepo: ""
    property string presetRef: ""
    // The source connection the repository was listed through: its branches are offered for the ref.
    property string presetConnection: ""
    signal appCreated(string name)

    title: qsTr("New app")
    modal: true
    anchors.centerIn: parent
    width: Math.min(parent ? parent.width - 64 : 560, 560)
    standardButtons: Dialog.Cancel
    // Every opening is a new app: nothing of the last one's form stays.
    onAboutToShow: {
        root.creator.clearError();
        nameField.text = root.presetName;
        repoField.text = root.presetRepo;
        imageField.text = "";
        refField.text = root.presetRef.length > 0 ? root.presetRef : "main";
        root.creator.loadBranches(root.presetConnection, root.presetRepo);
        portField.value = 0;
        fileField.clear();
        deployNow.checked = true;
    }
    onOpened: nameField.forceActiveFocus()

    function create() {
        if (modes.currentIndex === 0)
            root.creator.createFromRepository(nameField.text, repoField.text, refField.text, portField.value, deployNow.checked);
        else if (modes.currentIndex === 2)
            root.creator.createFromImage(nameField.text, imageField.text, portField.value, deployNow.checked);
        else
            root.creator.createFromFile(fileField.text, deployNow.checked);
    }

    Connections {
        target: root.creator
        function onCreated(name: string) {
            root.appCreated(name);
            root.close();
        }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 12

        TabBar {
            id: modes
            Layout.fillWidth: true
            // Tab stops with a ring (Fusion draws none on a tab button).
            TabButton {
                id: repositoryTab
                objectName: "repositoryTab"
                text: qsTr("From a repository")
                focusPolicy: Qt.StrongFocus
                FocusRing {
                    target: repositoryTab
                    shown: repositoryTab.visualFocus
                }
            }
            TabButton {
                id: specFileTab
                objectName: "specFileTab"
                text: qsTr("From a spec file")
                focusPolicy: Qt.StrongFocus
                FocusRing {
                    target: specFileTab
                    shown: specFileTab.visualFocus
                }
            }
            TabButton {
                id: imageTab
                objectName: "imageTab"
                text: qsTr("From an image")
                focusPolicy: Qt.StrongFocus
                FocusRing {
                    target: imageTab
                    shown: imageTab.visualFocus
                }
            }
        }

        GridLayout {
            // The repository's fields, or the image's: name and port are both's.
            visible: modes.currentIndex !== 1
            columns: 2
            columnSpacing: 12
            rowSpacing: 8
            Layout.fillWidth: true

            Label {
                id: nameLabel
                text: qsTr("Name")
            }
            TextField {
                id: nameField
                objectName: "nameField"
                Accessible.name: nameLabel.text
                Layout.fillWidth: true
                placeholderText: qsTr("hello")
                onAccepted: root.create()
            }
            Label {
                id: imageLabel
                visible: modes.currentIndex === 2
                text: qsTr("Image")
            }
            TextField {
                id: imageField
                objectName: "imageField"
                visible: modes.currentIndex === 2
                Accessible.name: imageLabel.text
                Layout.fillWidth: true
                placeholderText: qsTr("nginx:1.27 or registry.example.com/team/app:1.4")
                onAccepted: root.create()
            }
            Label {
                id: repoLabel
                visible: modes.currentIndex === 0
                text: qsTr("Repository")
            }
            TextField {
                id: repoField
                visible: modes.currentIndex === 0
                objectName: "repoField"
                Accessible.name: repoLabel.text
                Layout.fillWidth: true
                placeholderText: qsTr("https://git.example.com/you/hello.git")
                onAccepted: root.create()
            }
            Label {
                id: refLabel
                visible: modes.currentIndex === 0
                text: qsTr("Branch, tag or commit")
            }
            RowLayout {
                visible: modes.currentIndex === 0
                Layout.fillWidth: true
                TextField {
                    id: refField
                    objectName: "refField"
                    Accessible.name: refLabel.text
                    Layout.fillWidth: true
                    text: "main"
                    onAccepted: root.create()
                }
                // The repository's branches, when it came from a source connection.
                ToolButton {
                    id: branchesButton
                    objectName: "branchesButton"
                    visible: root.creator.branches.length > 0 || root.creator.branchesError.length > 0
                    enabled: root.creator.branches.length > 0
                    text: qsTr("Branches")
                    Accessible.name: qsTr("Choose one of the repository's branches")
                    ToolTip.visible: hovered && root.creator.branchesError.length > 0
                    ToolTip.text: qsTr("The forge did not list the branches: %1").arg(root.creator.branchesError)
                    onClicked: {
                        const below = branchesButton.mapToItem(branchesMenu.parent, 0, branchesButton.height);
                        branchesMenu.x = below.x;
                        branchesMenu.y = below.y;
                        branchesMenu.open();
                    }
                    Menu {
                        id: branchesMenu
                        objectName: "branchesMenu"
                        // The window's overlay, so it opens wherever the dialog is (and the
                        // desktop's --check can open it with the dialog closed).
                        parent: Overlay.overlay
                        Instantiator {
                            model: root.creator.branches
                            delegate: MenuItem {
                                id: branchItem
                                required property string modelData
                                text: branchItem.modelData
                            }
                            onObjectAdded: (index, object) => {
                                branchesMenu.insertItem(index, object);
                                // Here, not in the delegate: the delegate does not see the form's fields.
                                (object as MenuItem).triggered.connect(() => refField.text = (object as MenuItem).text);
                            }
                            onObjectRemoved: (index, object) => branchesMenu.removeItem(object)
                        }
                    }
                }
            }
            Label {
                id: portLabel
                text: qsTr("Port the app listens on")
            }
            SpinBox {
                id: portField
                objectName: "portField"
                Accessible.name: portLabel.text
                // 0: the port the built image exposes (its EXPOSE), found when it deploys.
                from: 0
                to: 65535
                value: 0
                editable: true
                textFromValue: (value, locale) => value === 0 ? qsTr("as the image exposes") : value.toString()
                valueFromText: (text, locale) => {
                    const number = parseInt(text, 10);
                    return isNaN(number) ? 0 : number;
                }
            }
        }

        RowLayout {
            visible: modes.currentIndex === 1
            spacing: 8
            Layout.fillWidth: true
            TextField {
                id: fileField
                objectName: "fileField"
                Accessible.name: qsTr("App spec file")
                Layout.fillWidth: true
                placeholderText: qsTr("A YAML or JSON AppSpec, e.g. hello.yaml")
                onAccepted: root.create()
            }
            Button {
                objectName: "chooseFileButton"
                text: qsTr("Choose…")
                Accessible.name: qsTr("Choose an app spec file")
                enabled: root.creator.fileChooserProblem === ""
                onClicked: fileDialog.open()
            }
        }
        Label {
            objectName: "fileChooserProblem"
            visible: modes.currentIndex === 1 && text !== ""
            text: root.creator.fileChooserProblem
            wrapMode: Text.Wrap
            Layout.fillWidth: true
            opacity: 0.8
        }

        CheckBox {
            id: deployNow
            objectName: "deployNow"
            text: qsTr("Deploy it now")
            checked: true
        }

        Label {
            objectName: "createError"
            visible: text.length > 0
            text: root.creator.error
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        RowLayout {
            Layout.alignment: Qt.AlignRight
            BusyIndicator {
                running: root.creator.busy
                visible: running
                Layout.preferredWidth: 24
                Layout.preferredHeight: 24
            }
            Button {
                id: createButton
                objectName: "createButton"
                text: qsTr("Create")
                highlighted: true
                // Fusion outlines a highlighted button as if it had the focus: a ring tells them apart.
                FocusRing {
                    target: createButton
                    shown: createButton.visualFocus
                }
                enabled: !root.creator.busy
                onClicked: root.create()
            }
        }
    }

    FileDialog {
        id: fileDialog
        objectName: "specFileDialog"
        // Found from the dialog's own parents only when they are in a window as it is made.
        parentWindow: root.parent ? root.parent.Window.window : null
        title: qsTr("Choose an app spec")
        nameFilters: [qsTr("App specs (*.yaml *.yml *.json)"), qsTr("All files (*)")]
        onAccepted: fileField.text = root.creator.localPath(selectedFile)
    }
}
