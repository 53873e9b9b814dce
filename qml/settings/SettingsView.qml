// The Settings view: serving this computer's engine to teammates (off by default) over TLS on a
// chosen address and port, a one-time pairing link for one of the accounts (as text and as a QR
// code) with the certificate's picture to compare by eye, who is connected now, and the settings
// of this computer's engine (EngineSettingsForm), and the install's domain policy with its CA's
// root (DomainSettings). Everything comes from EmbeddedServer, except the install's host-execution
// setting for pipelines, which the shell passes in, and what DomainSettings reads from the session.

pragma ComponentBehavior: Bound
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Pando.Connections
import Pando.Settings
import Pando.States

Pane {
    id: root
    required property EmbeddedServer server
    // The install's host-execution setting in words (PipelinesModel.hostExecutionText).
    property string hostExecutionText: ""
    // What members' apps may use of the install (PipelinesModel.appAccessText).
    property string appAccessText: ""
    // The keys apps verify identity assertions with, in words (RuntimesStatus.assertionKeysText).
    property string assertionKeysText: ""
    // This computer's engine's settings (Desktop.engineSettings); null or unavailable when the
    // window shows a remote install, whose settings are its pandod's flags.
    property EngineSettingsForm engineSettings: null
    // The session shown (Desktop.apps.session): the install's domain settings and its CA.
    property QtObject session: null
    property alias domainSettings: domains

    DomainSettings {
        id: domains
        session: root.session
    }

    FileDialog {
        id: caDialog
        objectName: "caDialog"
        parentWindow: root.Window.window
        title: qsTr("Save the install CA's root certificate")
        fileMode: FileDialog.SaveFile
        defaultSuffix: "crt"
        nameFilters: [qsTr("Certificates (*.crt *.pem)"), qsTr("All files (*)")]
        onAccepted: domains.saveCa(selectedFile)
    }

    ScrollView {
        id: scroll
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: parent.width
            spacing: 12

            Label {
                text: qsTr("Settings")
                font.pointSize: 18
                font.bold: true
            }

            GroupBox {
                objectName: "pipelinesGroup"
                title: qsTr("Pipelines")
                Layout.fillWidth: true

                ColumnLayout {
                    anchors.fill: parent
                    Label {
                        objectName: "hostExecution"
                        text: qsTr("Tasks on this computer (outside containers): %1").arg(
                                  root.hostExecutionText.length > 0 ? root.hostExecutionText : qsTr("unknown"))
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    Label {
                        text: qsTr("Administrators change it with: pando settings set host-execution on|off, and allow a pipeline with: pando pipelines host-execution NAME allow")
                        wrapMode: Text.Wrap
                        opacity: 0.8
                        Layout.fillWidth: true
                    }
                }
            }

            GroupBox {
                objectName: "appsGroup"
                title: qsTr("Apps")
                Layout.fillWidth: true

                ColumnLayout {
                    anchors.fill: parent
                    Label {
                        objectName: "appAccess"
                        text: qsTr("Apps whose spec a member writes may use: %1").arg(
                                  root.appAccessText.length > 0 ? root.appAccessText : qsTr("unknown"))
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    Label {
                        text: qsTr("Administrators' apps may use all of it. Administrators change it with: pando settings set local-repositories|ssh-agent|internal-hosts on|off, or member-ports FIRST-LAST|none")
                        wrapMode: Text.Wrap
                        opacity: 0.8
                        Layout.fillWidth: true
                    }
                }
            }

            // The install's domain policy (administrators change it) and its CA's root.
            GroupBox {
                id: domainsGroup
                objectName: "domainsGroup"
                title: qsTr("Domains")
                Layout.fillWidth: true
                visible: root.session !== null

                GridLayout {
                    anchors.fill: parent
                    columns: 2
                    columnSpacing: 12
                    rowSpacing: 6

                    Label {
                        Layout.columnSpan: 2
                        Layout.fillWidth: true
                        text: qsTr("Which names apps may be served at. An app names its own in route.domains of its spec; with a base domain, an app without names is served at APP.BASE-DOMAIN.")
                        wrapMode: Text.Wrap
                        opacity: 0.8
                    }

                    Label {
                        text: qsTr("Base domain")
                    }
                    TextField {
                        id: baseDomainField
                        objectName: "baseDomainField"
                        Layout.fillWidth: true
                        visible: domains.canEdit
                        text: domains.baseDomain
                        placeholderText: qsTr("none (apps.example.com, …)")
                        Accessible.name: qsTr("Base domain")
                    }
                    Label {
                        objectName: "baseDomainText"
                        Layout.fillWidth: true
                        visible: !domains.canEdit
                        text: domains.baseDomain.length > 0 ? domains.baseDomain : qsTr("none")
                        wrapMode: Text.WrapAnywhere
                    }
                    // The API's "where" for a refused change: the error beside its field.
                    Label {
                        objectName: "baseDomainError"
                        Layout.columnSpan: 2
                        Layout.fillWidth: true
                        visible: domains.error.length > 0 && domains.errorField.startsWith("base_domain")
                        text: domains.error
                        color: StateStyle.danger
                        wrapMode: Text.Wrap
                    }

                    Label {
                        text: qsTr("Allowed domains")
                    }
                    TextField {
                        id: allowedDomainsField
                        objectName: "allowedDomainsField"
                        Layout.fillWidth: true
                        visible: domains.canEdit
                        text: domains.allowedDomains
                        placeholderText: qsTr("any name (or: example.com, example.org)")
                        Accessible.name: qsTr("Allowed domains, separated by commas")
                    }
                    Label {
                        objectName: "allowedDomainsText"
                        Layout.fillWidth: true
                        visible: !domains.canEdit
                        text: domains.allowedDomains.length > 0 ? domains.allowedDomains : qsTr("any name")
                        wrapMode: Text.Wrap
                    }
                    // The API's "where" for a refused change: the error beside its field.
                    Label {
                        objectName: "allowedDomainsError"
                        Layout.columnSpan: 2
                        Layout.fillWidth: true
                        visible: domains.error.length > 0 && domains.errorField.startsWith("allowed_domains")
                        text: domains.error
                        color: StateStyle.danger
                        wrapMode: Text.Wrap
                    }

                    Label {
                        text: qsTr("Wildcard names")
                    }
                    Switch {
                        id: wildcardSwitch
                        objectName: "wildcardSwitch"
                        enabled: domains.canEdit
                        checked: domains.wildcardDomains
                        text: checked ? qsTr("allowed (*.name in route.domains)") : qsTr("not allowed")
                        Accessible.name: qsTr("Allow wildcard names")
                    }
                    // The API's "where" for a refused change: the error beside its field.
                    Label {
                        objectName: "wildcardDomainsError"
                        Layout.columnSpan: 2
                        Layout.fillWidth: true
                        visible: domains.error.length > 0 && domains.errorField.startsWith("wildcard_domains")
                        text: domains.error
                        color: StateStyle.danger
                        wrapMode: Text.Wrap
                    }

                    Label {
                        objectName: "domainsError"
                        Layout.columnSpan: 2
                        Layout.fillWidth: true
                        visible: domains.error.length > 0 && !domains.errorField.startsWith("base_domain")
                                 && !domains.errorField.startsWith("allowed_domains")
                                 && !domains.errorField.startsWith("wildcard_domains")
                        text: domains.error
                        color: StateStyle.danger
                        wrapMode: Text.Wrap
                    }
                    Label {
                        objectName: "domainsReadOnly"
                        Layout.columnSpan: 2
                        Layout.fillWidth: true
                        visible: domains.loaded && !domains.canEdit
                        text: qsTr("Only administrators change these (in the desktop, or with: pando settings set base-domain|allowed-domains|wildcard-domains).")
                        wrapMode: Text.Wrap
                        opacity: 0.8
                    }
                    RowLayout {
                        Layout.columnSpan: 2
                        visible: domains.canEdit
                        Button {
                            objectName: "saveDomains"
                            text: qsTr("Save")
                            enabled: !domains.busy
                            Accessible.name: qsTr("Save the domain settings")
                            onClicked: domains.save(baseDomainField.text, allowedDomainsField.text, wildcardSwitch.checked)
                        }
                        Label {
                            objectName: "domainsStatus"
                            text: domains.status
                        }
                    }

                    Label {
                        text: qsTr("Install CA")
                    }
                    RowLayout {
                        Layout.fillWidth: true
                        Button {
                            objectName: "saveCaButton"
                            text: qsTr("Save root certificate…")
                            enabled: domains.caAvailable
                            Accessible.name: qsTr("Save the install CA's root certificate to a file")
                            onClicked: caDialog.open()
                        }
                        Label {
                            id: caTextLabel
                            objectName: "caText"
                            Layout.fillWidth: true
                            text: domains.caText
                            color: domains.caFailed ? StateStyle.danger : caTextLabel.palette.windowText
                            wrapMode: Text.Wrap
                        }
                    }
                    Label {
                        Layout.columnSpan: 2
                        Layout.fillWidth: true
                        text: qsTr("Names served with tls: internal have certificates from the install CA: add its root where you trust certificates (a browser, the system's store).")
                        wrapMode: Text.Wrap
                        opacity: 0.8
                    }
                }
            }

            // pandod's engine flags, for the engine this desktop runs itself.
            GroupBox {
                objectName: "assertionsGroup"
                title: qsTr("Identity assertions")
                Layout.fillWidth: true

                ColumnLayout {
                    anchors.fill: parent
                    Label {
                        text: qsTr("Apps that ask for it get only signed-in people's requests, each with an X-Pando-Assertion header naming the person; they verify it with the keys at /.well-known/jwks.json on this install (see the user guide, The edge).")
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    Label {
                        objectName: "assertionKeys"
                        text: qsTr("Keys: %1").arg(root.assertionKeysText.length > 0 ? root.assertionKeysText : qsTr("unknown"))
                        wrapMode: Text.WrapAnywhere
                        Layout.fillWidth: true
                    }
                    Label {
                        text: qsTr("The signing key is replaced every 7 days unless pandod was started with another --assertion-key-days. Administrators replace it at once with: pando edge rotate-key")
                        wrapMode: Text.Wrap
                        opacity: 0.8
                        Layout.fillWidth: true
                    }
                }
            }

            GroupBox {
                id: engineGroup
                objectName: "engineGroup"
                title: qsTr("This computer's engine")
                Layout.fillWidth: true
                visible: root.engineSettings !== null && root.engineSettings.available

                GridLayout {
                    anchors.fill: parent
                    columns: 2
                    columnSpacing: 12
                    rowSpacing: 6

                    Label {
                        text: qsTr("Apps a member may own")
                    }
                    TextField {
                        id: appLimitField
                        objectName: "appLimitField"
                        Layout.fillWidth: true
                        text: root.engineSettings ? root.engineSettings.appLimit : ""
                        placeholderText: qsTr("10 (the default)")
                        Accessible.name: qsTr("Apps a member may own")
                    }
                    Label {
                        text: qsTr("Pipeline runs at once")
                    }
                    TextField {
                        id: maxRunsField
                        objectName: "maxRunsField"
                        Layout.fillWidth: true
                        text: root.engineSettings ? root.engineSettings.maxRuns : ""
                        placeholderText: qsTr("4 (the default)")
                        Accessible.name: qsTr("Pipeline runs at once")
                    }
                    Label {
                        text: qsTr("Approval policy file")
                    }
                    TextField {
                        id: policyField
                        objectName: "approvalPolicyField"
                        Layout.fillWidth: true
                        text: root.engineSettings ? root.engineSettings.approvalPolicy : ""
                        placeholderText: qsTr("none: no deploy waits for sign-off")
                        Accessible.name: qsTr("Approval policy file")
                    }
                    Label {
                        text: qsTr("An approval waits")
                    }
                    TextField {
                        id: ttlField
                        objectName: "approvalTtlField"
                        Layout.fillWidth: true
                        text: root.engineSettings ? root.engineSettings.approvalTtl : ""
                        placeholderText: qsTr("24h (the default; 30m, 7d, …)")
                        Accessible.name: qsTr("How long an approval waits")
                    }
                    Label {
                        text: qsTr("Audit sinks file")
                    }
                    TextField {
                        id: sinksField
                        objectName: "auditSinksField"
                        Layout.fillWidth: true
                        text: root.engineSettings ? root.engineSettings.auditSinks : ""
                        placeholderText: qsTr("none: the audit log stays here")
                        Accessible.name: qsTr("Audit sinks file")
                    }
                    Label {
                        text: qsTr("Apps are served by")
                    }
                    ComboBox {
                        id: edgeField
                        objectName: "edgeField"
                        Layout.fillWidth: true
                        textRole: "text"
                        valueRole: "value"
                        model: [
                            { value: "", text: qsTr("Caddy when it is installed (the default)") },
                            { value: "caddy", text: qsTr("Caddy: apps keep answering while Pando is closed") },
                            { value: "in-process", text: qsTr("Pando itself: apps stop when Pando quits") },
                            { value: "traefik", text: qsTr("A Traefik you run: Pando writes its configuration") },
                            { value: "cloudflare", text: qsTr("Cloudflare Tunnel: apps on your domain, no open port") }
                        ]
                        currentIndex: root.engineSettings ? Math.max(0, indexOfValue(root.engineSettings.edge)) : 0
                        Accessible.name: qsTr("Apps are served by")
                    }
                    // The chosen edge's own settings (docs/edge.md), named as pandod's flags.
                    ColumnLayout {
                        id: edgeOptionFields
                        objectName: "edgeOptionFields"
                        Layout.columnSpan: 2
                        Layout.fillWidth: true
                        visible: edgeOptionRepeater.count > 0
                        spacing: 6
                        property var edited: ({})
                        function values() {
                            const all = root.engineSettings ? Object.assign({}, root.engineSettings.edgeOptions) : {}
                            for (const name in edited)
                                all[name] = edited[name]
                            return all
                        }
                        Repeater {
                            id: edgeOptionRepeater
                            model: {
                                if (edgeField.currentValue === "traefik")
                                    return [
                                        { name: "traefik-dir", label: qsTr("Traefik's configuration folder"),
                                          hint: qsTr("the folder its file provider watches (required)") },
                                        { name: "traefik-resolver", label: qsTr("Certificate resolver"),
                                          hint: qsTr("pando (the default)") },
                                        { name: "traefik-certs", label: qsTr("Certificates for internal names"),
                                          hint: qsTr("a folder of HOST.crt and HOST.key (optional)") }
                                    ]
                                if (edgeField.currentValue === "cloudflare")
                                    return [
                                        { name: "cloudflare-account", label: qsTr("Account id"),
                                          hint: qsTr("32 hex digits, from the dashboard") },
                                        { name: "cloudflare-tunnel", label: qsTr("Tunnel id"),
                                          hint: qsTr("a remotely-managed tunnel's UUID") },
                                        { name: "cloudflare-zone", label: qsTr("Zone id"),
                                          hint: qsTr("the zone apps' names are in") },
                                        { name: "cloudflare-token-file", label: qsTr("API token file"),
                                          hint: qsTr("a file only you may read that holds the token") },
                                        { name: "cloudflared", label: qsTr("cloudflared program"),
                                          hint: qsTr("optional: Pando runs the tunnel with it") },
                                        { name: "cloudflare-api", label: qsTr("API address"),
                                          hint: qsTr("Cloudflare's (the default)") }
                                    ]
                                return []
                            }
                            delegate: RowLayout {
                                id: option
                                required property var modelData
                                Layout.fillWidth: true
                                spacing: 12
                                Label {
                                    text: option.modelData.label
                                    Layout.preferredWidth: Math.max(implicitWidth, 160)
                                }
                                TextField {
                                    objectName: "edgeOption-" + option.modelData.name
                                    Layout.fillWidth: true
                                    text: root.engineSettings && root.engineSettings.edgeOptions[option.modelData.name] !== undefined
                                          ? root.engineSettings.edgeOptions[option.modelData.name] : ""
                                    placeholderText: option.modelData.hint
                                    Accessible.name: option.modelData.label
                                    onTextEdited: edgeOptionFields.edited[option.modelData.name] = text
                                }
                            }
                        }
                    }
                    Label {
                        objectName: "engineSettingsError"
                        Layout.columnSpan: 2
                        Layout.fillWidth: true
                        visible: root.engineSettings !== null && root.engineSettings.error.length > 0
                        text: root.engineSettings ? root.engineSettings.error : ""
                        color: StateStyle.danger
                        wrapMode: Text.Wrap
                    }
                    Label {
                        objectName: "engineRestartNote"
                        Layout.columnSpan: 2
                        Layout.fillWidth: true
                        visible: root.engineSettings !== null && root.engineSettings.restartNeeded
                        text: qsTr("Saved. The engine reads these when it starts: quit Pando from the tray and start it again to apply them.")
                        wrapMode: Text.Wrap
                    }
                    Button {
                        objectName: "saveEngineSettings"
                        Layout.columnSpan: 2
                        text: qsTr("Save")
                        onClicked: root.engineSettings.save(appLimitField.text, maxRunsField.text, policyField.text, ttlField.text,
                                                            sinksField.text, edgeField.currentValue, edgeOptionFields.values())
                    }
                }
            }

            GroupBox {
                title: qsTr("Serve teammates")
                Layout.fillWidth: true
                enabled: root.server.available

                GridLayout {
                    anchors.fill: parent
                    columns: 2
                    columnSpacing: 8
                    rowSpacing: 8

                    Switch {
                        id: serveSwitch
                        objectName: "serveSwitch"
                        text: qsTr("Let teammates use this computer's engine")
                        checked: root.server.enabled
                        onToggled: {
                            root.server.address = addressField.text
                            root.server.port = portField.value
                            root.server.enabled = checked
                        }
                        Layout.columnSpan: 2
                    }
                    Label {
                        id: addressLabel
                        text: qsTr("Address")
                    }
                    TextField {
                        id: addressField
                        objectName: "serverAddress"
                        Accessible.name: addressLabel.text
                        text: root.server.address
                        placeholderText: qsTr("0.0.0.0 for every network")
                        Layout.preferredWidth: 240
                    }
                    Label {
                        id: portLabel
                        text: qsTr("Port")
                    }
                    SpinBox {
                        id: portField
                        objectName: "serverPort"
                        Accessible.name: portLabel.text
                        from: 1
                        to: 65535
                        editable: true
                        value: root.server.port
                        textFromValue: function(value) { return String(value) }
                    }
                    Item {
                        Layout.preferredWidth: 1
                    }
                    Button {
                        objectName: "applyButton"
                        text: qsTr("Apply")
                        enabled: root.server.enabled && !root.server.busy
                        onClicked: {
                            root.server.address = addressField.text
                            root.server.port = portField.value
                            root.server.apply()
                        }
                    }
                    Label {
                        objectName: "serverStatus"
                        text: root.server.status
                        wrapMode: Text.Wrap
                        color: root.server.error.length > 0 ? StateStyle.danger : palette.windowText
                        Layout.columnSpan: 2
                        Layout.fillWidth: true
                    }
                    Label {
                        visible: root.server.running
                        text: qsTr("Teammates get their own accounts and roles; each pairs once with a link made for their account. Nothing changes for you while this is off.")
                        wrapMode: Text.Wrap
                        opacity: 0.8
                        Layout.columnSpan: 2
                        Layout.fillWidth: true
                    }
                }
            }

            GroupBox {
                id: pairGroup
                objectName: "pairGroup"
                title: qsTr("Pair a teammate")
                visible: root.server.running
                Layout.fillWidth: true

                RowLayout {
                    anchors.fill: parent
                    spacing: 16

                    GridLayout {
                        columns: 2
                        columnSpacing: 8
                        rowSpacing: 8
                        Layout.fillWidth: true
                        Layout.alignment: Qt.AlignTop

                        Label {
                            id: accountLabel
                            text: qsTr("Account")
                        }
                        RowLayout {
                            spacing: 8
                            ComboBox {
                                id: accountBox
                                objectName: "accountBox"
                                Accessible.name: accountLabel.text
                                model: root.server.accounts
                                Layout.preferredWidth: 200
                            }
                            Button {
                                objectName: "makePairingLinkButton"
                                text: qsTr("Make pairing link")
                                enabled: accountBox.currentText.length > 0
                                onClicked: root.server.makePairingLink(accountBox.currentText)
                            }
                        }
                        Label {
                            text: qsTr("Link")
                        }
                        RowLayout {
                            spacing: 8
                            Layout.fillWidth: true
                            TextField {
                                objectName: "pairingLinkField"
                                Accessible.name: qsTr("Pairing link")
                                text: root.server.pairingLink
                                readOnly: true
                                selectByMouse: true
                                placeholderText: qsTr("choose an account and make a link")
                                Layout.fillWidth: true
                            }
                            Button {
                                objectName: "copyPairingLink"
                                text: qsTr("Copy")
                                Accessible.name: qsTr("Copy the pairing link")
                                enabled: root.server.pairingLink.length > 0
                                onClicked: root.server.copyPairingLink()
                            }
                        }
                        Item {
                            Layout.preferredWidth: 1
                        }
                        Label {
                            text: root.server.pairingText
                            wrapMode: Text.Wrap
                            opacity: 0.8
                            Layout.fillWidth: true
                        }
                        Label {
                            text: qsTr("Fingerprint")
                        }
                        Label {
                            text: root.server.fingerprint
                            font.family: "monospace"
                            wrapMode: Text.WrapAnywhere
                            Layout.fillWidth: true
                        }
                    }
                    ColumnLayout {
                        spacing: 4
                        Layout.alignment: Qt.AlignTop
                        // The link itself as a QR code, for a camera; dark on light in any theme.
                        QrCode {
                            id: qrCode
                            objectName: "pairingQrCode"
                            text: root.server.pairingLink
                            visible: qrCode.modules > 0
                            Layout.preferredWidth: qrCode.implicitWidth
                            Layout.preferredHeight: qrCode.implicitHeight
                            Accessible.role: Accessible.Graphic
                            Accessible.name: qsTr("QR code of the pairing link")
                        }
                        Label {
                            visible: qrCode.error.length > 0
                            text: qrCode.error
                            color: StateStyle.danger
                            wrapMode: Text.Wrap
                            Layout.fillWidth: true
                        }
                        Label {
                            objectName: "fingerprintArt"
                            text: root.server.fingerprintArt
                            font.family: "monospace"
                        }
                        Label {
                            text: qsTr("Your teammate's Connections view shows the same picture for this install.")
                            opacity: 0.7
                        }
                    }
                }
            }

            GroupBox {
                title: qsTr("Connected now")
                visible: root.server.running
                Layout.fillWidth: true

                ColumnLayout {
                    anchors.fill: parent
                    spacing: 4
                    Label {
                        visible: root.server.connected.empty
                        text: root.server.connected.error.length > 0 ? root.server.connected.error : qsTr("Nobody is connected.")
                        opacity: 0.7
                    }
                    Repeater {
                        model: root.server.connected
                        delegate: RowLayout {
                            id: who
                            required property string account
                            required property string address
                            required property string sinceText
                            spacing: 12
                            Label {
                                text: who.account
                                font.bold: true
                            }
                            Label {
                                text: who.address
                            }
                            Label {
                                text: who.sinceText
                                opacity: 0.7
                            }
                        }
                    }
                }
            }
        }
    }

    // Tab to a control below the fold scrolls it into view; so does a new pairing link, with its
    // QR code and the certificate's picture.
    FocusReveal {
        id: reveal
        flickable: scroll.contentItem as Flickable
    }
    Connections {
        target: root.server
        function onPairingChanged() {
            if (root.server.pairingLink.length > 0) {
                revealWindow.restart();
                revealPairing.start();
            }
        }
    }
    // Once the group has grown by the code: and again each time it grows in the moment after (the
    // code and the picture are laid out when they are drawn, which a busy machine may delay).
    Connections {
        target: pairGroup
        function onHeightChanged() {
            if (revealWindow.running)
                revealPairing.restart();
        }
    }
    Timer {
        id: revealPairing
        interval: 0
        onTriggered: reveal.reveal(pairGroup)
    }
    Timer {
        id: revealWindow
        interval: 2000
    }
}
