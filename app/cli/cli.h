#pragma once
// One run of `pando`: a small state machine on the main event loop. A command starts its first
// request, each answer schedules the next step, and finish() ends the loop with the exit code;
// nothing waits inside a slot.

#include "args.h"

#include "app/client/apiclient.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QTimer>

class QWebSocket;

namespace pando::cli {
class LineReader;
}

namespace pando::cli {

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
    Cli(Args args, client::ApiClient *client, QObject *parent = nullptr);

    // Starts the command; the exit code arrives through QCoreApplication::exit().
    void start();
    // Ctrl-C: stop watching and exit with 130.
    void interrupt();

private:
    void finish(int code);
    void failWith(const Error &error);
    // Runs onOk with the response, or prints the error and exits 1.
    client::ApiClient::Callback handle(std::function<void(const client::ApiResponse &)> onOk);

    void createApp();
    void updateApp();
    // Sends the spec file (--file, "-" for stdin) to apiPath.
    void sendSpec(const QByteArray &method, const QString &apiPath);
    void listApps();
    void showApp();
    void removeApp();
    void sendRemoveApp(const QString &serviceData); // "keep", "delete" or "" (not said)
    void pollRemoved();
    void deploy();
    // Asks for the deploy now, or right after the request in flight answers.
    void requestDeployPoll();
    void pollDeploy();
    void showDeployProgress(const QJsonObject &view);
    void listDeploys();
    void showDeploy();
    void logs();

    // Pipelines, runs and secrets (pipelinecommands.cpp).
    void setPipeline();
    void applyPipeline(const QJsonObject &body);
    void listPipelines();
    void showPipeline();
    void pausePipeline(bool pause);
    void removePipeline();
    void triggerJob();
    void listRuns();
    void showRun();
    void abortRun();
    void setSecret();
    void sendSecret(const QString &value);
    void listSecrets();
    void removeSecret();
    void listAudit();
    void verifyAudit();
    void listAuditSinks();

    // `pando capacity` and `pando apps start` (capacitycommands.cpp).
    void showCapacity();
    void startApp();

    // Grants on apps and pipelines (grantcommands.cpp).
    void listGrants();
    void addGrant();
    void removeGrant();

    // Accounts (accountcommands.cpp).
    void login();
    void sendLogin(const QString &username, const QString &password);
    void createUser();
    void sendUser(const QString &password);
    void listUsers();
    void disableUser();
    void createToken();
    void listTokens();
    void revokeToken();
    // A password from the terminal without echo, or from standard input when it is not one.
    void readPassword(const QString &prompt, std::function<void(const QString &)> then);
    // Asks question on the terminal unless --yes; refuses when it cannot ask. onYes runs once.
    void confirm(const QString &question, const QString &where, std::function<void()> onYes);
    void failWithCode(const Error &error, int code);

    // Services (servicecommands.cpp).
    void listServices();
    void backupService();
    void removeService();
    // On a terminal, when the app has services, asks whether to keep or delete their data and
    // gives then "keep" or "delete"; otherwise gives then "" (pandod decides, naming the flags).
    void askServiceData(const QString &app, std::function<void(const QString &choice)> then);

    // Approvals (approvalcommands.cpp).
    void listApprovals();
    void showApproval();
    void decideApproval(bool approve);

    // Following a run to its end (runwatch.cpp).
    void watchRun(const QString &runId);
    void onRunMessage(const QJsonObject &message);
    void onRunEvent(const QJsonObject &event);
    void startRunPolling();
    void pollRun();
    void pollRunEvents(const QString &status);
    void endRun();
    void showRunEnd(const QJsonObject &run);

    Args m_args;
    client::ApiClient *m_client;
    bool m_finished = false;
    QString m_deployId;
    QHash<int, int> m_stepShown; // step seq → 1 started printed, 2 end printed
    int m_pollErrors = 0;
    QPointer<QWebSocket> m_stream;
    QPointer<QWebSocket> m_events; // deploy --wait: step events make the CLI look at once
    QTimer *m_pollTimer = nullptr; // ...and this looks anyway, in case an event was missed
    bool m_pollInFlight = false;
    bool m_pollAgain = false;

    LineReader *m_reader = nullptr;
    QString m_backupPartial; // services backup: the FILE.partial being written, removed on failure
    QString m_runId;
    qint64 m_lastSeq = 0;
    QHash<QString, QString> m_runStepShown; // step id → "status/attempt" last printed
    QHash<QString, int> m_runStepDepth;     // step id → nesting depth
    QHash<QString, QString> m_runStepLabel; // step id → "task unit"
    QPointer<QWebSocket> m_runStream;
    QString m_runFinished; // the status the follow stream ended with
    QTimer *m_runPollTimer = nullptr;
};

} // namespace pando::cli
