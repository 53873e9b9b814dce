// An app's Settings and Events tabs, driven as a user would at 1024×700: a secret set through the
// form is listed by name and its value is nowhere on screen; an environment change shows its diff
// before saving and is then the engine's spec; a refused edit shows the engine's field and
// message; the Events tab lists the app's deploy, started and succeeded, newest first with who
// did it, and Show older adds the events of deploys before the last 20; every tab of the detail
// loads. The functions run in name order and build on each other.
import QtQuick
import QtQuick.Controls
import QtTest
import Pando.Apps
import Pando.Shell
import Pando.Test

Item {
    id: root
    width: 1024
    height: 700

    Component {
        id: settingsTab
        AppSettingsTab {
            anchors.fill: parent
        }
    }
    Component {
        id: eventsTab
        AppEventsTab {
            anchors.fill: parent
        }
    }
    Component {
        id: appsView
        AppsView {
            anchors.fill: parent
            appsModel: Desktop.apps
        }
    }

    UserTestCase {
        id: testCase
        name: "AppSettings"
        property Item tab: null

        // Every text shown in item and below it.
        function texts(item: Item): list<string> {
            let out = [];
            if (item.text !== undefined && typeof item.text === "string")
                out.push(item.text);
            for (let i = 0; i < item.children.length; ++i)
                out = out.concat(texts(item.children[i]));
            return out;
        }

        // Scrolls the tab so that item is in view, and returns it.
        function show(item: Item): Item {
            const flick = tab.contentItem;
            const y = item.mapToItem(flick.contentItem, 0, 0).y - 20;
            flick.contentY = Math.max(0, Math.min(y, flick.contentHeight - flick.height));
            return item;
        }

        function initTestCase() {
            const created = Fixture.createApp("hello");
            verify(!created.error, created.error);
            const queued = Fixture.deploy("hello");
            verify(!queued.error, queued.error);
            tryVerify(() => Fixture.deployStatus(queued.id) === "succeeded", 30000, "the deploy did not succeed");
            // Kept for every function (a temporary object would go after the first).
            tab = settingsTab.createObject(root, {session: Fixture.session, app: "hello"});
            verify(tab);
            tryVerify(() => tab.appSettings.specText.length > 0, 10000, "the spec was not read");
        }

        function cleanupTestCase() {
            tab.destroy();
        }

        function test_1_secretIsListedByNameOnly() {
            const name = named("secretNameField", tab);
            const value = named("secretValueField", tab);
            compare(value.echoMode, TextInput.Password);
            retype(show(name), "API_KEY");
            retype(show(value), "t0p-s3cret-value");
            mouseClick(show(named("setSecretButton", tab)));
            compare(value.text, "", "the value stayed in the form");
            tryVerify(() => tab.appSettings.secrets.length === 1, 10000);
            tryCompare(named("secretName", tab), "text", "API_KEY");
            compare(named("secretError", tab).visible, false);
            const shown = texts(tab);
            verify(!shown.some(t => t.indexOf("t0p-s3cret-value") >= 0), "the secret's value is on screen");
        }

        function test_2_envChangeShowsItsDiffThenSaves() {
            mouseClick(show(named("addEnvButton", tab)));
            const key = named("envName0", tab);
            tryVerify(() => key.width > 0);
            waitForItemPolished(tab.contentItem.contentItem.children[0]);
            retype(show(key), "FOO");
            retype(show(named("envValue0", tab)), "bar");
            const review = show(named("reviewButton", tab));
            tryCompare(review, "enabled", true);
            mouseClick(review);
            const dialog = named("diffDialog", tab);
            tryCompare(dialog, "opened", true);
            const changes = tab.appSettings.diff.filter(line => line.kind !== " ").map(line => line.kind + line.text);
            compare(changes, ["-  env: {}", "+  env:", "+    FOO: bar"]);
            // Nothing was sent before Save.
            verify(tab.appSettings.specText.indexOf("FOO") < 0);
            mouseClick(dialog.standardButton(Dialog.Save));
            tryCompare(dialog, "visible", false);
            tryVerify(() => tab.appSettings.specText.indexOf("FOO: bar") >= 0, 10000, tab.appSettings.specText);
            compare(tab.appSettings.modified, false);
            verify(named("revisionText", tab).text.length > 0);
            compare(named("saveRefusal", tab).visible, false);
        }

        function test_3_refusedEditShowsTheEnginesError() {
            const path = named("healthPathField", tab);
            retype(show(path), "nope");
            mouseClick(show(named("reviewButton", tab)));
            const dialog = named("diffDialog", tab);
            tryCompare(dialog, "opened", true);
            mouseClick(dialog.standardButton(Dialog.Save));
            const error = named("saveError", tab);
            tryCompare(error, "visible", true, 10000);
            verify(error.text.startsWith("health.path: "), error.text);
            // The engine still has the spec it had; the draft waits to be mended or discarded.
            verify(tab.appSettings.specText.indexOf("nope") < 0);
            mouseClick(show(named("discardButton", tab)));
            compare(path.text, "/api/v1/health");
            compare(tab.appSettings.modified, false);
        }

        function test_4_theTabFitsTheWindow() {
            // Nothing sticks out on the right at 1024×700: the layout wraps or elides instead.
            for (const name of ["reviewButton", "setSecretButton", "healthPathField", "memoryField"]) {
                const item = named(name, tab);
                const right = item.mapToItem(tab, item.width, 0).x;
                verify(right <= tab.width + 0.5, name + " ends at " + right + " in a tab " + tab.width + " wide");
            }
        }

        function test_5_eventsListTheDeployNewestFirst() {
            const events = createTemporaryObject(eventsTab, root, {session: Fixture.session, app: "hello"});
            verify(events);
            const list = named("eventsList", events);
            tryVerify(() => !events.eventsModel.loading && list.count >= 3, 10000, "count " + list.count);
            compare(named("historyError", events).visible, false);
            const titles = [];
            for (let row = 0; row < list.count; ++row) {
                list.positionViewAtIndex(row, ListView.Contain);
                tryVerify(() => list.itemAtIndex(row) !== null, 5000);
                titles.push(list.itemAtIndex(row).title);
            }
            const succeeded = titles.indexOf("Deploy succeeded");
            const started = titles.indexOf("Deploy started");
            verify(succeeded >= 0 && started > succeeded, titles.join(" | "));
            // The spec change and the secret are newer than the deploy.
            verify(titles.indexOf("Spec changed") < succeeded, titles.join(" | "));
            verify(titles.indexOf("Secret API_KEY set") >= 0, titles.join(" | "));
            compare(list.itemAtIndex(started).actor, "admin");
            // With the keyboard on the list, its current row is marked, and only that one.
            list.forceActiveFocus(Qt.TabFocusReason);
            list.currentIndex = started;
            tryVerify(() => named("eventRowMark", list.itemAtIndex(started)).opacity > 0, 5000, "the current row is not marked");
            compare(named("eventRowMark", list.itemAtIndex(succeeded)).opacity, 0);
        }

        // Every tab of the detail loads what it shows (a bound sourceComponent left all but Overview
        // empty on Qt 6.4), and a hidden one is unloaded.
        function test_6_theDetailOpensEveryTab() {
            const view = createTemporaryObject(appsView, root);
            tryCompare(Desktop.apps, "count", 1, 10000);
            Desktop.apps.selectApp("hello");
            tryCompare(named("appName", view), "text", "hello");
            const loaders = {deploysTab: "deploysLoader", logsTab: "logsLoader", settingsTab: "settingsLoader",
                             eventsTab: "eventsLoader", addressesTab: "addressesLoader"};
            for (const tabName in loaders) {
                const button = named(tabName, view);
                tryVerify(() => button.width > 20, 5000, tabName + " is " + button.width + " wide");
                mouseClick(button);
                tryCompare(button, "checked", true);
                tryCompare(named(loaders[tabName], view), "status", Loader.Ready, 5000, tabName);
            }
            compare(named("settingsLoader", view).status, Loader.Null);
        }

        // More deploys than the tab reads at first: Show older, below the list, adds the
        // older ones' events and goes once every deploy is read.
        function test_7_showOlderReadsOlderDeploys() {
            for (let i = 0; i < 21; ++i) {
                const queued = Fixture.deploy("hello", "operator");
                verify(!queued.error, queued.error);
                tryVerify(() => Fixture.deployStatus(queued.id) === "succeeded", 20000, Fixture.deployStatus(queued.id));
            }
            const events = createTemporaryObject(eventsTab, root, {session: Fixture.session, app: "hello"});
            const model = events.eventsModel;
            tryVerify(() => !model.loading && model.count > 0, 10000);
            const started = () => {
                let count = 0;
                for (let row = 0; row < model.count; ++row)
                    if (model.data(model.index(row, 0), AppEventsModel.TitleRole) === "Deploy started")
                        ++count;
                return count;
            };
            compare(started(), 20);
            const older = named("olderEventsButton", events);
            tryCompare(older, "visible", true);
            verify(older.enabled);
            compare(Fixture.accessibleName(older), "Show the events of older deploys");
            mouseClick(older);
            tryVerify(() => !model.loading && started() > 20, 10000, "started " + started());
            tryCompare(older, "visible", false);
        }
    }
}
