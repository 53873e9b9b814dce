// The Sources view: the install's source connections — the forges and the tokens or deploy keys
// that read private repositories (docs/user-guide.md, "Private repositories"), and the registry
// logins that pull private images ("Private images"). The list shows each connection the user may
// use with what its last test said; the selected one can be tested on a repository (a registry's
// on an image) and removed, and the repositories its forge's API shows listed, each with
// "Create app…" (which asks the window for the New app dialog, filled in); the form below adds
// one. Refusals come back beside what they are about. Everything it shows and does goes through
// SourcesModel and SourceRepositoriesModel.
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Sources
import Pando.States

Pane {
    id: root
    required property SourcesModel sourcesModel
    property string selectedName: ""

    // The forges whose OAuth applications Pando takes (Bitbucket: Cloud).
    function takesOAuth(kind: string): bool {
        return kind === "github" || kind === "gitlab" || kind === "gitea" || kind === "bitbucket";
    }
    // "Create app…" on a repository: the window opens the New app dialog with these filled in.
    signal createAppRequested(string name, string repo, string ref, string connection)

    onVisibleChanged: if (visible)
        root.sourcesModel.refresh()

    SourceRepositoriesModel {
        id: repositories
        session: root.sourcesModel.session
        connection: root.selectedName
    }

    Connections {
        target: root.sourcesModel
        function onAdded(name: string) {
            tokenField.text = "";
            keyArea.text = "";
            appKeyArea.text = "";
            clientSecretField.text = "";
            root.selectedName = name;
        }
    }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: parent.width
            spacing: 12

            Label {
                text: qsTr("Sources")
                font.pointSize: 18
                font.bold: true
            }
            Label {
                text: qsTr("A source connection reads private repositories: a forge's address with a token, a deploy key, a GitHub App installation, or an OAuth application you authorize in the browser. Apps whose repository it covers read through it from their next create or update. The token or key is never shown again.")
                wrapMode: Text.Wrap
                opacity: 0.8
                Layout.fillWidth: true
            }

            Label {
                objectName: "noSources"
                visible: root.sourcesModel.empty
                text: qsTr("No source connections you may use yet. Public repositories need none.")
                opacity: 0.8
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Label {
                visible: root.sourcesModel.error.length > 0
                text: root.sourcesModel.error
                color: StateStyle.danger
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }

            ListView {
                id: list
                objectName: "sourcesList"
                visible: !root.sourcesModel.empty
                model: root.sourcesModel
                interactive: false
                implicitHeight: contentHeight
                Layout.fillWidth: true
                activeFocusOnTab: true
                Accessible.role: Accessible.List
                Accessible.name: qsTr("Source connections")
                keyNavigationEnabled: true
                onCurrentIndexChanged: if (currentItem)
                    root.selectedName = (currentItem as ItemDelegate).text

                delegate: ItemDelegate {
                    id: row
                    required property int index
                    required property string name
                    required property string kind
                    required property string url
                    required property string owner
                    required property string authText
                    required property string checkText
                    required property int displayState
                    width: ListView.view.width
                    text: name
                    highlighted: root.selectedName === name
                    onClicked: {
                        list.currentIndex = index;
                        root.selectedName = name;
                    }
                    Accessible.name: qsTr("%1, %2 at %3, %4").arg(name).arg(kind).arg(url).arg(checkText)
                    contentItem: RowLayout {
                        spacing: 12
                        StateMark {
                            displayState: row.displayState
                            showWord: false
                            background: row.highlighted ? row.palette.highlight : row.palette.window
                            Layout.alignment: Qt.AlignTop
                        }
                        ColumnLayout {
                            spacing: 2
                            Layout.fillWidth: true
                            Label {
                                text: row.name
                                font.bold: true
                                elide: Text.ElideRight
                                Layout.fillWidth: true
                            }
                            Label {
                                text: row.owner.length > 0 ? qsTr("%1 · %2 · owner %3").arg(row.kind).arg(row.url).arg(row.owner)
                                                           : qsTr("%1 · %2").arg(row.kind).arg(row.url)
                                elide: Text.ElideRight
                                opacity: 0.8
                                Layout.fillWidth: true
                            }
                            Label {
                                text: qsTr("%1 · %2").arg(row.authText).arg(row.checkText)
                                elide: Text.ElideRight
                                maximumLineCount: 1
                                opacity: 0.8
                                Layout.fillWidth: true
                                ToolTip.visible: row.hovered && truncated
                                ToolTip.text: text
                            }
                        }
                    }
                }
            }

            // The selected connection: test it on a repository (a registry's: an image, or its
            // login alone), or remove it.
            GroupBox {
                objectName: "selectedSource"
                visible: root.selectedName.length > 0 && !root.sourcesModel.empty
                title: qsTr("Connection %1").arg(root.selectedName)
                Layout.fillWidth: true
                RowLayout {
                    anchors.fill: parent
                    spacing: 8
                    TextField {
                        id: repoField
                        readonly property bool registry: root.sourcesModel.count >= 0
                                                         && root.sourcesModel.kindOf(root.selectedName) === "registry"
                        objectName: "testRepoField"
                        placeholderText: registry ? qsTr("Image to read, e.g. ghcr.io/acme/api:1.4 (empty: the login alone)")
                                                  : qsTr("Repository to read, e.g. https://github.com/acme/api.git")
                        Accessible.name: registry ? qsTr("Image to test the connection on")
                                                  : qsTr("Repository to test the connection on")
                        Layout.fillWidth: true
                        onAccepted: testButton.clicked()
                    }
                    Button {
                        id: testButton
                        objectName: "testSourceButton"
                        text: qsTr("Test")
                        enabled: !root.sourcesModel.busy && (repoField.registry || repoField.text.trim().length > 0)
                        onClicked: root.sourcesModel.test(root.selectedName, repoField.text)
                    }
                    Button {
                        objectName: "authorizeSourceButton"
                        // An OAuth connection whose renewal the forge refuses is authorized again.
                        visible: root.sourcesModel.count >= 0 && root.sourcesModel.authOf(root.selectedName) === "oauth"
                        text: qsTr("Authorize again…")
                        enabled: !root.sourcesModel.busy
                        onClicked: root.sourcesModel.authorize(root.selectedName)
                    }
                    Button {
                        objectName: "removeSourceButton"
                        text: qsTr("Remove")
                        enabled: !root.sourcesModel.busy
                        onClicked: root.sourcesModel.remove(root.selectedName)
                    }
                }
            }

            // What the selected connection's forge API shows: loaded when asked for. A registry
            // has no repositories.
            GroupBox {
                objectName: "sourceRepositories"
                visible: root.selectedName.length > 0 && !root.sourcesModel.empty
                         && root.sourcesModel.kindOf(root.selectedName) !== "registry"
                title: qsTr("Repositories")
                Layout.fillWidth: true

                ColumnLayout {
                    anchors.fill: parent
                    spacing: 8

                    RowLayout {
                        spacing: 8
                        Layout.fillWidth: true
                        Label {
                            text: repositories.loaded
                                  ? qsTr("%n repository(s) the token of %1 can see", "", repositories.count).arg(root.selectedName)
                                  : qsTr("The repositories the token of %1 can see, from its forge's API (token connections to GitHub, GitLab, Gitea, Bitbucket and Azure DevOps, and GitHub Apps).").arg(root.selectedName)
                            wrapMode: Text.Wrap
                            opacity: 0.8
                            Layout.fillWidth: true
                        }
                        BusyIndicator {
                            objectName: "repositoriesBusy"
                            running: repositories.busy
                            visible: running
                            Layout.preferredWidth: 24
                            Layout.preferredHeight: 24
                        }
                        Button {
                            objectName: "loadRepositoriesButton"
                            text: repositories.loaded ? qsTr("Reload") : qsTr("Show repositories")
                            enabled: !repositories.busy
                            onClicked: repositories.load()
                        }
                    }
                    Label {
                        objectName: "repositoriesError"
                        visible: text.length > 0
                        text: repositories.error
                        color: StateStyle.danger
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    ListView {
                        id: repositoryList
                        objectName: "repositoryList"
                        visible: repositories.count > 0
                        model: repositories
                        interactive: false
                        implicitHeight: contentHeight
                        Layout.fillWidth: true
                        Accessible.role: Accessible.List
                        Accessible.name: qsTr("Repositories of %1").arg(root.selectedName)

                        delegate: ItemDelegate {
                            id: repositoryRow
                            required property string fullName
                            required property string cloneUrl
                            required property string defaultBranch
                            required property string visibilityText
                            required property string appName
                            width: ListView.view.width
                            text: fullName
                            Accessible.name: qsTr("%1, %2, default branch %3").arg(fullName).arg(visibilityText)
                                                 .arg(defaultBranch.length > 0 ? defaultBranch : qsTr("not known"))
                            contentItem: RowLayout {
                                spacing: 12
                                ColumnLayout {
                                    spacing: 2
                                    Layout.fillWidth: true
                                    Label {
                                        text: repositoryRow.fullName
                                        font.bold: true
                                        elide: Text.ElideRight
                                        Layout.fillWidth: true
                                    }
                                    Label {
                                        text: repositoryRow.defaultBranch.length > 0
                                              ? qsTr("%1 · default branch %2 · %3").arg(repositoryRow.visibilityText)
                                                    .arg(repositoryRow.defaultBranch).arg(repositoryRow.cloneUrl)
                                              : qsTr("%1 · %2").arg(repositoryRow.visibilityText).arg(repositoryRow.cloneUrl)
                                        elide: Text.ElideRight
                                        opacity: 0.8
                                        Layout.fillWidth: true
                                    }
                                }
                                Button {
                                    objectName: "createAppFromRepository"
                                    text: qsTr("Create app…")
                                    Accessible.name: qsTr("Create an app from %1").arg(repositoryRow.fullName)
                                    onClicked: root.createAppRequested(repositoryRow.appName, repositoryRow.cloneUrl,
                                                                       repositoryRow.defaultBranch, repositories.connection)
                                }
                            }
                        }
                    }
                }
            }

            Label {
                objectName: "sourcesOutcome"
                visible: text.length > 0
                text: root.sourcesModel.outcome
                color: root.sourcesModel.failed ? StateStyle.danger : palette.windowText
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }

            // An OAuth authorization waits for the forge: its page, for a browser that did not come up.
            RowLayout {
                objectName: "authorizationWaiting"
                visible: root.sourcesModel.authorizeUrl.length > 0
                spacing: 8
                Layout.fillWidth: true
                TextField {
                    objectName: "authorizeUrlField"
                    text: root.sourcesModel.authorizeUrl
                    readOnly: true
                    selectByMouse: true
                    Accessible.name: qsTr("The forge's authorization page, to open in a browser")
                    Layout.fillWidth: true
                }
                Button {
                    objectName: "cancelAuthorizationButton"
                    text: qsTr("Stop waiting")
                    onClicked: root.sourcesModel.cancelAuthorization()
                }
            }

            GroupBox {
                title: qsTr("Add a connection")
                Layout.fillWidth: true

                GridLayout {
                    anchors.fill: parent
                    columns: 2
                    columnSpacing: 8
                    rowSpacing: 8

                    Label {
                        text: qsTr("Name")
                    }
                    TextField {
                        id: nameField
                        objectName: "sourceNameField"
                        placeholderText: qsTr("github")
                        Accessible.name: qsTr("Connection name")
                        Layout.fillWidth: true
                    }
                    Label {
                        text: qsTr("Forge")
                    }
                    ComboBox {
                        id: kindBox
                        objectName: "sourceKindBox"
                        model: root.sourcesModel.kinds
                        // A GitHub App is GitHub's (github.com or GitHub Enterprise Server).
                        enabled: !appChoice.checked
                        // OAuth applications: GitHub, GitLab, Gitea and Forgejo, Bitbucket Cloud.
                        onActivated: if (oauthChoice.checked && !root.takesOAuth(currentText))
                            tokenChoice.checked = true
                        Accessible.name: qsTr("Kind of forge")
                        // A registry takes docker login's user and password or token.
                        onCurrentTextChanged: if (currentText === "registry")
                            tokenChoice.checked = true
                    }
                    Label {
                        text: qsTr("Address")
                    }
                    TextField {
                        id: urlField
                        objectName: "sourceUrlField"
                        placeholderText: kindBox.currentText === "registry" ? qsTr("https://ghcr.io") : qsTr("https://github.com")
                        Accessible.name: qsTr("The forge's address")
                        Layout.fillWidth: true
                    }
                    Label {
                        text: qsTr("Owner")
                    }
                    TextField {
                        id: ownerField
                        placeholderText: qsTr("optional: only this user, organisation or group")
                        Accessible.name: qsTr("Owner")
                        Layout.fillWidth: true
                    }
                    Label {
                        text: qsTr("Credential")
                    }
                    RowLayout {
                        RadioButton {
                            id: tokenChoice
                            objectName: "tokenChoice"
                            text: qsTr("Token (https)")
                            checked: true
                        }
                        RadioButton {
                            id: keyChoice
                            objectName: "keyChoice"
                            text: qsTr("Deploy key (ssh)")
                            enabled: kindBox.currentText !== "registry"
                        }
                        RadioButton {
                            id: appChoice
                            objectName: "appChoice"
                            text: qsTr("GitHub App")
                            enabled: kindBox.currentText !== "registry"
                            onCheckedChanged: if (checked)
                                kindBox.currentIndex = kindBox.find("github")
                        }
                        RadioButton {
                            id: oauthChoice
                            objectName: "oauthChoice"
                            text: qsTr("OAuth app")
                            enabled: root.takesOAuth(kindBox.currentText)
                        }
                    }
                    Label {
                        visible: tokenChoice.checked
                        text: qsTr("User")
                    }
                    TextField {
                        id: userField
                        visible: tokenChoice.checked
                        placeholderText: kindBox.currentText === "registry"
                                         ? qsTr("docker login's user name")
                                         : qsTr("optional for GitHub, GitLab, Bitbucket and Azure DevOps")
                        Accessible.name: qsTr("The account the token is sent with")
                        Layout.fillWidth: true
                    }
                    Label {
                        visible: tokenChoice.checked
                        text: qsTr("Token")
                    }
                    TextField {
                        id: tokenField
                        objectName: "sourceTokenField"
                        visible: tokenChoice.checked
                        echoMode: TextInput.Password
                        Accessible.name: qsTr("Token")
                        Layout.fillWidth: true
                    }
                    Label {
                        visible: keyChoice.checked
                        text: qsTr("Private key")
                        Layout.alignment: Qt.AlignTop
                    }
                    TextArea {
                        id: keyArea
                        objectName: "sourceKeyArea"
                        visible: keyChoice.checked
                        placeholderText: qsTr("-----BEGIN OPENSSH PRIVATE KEY----- … (no passphrase)")
                        Accessible.name: qsTr("Deploy key")
                        font.family: "monospace"
                        Layout.fillWidth: true
                        Layout.preferredHeight: 90
                    }
                    Label {
                        visible: keyChoice.checked
                        text: qsTr("Host keys")
                        Layout.alignment: Qt.AlignTop
                    }
                    TextArea {
                        id: hostsArea
                        objectName: "sourceHostsArea"
                        visible: keyChoice.checked
                        placeholderText: qsTr("what ssh-keyscan prints for the server; check the fingerprints")
                        Accessible.name: qsTr("Host keys")
                        font.family: "monospace"
                        Layout.fillWidth: true
                        Layout.preferredHeight: 60
                    }
                    Label {
                        visible: appChoice.checked
                        text: qsTr("App ID")
                    }
                    TextField {
                        id: appIdField
                        objectName: "sourceAppIdField"
                        visible: appChoice.checked
                        placeholderText: qsTr("the number on the app's settings page")
                        inputMethodHints: Qt.ImhDigitsOnly
                        Accessible.name: qsTr("GitHub App ID")
                        Layout.fillWidth: true
                    }
                    Label {
                        visible: appChoice.checked
                        text: qsTr("Installation ID")
                    }
                    TextField {
                        id: installationField
                        objectName: "sourceInstallationField"
                        visible: appChoice.checked
                        placeholderText: qsTr("the number ending the installation's settings address")
                        inputMethodHints: Qt.ImhDigitsOnly
                        Accessible.name: qsTr("Installation ID")
                        Layout.fillWidth: true
                    }
                    Label {
                        visible: appChoice.checked
                        text: qsTr("App private key")
                        Layout.alignment: Qt.AlignTop
                    }
                    TextArea {
                        id: appKeyArea
                        objectName: "sourceAppKeyArea"
                        visible: appChoice.checked
                        placeholderText: qsTr("-----BEGIN RSA PRIVATE KEY----- … (the .pem GitHub generated)")
                        Accessible.name: qsTr("GitHub App private key")
                        font.family: "monospace"
                        Layout.fillWidth: true
                        Layout.preferredHeight: 90
                    }
                    Label {
                        visible: oauthChoice.checked
                        text: qsTr("Client ID")
                    }
                    TextField {
                        id: clientIdField
                        objectName: "sourceClientIdField"
                        visible: oauthChoice.checked
                        placeholderText: qsTr("from the application's settings on the forge")
                        Accessible.name: qsTr("OAuth client ID")
                        Layout.fillWidth: true
                    }
                    Label {
                        visible: oauthChoice.checked
                        text: qsTr("Client secret")
                    }
                    TextField {
                        id: clientSecretField
                        objectName: "sourceClientSecretField"
                        visible: oauthChoice.checked
                        echoMode: TextInput.Password
                        Accessible.name: qsTr("OAuth client secret")
                        Layout.fillWidth: true
                    }
                    Label {
                        visible: oauthChoice.checked
                        text: qsTr("Register http://127.0.0.1/callback as the application's callback URL. The forge's page opens in your browser.")
                        wrapMode: Text.Wrap
                        opacity: 0.8
                        Layout.columnSpan: 2
                        Layout.fillWidth: true
                    }
                    Item {
                        implicitHeight: 1
                    }
                    Button {
                        objectName: "addSourceButton"
                        text: root.sourcesModel.busy ? qsTr("Working…")
                                                     : oauthChoice.checked ? qsTr("Authorize in browser…") : qsTr("Add connection")
                        enabled: !root.sourcesModel.busy && nameField.text.length > 0 && urlField.text.length > 0
                        onClicked: appChoice.checked
                                   ? root.sourcesModel.addGitHubApp(nameField.text, urlField.text, ownerField.text,
                                                                    appIdField.text, installationField.text, appKeyArea.text)
                                   : oauthChoice.checked
                                   ? root.sourcesModel.addOAuthApp(nameField.text, kindBox.currentText, urlField.text,
                                                                   ownerField.text, clientIdField.text, clientSecretField.text)
                                   : root.sourcesModel.add(nameField.text, kindBox.currentText, urlField.text, ownerField.text,
                                                           tokenChoice.checked ? userField.text : "",
                                                           tokenChoice.checked ? tokenField.text : "",
                                                           keyChoice.checked ? keyArea.text : "",
                                                           keyChoice.checked ? hostsArea.text : "")
                    }
                }
            }
        }
    }
}
