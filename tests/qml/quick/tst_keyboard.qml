// The keyboard and screen readers: Tab walks every control of the window's Apps, Approvals,
// Activity, Connections and Settings views (with the sidebar), of the Ctrl+K palette, the New-app
// dialog, the first-start state, an app's Deploys tab and the Settings view serving teammates.
// Every item that takes the focus is shown inside the window, has an accessible name a screen
// reader reads, and looks different while it has the focus (a ring, an outline: the user sees
// where the focus is); and Tab comes back round to where it started (Shift+Tab going back the same
// way), so nothing traps the focus.
import QtQuick
import QtTest
import Pando.Apps
import Pando.Deploys
import Pando.Settings
import Pando.Shell
import Pando.States
import Pando.Test

Item {
    id: root
    width: 1280
    height: 800

    Component {
        id: mainWindow
        Main {
            visible: true
        }
    }
    Component {
        id: emptyState
        EmptyState {
            anchors.fill: parent
        }
    }
    Component {
        id: createDialog
        CreateAppDialog {
            creator: AppCreator {
                session: Fixture.session
            }
        }
    }
    Component {
        id: deploysView
        DeploysView {
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
        id: testCase
        name: "Keyboard"

        // The control an item with the focus belongs to: an editable SpinBox or ComboBox gives the
        // focus to its text input, a list to its current row; the control draws the focus.
        function owner(item: Item): Item {
            const parent = item.parent;
            if (parent && parent.contentItem === item && parent.hasOwnProperty("editable"))
                return parent;
            const view = parent ? parent.parent : null;
            if (view && view.contentItem === parent && view.activeFocusOnTab && view.currentItem === item)
                return view;
            return item;
        }

        function describe(item: Item): string {
            return (item.objectName.length > 0 ? item.objectName : String(item)) + " «" + Fixture.accessibleName(owner(item)) + "»";
        }

        function within(item: Item, name: string): bool {
            for (let at = item; at; at = at.parent) {
                if (at.objectName === name)
                    return true;
            }
            return false;
        }

        function active(window): Item {
            return window.activeFocusItem;
        }

        // Presses Tab, then walks on until the focus comes back to the item it reached, checking
        // each item on the way (except those skip(item) says belong to views tested elsewhere);
        // returns the objectNames of the controls walked.
        function walkTab(window, skip): list<string> {
            // The first Tab: what a click focused shows no ring until the keyboard moves.
            keyClick(Qt.Key_Tab);
            const start = active(window);
            verify(start !== null, "nothing has the keyboard focus");
            const names = [];
            let item = start;
            for (let step = 0; step < 120; ++step) {
                const control = owner(item);
                names.push(control.objectName);
                const checked = !(skip && skip(control));
                let focused = null;
                if (checked) {
                    verify(control.visible, describe(item) + " has the focus but is hidden");
                    const at = control.mapToItem(null, 0, 0);
                    verify(at.x >= 0 && at.y >= 0 && at.x + control.width <= window.width + 1
                           && at.y + control.height <= window.height + 1,
                           describe(item) + " has the focus outside the window, at " + at.x + "," + at.y);
                    verify(Fixture.accessibleName(control).length > 0, "no accessible name: " + describe(item));
                    // A list's current row is what a screen reader announces as it moves.
                    if (control !== item && !control.hasOwnProperty("editable"))
                        verify(Fixture.accessibleName(item).length > 0, "no accessible name on the row: " + describe(item));
                    focused = Fixture.grabItem(control);
                }
                keyClick(Qt.Key_Tab);
                const next = active(window);
                verify(next !== null, "Tab from " + describe(item) + " left nothing with the focus");
                verify(next !== item, "Tab cannot leave " + describe(item));
                if (checked)
                    verify(!Fixture.sameImage(focused, Fixture.grabItem(control)),
                           describe(item) + " looks the same with and without the focus");
                if (next === start) {
                    // And Shift+Tab goes back the same way.
                    keyClick(Qt.Key_Backtab, Qt.ShiftModifier);
                    compare(active(window), item, "Shift+Tab from " + describe(start) + " did not go back to " + describe(item));
                    keyClick(Qt.Key_Tab);
                    return names;
                }
                item = next;
            }
            fail("Tab did not come back round to " + describe(start) + "; walked " + names.join(", "));
            return names;
        }

        function walked(names: list<string>, expected: list<string>) {
            for (const name of expected)
                verify(names.indexOf(name) >= 0, name + " was not reached by Tab; walked " + names.join(", "));
        }

        function openWindow() {
            const window = createTemporaryObject(mainWindow, root);
            verify(window);
            window.requestActivate();
            tryCompare(window, "active", true);
            return window;
        }

        function showView(window, entryName: string) {
            const entry = named(entryName, window.contentItem);
            mouseClick(entry);
            tryCompare(entry, "highlighted", true);
        }

        function selectFirst(list: Item) {
            tryCompare(list, "visible", true);
            tryVerify(() => list.count > 0, 20000, list.objectName + " stays empty");
            waitForRendering(list);
            clickRow(list, 0);
            tryCompare(list, "currentIndex", 0);
        }

        // Others own the app's detail (beside the Apps list) and the Pipelines view: walked
        // through, not checked here.
        function othersView(item: Item): bool {
            return within(item, "appDetail");
        }

        function test_windowViews() {
            const created = Fixture.createApp("keys-app", "operator");
            verify(!created.error, created.error);
            verify(!Fixture.createApp("gated-keys", "operator").error);
            verify(!Fixture.deploy("gated-keys", "operator").error);
            const window = openWindow();
            tryVerify(() => Desktop.apps.count >= 2, 10000);
            tryVerify(() => Desktop.pendingApprovals >= 1, 20000);
            tryVerify(() => Desktop.activity.count > 0, 20000);

            showView(window, "sidebarApps");
            selectFirst(named("appsList", window.contentItem));
            walked(walkTab(window, othersView), ["sidebarApps", "sidebarSettings", "newAppButton", "appsList"]);

            showView(window, "sidebarApprovals");
            selectFirst(named("approvalsList", window.contentItem));
            tryCompare(named("approvalComment", window.contentItem), "visible", true);
            walked(walkTab(window, othersView), ["sidebarApprovals", "approvalsList", "approvalComment", "approveButton"]);

            showView(window, "sidebarActivity");
            walked(walkTab(window, othersView), ["sidebarActivity", "activityList", "clearActivity"]);

            showView(window, "sidebarConnections");
            walked(walkTab(window, othersView), ["sidebarConnections", "pairingLinkField"]);

            showView(window, "sidebarSettings");
            // Its domain controls depend on what the install answers (whether this account may
            // change them, whether the CA exists): walked once they are all known.
            const settings = named("settingsView", window.contentItem);
            tryCompare(settings.domainSettings, "loaded", true, 10000);
            waitForRendering(settings);
            walked(walkTab(window, othersView), ["sidebarSettings", "connectionEntry", "saveDomains"]);
        }

        // The activity list opens what a line is about with Enter, as a click does.
        function test_activityOpensWithEnter() {
            verify(!Fixture.createApp("activity-app", "operator").error);
            const window = openWindow();
            showView(window, "sidebarActivity");
            const list = named("activityList", window.contentItem);
            tryVerify(() => list.count > 0, 20000);
            list.forceActiveFocus();
            tryCompare(list, "activeFocus", true);
            // A line about the app just made (not an approval, which opens in Approvals; not an
            // app another test file removed since).
            let about = "";
            for (let row = 0; row < list.count && about.length === 0; ++row) {
                list.currentIndex = row;
                if (list.currentItem.kind !== "approval" && list.currentItem.app === "activity-app")
                    about = list.currentItem.app;
            }
            verify(about.length > 0, "no line about an app");
            keyClick(Qt.Key_Return);
            tryCompare(named("sidebarApps", window.contentItem), "highlighted", true);
            // selected is a fresh map each time it is read: ask again until it names the app.
            tryVerify(() => Desktop.apps.selected.name === about, 5000, Desktop.apps.selected.name);
        }

        function test_commandPalette() {
            const window = openWindow();
            keySequence("Ctrl+K");
            const palette = named("commandPalette", window);
            tryCompare(palette, "opened", true);
            tryCompare(named("paletteQuery", window.contentItem), "activeFocus", true);
            walked(walkTab(window), ["paletteQuery", "paletteResults"]);
            // Enter on the matches chooses the current one, as in the query.
            const results = named("paletteResults", window.contentItem);
            verify(results.activeFocus);
            verify(results.count > 0);
            keyClick(Qt.Key_Return);
            tryCompare(palette, "visible", false);
        }

        function test_newAppDialog() {
            const window = root.Window.window;
            window.requestActivate();
            tryCompare(window, "active", true);
            const dialog = createTemporaryObject(createDialog, root);
            verify(dialog);
            dialog.open();
            tryCompare(dialog, "opened", true);
            tryCompare(named("nameField", dialog.contentItem), "activeFocus", true);
            walked(walkTab(window), ["nameField", "repoField", "refField", "portField", "deployNow", "createButton",
                                     "repositoryTab", "specFileTab", "imageTab"]);
            dialog.mode = 1;
            named("fileField", dialog.contentItem).forceActiveFocus();
            walked(walkTab(window), ["fileField", "deployNow", "createButton"]);
            // From an image: the image in place of the repository and its ref.
            dialog.mode = 2;
            named("nameField", dialog.contentItem).forceActiveFocus();
            walked(walkTab(window), ["nameField", "imageField", "portField", "deployNow", "createButton"]);
        }

        function test_firstStart() {
            const window = root.Window.window;
            window.requestActivate();
            tryCompare(window, "active", true);
            const view = createTemporaryObject(emptyState, root, {appsModel: Desktop.apps});
            verify(view);
            tryCompare(named("newFromRepository", view), "enabled", true, 10000);
            named("newFromRepository", view).forceActiveFocus(Qt.TabFocusReason);
            walked(walkTab(window), ["newFromRepository", "newFromSpecFile"]);
        }

        function test_deploysTab() {
            verify(!Fixture.createApp("deploy-keys").error);
            const queued = Fixture.deploy("deploy-keys");
            verify(!queued.error, queued.error);
            tryVerify(() => Fixture.deployStatus(queued.id) === "succeeded", 30000);
            const window = root.Window.window;
            window.requestActivate();
            tryCompare(window, "active", true);
            const view = createTemporaryObject(deploysView, root, {session: Fixture.session, app: "deploy-keys"});
            verify(view);
            const history = named("deployHistory", view);
            tryCompare(history, "count", 1, 10000);
            tryVerify(() => named("deploySteps", view).count > 0, 10000);
            history.forceActiveFocus(Qt.TabFocusReason);
            walked(walkTab(window), ["deployHistory", "deploySteps", "redeployButton"]);
            // The arrow keys move the step selection while the timeline has the focus.
            const timeline = named("deploySteps", view);
            timeline.forceActiveFocus(Qt.TabFocusReason);
            const from = timeline.currentIndex;
            keyClick(from + 1 < timeline.count ? Qt.Key_Down : Qt.Key_Up);
            tryVerify(() => timeline.currentIndex !== from, 5000, "the arrow keys did not move the step selection");
        }

        function test_settingsServing() {
            const server = Fixture.localServer();
            const window = root.Window.window;
            window.requestActivate();
            tryCompare(window, "active", true);
            const view = createTemporaryObject(settingsView, root, {server: server});
            verify(view);
            const serve = named("serveSwitch", view);
            mouseClick(serve);
            tryCompare(server, "running", true, 20000);
            tryVerify(() => server.accounts.indexOf("owner") >= 0, 15000);
            mouseClick(named("makePairingLinkButton", view));
            tryVerify(() => server.pairingLink.length > 0, 15000);
            serve.forceActiveFocus(Qt.TabFocusReason);
            walked(walkTab(window), ["serveSwitch", "serverAddress", "serverPort", "applyButton", "accountBox",
                                     "makePairingLinkButton", "pairingLinkField", "copyPairingLink"]);
            mouseClick(serve);
            tryCompare(server, "running", false, 20000);
        }
    }
}
