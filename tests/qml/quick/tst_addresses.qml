// Apps on names, as a user sees them at 1024×700: an app's Addresses tab says how to give it a
// domain while it has none; once deployed with names, each is a link with its TLS mode and its
// certificate's state — issued by whom and until when, not issued yet, or the edge's error in the
// failure colour — and a name the app moved away from says it redirects. In Settings, an
// administrator saves the domain policy (and sees a refused value beside its field), a member
// reads it only, and the install CA's root is saved to a file once it exists. The functions run
// in name order and build on each other.
import QtQuick
import QtQuick.Controls
import QtTest
import Pando.Apps
import Pando.Settings
import Pando.States
import Pando.Test

Item {
    id: root
    width: 1024
    height: 700

    Component {
        id: addressesTab
        AppAddressesTab {
            anchors.fill: parent
        }
    }
    Component {
        id: settingsView
        SettingsView {
            anchors.fill: parent
        }
    }

    UserTestCase {
        name: "Addresses"

        function deploy(app: string) {
            const queued = Fixture.deploy(app);
            verify(!queued.error, queued.error);
            tryVerify(() => Fixture.deployStatus(queued.id) === "succeeded", 30000, Fixture.deployStatus(queued.id));
        }

        // The list's rows by URL: {url, tls, certificate, colour, moved, link}.
        function rows(tab): var {
            const list = named("addressesList", tab);
            const out = {};
            for (let row = 0; row < list.count; ++row) {
                list.positionViewAtIndex(row, ListView.Contain);
                const item = list.itemAtIndex(row);
                verify(item !== null, "row " + row);
                const link = named("addressUrl", item);
                out[link.url] = {
                    tls: named("addressTls", item).text,
                    certificate: named("addressCertificate", item).text,
                    colour: named("addressCertificate", item).color,
                    moved: named("addressMoved", item).visible ? named("addressMoved", item).text : "",
                    link: link
                };
            }
            return out;
        }

        function test_1_anAppWithoutNamesTeachesHowToGiveItOne() {
            const created = Fixture.createApp("shop");
            verify(!created.error, created.error);
            deploy("shop");
            const tab = createTemporaryObject(addressesTab, root, {session: Fixture.session, app: "shop"});
            verify(tab);
            const empty = named("addressesEmpty", tab);
            tryCompare(empty, "visible", true, 10000);
            verify(empty.text.indexOf("route.domains") >= 0, empty.text);
            verify(empty.text.indexOf("base domain") >= 0, empty.text);
            // The stable loopback address every app has, as a link.
            const stable = named("stableUrl", tab);
            verify(stable.url.startsWith("http://127.0.0.1:"), stable.url);
            verify(stable.text.indexOf("<a href=\"" + stable.url + "\">") >= 0, stable.text);
            compare(Fixture.accessibleName(stable), "Open " + stable.url);
            // The fixture's session is another machine's install: the app opens here through a forward.
            const forward = named("forwardLink", tab);
            verify(forward.visible);
            verify(/Open through 127\.0\.0\.1:\d+/.test(forward.text), forward.text);
            compare(named("addressesList", tab).visible, false);
        }

        function test_2_namesShowTheirCertificates() {
            verify(!Fixture.setDomains("shop", "old.shop.test").error);
            deploy("shop");
            verify(!Fixture.setDomains("shop", "shop.test, shop.example.org").error);
            deploy("shop");
            const until = Date.UTC(2027, 2, 1, 12, 0, 0);
            Fixture.setCertificate("shop.test", "Pando install CA", until);
            Fixture.setCertificate("shop.example.org", "", 0, "no DNS record for shop.example.org");

            const tab = createTemporaryObject(addressesTab, root, {session: Fixture.session, app: "shop"});
            const list = named("addressesList", tab);
            tryCompare(list, "count", 3, 10000);
            compare(named("addressesEmpty", tab).visible, false);
            const shown = rows(tab);
            const internal = shown["https://shop.test/"];
            verify(internal !== undefined, Object.keys(shown).join(", "));
            compare(internal.tls, "HTTPS, certificate from the install CA");
            compare(internal.certificate, "certificate from Pando install CA until "
                    + new Date(until).toLocaleDateString(Qt.locale(), Locale.ShortFormat));
            verify(!Qt.colorEqual(internal.colour, StateStyle.danger), "an issued certificate in the failure colour");
            compare(internal.moved, "");
            verify(internal.link.text.indexOf("<a href=\"https://shop.test/\">") >= 0, internal.link.text);
            compare(Fixture.accessibleName(internal.link), "Open https://shop.test/");

            const failed = shown["https://shop.example.org/"];
            verify(failed !== undefined, Object.keys(shown).join(", "));
            compare(failed.tls, "HTTPS, certificate from a public CA (ACME)");
            compare(failed.certificate, "certificate failed: no DNS record for shop.example.org");
            verify(Qt.colorEqual(failed.colour, StateStyle.danger), "the error is not in the failure colour: " + failed.colour);

            const moved = shown["https://old.shop.test/"];
            verify(moved !== undefined, Object.keys(shown).join(", "));
            compare(moved.moved, "moved: redirects to the app's current address");
            compare(moved.certificate, "certificate not issued yet");
        }

        // Every link is reached with Tab and shows that it has the focus; nothing sticks out at
        // 1024×700.
        // An app for people signed in says so above its addresses, from the deploy that serves it so.
        function test_2a_signInOnlyIsSaid() {
            const tab = createTemporaryObject(addressesTab, root, {session: Fixture.session, app: "shop"});
            tryCompare(named("addressesList", tab), "count", 3, 10000);
            compare(named("signInOnly", tab).visible, false);
            verify(!Fixture.setDomains("shop", "shop.test, shop.example.org", "", "pando").error);
            deploy("shop");
            tab.addressesModel.refresh();
            const said = named("signInOnly", tab);
            tryCompare(said, "visible", true, 10000);
            verify(said.text.indexOf("signed in to Pando") >= 0, said.text);
            verify(!Fixture.setDomains("shop", "shop.test, shop.example.org").error);
            deploy("shop");
            tab.addressesModel.refresh();
            tryCompare(said, "visible", false, 10000);
        }

        function test_2b_linksAreReachedByKeyboardAndFit() {
            const tab = createTemporaryObject(addressesTab, root, {session: Fixture.session, app: "shop"});
            const list = named("addressesList", tab);
            tryCompare(list, "count", 3, 10000);
            const refresh = named("refreshAddressesButton", tab);
            refresh.forceActiveFocus(Qt.TabFocusReason);
            keyClick(Qt.Key_Backtab);
            const stable = named("stableUrl", tab);
            verify(stable.activeFocus, "Shift+Tab from Refresh did not reach the stable address");
            verify(named("focusRing", stable).visible, "no focus mark on the link");
            keyClick(Qt.Key_Tab);
            verify(refresh.activeFocus);
            // The forward from this computer (the fixture's install is another machine's) comes next.
            keyClick(Qt.Key_Tab);
            const forward = named("forwardLink", tab);
            verify(forward.activeFocus, "Tab from Refresh did not reach the forward");
            verify(named("focusRing", forward).visible, "no focus mark on the forward");
            keyClick(Qt.Key_Tab);
            const first = named("addressUrl", list.itemAtIndex(0));
            verify(first.activeFocus, "Tab from the forward did not reach the first address");
            for (let row = 0; row < list.count; ++row) {
                const item = list.itemAtIndex(row);
                const right = item.mapToItem(tab, item.width, 0).x;
                verify(right <= tab.width + 0.5, "row " + row + " ends at " + right + " in a tab " + tab.width + " wide");
            }
        }

        function test_3_anAdministratorSavesTheDomainPolicy() {
            const view = createTemporaryObject(settingsView, root, {server: Fixture.localServer(), session: Fixture.session});
            const base = named("baseDomainField", view);
            tryCompare(view.domainSettings, "canEdit", true, 10000);
            tryCompare(view.domainSettings, "loaded", true, 10000);
            verify(base.visible);
            compare(named("domainsReadOnly", view).visible, false);
            base.text = "apps.example.com";
            named("allowedDomainsField", view).text = "example.com, example.org";
            named("wildcardSwitch", view).checked = true;
            mouseClick(named("saveDomains", view));
            tryCompare(named("domainsStatus", view), "text", "Saved", 10000);
            compare(view.domainSettings.baseDomain, "apps.example.com");
            compare(view.domainSettings.allowedDomains, "example.com, example.org");
            compare(view.domainSettings.wildcardDomains, true);

            // A bad name is refused, shown beside the field it is in, and nothing else changes.
            base.text = "http://bad name";
            mouseClick(named("saveDomains", view));
            const error = named("baseDomainError", view);
            tryCompare(error, "visible", true, 10000);
            verify(error.text.length > 0);
            verify(Qt.colorEqual(error.color, StateStyle.danger));
            compare(named("allowedDomainsError", view).visible, false);
            compare(view.domainSettings.baseDomain, "apps.example.com");
            compare(base.text, "http://bad name");

            // The group fits the window: its fields and buttons end inside the view.
            for (const name of ["baseDomainField", "allowedDomainsField", "saveDomains", "saveCaButton", "caText"]) {
                const item = named(name, view);
                const right = item.mapToItem(view, item.width, 0).x;
                verify(right <= view.width + 0.5, name + " ends at " + right + " in a view " + view.width + " wide");
            }
        }

        function test_4_aMemberReadsThePolicyOnly() {
            const view = createTemporaryObject(settingsView, root, {server: Fixture.localServer(), session: Fixture.sessionFor("member")});
            tryCompare(view.domainSettings, "loaded", true, 10000);
            tryCompare(named("domainsReadOnly", view), "visible", true, 10000);
            compare(named("baseDomainField", view).visible, false);
            compare(named("baseDomainText", view).text, "apps.example.com");
            compare(named("allowedDomainsText", view).text, "example.com, example.org");
            compare(named("wildcardSwitch", view).enabled, false);
            compare(named("saveDomains", view).visible, false);
        }

        function test_5_theInstallCaIsSavedOnceItExists() {
            let view = createTemporaryObject(settingsView, root, {server: Fixture.localServer(), session: Fixture.session});
            const text = named("caText", view);
            tryVerify(() => text.text.indexOf("does not exist yet") >= 0, 10000, text.text);
            compare(named("saveCaButton", view).enabled, false);

            const pem = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n";
            Fixture.setInstallCa(pem);
            view.domainSettings.refresh();
            tryCompare(named("saveCaButton", view), "enabled", true, 10000);
            const file = Fixture.temporaryPath("pando-ca.crt");
            view.domainSettings.saveCa("file://" + file);
            tryVerify(() => text.text === "Saved the install CA to " + file, 5000, text.text);
            compare(Fixture.readFile(file), pem);
        }
    }
}
