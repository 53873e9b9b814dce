// The Addresses tab of an app: where people reach it. The stable loopback address every app has,
// then the names the edge serves it at, each a link with its TLS mode and its certificate's state
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
