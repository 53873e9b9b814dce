// The "Deploy on push" tab of an app (docs/autodeploy.md): what pushes deploy (a branch, or tags
// matching a pattern) and how Pando hears of them (a forge's webhook, polling, or not at all, with
// how to turn it on), the webhook's address and its secret's state with a way to make or set a
// new one, a secret just made shown this once, where each forge takes the two, and the newest
// deliveries with what became of each. Everything binds to AppHookModel; it scrolls so that it
// fits any window.
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
    property alias hookModel: hook
    contentWidth: availableWidth
    // Said, not guessed: the view has more than one child (the model, the dialogs).
    contentHeight: content.implicitHeight
    clip: true

    AppHookModel {
        id: hook
        session: root.session
        app: root.app
    }
    AppPreviewsModel {
        id: previews
        session: root.session
        app: root.app
    }
    // For tests: the previews the tab lists.
    property alias previewsModel: previews

    Dialog {
        id: removePreviewDialog
        objectName: "removePreviewDialog"
        property int number: 0
        title: qsTr("Remove the preview of pull request #%1?").arg(number)
        modal: true
        anchors.centerIn: Overlay.overlay
        width: Math.min(480, (Overlay.overlay ? Overlay.overlay.width : 480) - 48)
        standardButtons: Dialog.Ok | Dialog.Cancel
        Component.onCompleted: standardButton(Dialog.Ok).text = qsTr("Remove preview")
        onAccepted: previews.remove(number)
        Label {
            width: parent.width
            wrapMode: Text.Wrap
            text: qsTr("Its app goes with its services' data and volumes, as when the pull request closes. The next push to the pull request makes a new one.")
        }
    }

    component Section: Label {
        font.bold: true
        font.pointSize: 12
        Layout.topMargin: 8
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        Accessible.role: Accessible.Heading
    }
    component Note: Label {
        opacity: 0.7
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
    component FieldLabel: Label {
        opacity: 0.7
        Layout.alignment: Qt.AlignTop
        Layout.topMargin: 4
    }

    Dialog {
        id: newSecretDialog
        objectName: "newSecretDialog"
        title: qsTr("Make a new webhook secret for %1?").arg(root.app)
        modal: true
        anchors.centerIn: Overlay.overlay
        width: Math.min(480, (Overlay.overlay ? Overlay.overlay.width : 480) - 48)
        standardButtons: Dialog.Ok | Dialog.Cancel
        Component.onCompleted: standardButton(Dialog.Ok).text = qsTr("Make new secret")
        onAccepted: hook.makeSecret()
        Label {
            width: parent.width
            wrapMode: Text.Wrap
            text: hook.secretSet
                  ? qsTr("Deliveries signed with the old secret are refused from then on, until the forge has the new one. Pando shows the new secret once.")
                  : qsTr("Pando makes a random secret and shows it once, to give the forge.")
        }
    }

    Dialog {
        id: setSecretDialog
        objectName: "setSecretDialog"
        title: qsTr("Set the webhook secret of %1").arg(root.app)
        modal: true
        anchors.centerIn: Overlay.overlay
        width: Math.min(480, (Overlay.overlay ? Overlay.overlay.width : 480) - 48)
        standardButtons: Dialog.Ok | Dialog.Cancel
        Component.onCompleted: standardButton(Dialog.Ok).text = qsTr("Set secret")
        onAboutToShow: secretField.clear()
        onOpened: secretField.forceActiveFocus()
        onAccepted: {
            hook.setSecret(secretField.text);
            // The secret leaves the form at once: nothing keeps it after it is sent.
            secretField.clear();
        }
        onRejected: secretField.clear()
        ColumnLayout {
            width: parent.width
            spacing: 8
            Label {
                text: qsTr("The secret the forge has (GitLab's secret token, one set on the forge already): 16 to 256 visible characters, no spaces. Deliveries signed with the old one are refused from then on.")
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            TextField {
                id: secretField
                objectName: "hookSecretField"
                echoMode: TextInput.Password
                placeholderText: qsTr("secret")
                selectByMouse: true
                Layout.fillWidth: true
                Accessible.name: qsTr("Webhook secret")
                onAccepted: setSecretDialog.accept()
            }
        }
    }

    ColumnLayout {
        id: content
        width: root.availableWidth
        spacing: 8

        RowLayout {
            Layout.fillWidth: true
            spacing: 8
            Label {
                objectName: "hookMode"
                text: hook.mode.length === 0 ? "" : hook.follows.length > 0
                      ? qsTr("Deploys %1: %2").arg(hook.modeText).arg(hook.follows)
                      : qsTr("Deploys %1").arg(hook.modeText)
                font.bold: true
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            BusyIndicator {
                visible: hook.loading || hook.busy
                running: visible
                Layout.preferredWidth: 24
                Layout.preferredHeight: 24
            }
            Button {
                objectName: "refreshHookButton"
                text: qsTr("Refresh")
                onClicked: {
                    hook.refresh();
                    previews.refresh();
                }
                Accessible.name: qsTr("Read the webhook and its deliveries again")
            }
        }

        Note {
            objectName: "hookOff"
            visible: hook.mode === "off"
            text: qsTr("Pushes deploy nothing: auto-deploy is off for %1. To deploy what is pushed, set source.autodeploy: push in its spec (or poll, to have Pando look for new commits itself). The Settings tab does not edit it yet: pando apps spec %1 > spec.yaml, add the line under source, then pando apps update %1 -f spec.yaml.").arg(root.app)
        }
        Note {
            id: pollNote
            objectName: "hookPoll"
            visible: hook.mode === "poll"
            text: qsTr("%1. The webhook answers deliveries but deploys nothing while the app polls.").arg(hook.pollText)
            color: hook.pollFailed ? StateStyle.danger : pollNote.palette.windowText
            opacity: hook.pollFailed ? 1 : 0.7
        }

        Label {
            objectName: "hookError"
            visible: hook.error.length > 0
            text: hook.error
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        Section {
            text: qsTr("Webhook")
        }
        GridLayout {
            columns: 2
            columnSpacing: 12
            rowSpacing: 8
            Layout.fillWidth: true

            FieldLabel {
                id: addressLabel
                text: qsTr("Address")
            }
            ColumnLayout {
                spacing: 4
                Layout.fillWidth: true
                RowLayout {
                    spacing: 8
                    Layout.fillWidth: true
                    TextField {
                        objectName: "hookUrlField"
                        text: hook.hookUrl
                        readOnly: true
                        selectByMouse: true
                        font.family: "monospace"
                        placeholderText: hook.loaded ? "" : qsTr("reading…")
                        Layout.fillWidth: true
                        Accessible.name: qsTr("Webhook address")
                    }
                    Button {
                        objectName: "copyHookUrlButton"
                        text: qsTr("Copy")
                        enabled: hook.hookUrl.length > 0
                        onClicked: hook.copyHookUrl()
                        Accessible.name: qsTr("Copy the webhook address")
                    }
                }
                Note {
                    objectName: "hookHint"
                    visible: hook.hookHint.length > 0
                    text: hook.hookHint
                }
            }

            FieldLabel {
                text: qsTr("Secret")
            }
            RowLayout {
                spacing: 8
                Layout.fillWidth: true
                Label {
                    objectName: "hookSecretText"
                    text: hook.loaded ? hook.secretText : ""
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                Button {
                    objectName: "newHookSecretButton"
                    text: qsTr("New secret")
                    enabled: hook.hookPath.length > 0 && !hook.busy
                    onClicked: newSecretDialog.open()
                    Accessible.name: qsTr("Make a new random webhook secret")
                }
                Button {
                    objectName: "setHookSecretButton"
                    text: qsTr("Set secret…")
                    enabled: hook.hookPath.length > 0 && !hook.busy
                    onClicked: setSecretDialog.open()
                    Accessible.name: qsTr("Set a webhook secret of your own")
                }
            }

            FieldLabel {
                text: qsTr("Forge")
            }
            // One above the other: side by side they would widen the column past narrow windows.
            ColumnLayout {
                spacing: 4
                Layout.fillWidth: true
                TextField {
                    id: publicUrlField
                    objectName: "publicUrlField"
                    text: hook.publicBase
                    placeholderText: qsTr("https://pando.example.com")
                    selectByMouse: true
                    Layout.fillWidth: true
                    Layout.preferredWidth: 160
                    Accessible.name: qsTr("The address the forge reaches this install at")
                }
                Button {
                    objectName: "registerHookButton"
                    text: qsTr("Register on the forge")
                    enabled: hook.hookPath.length > 0 && !hook.busy
                    onClicked: hook.registerOnForge(publicUrlField.text)
                    Accessible.name: qsTr("Register the webhook on the app's forge with a new secret")
                }
                Note {
                    objectName: "registeredText"
                    // Wraps to the column rather than widening it to the sentence's length.
                    Layout.preferredWidth: 160
                    text: hook.registered.length > 0 ? hook.registered
                                                     : qsTr("Through the app's source connection, with a new secret the forge and Pando share.")
                }
            }
        }

        // The secret just made: here until the tab is left, another is made, or the user is done.
        Frame {
            objectName: "newHookSecret"
            visible: hook.newSecret.length > 0
            Layout.fillWidth: true
            ColumnLayout {
                width: parent.width
                spacing: 8
                Label {
                    id: onceLabel
                    text: qsTr("The new secret. Copy it into the forge now: Pando does not show it again.")
                    color: StateStyle.on(DisplayState.Waiting, onceLabel.palette.window)
                    font.bold: true
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                RowLayout {
                    spacing: 8
                    Layout.fillWidth: true
                    TextField {
                        objectName: "newHookSecretField"
                        text: hook.newSecret
                        readOnly: true
                        selectByMouse: true
                        font.family: "monospace"
                        Layout.fillWidth: true
                        Accessible.name: qsTr("New webhook secret")
                    }
                    Button {
                        objectName: "copyHookSecretButton"
                        text: qsTr("Copy")
                        onClicked: hook.copyNewSecret()
                        Accessible.name: qsTr("Copy the new webhook secret")
                    }
                    Button {
                        objectName: "forgetHookSecretButton"
                        text: qsTr("Done")
                        onClicked: hook.forgetNewSecret()
                        Accessible.name: qsTr("Hide the new webhook secret: it was copied")
                    }
                }
            }
        }

        // Where each forge takes the two: folded away once set up, open while a new secret waits
        // to be pasted.
        Button {
            id: forgeToggle
            objectName: "forgeHintsToggle"
            // Short: a button does not wrap, and the tab must fit a narrow detail pane.
            text: (checked ? "▾ " : "▸ ") + qsTr("Where each forge takes them")
            checkable: true
            flat: true
            Layout.topMargin: 4
            Accessible.name: checked ? qsTr("Hide where each forge takes the address and the secret")
                                     : qsTr("Show where each forge takes the address and the secret")
        }
        Connections {
            target: hook
            function onNewSecretChanged() {
                if (hook.newSecret.length > 0)
                    forgeToggle.checked = true;
            }
        }
        ColumnLayout {
            objectName: "forgeHints"
            visible: forgeToggle.checked
            spacing: 4
            Layout.fillWidth: true
            Layout.leftMargin: 12
            Repeater {
                model: [qsTr("<b>GitHub</b>: repository → Settings → Webhooks → Add webhook: the address as Payload URL, content type application/json, the secret as Secret, just the push event."),
                    qsTr("<b>GitLab</b>: project → Settings → Webhooks: the address as URL, the secret as Secret token, Push events (and Tag push events when the app follows tags)."),
                    qsTr("<b>Gitea, Forgejo</b>: repository → Settings → Webhooks → Add webhook → Gitea (Forgejo): content type application/json, the secret as Secret, Push events."),
                    qsTr("<b>Bitbucket</b>: repository settings → Webhooks → Add webhook: the secret as Secret, trigger Repository push."),
                    qsTr("<b>Azure DevOps</b>: project settings → Service hooks → Web Hooks, event Code pushed: the secret as the basic authentication password (any user name).")]
                delegate: Note {
                    required property string modelData
                    text: modelData
                    textFormat: Text.StyledText
                }
            }
        }

        Section {
            text: qsTr("Previews")
        }
        Note {
            objectName: "noPreviews"
            visible: previews.loaded && previews.count === 0 && previews.error.length === 0
            text: qsTr("No previews. With preview: true in the spec, each pull request to the app's branch gets an app of its own, built from its head and removed when it closes; the forge must send pull request events to the webhook.")
        }
        Note {
            objectName: "previewsError"
            visible: previews.error.length > 0
            text: previews.error
            color: StateStyle.danger
            opacity: 1
        }
        Repeater {
            model: previews
            delegate: RowLayout {
                id: previewRow
                required property int number
                required property string title
                required property string previewApp
                required property string branch
                required property string commit
                required property int displayState
                required property string statusText
                required property string url
                required property string expiresText
                spacing: 8
                Layout.fillWidth: true
                Accessible.name: qsTr("Pull request #%1, %2: preview %3, %4").arg(previewRow.number).arg(previewRow.title)
                                     .arg(previewRow.previewApp).arg(previewRow.statusText)
                StateMark {
                    objectName: "previewState"
                    displayState: previewRow.displayState
                    word: previewRow.statusText
                }
                ColumnLayout {
                    spacing: 2
                    Layout.fillWidth: true
                    Label {
                        objectName: "previewTitle"
                        text: qsTr("#%1 %2").arg(previewRow.number).arg(previewRow.title)
                        // The forge's words (a title, a branch) are shown as written, never as markup.
                        textFormat: Text.PlainText
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                    }
                    Note {
                        objectName: "previewDetail"
                        textFormat: Text.PlainText
                        text: qsTr("%1 at %2 in %3. %4").arg(previewRow.branch).arg(previewRow.commit)
                                  .arg(previewRow.previewApp).arg(previewRow.expiresText)
                    }
                }
                Button {
                    objectName: "openPreview"
                    text: qsTr("Open")
                    enabled: previewRow.url.length > 0
                    onClicked: Qt.openUrlExternally(previewRow.url)
                    Accessible.name: qsTr("Open the preview of pull request #%1").arg(previewRow.number)
                }
                Button {
                    objectName: "removePreview"
                    text: qsTr("Remove…")
                    onClicked: {
                        removePreviewDialog.number = previewRow.number;
                        removePreviewDialog.open();
                    }
                    Accessible.name: qsTr("Remove the preview of pull request #%1").arg(previewRow.number)
                }
            }
        }

        Section {
            text: qsTr("Deliveries, newest first")
        }
        Note {
            objectName: "noDeliveries"
            visible: hook.loaded && hook.count === 0
            text: qsTr("No deliveries yet")
        }
        ListView {
            id: list
            objectName: "deliveriesList"
            visible: hook.count > 0
            Layout.fillWidth: true
            Layout.preferredHeight: contentHeight
            // The tab scrolls as a whole: the list is as tall as its rows.
            interactive: false
            model: hook
            activeFocusOnTab: true
            keyNavigationEnabled: true
            currentIndex: 0
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Webhook deliveries of %1").arg(root.app)
            delegate: ItemDelegate {
                id: row
                required property int index
                required property string received
                required property string forge
                required property string event
                required property string ref
                required property string commit
                required property string outcomeText
                required property int outcomeState
                required property string summary
                width: ListView.view.width
                onClicked: list.currentIndex = index
                // The row the arrow keys are on, while the list has the keyboard.
                background: Rectangle {
                    color: row.palette.highlight
                    opacity: row.ListView.isCurrentItem && list.activeFocus ? 0.25 : 0
                }
                Accessible.name: qsTr("%1: %2 %3 %4 %5, %6. %7").arg(row.received).arg(row.forge).arg(row.event)
                                     .arg(row.ref).arg(row.commit).arg(row.outcomeText).arg(row.summary)
                contentItem: ColumnLayout {
                    spacing: 2
                    RowLayout {
                        spacing: 8
                        Layout.fillWidth: true
                        Label {
                            text: row.received
                            opacity: 0.7
                        }
                        Label {
                            objectName: "deliveryForge"
                            textFormat: Text.PlainText
                            text: qsTr("%1 %2").arg(row.forge).arg(row.event)
                        }
                        Label {
                            objectName: "deliveryRef"
                            textFormat: Text.PlainText
                            text: row.ref
                            elide: Text.ElideMiddle
                            Layout.fillWidth: true
                        }
                        Label {
                            objectName: "deliveryCommit"
                            text: row.commit
                            font.family: "monospace"
                        }
                        StateMark {
                            objectName: "deliveryOutcome"
                            displayState: row.outcomeState
                            word: row.outcomeText
                        }
                    }
                    Label {
                        objectName: "deliverySummary"
                        textFormat: Text.PlainText
                        visible: row.summary.length > 0
                        text: row.summary
                        opacity: 0.8
                        wrapMode: Text.Wrap
                        maximumLineCount: 3
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                        ToolTip.visible: truncated && row.hovered
                        ToolTip.text: row.summary
                    }
                }
            }
        }
    }

    // Tab to a control below the fold scrolls it into view.
    FocusReveal {
        flickable: root.contentItem as Flickable
    }
}
