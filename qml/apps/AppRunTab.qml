// The Run tab of an app: a command run once in the container the app serves from (as
// `pando apps exec` does, without a terminal), its output as it prints it and how it ended. With
// "Keep input open" the command reads what is typed below it, line by line (a shell, a REPL), until
// End input; a program that needs a terminal is for `pando apps exec NAME -t -- …`.
pragma ComponentBehavior: Bound

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Pando.Apps

ColumnLayout {
    id: root
    required property QtObject session
    required property string app
    property alias command: command
    spacing: 8

    AppCommand {
        id: command
        session: root.session
        app: root.app
    }

    RowLayout {
        Layout.fillWidth: true
        TextField {
            id: commandLine
            objectName: "commandLine"
            Layout.fillWidth: true
            placeholderText: qsTr("A command, e.g. ls -la /  or  sh -c 'env | sort'")
            font.family: "monospace"
            enabled: !command.running
            Accessible.name: qsTr("Command to run in the app's container")
            onAccepted: command.run(text)
        }
        CheckBox {
            objectName: "interactive"
            text: qsTr("Keep input open")
            enabled: !command.running
            checked: command.interactive
            onToggled: command.interactive = checked
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Type the command's input below while it runs, a line at a time")
        }
        Button {
            objectName: "runButton"
            text: command.running ? qsTr("Stop") : qsTr("Run")
            onClicked: command.running ? command.stop() : command.run(commandLine.text)
        }
    }
    Label {
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        opacity: 0.7
        text: qsTr("Runs in the container of the version the app serves now, without a terminal; it may read the app's secrets, so only people who may change the app can. For a program that needs a terminal, use: pando apps exec %1 -t -- sh").arg(root.app)
    }
    Label {
        objectName: "runError"
        Layout.fillWidth: true
        visible: command.error.length > 0
        wrapMode: Text.Wrap
        textFormat: Text.PlainText
        text: command.error
    }
    Label {
        objectName: "exitCode"
        visible: command.exitCode >= 0
        font.bold: true
        text: command.exitCode === 0 ? qsTr("Exited with 0") : qsTr("Exited with %1").arg(command.exitCode)
    }
    RowLayout {
        Layout.fillWidth: true
        visible: command.inputOpen
        TextField {
            id: inputLine
            objectName: "inputLine"
            Layout.fillWidth: true
            placeholderText: qsTr("Input for the command; Enter sends the line")
            font.family: "monospace"
            Accessible.name: qsTr("A line of input for the running command")
            onAccepted: {
                if (command.sendInput(text))
                    text = ""
            }
        }
        Button {
            objectName: "endInputButton"
            text: qsTr("End input")
            onClicked: command.endInput()
        }
    }
    ScrollView {
        Layout.fillWidth: true
        Layout.fillHeight: true
        TextArea {
            objectName: "runOutput"
            readOnly: true
            text: command.output
            textFormat: TextEdit.PlainText
            font.family: "monospace"
            wrapMode: TextEdit.WrapAnywhere
            selectByMouse: true
            Accessible.name: qsTr("What the command printed")
            onTextChanged: cursorPosition = length
        }
    }
}
