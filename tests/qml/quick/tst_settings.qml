// The Settings view on this computer's own engine: serving teammates is off by default (the switch
// off, nothing to pair); switched on it serves and makes a pairing link; switched off it stops.
import QtQuick
import QtTest
import Pando.Settings
import Pando.Test

Item {
    id: root
    width: 1280
    height: 800

    Component {
        id: settingsView
        SettingsView {
            anchors.fill: parent
        }
    }

    UserTestCase {
        name: "SettingsView"

        function test_embeddedServerIsOffByDefault() {
            const server = Fixture.localServer();
            verify(server.available, "no local engine");
            const view = createTemporaryObject(settingsView, root, {server: server});
            verify(view);
            const serve = named("serveSwitch", view);
            const pair = named("pairGroup", view);
            const status = named("serverStatus", view);
            compare(server.enabled, false);
            compare(server.running, false);
            compare(serve.checked, false);
            verify(serve.enabled, "the switch cannot be used");
            compare(pair.visible, false);
            const offText = status.text;
            verify(offText.length > 0);

            mouseClick(serve);
            tryCompare(server, "running", true, 20000);
            compare(server.error, "");
            tryCompare(pair, "visible", true);
            verify(status.text !== offText, status.text);
            tryVerify(() => server.accounts.indexOf("owner") >= 0, 15000, server.accounts.join(", "));
            const make = named("makePairingLinkButton", view);
            tryCompare(make, "enabled", true);
            mouseClick(make);
            const link = named("pairingLinkField", view);
            tryVerify(() => link.text.startsWith("pando://127.0.0.1:" + server.port + "/pair?"), 15000, link.text);

            mouseClick(serve);
            tryCompare(server, "running", false, 20000);
            compare(server.enabled, false);
            tryCompare(pair, "visible", false);
        }
    }
}
