// The Settings view on this computer's own engine: serving teammates is off by default (the switch
// off, nothing to pair); switched on it serves and makes a pairing link, shown as text and as a QR
// code; switched off it stops.
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

            // The link as a QR code beside the certificate's picture: a real code of that text
            // (17 + 4 × version modules a side), dark on light even in a dark palette, with the
            // light quiet zone around it and the top-left finder pattern inside.
            const qr = named("pairingQrCode", view);
            tryCompare(qr, "visible", true);
            compare(qr.text, link.text);
            compare(qr.error, "");
            verify(qr.version >= 1 && qr.modules === 17 + 4 * qr.version, qr.modules + " modules, version " + qr.version);
            verify(named("fingerprintArt", view).text.length > 0, "no certificate picture");
            view.palette.window = "#202020";
            view.palette.base = "#202020";
            view.palette.windowText = "#f0f0f0";
            const module = Math.floor(Math.min(qr.width, qr.height) / (qr.modules + 8));
            verify(module >= 2, "modules " + module + " px wide");
            tryVerify(() => {
                const at = qr.mapToItem(null, 0, 0);
                return at.y >= 0 && at.y + qr.height <= root.height;
            }, 5000, "the QR code is not scrolled into view");
            const image = Fixture.grabItem(qr);
            const light = (x, y) => Fixture.pixel(image, x, y) === "#ffffff";
            const dark = (x, y) => Fixture.pixel(image, x, y) === "#000000";
            const side = (qr.modules + 8) * module;
            for (let i = 0; i < side; i += module) {
                verify(light(i, 1) && light(1, i) && light(i, side - 2) && light(side - 2, i), "the quiet zone is not light at " + i);
                verify(light(i, 4 * module - 1), "the quiet zone is not four modules deep at " + i);
            }
            verify(dark(4 * module, 4 * module) && dark(10 * module + module - 1, 4 * module), "no finder pattern's dark ring");
            verify(light(5 * module, 5 * module) && dark(6 * module, 6 * module), "no finder pattern's light ring and centre");

            mouseClick(serve);
            tryCompare(server, "running", false, 20000);
            compare(server.enabled, false);
            tryCompare(pair, "visible", false);
        }

        // Choosing Cloudflare Tunnel asks for its account, tunnel, zone and token file; a wrong id
        // is named and nothing is kept; right ones are kept for the engine's next start.
        function test_anEdgesOwnSettingsAreAskedFor() {
            const form = Fixture.engineSettings();
            const view = createTemporaryObject(settingsView, root, {server: Fixture.localServer(), engineSettings: form});
            verify(view);
            const edge = named("edgeField", view);
            const fields = named("edgeOptionFields", view);
            verify(!fields.visible, "edge settings shown for Caddy");
            edge.currentIndex = edge.indexOfValue("cloudflare");
            tryVerify(() => findChild(view, "edgeOption-cloudflare-account") !== null);
            verify(fields.visible);
            verify(findChild(view, "edgeOption-traefik-dir") === null, "Traefik's settings shown for Cloudflare");

            const type = (name, text) => {
                const field = named("edgeOption-" + name, view);
                tryVerify(() => {
                    const at = field.mapToItem(null, 0, 0);
                    return at.y >= 0 && at.y + field.height <= root.height;
                }, 5000, name + " is not scrolled into view");
                field.forceActiveFocus();
                keyClick(Qt.Key_A, Qt.ControlModifier);
                typeText(text);
                compare(field.text, text);
            };
            type("cloudflare-account", "12345");
            type("cloudflare-tunnel", "c1744f8b-faa1-48a4-9e5c-02ac921467fa");
            type("cloudflare-zone", "fedcba9876543210fedcba9876543210");
            const token = Fixture.temporaryPath("cf.token");
            type("cloudflare-token-file", token);
            mouseClick(named("saveEngineSettings", view));
            tryCompare(form, "errorSetting", "cloudflare-account");
            verify(named("engineSettingsError", view).visible);
            compare(form.edge, "");

            type("cloudflare-account", "0123456789abcdef0123456789abcdef");
            mouseClick(named("saveEngineSettings", view));
            // The token file does not exist yet: named too.
            tryCompare(form, "errorSetting", "cloudflare-token-file");
        }
    }
}
