// The Apps view: the New app dialog refuses an empty repository naming the field (and shows the
// server's refusal naming source.repo), a valid form creates the app and shows it selected (its
// link offering a forward through the server), and
// Remove asks before the app goes; Ctrl+N opens the dialog; Choose… opens a file dialog; a
// deployed app offers Stop and Restart, a stopped one Start, each showing the app as it is after.
// The functions run in name order and build on each other.
import QtQuick
import QtQuick.Controls
import QtTest
import Pando.Apps
import Pando.Shell
import Pando.States
import Pando.Test

Item {
    id: root
    width: 1280
    height: 800

    AppsView {
        id: view
        anchors.fill: parent
        appsModel: Desktop.apps
    }

    UserTestCase {
        name: "AppsView"
        scope: view

        function initTestCase() {
            tryCompare(Desktop.apps, "loaded", true, 10000);
            compare(Desktop.apps.count, 0);
        }

        function test_1_emptyRepositoryNamesTheField() {
            verify(named("emptyState").visible);
            const start = named("newFromRepository");
            tryCompare(start, "enabled", true, 10000);
            mouseClick(start);
            const dialog = named("createAppDialog");
            tryCompare(dialog, "opened", true);
            // The name field has the focus when the dialog opens.
            tryCompare(named("nameField"), "activeFocus", true);
            typeText("hello");
            compare(named("repoField").text, "");
            mouseClick(named("createButton"));
            const error = named("createError");
            tryCompare(error, "visible", true);
            verify(/repository/.test(error.text), error.text);
            verify(dialog.opened, "the dialog closed on an error");
            compare(Desktop.apps.count, 0);
        }

        function test_2_refusedRepositoryShowsTheServersReason() {
            retype(named("repoField"), "ext::sh -c true");
            mouseClick(named("createButton"));
            const error = named("createError");
            tryVerify(() => error.text.startsWith("source.repo: "), 10000, error.text);
            verify(named("createAppDialog").opened);
            compare(Desktop.apps.count, 0);
        }

        function test_3_validFormCreatesTheAppSelected() {
            retype(named("repoField"), "https://git.example/hello.git");
            // Created only: the fake's container answers no health probe on port 8080, so a deploy
            // would keep the app busy (and Remove disabled) until the probe gives up.
            const deployNow = named("deployNow");
            mouseClick(deployNow);
            compare(deployNow.checked, false);
            mouseClick(named("createButton"));
            tryCompare(named("createAppDialog"), "visible", false, 10000);
            const list = named("appsList");
            tryCompare(list, "count", 1, 10000);
            tryCompare(list, "currentIndex", 0);
            verify(list.currentItem.highlighted);
            compare(list.currentItem.name, "hello");
            // Created, never deployed: a grey dash and its word, in the list and the detail.
            tryVerify(() => named("stateMark", list.currentItem).word === "not deployed", 10000,
                      named("stateMark", list.currentItem).word);
            checkMark(named("stateMark", list.currentItem), DisplayState.Neutral, "not deployed", "dash");
            verify(named("stateWord", named("stateMark", list.currentItem)).visible, "the list shows no word");
            // The selected row: its mark drawn for the selection colour, its name readable on it.
            const selection = list.currentItem.palette.highlight;
            compare(named("stateMark", list.currentItem).background, selection);
            const nameLabel = named("appRowName", list.currentItem);
            verify(StateStyle.contrast(nameLabel.color, selection) >= 4.5,
                   "the selected app's name at " + StateStyle.contrast(nameLabel.color, selection).toFixed(2) + ":1");
            checkMark(named("appStateMark"), DisplayState.Neutral, "not deployed", "dash");
            tryCompare(named("appName"), "text", "hello");
            verify(!named("emptyState").visible);
            // This session's install is another "machine" (a RemoteSession): the app's own URL
            // names that machine's loopback, so the link offers a forward through the server
            // (AppLink) and says so rather than showing that URL.
            const link = named("appLink");
            tryVerify(() => /Open through 127\.0\.0\.1:\d+/.test(link.text), 10000, link.text);
            verify(link.ToolTip.text.indexOf("tunnel") >= 0, link.ToolTip.text);
        }

        function test_4_removeAsksAndTheAppGoes() {
            const remove = named("removeButton");
            tryCompare(remove, "enabled", true, 10000);
            const dialog = named("removeDialog");

            mouseClick(remove);
            tryCompare(dialog, "opened", true);
            verify(dialog.title.indexOf("hello") >= 0, dialog.title);
            mouseClick(dialog.standardButton(Dialog.Cancel));
            tryCompare(dialog, "visible", false);
            compare(Desktop.apps.count, 1);

            mouseClick(remove);
            tryCompare(dialog, "opened", true);
            mouseClick(dialog.standardButton(Dialog.Ok));
            tryCompare(Desktop.apps, "count", 0, 20000);
            tryCompare(named("emptyState"), "visible", true);
        }

        function test_5_ctrlNOpensTheDialogAndEscapeClosesIt() {
            const dialog = named("createAppDialog");
            compare(dialog.visible, false);
            keySequence("Ctrl+N");
            tryCompare(dialog, "opened", true);
            // A new start: the previous refusal is gone, and so is the last app's form.
            compare(named("createError").visible, false);
            compare(named("nameField").text, "");
            compare(named("repoField").text, "");
            compare(named("refField").text, "main");
            // The port the image exposes unless one is given.
            compare(named("portField").value, 0);
            compare(named("portField").displayText, "as the image exposes");
            compare(named("deployNow").checked, true);
            keyClick(Qt.Key_Escape);
            tryCompare(dialog, "visible", false);
            compare(Desktop.apps.count, 0);
        }

        // "Choose…" crashed the app (and its engine) where Qt's QML file dialog lacked a module.
        function test_6_chooseOpensAFileDialog() {
            const dialog = named("createAppDialog");
            keySequence("Ctrl+N");
            tryCompare(dialog, "opened", true);
            dialog.mode = 1;
            compare(named("fileChooserProblem").visible, false, named("fileChooserProblem").text);
            const choose = named("chooseFileButton");
            verify(choose.enabled);
            mouseClick(choose);
            const files = named("specFileDialog");
            tryCompare(files, "visible", true);
            files.reject();
            tryCompare(files, "visible", false);
            verify(dialog.opened, "closing the file dialog closed the New app dialog");
            compare(named("fileField").text, "");
            keyClick(Qt.Key_Escape);
            tryCompare(dialog, "visible", false);
            dialog.mode = 0;
        }

        function test_7_stopStartAndRestart() {
            const created = Fixture.createApp("pausable");
            verify(!created.error, created.error);
            const queued = Fixture.deploy("pausable");
            verify(!queued.error, queued.error);
            tryVerify(() => Fixture.deployStatus(queued.id) === "succeeded", 30000);
            Desktop.apps.selectApp("pausable");
            tryCompare(named("appName"), "text", "pausable", 10000);
            const stop = named("stopButton");
            const start = named("startButton");
            const restart = named("restartButton");
            tryCompare(stop, "visible", true, 10000);
            verify(restart.visible);
            verify(!start.visible);
            // A button that just became visible is placed at the row's next polish: clicked
            // before it, the click lands where another button was.
            waitForItemPolished(stop.parent);
            mouseClick(stop);
            tryCompare(named("appStateMark"), "word", "stopped", 10000);
            verify(/stopped by /.test(named("appStatus").text), named("appStatus").text);
            tryCompare(start, "visible", true);
            verify(!stop.visible && !restart.visible);

            waitForItemPolished(start.parent);
            mouseClick(start);
            tryCompare(named("appStateMark"), "word", "running", 10000);
            tryCompare(stop, "visible", true);
            verify(!start.visible && restart.visible);

            // Restart and Stop come back together; until the row has placed them side by side they
            // may share a place, and Stop, drawn over Restart, would take the click.
            tryVerify(() => restart.x + restart.width <= stop.x, 5000);
            mouseClick(restart);
            // In progress while it restarts, then running again.
            tryCompare(stop, "visible", true, 10000);
            tryCompare(named("appStateMark"), "word", "running", 10000);
            compare(Desktop.apps.selected.actionError, "");
        }
    }
}
