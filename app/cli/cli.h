#pragma once
// One run of `pando`: a small state machine on the main event loop. The command's handler (from
// its table entry, commands.h) starts the first request, each answer schedules the next step,
// and finish() ends the loop with the exit code; nothing waits inside a slot.
//
// Cli is what every handler shares: the parsed arguments, the typed API, how to end (with an
// exit code, an error), asking on the terminal, and what Ctrl-C must say or undo. Handlers are
// free functions in their area's file; a command's own state lives in the object it makes
// (a deploy or run watch), not here.

#include "args.h"

#include "app/client/api.h"
#include "app/client/apiclient.h"

#include <QObject>
#include <QPointer>
#include <functional>

class QWebSocket;

namespace pando::cli {

class LineReader;

inline constexpr int ExitOk = 0;
inline constexpr int ExitFailed = 1;
inline constexpr int ExitUsage = 2;
// Watching a pipeline run (jobs trigger --watch, runs watch): how the run ended. A failed run is
// ExitFailed.
inline constexpr int ExitRunErrored = 3;
inline constexpr int ExitRunAborted = 4;
inline constexpr int ExitInterrupted = 130;

// Where `pando login` keeps the session: $XDG_CONFIG_HOME/pando/session, else
// ~/.config/pando/session; and the secret saved there (empty when none).
QString sessionFilePath();
QString savedSession();

class Cli : public QObject {
    Q_OBJECT
public:
    // client may be null for a command that needs nothing (Needs::Nothing).
    Cli(Args args, client::ApiClient *client, QObject *parent = nullptr);

    // Starts the command; the exit code arrives through QCoreApplication::exit().
    void start();
    // Ctrl-C: runs the command's interrupt note, stops watching and exits with 130.
    void interrupt();

    const Args &args() const { return m_args; }
    const client::Api &api() const { return m_api; }
    bool isFinished() const { return m_finished; }

    void finish(int code);
    // Prints the error and exits 1 (failWith) or with code.
    void failWith(const Error &error);
    void failWithCode(const Error &error, int code);
    // Runs onOk with the response, or prints the error and exits 1; nothing once finished.
    client::ApiClient::Callback handle(std::function<void(const client::ApiResponse &)> onOk);

    // Asks question on the terminal unless --yes; refuses when it cannot ask. onYes runs once.
    void confirm(const QString &question, const QString &where, std::function<void()> onYes);
    // A password from the terminal without echo, or from standard input when it is not one.
    void readPassword(const QString &prompt, const std::function<void(const QString &)> &then);
    // The terminal's line reader, made on first use.
    LineReader *reader();

    // What Ctrl-C must say or undo for the command in flight ("deploy d1 goes on", removing a
    // half-written backup); replaces the one before, empty clears it.
    void setOnInterrupt(std::function<void()> note) { m_onInterrupt = std::move(note); }
    // A stream closed when the command finishes.
    void own(QWebSocket *stream);

private:
    Args m_args;
    client::Api m_api;
    bool m_finished = false;
    LineReader *m_reader = nullptr;
    std::function<void()> m_onInterrupt;
    QList<QPointer<QWebSocket>> m_streams;
};

// Shared by areas: following a run to its end (runwatch.cpp), and asking what becomes of an
// app's services' data before it is removed (servicecommands.cpp).
void watchRun(Cli &cli, const QString &runId);
void askServiceData(Cli &cli, const QString &app, std::function<void(client::ServiceData choice)> then);
// How often a command that waits on the API asks again, and after how many failed asks in a row
// it gives up.
inline constexpr int PollIntervalMs = 200;
inline constexpr int MaxPollErrors = 5;

// What deploy and rollback print for the deploy the server queued: its id, or with --wait its
// steps to the end (deploywatch.cpp); and following a deploy already queued to its end.
void followQueued(Cli &cli, const QString &app, const QJsonObject &queued, const QString &what);
void followDeploy(Cli &cli, const QString &deployId, const QString &app);
// `pando apps exec`: a command in the app's container, attached to this terminal (execcommand.cpp).
void execInApp(Cli &cli);
// The number of the deploy's step called name (a deploy view's "steps"); -1 when it has none.
int stepSeq(const QJsonObject &view, const QString &name);

// A secret value (what names it, "secret DB_URL"): the bytes of --from-file, else asked without
// echo on a terminal, else standard input without its last line break. Never from argv.
void readSecretValue(Cli &cli, const QString &what, const std::function<void(const QString &)> &use);

} // namespace pando::cli
