// The Settings tab of an app: what the API tells about it and lets change. Spec fields are edited
// as a draft; "Review and save…" shows the line diff of the spec text before anything is sent,
// and a refusal shows the engine's own words (field, message, what to do next). Secrets go
// through their own routes, by name; a value is typed into a password field and never shown
// again. Services, the disk limit and the install's capacity are shown beside them. Everything
// here binds to AppSettings; it scrolls so that it fits any window.
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Apps
import Pando.States

ScrollView {
    id: root
    required property QtObject session
    required property string app
    // For tests and the detail: what the tab shows.
    property alias appSettings: settings
    contentWidth: availableWidth
    // Said, not guessed: the view has more than one child (the model, the dialog).
    contentHeight: content.implicitHeight
    clip: true

    AppSettings {
        id: settings
        session: root.session
        app: root.app
    }

    function draftText(path: string): string {
        return settings.draft[path] ?? "";
    }

    // A spec field of the draft, by its path.
    component DraftField: TextField {
        required property string path
        required property string label
        text: settings.draft[path] ?? ""
        onTextEdited: settings.setField(path, text)
        selectByMouse: true
        Layout.fillWidth: true
        Accessible.name: label
    }
    component DraftChoice: ComboBox {
        required property string path
        required property string label
        readonly property string current: settings.draft[path] ?? ""
        currentIndex: Math.max(0, model.indexOf(current))
        onActivated: index => settings.setField(path, model[index])
        Layout.fillWidth: true
        Accessible.name: label
    }
    component FieldLabel: Label {
        opacity: 0.7
        wrapMode: Text.Wrap
        Layout.maximumWidth: 200
    }
    component Section: Label {
        font.bold: true
        font.pointSize: 12
        Layout.topMargin: 12
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        Accessible.role: Accessible.Heading
    }
    component Note: Label {
        opacity: 0.7
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }

    Dialog {
        id: restoreDialog
        objectName: "restoreDialog"
        property string volume
        property string file
        title: qsTr("Restore volume %1 of %2?").arg(volume).arg(root.app)
        modal: true
        anchors.centerIn: Overlay.overlay
        width: Math.min(560, (Overlay.overlay ? Overlay.overlay.width : 560) - 48)
        standardButtons: Dialog.Ok | Dialog.Cancel
        onAccepted: settings.restoreVolume(volume, file)
        contentWidth: width - leftPadding - rightPadding
        contentHeight: restoreText.implicitHeight
        Label {
            id: restoreText
            width: restoreDialog.contentWidth
            text: qsTr("Every file of the volume is replaced with those of %1. What the app wrote since that backup is lost. The app stops while it is restored and runs again on the restored files.").arg(restoreDialog.file)
            wrapMode: Text.Wrap
        }
    }

    Dialog {
        id: diffDialog
        objectName: "diffDialog"
        title: qsTr("Save these changes to %1?").arg(root.app)
        modal: true
        anchors.centerIn: Overlay.overlay
        width: Math.min(720, (Overlay.overlay ? Overlay.overlay.width : 720) - 48)
        height: Math.min(560, (Overlay.overlay ? Overlay.overlay.height : 560) - 48)
        standardButtons: Dialog.Save | Dialog.Cancel
        onAccepted: settings.save()
        ColumnLayout {
            anchors.fill: parent
            spacing: 8
            Note {
                text: qsTr("The spec as the engine has it (−) and as it will be (+). The next deploy runs it.")
            }
            ListView {
                id: diffList
                objectName: "diffList"
                Layout.fillWidth: true
                Layout.fillHeight: true
                clip: true
                model: settings.diff
                activeFocusOnTab: true
                Accessible.name: qsTr("Changes to the spec")
                ScrollBar.vertical: ScrollBar {}
                delegate: Label {
                    required property var modelData
                    width: ListView.view.width
                    text: modelData.kind + " " + modelData.text
                    font.family: "monospace"
                    wrapMode: Text.WrapAnywhere
                    color: modelData.kind === "+" ? StateStyle.colour(DisplayState.Healthy)
                         : modelData.kind === "-" ? StateStyle.danger : root.palette.text
                    opacity: modelData.kind === " " ? 0.6 : 1
                }
            }
        }
    }

    ColumnLayout {
        id: content
        width: root.availableWidth
        spacing: 8

        Label {
            visible: settings.error.length > 0
            text: settings.error
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        // What is saved, and the way to save a change.
        RowLayout {
            Layout.fillWidth: true
            spacing: 8
            Label {
                objectName: "revisionText"
                text: settings.revisionText
                opacity: 0.7
                elide: Text.ElideRight
                Layout.fillWidth: true
            }
            Button {
                objectName: "discardButton"
                text: qsTr("Discard")
                enabled: settings.modified && !settings.saving
                onClicked: settings.discard()
                Accessible.name: qsTr("Discard the changes")
            }
            Button {
                objectName: "reviewButton"
                text: qsTr("Review and save…")
                highlighted: true
                enabled: settings.modified && !settings.saving
                onClicked: if (settings.preview())
                    diffDialog.open()
                Accessible.name: qsTr("Review the changes and save them")
            }
        }
        BusyIndicator {
            visible: settings.saving || settings.loading
            running: visible
            Layout.preferredWidth: 24
            Layout.preferredHeight: 24
        }
        // A refusal, in the engine's words: the field, the message, what to do next.
        ColumnLayout {
            objectName: "saveRefusal"
            visible: settings.saveError.length > 0
            Layout.fillWidth: true
            spacing: 2
            Label {
                objectName: "saveError"
                text: settings.saveWhere.length > 0 ? qsTr("%1: %2").arg(settings.saveWhere).arg(settings.saveError)
                                                    : settings.saveError
                color: StateStyle.danger
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Label {
                objectName: "saveHint"
                visible: settings.saveHint.length > 0
                text: settings.saveHint
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }

        Section {
            text: qsTr("Environment")
        }
        Note {
            visible: settings.env.length === 0
            text: qsTr("No variables. Secrets reach the app as variables of their own names.")
        }
        Repeater {
            objectName: "envRows"
            model: settings.env
            delegate: RowLayout {
                id: envRow
                required property var modelData
                required property int index
                Layout.fillWidth: true
                spacing: 8
                TextField {
                    id: envName
                    objectName: "envName" + envRow.index
                    text: envRow.modelData.name
                    placeholderText: qsTr("NAME")
                    selectByMouse: true
                    Layout.fillWidth: true
                    Layout.preferredWidth: 1
                    onTextEdited: settings.setEnv(envRow.index, text, envValue.text)
                    Accessible.name: qsTr("Name of variable %1").arg(envRow.index + 1)
                }
                TextField {
                    id: envValue
                    objectName: "envValue" + envRow.index
                    text: envRow.modelData.value
                    placeholderText: qsTr("value")
                    selectByMouse: true
                    Layout.fillWidth: true
                    Layout.preferredWidth: 2
                    onTextEdited: settings.setEnv(envRow.index, envName.text, text)
                    Accessible.name: qsTr("Value of variable %1").arg(envRow.index + 1)
                }
                Button {
                    text: qsTr("Remove")
                    onClicked: settings.removeEnv(envRow.index)
                    Accessible.name: qsTr("Remove variable %1").arg(envRow.index + 1)
                }
            }
        }
        Button {
            objectName: "addEnvButton"
            text: qsTr("Add variable")
            onClicked: settings.addEnv()
        }

        Section {
            text: qsTr("Resources")
        }
        GridLayout {
            columns: 2
            columnSpacing: 12
            rowSpacing: 6
            Layout.fillWidth: true
            FieldLabel { text: qsTr("Memory") }
            DraftField {
                objectName: "memoryField"
                path: "run.resources.memory"
                label: qsTr("Memory")
                placeholderText: qsTr("e.g. 256Mi; empty: the install's default")
            }
            FieldLabel { text: qsTr("CPUs") }
            DraftField {
                objectName: "cpusField"
                path: "run.resources.cpus"
                label: qsTr("CPUs")
                placeholderText: qsTr("e.g. 0.5; empty: no limit")
            }
            FieldLabel { text: qsTr("Disk") }
            DraftField {
                objectName: "diskField"
                path: "run.resources.disk"
                label: qsTr("Disk")
                placeholderText: qsTr("e.g. 1Gi; empty: no limit")
            }
            FieldLabel { text: qsTr("Past the disk limit") }
            DraftChoice {
                path: "run.resources.diskPolicy"
                label: qsTr("Past the disk limit")
                model: ["stop", "warn"]
                enabled: root.draftText("run.resources.disk").length > 0
            }
            FieldLabel { text: qsTr("Restart") }
            DraftChoice {
                path: "run.restart"
                label: qsTr("Restart")
                model: ["always", "on-failure", "never"]
            }
        }

        Section {
            text: qsTr("Disk")
        }
        Note {
            objectName: "diskText"
            text: settings.diskText
        }
        RowLayout {
            visible: settings.diskState.length > 0
            Layout.fillWidth: true
            Label {
                objectName: "diskState"
                text: settings.diskState
                color: StateStyle.danger
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Button {
                objectName: "startAgainButton"
                visible: settings.diskStopped
                text: qsTr("Start again")
                onClicked: settings.startApp()
            }
        }
        Label {
            visible: settings.actionError.length > 0
            text: settings.actionError
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        Section {
            text: qsTr("Health check")
        }
        GridLayout {
            columns: 2
            columnSpacing: 12
            rowSpacing: 6
            Layout.fillWidth: true
            FieldLabel { text: qsTr("Path") }
            DraftField {
                objectName: "healthPathField"
                path: "health.path"
                label: qsTr("Health check path")
            }
            FieldLabel { text: qsTr("Time to become healthy") }
            DraftField {
                path: "health.timeout"
                label: qsTr("Time to become healthy")
                placeholderText: qsTr("e.g. 60s")
            }
            FieldLabel { text: qsTr("Between probes while starting") }
            DraftField {
                path: "health.interval"
                label: qsTr("Between probes while starting")
            }
            FieldLabel { text: qsTr("Between probes while serving") }
            DraftField {
                path: "health.every"
                label: qsTr("Between probes while serving")
            }
            FieldLabel { text: qsTr("Failed probes before unhealthy") }
            DraftField {
                path: "health.failures"
                label: qsTr("Failed probes before unhealthy")
            }
        }

        Section {
            text: qsTr("Route and source")
        }
        GridLayout {
            columns: 2
            columnSpacing: 12
            rowSpacing: 6
            Layout.fillWidth: true
            FieldLabel { text: qsTr("URL") }
            Label {
                text: settings.url.length > 0 ? settings.url : qsTr("not routed yet")
                wrapMode: Text.WrapAnywhere
                Layout.fillWidth: true
            }
            FieldLabel { text: qsTr("Stable port") }
            DraftField {
                objectName: "routePortField"
                path: "route.port"
                label: qsTr("Stable port")
                placeholderText: settings.routePort > 0 ? qsTr("empty: one is picked (now %1)").arg(settings.routePort)
                                                        : qsTr("empty: one is picked")
            }
            FieldLabel { text: qsTr("The app listens on") }
            DraftField {
                path: "run.port"
                label: qsTr("The port the app listens on")
                placeholderText: qsTr("empty: the port the image exposes")
            }
            FieldLabel { text: qsTr("Ref") }
            DraftField {
                path: "source.ref"
                label: qsTr("Branch, tag or commit to deploy")
            }
            FieldLabel { text: qsTr("Outgoing connections") }
            DraftChoice {
                path: "network.egress"
                label: qsTr("Outgoing connections")
                model: ["all", "none"]
            }
        }

        Section {
            text: qsTr("Secrets")
        }
        Note {
            text: qsTr("Values are sealed on the install and never shown again; the app gets a change at its next deploy.")
        }
        Note {
            visible: settings.secrets.length === 0 && settings.secretError.length === 0
            text: qsTr("No secrets yet.")
        }
        Repeater {
            objectName: "secretRows"
            model: settings.secrets
            delegate: RowLayout {
                id: secretRow
                required property var modelData
                Layout.fillWidth: true
                spacing: 8
                Label {
                    objectName: "secretName"
                    text: secretRow.modelData.name
                    font.family: "monospace"
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
                Label {
                    text: secretRow.modelData.injectedAs === "file"
                          ? qsTr("file %1, set %2").arg(secretRow.modelData.file).arg(secretRow.modelData.updatedText)
                          : qsTr("variable, set %1").arg(secretRow.modelData.updatedText)
                    opacity: 0.7
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
                Button {
                    text: qsTr("Rotate…")
                    enabled: !settings.secretBusy
                    Accessible.name: qsTr("Set a new value for %1").arg(secretRow.modelData.name)
                    onClicked: {
                        secretName.text = secretRow.modelData.name;
                        secretValue.forceActiveFocus();
                    }
                }
                Button {
                    text: qsTr("Remove")
                    enabled: !settings.secretBusy
                    Accessible.name: qsTr("Remove secret %1").arg(secretRow.modelData.name)
                    onClicked: settings.removeSecret(secretRow.modelData.name)
                }
            }
        }
        Label {
            objectName: "missingSecrets"
            visible: settings.missingSecrets.length > 0
            text: qsTr("The spec asks for these secrets as files, and the next deploy fails until they are set: %1")
                      .arg(settings.missingSecrets)
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        GridLayout {
            columns: root.availableWidth > 560 ? 3 : 1
            columnSpacing: 8
            rowSpacing: 6
            Layout.fillWidth: true
            TextField {
                id: secretName
                objectName: "secretNameField"
                placeholderText: qsTr("NAME")
                selectByMouse: true
                Layout.fillWidth: true
                Accessible.name: qsTr("Secret name")
            }
            TextField {
                id: secretValue
                objectName: "secretValueField"
                placeholderText: qsTr("value")
                echoMode: TextInput.Password
                selectByMouse: true
                Layout.fillWidth: true
                Accessible.name: qsTr("Secret value")
                onAccepted: setSecretButton.clicked()
            }
            Button {
                id: setSecretButton
                objectName: "setSecretButton"
                text: qsTr("Set secret")
                enabled: !settings.secretBusy && secretName.text.length > 0 && secretValue.text.length > 0
                onClicked: {
                    settings.setSecret(secretName.text, secretValue.text);
                    // The value leaves the form at once: nothing keeps it after it is sent.
                    secretValue.clear();
                }
            }
        }
        Connections {
            target: settings
            function onSecretSet() {
                secretName.clear();
            }
        }
        Label {
            objectName: "secretError"
            visible: settings.secretError.length > 0
            text: settings.secretError
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        Section {
            text: qsTr("Services")
        }
        Note {
            visible: settings.services.length === 0
            text: settings.servicesError.length > 0 ? settings.servicesError : qsTr("No services.")
        }
        Repeater {
            objectName: "serviceRows"
            model: settings.services
            delegate: Frame {
                id: serviceRow
                required property var modelData
                Layout.fillWidth: true
                ColumnLayout {
                    width: parent.width
                    spacing: 4
                    Label {
                        text: qsTr("%1: %2 %3, %4").arg(serviceRow.modelData.slot).arg(serviceRow.modelData.kind)
                                  .arg(serviceRow.modelData.version).arg(serviceRow.modelData.status)
                        font.bold: true
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    Label {
                        objectName: "serviceConnection"
                        text: qsTr("The app reaches it through %1 (user %2, database %3); data in volume %4.")
                                  .arg(serviceRow.modelData.variables).arg(serviceRow.modelData.user || "—")
                                  .arg(serviceRow.modelData.database || "—").arg(serviceRow.modelData.volume || "—")
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    RowLayout {
                        Layout.fillWidth: true
                        TextField {
                            id: backupPath
                            objectName: "backupPath"
                            text: settings.suggestedBackupPath(serviceRow.modelData.slot)
                            selectByMouse: true
                            Layout.fillWidth: true
                            Accessible.name: qsTr("File for the backup of %1").arg(serviceRow.modelData.slot)
                        }
                        Button {
                            objectName: "backupButton"
                            text: qsTr("Back up")
                            enabled: !settings.backupBusy && serviceRow.modelData.status === "running"
                            onClicked: settings.backup(serviceRow.modelData.slot, backupPath.text)
                            Accessible.name: qsTr("Back up %1").arg(serviceRow.modelData.slot)
                        }
                    }
                    Label {
                        objectName: "backupText"
                        visible: settings.backupSlot === serviceRow.modelData.slot && settings.backupText.length > 0
                        text: settings.backupText
                        color: settings.backupFailed ? StateStyle.danger : root.palette.text
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                }
            }
        }

        Section {
            text: qsTr("Volumes")
        }
        Note {
            visible: settings.volumes.length === 0
            text: qsTr("No volumes: what the app writes goes with its container (run.volumes keeps files).")
        }
        Repeater {
            objectName: "volumeRows"
            model: settings.volumes
            delegate: Frame {
                id: volumeRow
                required property var modelData
                readonly property string key: "volume/" + modelData.name
                Layout.fillWidth: true
                ColumnLayout {
                    width: parent.width
                    spacing: 4
                    Label {
                        text: volumeRow.modelData.size.length > 0
                              ? qsTr("%1 at %2, %3").arg(volumeRow.modelData.name).arg(volumeRow.modelData.path)
                                    .arg(volumeRow.modelData.size)
                              : qsTr("%1 at %2").arg(volumeRow.modelData.name).arg(volumeRow.modelData.path)
                        font.bold: true
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    RowLayout {
                        Layout.fillWidth: true
                        TextField {
                            id: volumeBackupPath
                            objectName: "volumeBackupPath"
                            text: settings.suggestedVolumeBackupPath(volumeRow.modelData.name)
                            selectByMouse: true
                            Layout.fillWidth: true
                            Accessible.name: qsTr("File for the archive of volume %1").arg(volumeRow.modelData.name)
                        }
                        Button {
                            objectName: "volumeBackupButton"
                            text: qsTr("Back up")
                            enabled: !settings.backupBusy
                            onClicked: settings.backupVolume(volumeRow.modelData.name, volumeBackupPath.text)
                            Accessible.name: qsTr("Back up volume %1").arg(volumeRow.modelData.name)
                        }
                    }
                    RowLayout {
                        Layout.fillWidth: true
                        TextField {
                            id: volumeRestorePath
                            objectName: "volumeRestorePath"
                            placeholderText: qsTr("Archive to restore from (a backup of this volume)")
                            selectByMouse: true
                            Layout.fillWidth: true
                            Accessible.name: qsTr("Archive to restore volume %1 from").arg(volumeRow.modelData.name)
                        }
                        Button {
                            objectName: "volumeRestoreButton"
                            text: qsTr("Restore…")
                            enabled: !settings.backupBusy && volumeRestorePath.text.trim().length > 0
                            onClicked: {
                                restoreDialog.volume = volumeRow.modelData.name
                                restoreDialog.file = volumeRestorePath.text.trim()
                                restoreDialog.open()
                            }
                            Accessible.name: qsTr("Restore volume %1").arg(volumeRow.modelData.name)
                        }
                    }
                    Label {
                        objectName: "volumeBackupText"
                        visible: settings.backupSlot === volumeRow.key && settings.backupText.length > 0
                        text: settings.backupText
                        color: settings.backupFailed ? StateStyle.danger : root.palette.text
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                }
            }
        }

        Section {
            text: qsTr("Capacity of the install")
        }
        Note {
            visible: settings.capacityError.length > 0
            text: settings.capacityError
        }
        Repeater {
            objectName: "capacityRows"
            model: settings.capacity
            delegate: GridLayout {
                id: runtimeRow
                required property var modelData
                columns: 2
                columnSpacing: 12
                rowSpacing: 2
                Layout.fillWidth: true
                Label {
                    text: runtimeRow.modelData.isDefault ? qsTr("%1 (default)").arg(runtimeRow.modelData.kind)
                                                         : runtimeRow.modelData.kind
                    font.bold: true
                    Layout.columnSpan: 2
                }
                FieldLabel { text: qsTr("CPUs") }
                Label {
                    text: runtimeRow.modelData.cpus
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                FieldLabel { text: qsTr("Memory") }
                Label {
                    text: runtimeRow.modelData.memory
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                FieldLabel { text: qsTr("Disk") }
                Label {
                    text: runtimeRow.modelData.disk
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                Note {
                    visible: runtimeRow.modelData.note.length > 0 || !runtimeRow.modelData.reachable
                    text: runtimeRow.modelData.reachable ? runtimeRow.modelData.note
                                                         : qsTr("Not reachable: %1").arg(runtimeRow.modelData.note)
                    Layout.columnSpan: 2
                }
            }
        }
        Item {
            Layout.preferredHeight: 8
        }
    }
}
