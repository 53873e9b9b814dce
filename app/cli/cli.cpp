#include "cli.h"

#include "output.h"
#include "prompt.h"

#include <QCoreApplication>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTimer>
#include <QWebSocket>
#include <algorithm>

namespace pando::cli {
namespace {

constexpr int PollIntervalMs = 200;
constexpr int EventFallbackPollMs = 1000;
constexpr int MaxPollErrors = 5;

QString deploySummary(const QJsonObject &d)
{
    if (d.isEmpty())
        return QStringLiteral("-");
    QString text = str(d, "id") + QLatin1Char(' ') + str(d, "status");
    if (!str(d, "ref").isEmpty())
        text += QStringLiteral(" (") + str(d, "ref") +
                (str(d, "commit").isEmpty() ? QString() : QStringLiteral(" @ ") + shortCommit(str(d, "commit"))) +
                QLatin1Char(')');
    if ((str(d, "status") == QLatin1String("failed") || str(d, "status") == QLatin1String("rejected")) &&
        !str(d, "error").isEmpty())
        text += QStringLiteral(": ") + str(d, "failed_step") + QStringLiteral(": ") + str(d, "error");
    return text;
}

bool isTerminal(const QString &status)
{
    return status == QLatin1String("succeeded") || status == QLatin1String("failed") ||
           status == QLatin1String("cancelled") || status == QLatin1String("rejected");
}

QString logLineText(const QJsonObject &line)
{
    const qint64 time = num(line, "time_ms");
    const QString prefix = time > 0 ? timestamp(time) + QLatin1Char(' ') : QString();
    return prefix + (str(line, "stream") == QLatin1String("stderr") ? QStringLiteral("! ") : QString()) +
           str(line, "text");
}

} // namespace

Cli::Cli(Args args, client::ApiClient *client, QObject *parent)
    : QObject(parent), m_args(std::move(args)), m_client(client)
{}

void Cli::start()
{
    switch (m_args.command) {
    case Command::AppsCreate:
        return createApp();
    case Command::AppsUpdate:
        return updateApp();
    case Command::AppsList:
        return listApps();
    case Command::AppsShow:
        return showApp();
    case Command::AppsStart:
        return startApp();
    case Command::Capacity:
        return showCapacity();
    case Command::AppsRemove:
        return removeApp();
    case Command::Deploy:
        return deploy();
    case Command::DeploysList:
        return listDeploys();
    case Command::DeploysShow:
        return showDeploy();
    case Command::Logs:
        return logs();
    case Command::PipelinesSet:
        return setPipeline();
    case Command::PipelinesList:
        return listPipelines();
    case Command::PipelinesShow:
        return showPipeline();
    case Command::PipelinesPause:
        return pausePipeline(true);
    case Command::PipelinesUnpause:
        return pausePipeline(false);
    case Command::PipelinesRemove:
        return removePipeline();
    case Command::JobsTrigger:
        return triggerJob();
    case Command::RunsList:
        return listRuns();
    case Command::RunsShow:
        return showRun();
    case Command::RunsWatch:
        return watchRun(m_args.arguments.value(0));
    case Command::RunsAbort:
        return abortRun();
    case Command::SecretsSet:
        return setSecret();
    case Command::SecretsList:
        return listSecrets();
    case Command::SecretsRemove:
        return removeSecret();
    case Command::AuditList:
        return listAudit();
    case Command::AuditVerify:
        return verifyAudit();
    case Command::ApprovalsList:
        return listApprovals();
    case Command::ApprovalsShow:
        return showApproval();
    case Command::ApprovalsApprove:
        return decideApproval(true);
    case Command::ApprovalsReject:
        return decideApproval(false);
    case Command::AuditSinks:
        return listAuditSinks();
    case Command::GrantsList:
        return listGrants();
    case Command::GrantsAdd:
        return addGrant();
    case Command::GrantsRemove:
        return removeGrant();
    case Command::Login:
        return login();
    case Command::UsersCreate:
        return createUser();
    case Command::UsersList:
        return listUsers();
    case Command::UsersDisable:
        return disableUser();
    case Command::TokensCreate:
        return createToken();
    case Command::TokensList:
        return listTokens();
    case Command::TokensRevoke:
        return revokeToken();
    case Command::ServicesList:
        return listServices();
    case Command::ServicesBackup:
        return backupService();
    case Command::ServicesRemove:
        return removeService();
    }
}

void Cli::interrupt()
{
    if (m_finished)
        return;
    if (!m_deployId.isEmpty())
        printErr(QStringLiteral("pando: stopped watching; deploy %1 goes on (pando deploys show %1)").arg(m_deployId));
    if (!m_runId.isEmpty())
        printErr(QStringLiteral("pando: stopped watching; run %1 goes on (pando runs watch %1)").arg(m_runId));
    // An interrupted backup leaves no half file behind.
    if (!m_backupPartial.isEmpty())
        QFile::remove(std::exchange(m_backupPartial, QString()));
    finish(ExitInterrupted);
}

void Cli::finish(int code)
{
    if (m_finished)
        return;
    m_finished = true;
    if (m_stream)
        m_stream->abort();
    if (m_runStream)
        m_runStream->abort();
    if (m_runPollTimer)
        m_runPollTimer->stop();
    // Puts the terminal's echo back if a hidden prompt was open.
    if (m_reader)
        m_reader->cancel();
    // Queued, so that it also works when the command ends before the event loop runs.
    QMetaObject::invokeMethod(
        QCoreApplication::instance(), [code]() { QCoreApplication::exit(code); }, Qt::QueuedConnection);
}

void Cli::failWith(const Error &error)
{
    if (m_finished)
        return;
    printError(error);
    finish(ExitFailed);
}

client::ApiClient::Callback Cli::handle(std::function<void(const client::ApiResponse &)> onOk)
{
    return [this, onOk = std::move(onOk)](const Result<client::ApiResponse> &result) {
        if (m_finished)
            return;
        if (!result) {
            failWith(result.error());
            return;
        }
        onOk(*result);
    };
}

void Cli::createApp()
{
    sendSpec("POST", QStringLiteral("/api/v1/apps"));
}

void Cli::updateApp()
{
    sendSpec("PUT", QStringLiteral("/api/v1/apps/") + segment(m_args.arguments.value(0)));
}

void Cli::sendSpec(const QByteArray &method, const QString &apiPath)
{
    const QString path = m_args.value(QStringLiteral("file"));
    QFile file;
    bool opened = false;
    if (path == QLatin1String("-"))
        opened = file.open(stdin, QIODevice::ReadOnly);
    else {
        file.setFileName(path);
        opened = file.open(QIODevice::ReadOnly);
    }
    if (!opened) {
        failWith(Error{ErrorCode::Invalid, QStringLiteral("cannot read the spec: %1").arg(file.errorString()), path});
        return;
    }
    const QByteArray spec = file.readAll();
    const QByteArray contentType = path.endsWith(QLatin1String(".json")) ? QByteArrayLiteral("application/json")
                                                                         : QByteArrayLiteral("application/yaml");
    const bool creating = method == "POST";
    m_client->request(
        method, apiPath, spec, contentType, handle([this, creating](const client::ApiResponse &r) {
            if (m_args.json) {
                printJson(r.json);
            } else {
                printOut(
                    QStringLiteral("%1 app %2")
                        .arg(creating ? QStringLiteral("created") : QStringLiteral("updated"), str(r.json, "name")));
                printOut(QStringLiteral("deploy it with: pando deploy %1 --wait").arg(str(r.json, "name")));
            }
            finish(ExitOk);
        }));
}

void Cli::listApps()
{
    m_client->get(QStringLiteral("/api/v1/apps"), handle([this](const client::ApiResponse &r) {
                      if (m_args.json) {
                          printJson(r.json);
                          return finish(ExitOk);
                      }
                      const QJsonArray apps = r.json.value(QStringLiteral("apps")).toArray();
                      if (apps.isEmpty()) {
                          printOut(QStringLiteral("no apps yet; create one with: pando apps create -f spec.yaml"));
                          return finish(ExitOk);
                      }
                      QList<QStringList> rows;
                      for (const QJsonValue &value : apps) {
                          const QJsonObject app = value.toObject();
                          const QJsonObject last = app.value(QStringLiteral("last_deploy")).toObject();
                          rows << QStringList{str(app, "name"), str(app, "status"), orDash(str(app, "url")),
                                              last.isEmpty()
                                                  ? QStringLiteral("-")
                                                  : str(last, "id") + QLatin1Char(' ') + str(last, "status")};
                      }
                      printOut(table({QStringLiteral("NAME"), QStringLiteral("STATUS"), QStringLiteral("URL"),
                                      QStringLiteral("LAST DEPLOY")},
                                     rows));
                      finish(ExitOk);
                  }));
}

void Cli::showApp()
{
    const QString name = m_args.arguments.value(0);
    m_client->get(QStringLiteral("/api/v1/apps/") + segment(name), handle([this](const client::ApiResponse &r) {
                      if (m_args.json) {
                          printJson(r.json);
                          return finish(ExitOk);
                      }
                      const QJsonObject spec = r.json.value(QStringLiteral("spec")).toObject();
                      const QJsonObject source = spec.value(QStringLiteral("source")).toObject();
                      const QJsonObject last = r.json.value(QStringLiteral("last_deploy")).toObject();
                      printOut(keyValues({
                          {QStringLiteral("name"), str(r.json, "name")},
                          {QStringLiteral("status"), str(r.json, "status_reason").isEmpty()
                                                         ? str(r.json, "status")
                                                         : str(r.json, "status") + QStringLiteral(" (") +
                                                               str(r.json, "status_reason") + QLatin1Char(')')},
                          {QStringLiteral("url"), orDash(str(r.json, "url"))},
                          {QStringLiteral("source"), str(source, "repo") + QStringLiteral(" @ ") + str(source, "ref")},
                          {QStringLiteral("current deploy"), orDash(str(r.json, "current_deploy"))},
                          {QStringLiteral("last deploy"), deploySummary(last)},
                          {QStringLiteral("created"), timestamp(num(r.json, "created_ms"))},
                      }));
                      finish(ExitOk);
                  }));
}

void Cli::removeApp()
{
    const QString name = m_args.arguments.value(0);
    const bool keepData = m_args.has(QStringLiteral("keep-data"));
    const bool deleteData = m_args.has(QStringLiteral("delete-data"));
    if (keepData && deleteData)
        return failWithCode(Error{ErrorCode::Invalid, QStringLiteral("pass --keep-data or --delete-data, not both"),
                                  QStringLiteral("--delete-data"), {}},
                            ExitUsage);
    if (!keepData && !deleteData)
        return askServiceData(name, [this](const QString &choice) { sendRemoveApp(choice); });
    sendRemoveApp(keepData ? QStringLiteral("keep") : QStringLiteral("delete"));
}

void Cli::sendRemoveApp(const QString &serviceData)
{
    const QString name = m_args.arguments.value(0);
    // Without a choice, pandod refuses an app with services and its answer names both flags.
    const QString data = serviceData.isEmpty() ? QString() : QStringLiteral("?service_data=") + serviceData;
    m_client->remove(QStringLiteral("/api/v1/apps/") + segment(name) + data,
                     handle([this, name](const client::ApiResponse &r) {
                         if (m_args.has(QStringLiteral("no-wait"))) {
                             if (m_args.json)
                                 printJson(r.json);
                             else
                                 printOut(QStringLiteral("removing %1").arg(name));
                             return finish(ExitOk);
                         }
                         if (!m_args.json)
                             printOut(QStringLiteral("removing %1 ...").arg(name));
                         pollRemoved();
                     }));
}

void Cli::pollRemoved()
{
    const QString name = m_args.arguments.value(0);
    m_client->get(QStringLiteral("/api/v1/apps/") + segment(name), [this, name](const Result<client::ApiResponse> &r) {
        if (m_finished)
            return;
        if (!r && r.error().code == ErrorCode::NotFound) {
            if (m_args.json)
                printJson(
                    QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("status"), QStringLiteral("removed")}});
            else
                printOut(QStringLiteral("removed %1").arg(name));
            return finish(ExitOk);
        }
        if (!r && ++m_pollErrors >= MaxPollErrors)
            return failWith(r.error());
        QTimer::singleShot(PollIntervalMs, this, &Cli::pollRemoved);
    });
}

void Cli::deploy()
{
    const QString name = m_args.arguments.value(0);
    QJsonObject body;
    if (m_args.has(QStringLiteral("ref")))
        body.insert(QStringLiteral("ref"), m_args.value(QStringLiteral("ref")));
    m_client->postJson(QStringLiteral("/api/v1/apps/") + segment(name) + QStringLiteral("/deploys"), body,
                       handle([this, name](const client::ApiResponse &r) {
                           m_deployId = str(r.json, "id");
                           if (!m_args.has(QStringLiteral("wait"))) {
                               if (m_args.json)
                                   printJson(r.json);
                               else
                                   printOut(QStringLiteral("deploy %1 queued for %2 (ref %3); follow it with: pando "
                                                           "deploys show %1")
                                                .arg(m_deployId, name, orDash(str(r.json, "ref"))));
                               return finish(ExitOk);
                           }
                           if (!m_args.json)
                               printOut(QStringLiteral("deploying %1 (deploy %2)").arg(name, m_deployId));
                           requestDeployPoll();
                       }));
    if (!m_args.has(QStringLiteral("wait")))
        return;
    // Each event of this app's deploys is a reason to look now rather than at the next tick;
    // the timer still looks every so often, so a lost event or socket costs only latency.
    m_pollTimer = new QTimer(this);
    m_pollTimer->setSingleShot(true);
    connect(m_pollTimer, &QTimer::timeout, this, &Cli::requestDeployPoll);
    m_events = m_client->follow(
        QStringLiteral("/api/v1/events?app=") + segment(name),
        [this](const QJsonObject &event) {
            if (!m_deployId.isEmpty() && str(event, "deploy") == m_deployId)
                requestDeployPoll();
        },
        [](const Status &) {});
}

void Cli::requestDeployPoll()
{
    if (m_finished || m_deployId.isEmpty())
        return;
    if (m_pollInFlight) {
        m_pollAgain = true;
        return;
    }
    pollDeploy();
}

void Cli::pollDeploy()
{
    m_pollInFlight = true;
    m_pollAgain = false;
    if (m_pollTimer)
        m_pollTimer->stop();
    // With the event stream open the timer is only a safety net.
    const int fallbackMs = m_events && m_events->isValid() ? EventFallbackPollMs : PollIntervalMs;
    const auto scheduleNext = [this, fallbackMs] {
        if (m_pollAgain)
            QTimer::singleShot(0, this, &Cli::requestDeployPoll);
        else
            m_pollTimer->start(fallbackMs);
    };
    m_client->get(QStringLiteral("/api/v1/deploys/") + segment(m_deployId), [this, scheduleNext](
                                                                                const Result<client::ApiResponse> &r) {
        m_pollInFlight = false;
        if (m_finished)
            return;
        if (!r) {
            // A restarting server is not the deploy failing; give up only when it stays away.
            if (++m_pollErrors >= MaxPollErrors || r.error().code == ErrorCode::NotFound ||
                r.error().code == ErrorCode::Unauthorized)
                return failWith(r.error());
            scheduleNext();
            return;
        }
        m_pollErrors = 0;
        const QJsonObject view = r->json;
        if (!m_args.json)
            showDeployProgress(view);
        const QString status = str(view, "status");
        if (!isTerminal(status)) {
            scheduleNext();
            return;
        }
        if (m_events)
            m_events->close();
        if (status == QLatin1String("succeeded")) {
            if (m_args.json) {
                printJson(view);
                return finish(ExitOk);
            }
            // The URL is the app's, so ask for it once at the end.
            m_client->get(QStringLiteral("/api/v1/apps/") + segment(str(view, "app")),
                          [this, view](const Result<client::ApiResponse> &app) {
                              const QString url = app ? str(app->json, "url") : QString();
                              printOut(QStringLiteral("deployed %1 in %2%3")
                                           .arg(str(view, "app"), duration(num(view, "duration_ms")),
                                                url.isEmpty() ? QString() : QStringLiteral(": ") + url));
                              finish(ExitOk);
                          });
            return;
        }
        if (m_args.json)
            printJson(view);
        const QString step = str(view, "failed_step");
        failWith(Error{
            status == QLatin1String("cancelled") ? ErrorCode::Cancelled : ErrorCode::Failed,
            status == QLatin1String("cancelled") ? QStringLiteral("the deploy was cancelled")
            : status == QLatin1String("rejected")
                ? QStringLiteral("the deploy did not run: ") + orDash(str(view, "error"))
                : QStringLiteral("failed%1: %2")
                      .arg(step.isEmpty() ? QString() : QStringLiteral(" at step ") + step, orDash(str(view, "error"))),
            QStringLiteral("deploy ") + m_deployId,
            QStringLiteral("see the whole deploy with: pando deploys show %1").arg(m_deployId)});
    });
}

void Cli::showDeployProgress(const QJsonObject &view)
{
    QList<QJsonObject> steps;
    for (const QJsonValue &value : view.value(QStringLiteral("steps")).toArray())
        steps << value.toObject();
    std::sort(steps.begin(), steps.end(),
              [](const QJsonObject &a, const QJsonObject &b) { return num(a, "seq") < num(b, "seq"); });
    for (const QJsonObject &step : steps) {
        const int seq = int(num(step, "seq"));
        const QString status = str(step, "status");
        int &shown = m_stepShown[seq];
        if (status == QLatin1String("running")) {
            if (shown < 1) {
                printStatus(QStringLiteral("  … %1").arg(str(step, "name")));
                shown = 1;
            }
            continue;
        }
        // Waiting for a person: say so once, with how to decide, and keep following.
        if (status == QLatin1String("waiting")) {
            if (shown < 1) {
                printOut(QStringLiteral("  ⏸ %1 %2").arg(str(step, "name").leftJustified(7), str(step, "detail")));
                shown = 1;
            }
            continue;
        }
        if (shown >= 2)
            continue;
        shown = 2;
        const QString mark = status == QLatin1String("succeeded") ? QStringLiteral("✓")
                             : status == QLatin1String("failed")  ? QStringLiteral("✗")
                                                                  : QStringLiteral("-");
        // Step names are short (fetch … retire): pad them so durations line up.
        QString line = QStringLiteral("  %1 %2 %3")
                           .arg(mark, str(step, "name").leftJustified(7),
                                status == QLatin1String("skipped") ? QStringLiteral("skipped")
                                                                   : duration(num(step, "duration_ms")));
        if (!str(step, "detail").isEmpty())
            line += QStringLiteral("  ") + str(step, "detail");
        printOut(line);
    }
}

void Cli::listDeploys()
{
    const QString name = m_args.arguments.value(0);
    QString path = QStringLiteral("/api/v1/apps/") + segment(name) + QStringLiteral("/deploys");
    if (m_args.has(QStringLiteral("limit")))
        path += QStringLiteral("?limit=") + m_args.value(QStringLiteral("limit"));
    m_client->get(path, handle([this, name](const client::ApiResponse &r) {
                      if (m_args.json) {
                          printJson(r.json);
                          return finish(ExitOk);
                      }
                      const QJsonArray deploys = r.json.value(QStringLiteral("deploys")).toArray();
                      if (deploys.isEmpty()) {
                          printOut(QStringLiteral("no deploys of %1 yet").arg(name));
                          return finish(ExitOk);
                      }
                      QList<QStringList> rows;
                      for (const QJsonValue &value : deploys) {
                          const QJsonObject d = value.toObject();
                          rows << QStringList{str(d, "id"),
                                              str(d, "status"),
                                              orDash(str(d, "ref")),
                                              shortCommit(str(d, "commit")),
                                              timestamp(num(d, "created_ms")),
                                              num(d, "duration_ms") > 0 ? duration(num(d, "duration_ms"))
                                                                        : QStringLiteral("-"),
                                              str(d, "failed_step").isEmpty()
                                                  ? QString()
                                                  : str(d, "failed_step") + QStringLiteral(": ") + str(d, "error")};
                      }
                      printOut(table({QStringLiteral("ID"), QStringLiteral("STATUS"), QStringLiteral("REF"),
                                      QStringLiteral("COMMIT"), QStringLiteral("CREATED"), QStringLiteral("DURATION"),
                                      QStringLiteral("ERROR")},
                                     rows));
                      finish(ExitOk);
                  }));
}

void Cli::showDeploy()
{
    const QString id = m_args.arguments.value(0);
    m_client->get(
        QStringLiteral("/api/v1/deploys/") + segment(id), handle([this](const client::ApiResponse &r) {
            if (m_args.json) {
                printJson(r.json);
                return finish(ExitOk);
            }
            const QJsonObject &d = r.json;
            QList<std::pair<QString, QString>> pairs = {
                {QStringLiteral("deploy"), str(d, "id")},
                {QStringLiteral("app"), str(d, "app")},
                {QStringLiteral("status"), str(d, "status")},
                {QStringLiteral("ref"), orDash(str(d, "ref"))},
                {QStringLiteral("commit"), orDash(str(d, "commit"))},
                {QStringLiteral("by"), orDash(str(d, "actor"))},
                {QStringLiteral("created"), timestamp(num(d, "created_ms"))},
                {QStringLiteral("duration"),
                 num(d, "duration_ms") > 0 ? duration(num(d, "duration_ms")) : QStringLiteral("-")},
            };
            if (!str(d, "error").isEmpty())
                pairs.append({QStringLiteral("error"), str(d, "failed_step") + QStringLiteral(": ") + str(d, "error")});
            printOut(keyValues(pairs));
            QList<QStringList> rows;
            for (const QJsonValue &value : d.value(QStringLiteral("steps")).toArray()) {
                const QJsonObject s = value.toObject();
                rows << QStringList{str(s, "name"), str(s, "status"),
                                    num(s, "duration_ms") > 0 ? duration(num(s, "duration_ms")) : QStringLiteral("-"),
                                    str(s, "detail")};
            }
            if (!rows.isEmpty()) {
                printOut(QString());
                printOut(table({QStringLiteral("STEP"), QStringLiteral("STATUS"), QStringLiteral("DURATION"),
                                QStringLiteral("DETAIL")},
                               rows));
            }
            finish(ExitOk);
        }));
}

void Cli::logs()
{
    const QString name = m_args.arguments.value(0);
    const QString tail =
        m_args.has(QStringLiteral("tail")) ? m_args.value(QStringLiteral("tail")) : QStringLiteral("100");
    const QString path = QStringLiteral("/api/v1/apps/") + segment(name) + QStringLiteral("/logs");
    auto print = [this](const QJsonObject &line) {
        if (m_args.json)
            printOut(QString::fromUtf8(QJsonDocument(line).toJson(QJsonDocument::Compact)));
        else if (line.contains(QStringLiteral("ended")))
            printErr(QStringLiteral("pando: the log stream ended: %1").arg(str(line, "ended")));
        else
            printOut(logLineText(line));
    };
    if (!m_args.has(QStringLiteral("follow"))) {
        m_client->get(path + QStringLiteral("?tail=") + tail, handle([this, print](const client::ApiResponse &r) {
                          for (const QJsonValue &value : r.json.value(QStringLiteral("lines")).toArray())
                              print(value.toObject());
                          finish(ExitOk);
                      }));
        return;
    }
    // One stream for the last lines and the live ones: nothing written in between is lost.
    m_stream = m_client->follow(
        path + QStringLiteral("/follow?tail=") + tail,
        [this, print](const QJsonObject &line) {
            if (!m_finished)
                print(line);
        },
        [this](const Status &closed) {
            if (m_finished)
                return;
            if (!closed)
                return failWith(closed.error());
            finish(ExitOk);
        });
}

} // namespace pando::cli
