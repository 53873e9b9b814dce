// The Addresses tab of an app: where people reach it. The stable loopback address every app has
// (and, on an install elsewhere, a forward to it from this computer), then the names the edge serves it at, each a link with its TLS mode and its certificate's state
// (issued by whom and until when, not issued yet, or the edge's error in the failure colour);
// addresses the app moved away from say that they redirect. With no names, it says how to give
// the app one.
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Apps
import Pando.States

ColumnLayout {
    id: root
    required property QtObject session
    required property string app
    property alias addressesModel: addresses
    spacing: 8

    AppAddressesModel {
        id: addresses
        session: root.session
        app: root.app
    }

    // A URL people click: opens it in the browser, by mouse or by keyboard (Enter or Space).
    component Link: Label {
        id: link
        required property string url
        text: "<a href=\"" + link.url + "\">" + link.url + "</a>"
        textFormat: Text.StyledText
        wrapMode: Text.WrapAnywhere
        activeFocusOnTab: true
        Accessible.role: Accessible.Link
        Accessible.name: qsTr("Open %1").arg(link.url)
        onLinkActivated: target => Qt.openUrlExternally(target)
        Keys.onReturnPressed: Qt.openUrlExternally(link.url)
        Keys.onSpacePressed: Qt.openUrlExternally(link.url)
        FocusRing {
            target: link
        }
        MouseArea {
            anchors.fill: parent
            acceptedButtons: Qt.NoButton
            cursorShape: Qt.PointingHandCursor
        }
    }

    RowLayout {
        Layout.fillWidth: true
        Label {
            text: qsTr("Always, on this machine")
            opacity: 0.7
        }
        Link {
            objectName: "stableUrl"
            visible: addresses.url.length > 0
            url: addresses.url
            Layout.fillWidth: true
        }
        Label {
            visible: addresses.url.length === 0
            text: qsTr("not routed yet")
            Layout.fillWidth: true
        }
        BusyIndicator {
            visible: addresses.loading
            running: visible
            Layout.preferredWidth: 24
            Layout.preferredHeight: 24
        }
        Button {
            objectName: "refreshAddressesButton"
            text: qsTr("Refresh")
            onClicked: addresses.refresh()
            Accessible.name: qsTr("Read the app's addresses again")
        }
    }

    // On an install elsewhere the address above is that machine's own loopback: from this
    // computer the app opens through a forward (AppLink, shared with the detail's link).
    AppLink {
        id: forward
        session: root.session
        app: root.app
        url: addresses.url
    }
    RowLayout {
        visible: forward.forwarded && addresses.url.length > 0
        Layout.fillWidth: true
        Label {
            text: qsTr("From this computer")
            opacity: 0.7
        }
        Label {
            id: forwardLink
            objectName: "forwardLink"
            text: "<a href=\"open\">" + forward.text + "</a>"
            textFormat: Text.StyledText
            wrapMode: Text.WrapAnywhere
            activeFocusOnTab: true
            Accessible.role: Accessible.Link
            Accessible.name: forward.text
            Accessible.description: forward.toolTip
            ToolTip.visible: forwardArea.containsMouse
            ToolTip.text: forward.toolTip
            onLinkActivated: forward.open()
            Keys.onReturnPressed: forward.open()
            Keys.onSpacePressed: forward.open()
            Layout.fillWidth: true
            FocusRing {
                target: forwardLink
            }
            MouseArea {
                id: forwardArea
                anchors.fill: parent
                acceptedButtons: Qt.NoButton
                hoverEnabled: true
                cursorShape: Qt.PointingHandCursor
            }
        }
        Label {
            objectName: "forwardError"
            visible: forward.error.length > 0
            text: forward.error
            color: StateStyle.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
    }

    Label {
        objectName: "signInOnly"
        visible: addresses.signInOnly
        text: qsTr("Only people signed in to Pando who may see %1 reach it, at every address: a browser is asked to sign in on the app's own name, and the app gets an X-Pando-Assertion header saying who is asking.").arg(root.app)
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }

    Label {
        objectName: "addressesError"
        visible: addresses.error.length > 0
        text: addresses.error
        color: StateStyle.danger
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }

    Label {
        objectName: "addressesEmpty"
        visible: addresses.loaded && addresses.count === 0 && addresses.error.length === 0
        text: qsTr("%1 has no names yet. To serve it at a domain, list the names under route.domains in its spec (the Settings tab), for example \"route: {domains: [shop.example.com]}\", and deploy it; or have an administrator set a base domain in Settings, which serves every app at APP.BASE-DOMAIN. Names need the Caddy edge.").arg(root.app)
        wrapMode: Text.Wrap
        opacity: 0.8
        Layout.fillWidth: true
    }

    ListView {
        id: list
        objectName: "addressesList"
        Layout.fillWidth: true
        Layout.fillHeight: true
        visible: addresses.count > 0
        clip: true
        spacing: 8
        model: addresses
        Accessible.role: Accessible.List
        Accessible.name: qsTr("Addresses of %1").arg(root.app)
        ScrollBar.vertical: ScrollBar {}
        delegate: ColumnLayout {
            id: row
            required property string url
            required property string tlsText
            required property bool moved
            required property string certificateText
            required property int certificateState
            width: ListView.view.width
            spacing: 2
            Link {
                objectName: "addressUrl"
                url: row.url
                Layout.fillWidth: true
            }
            Label {
                objectName: "addressTls"
                text: row.tlsText
                opacity: 0.8
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Label {
                id: certificate
                objectName: "addressCertificate"
                text: row.certificateText
                color: row.certificateState === DisplayState.Failed ? StateStyle.danger : certificate.palette.windowText
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Label {
                objectName: "addressMoved"
                visible: row.moved
                text: qsTr("moved: redirects to the app's current address")
                opacity: 0.8
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }
    }
}
