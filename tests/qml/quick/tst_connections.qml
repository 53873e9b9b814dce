// The Connections view: this computer is listed; a pasted pairing link that is wrong somewhere is
// refused with an error naming the wrong part, and nothing is added.
import QtQuick
import QtTest
import Pando.Connections
import Pando.Shell
import Pando.Test

Item {
    id: root
    width: 1280
    height: 800

    ConnectionsView {
        id: view
        anchors.fill: parent
        connectionsModel: Desktop.connections
    }

    UserTestCase {
        name: "ConnectionsView"
        scope: view

        readonly property string fp: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

        function test_badLinkNamesTheWrongPart_data() {
            return [
                {tag: "scheme", link: "https://pando.lan:7443/pair?fp=" + fp + "&token=pandopair_x", says: "pando://, not https://"},
                {tag: "port", link: "pando://pando.lan/pair?fp=" + fp + "&token=pandopair_x", says: "no port"},
                {tag: "path", link: "pando://pando.lan:7443/join?fp=" + fp + "&token=pandopair_x", says: "path must be /pair"},
                {tag: "fingerprint", link: "pando://pando.lan:7443/pair?fp=abc&token=pandopair_x", says: "fingerprint (fp=) must be 64 hex digits"},
                {tag: "token", link: "pando://pando.lan:7443/pair?fp=" + fp + "&token=abc", says: "pairing code (token=) must start with pandopair_"}
            ];
        }

        function test_badLinkNamesTheWrongPart(row) {
            compare(Desktop.connections.count, 1);
            const field = named("pairingLinkField");
            const error = named("connectionError");
            retype(field, row.link);
            // Editing the link clears the previous refusal.
            compare(error.visible, false);
            const add = named("addConnectionButton");
            tryCompare(add, "enabled", true);
            mouseClick(add);
            tryCompare(error, "visible", true);
            verify(error.text.indexOf(row.says) >= 0, error.text);
            compare(Desktop.connections.count, 1);
        }
    }
}
