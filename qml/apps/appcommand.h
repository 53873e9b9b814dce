#pragma once
// The Run tab of an app (`pando apps exec` for the desktop): a command run once in the container
// the app serves from, its output shown as it prints it and its exit code at the end (GET
// /api/v1/apps/{name}/exec). With interactive set, its standard input stays open while it runs:
// each line sent is written to it (with its newline) and echoed in the output, and endInput()
// ends it, as Ctrl-D would; there is no terminal, so a program that needs one (a full-screen
// editor) is for `pando apps exec -t`. Without, its input ends at once. The command line is split
// into words as a shell would, without running a shell: `sh -c '…'` runs one. What the install
// refuses (no running version, no right to change the app) is said in error.
//
// Threading: GUI thread, like its Session.

#include "app/desktop/session/session.h"

#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QtQml/qqmlregistration.h>
#include <optional>

namespace pando::desktop {

class AppCommand : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(QString app READ app WRITE setApp NOTIFY appChanged)
    Q_PROPERTY(bool running READ isRunning NOTIFY changed)
    Q_PROPERTY(QString output READ output NOTIFY changed)
    // -1 until a command exited.
    Q_PROPERTY(int exitCode READ exitCode NOTIFY changed)
    Q_PROPERTY(QString error READ error NOTIFY changed)
    Q_PROPERTY(bool interactive READ isInteractive WRITE setInteractive NOTIFY changed)
    // Whether the running command's input is still open.
    Q_PROPERTY(bool inputOpen READ isInputOpen NOTIFY changed)

public:
    // What the view keeps of a command's output: its last characters.
    static constexpr qsizetype MaxOutputChars = 1'000'000;

    explicit AppCommand(QObject *parent = nullptr) : QObject(parent) {}

    QObject *sessionObject() const { return m_session; }
    void setSessionObject(QObject *session);
    QString app() const { return m_app; }
    void setApp(const QString &app);
    bool isRunning() const { return m_run != nullptr; }
    const QString &output() const { return m_output; }
    int exitCode() const { return m_exitCode; }
    const QString &error() const { return m_error; }
    bool isInteractive() const { return m_interactive; }
    void setInteractive(bool interactive);
    bool isInputOpen() const { return m_run && m_interactive && !m_inputEnded; }

    // Runs the command line; false (with error) when it names no command or one runs already.
    Q_INVOKABLE bool run(const QString &commandLine);
    // Stops waiting for it (it may go on in the container).
    Q_INVOKABLE void stop();
    // Writes line and a newline to the running command's input; false when its input is not open.
    Q_INVOKABLE bool sendInput(const QString &line);
    // Ends the command's input (EOF).
    Q_INVOKABLE void endInput();

    // A command line's words as a POSIX shell splits them (blanks; '…' kept as written; "…" and
    // outside quotes a backslash keeps the next character), with no expansion; nullopt for a
    // quote left open.
    static std::optional<QStringList> splitWords(const QString &line);

Q_SIGNALS:
    void sessionChanged();
    void appChanged();
    void changed();

private:
    void received(const QJsonObject &message);
    void ended();
    void append(const QString &text);
    void flushInput();

    QPointer<Session> m_session;
    QString m_app;
    Subscription *m_run = nullptr;
    QString m_output;
    int m_exitCode = -1;
    QString m_error;
    bool m_interactive = false;
    bool m_inputEnded = false;
    bool m_opened = false;
    QByteArray m_pendingInput; // typed before the stream opened
    bool m_pendingEnd = false;
};

} // namespace pando::desktop
