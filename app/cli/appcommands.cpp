// `pando apps …`, `pando deploy`, `pando deploys …` and `pando logs`. A deploy followed with
// --wait is followed by deploywatch.cpp. `apps forward` is a client::AppForwarder that runs until
// interrupted.

#include "cli.h"
#include "commands.h"
#include "output.h"
#include "prompt.h"

#include "app/client/appforwarder.h"
#include "core/common/linediff.h"
#include "core/vocab/vocab.h"

#include <QCoreApplication>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTimer>
#include <QWebSocket>
#include <algorithm>

namespace pando::cli {
namespace {

QString deploySummary(const QJsonObject &d)
{
    if (d.isEmpty())
        return QStringLiteral("-");
    QString text = str(d, "id") + QLatin1Char(' ') + str(d, "status");
    if (!str(d, "ref").isEmpty())
        text += QStringLiteral(" (") + str(d, "ref") +
                (str(d, "commit").isEmpty() ? QString() : QStringLiteral(" @ ") + shortCommit(str(d, "commit"))) +
                QLatin1Char(')');
    const std::optional<core::DeployStatus> status = core::parseDeployStatus(str(d, "status"));
    if ((status == core::DeployStatus::Failed || status == core::DeployStatus::Rejected) && !str(d, "error").isEmpty())
        text += QStringLiteral(": ") + str(d, "failed_step") + QStringLiteral(": ") + str(d, "error");
    return text;
}

QString logLineText(const QJsonObject &line)
{
    const qint64 time = num(line, "time_ms");
    const QString prefix = time > 0 ? timestamp(time) + QLatin1Char(' ') : QString();
    return prefix + (str(line, "stream") == QLatin1String("stderr") ? QStringLiteral("! ") : QString()) +
           str(line, "text");
}

void sendRemoveApp(Cli &cli, client::ServiceData serviceData);
void pollRemoved(Cli &cli, int errors = 0);

// Sends the spec file (--file, "-" for stdin): a new app when creating, else the named one's.
void sendSpec(Cli &cli, bool creating)
{
    const QString path = cli.args().value(QStringLiteral("file"));
    QFile file;
    bool opened = false;
    if (path == QLatin1String("-"))
        opened = file.open(stdin, QIODevice::ReadOnly);
    else {
        file.setFileName(path);
        opened = file.open(QIODevice::ReadOnly);
    }
    if (!opened) {
        cli.failWith(
            Error{ErrorCode::Invalid, QStringLiteral("cannot read the spec: %1").arg(file.errorString()), path});
        return;
    }
    const QByteArray spec = file.readAll();
    const client::SpecFormat format =
        path.endsWith(QLatin1String(".json")) ? client::SpecFormat::Json : client::SpecFormat::Yaml;
    auto done = cli.handle([&cli, creating](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
        } else {
            printOut(QStringLiteral("%1 app %2")
                         .arg(creating ? QStringLiteral("created") : QStringLiteral("updated"), str(r.json, "name")));
            printOut(QStringLiteral("deploy it with: pando deploy %1 --wait").arg(str(r.json, "name")));
        }
        cli.finish(ExitOk);
    });
    if (creating)
        return cli.api().createApp(spec, format, std::move(done));
    const QString name = cli.args().arguments.value(0);
    // The change is shown as a diff of the spec's text first, and on a terminal asked about.
    cli.api().app(name, cli.handle([&cli, name, spec, format, done = std::move(done)](const client::ApiResponse &r) {
        const QString before = r.json.value(QStringLiteral("spec_text")).toString();
        const QStringList diff = core::unifiedDiff(core::lineDiff(before, QString::fromUtf8(spec)));
        if (diff.isEmpty()) {
            if (cli.args().json)
                printJson(r.json);
            else
                printOut(QStringLiteral("the spec of app %1 already says this; nothing changed").arg(name));
            return cli.finish(ExitOk);
        }
        const auto send = [&cli, name, spec, format, done] {
            cli.api().updateApp(name, spec, format, done);
        };
        if (cli.args().json)
            return send();
        printOut(QStringLiteral("--- app %1 (as the server has it)\n+++ %2\n")
                     .arg(name, cli.args().value(QStringLiteral("file"))) +
                 diff.join(u'\n'));
        if (cli.args().has(QStringLiteral("yes")) || !stdinIsTerminal())
            return send();
        cli.confirm(QStringLiteral("update app %1?").arg(name), QStringLiteral("apps update"), send);
    }));
}

void createApp(Cli &cli)
{
    sendSpec(cli, true);
}

void updateApp(Cli &cli)
{
    sendSpec(cli, false);
}

void listApps(Cli &cli)
{
    cli.api().apps(cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonArray apps = r.json.value(QStringLiteral("apps")).toArray();
        if (apps.isEmpty()) {
            printOut(QStringLiteral("no apps yet; create one with: pando apps create -f spec.yaml"));
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue value : apps) {
            const QJsonObject app = value.toObject();
            const QJsonObject last = app.value(QStringLiteral("last_deploy")).toObject();
            // An unhealthy app's reason is what a reader needs first: it is shown in the list too.
            const bool unhealthy = core::parseAppStatus(str(app, "status")) == core::AppStatus::Unhealthy;
            const QString status = unhealthy && !str(app, "status_reason").isEmpty()
                                       ? str(app, "status") + QStringLiteral(": ") + str(app, "status_reason")
                                       : str(app, "status");
            rows << QStringList{str(app, "name"), status, orDash(str(app, "url")),
                                last.isEmpty() ? QStringLiteral("-")
                                               : str(last, "id") + QLatin1Char(' ') + str(last, "status")};
        }
        printOut(table(
            {QStringLiteral("NAME"), QStringLiteral("STATUS"), QStringLiteral("URL"), QStringLiteral("LAST DEPLOY")},
            rows));
        cli.finish(ExitOk);
    }));
}

// "https://shop.example.com (certificate from Pebble Intermediate CA until 2027-03-01 10:00:00)".
QString addressLine(const QJsonObject &address)
{
    QString line = str(address, "url");
    if (address.value(QStringLiteral("moved")).toBool())
        return line + QStringLiteral(" (moved: redirects to the app's address)");
    if (str(address, "tls") == QLatin1String("off"))
        return line + QStringLiteral(" (plain HTTP)");
    const QJsonObject certificate = address.value(QStringLiteral("certificate")).toObject();
    const QString error = certificate.value(QStringLiteral("error")).toString();
    const qint64 notAfter = num(certificate, "not_after_ms");
    if (notAfter > 0)
        line += QStringLiteral(" (certificate from %1 until %2)").arg(str(certificate, "issuer"), timestamp(notAfter));
    else if (error.isEmpty())
        line += QStringLiteral(" (certificate not issued yet)");
    if (!error.isEmpty())
        line += QStringLiteral(" (certificate problem: %1)").arg(error);
    return line;
}

void showApp(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    cli.api().app(name, cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonObject spec = r.json.value(QStringLiteral("spec")).toObject();
        const QJsonObject source = spec.value(QStringLiteral("source")).toObject();
        const QJsonObject last = r.json.value(QStringLiteral("last_deploy")).toObject();
        QList<std::pair<QString, QString>> lines{
            {QStringLiteral("name"), str(r.json, "name")},
            {QStringLiteral("status"),
             str(r.json, "status_reason").isEmpty()
                 ? str(r.json, "status")
                 : str(r.json, "status") + QStringLiteral(" (") + str(r.json, "status_reason") + QLatin1Char(')')},
            {QStringLiteral("url"), orDash(str(r.json, "url"))},
        };
        // Each address the edge serves it at, with its certificate's state.
        for (const QJsonValue value : r.json.value(QStringLiteral("addresses")).toArray())
            lines.append({QStringLiteral("address"), addressLine(value.toObject())});
        if (str(spec.value(QStringLiteral("route")).toObject(), "auth") == QStringLiteral("pando"))
            lines.append({QStringLiteral("access"),
                          QStringLiteral("people signed in to Pando who may read it (route.auth: pando)")});
        const QString through = str(r.json, "source_connection");
        lines.append({QStringLiteral("source"),
                      (source.contains(QStringLiteral("image"))
                           ? QStringLiteral("image %1 (pull: %2)").arg(str(source, "image"), str(source, "pull"))
                           : str(source, "repo") + QStringLiteral(" @ ") + str(source, "ref")) +
                          (through.isEmpty() ? QString() : QStringLiteral(" (through connection %1)").arg(through))});
        QStringList volumes;
        for (const QJsonValue value :
             spec.value(QStringLiteral("run")).toObject().value(QStringLiteral("volumes")).toArray()) {
            const QJsonObject volume = value.toObject();
            volumes << QStringLiteral("%1 at %2").arg(str(volume, "name"), str(volume, "path")) +
                           (volume.contains(QStringLiteral("size")) ? QStringLiteral(" (%1)").arg(str(volume, "size"))
                                                                    : QString());
        }
        if (!volumes.isEmpty())
            lines.append({QStringLiteral("volumes"), volumes.join(QStringLiteral(", "))});
        lines.append({QStringLiteral("current deploy"), orDash(str(r.json, "current_deploy"))});
        lines.append({QStringLiteral("last deploy"), deploySummary(last)});
        lines.append({QStringLiteral("created"), timestamp(num(r.json, "created_ms"))});
        printOut(keyValues(lines));
        cli.finish(ExitOk);
    }));
}

void removeApp(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    const bool keepData = cli.args().has(QStringLiteral("keep-data"));
    const bool deleteData = cli.args().has(QStringLiteral("delete-data"));
    if (keepData && deleteData)
        return cli.failWithCode(Error{ErrorCode::Invalid,
                                      QStringLiteral("pass --keep-data or --delete-data, not both"),
                                      QStringLiteral("--delete-data"),
                                      {}},
                                ExitUsage);
    if (!keepData && !deleteData)
        return askServiceData(cli, name, [&cli](client::ServiceData choice) { sendRemoveApp(cli, choice); });
    sendRemoveApp(cli, keepData ? client::ServiceData::Keep : client::ServiceData::Delete);
}

void sendRemoveApp(Cli &cli, client::ServiceData serviceData)
{
    const QString name = cli.args().arguments.value(0);
    // Without a choice, pandod refuses an app with services and its answer names both flags.
    cli.api().removeApp(name, serviceData, cli.handle([&cli, name](const client::ApiResponse &r) {
        if (cli.args().has(QStringLiteral("no-wait"))) {
            if (cli.args().json)
                printJson(r.json);
            else
                printOut(QStringLiteral("removing %1").arg(name));
            return cli.finish(ExitOk);
        }
        if (!cli.args().json)
            printOut(QStringLiteral("removing %1 ...").arg(name));
        pollRemoved(cli);
    }));
}

void pollRemoved(Cli &cli, int errors)
{
    const QString name = cli.args().arguments.value(0);
    cli.api().app(name, [&cli, name, errors](const Result<client::ApiResponse> &r) {
        if (cli.isFinished())
            return;
        if (!r && r.error().code == ErrorCode::NotFound) {
            if (cli.args().json)
                printJson(
                    QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("status"), QStringLiteral("removed")}});
            else
                printOut(QStringLiteral("removed %1").arg(name));
            return cli.finish(ExitOk);
        }
        if (!r && errors + 1 >= MaxPollErrors)
            return cli.failWith(r.error());
        QTimer::singleShot(PollIntervalMs, &cli, [&cli, next = r ? errors : errors + 1] { pollRemoved(cli, next); });
    });
}

void deploy(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    cli.api().deploy(name, cli.args().value(QStringLiteral("ref")),
                     cli.handle([&cli, name](const client::ApiResponse &r) {
                         followQueued(cli, name, r.json, QStringLiteral("ref"));
                     }));
}

// The version before the serving one (or --to's) deployed again, its image used again.
void rollback(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    cli.api().rollback(name, cli.args().value(QStringLiteral("to")),
                       cli.handle([&cli, name](const client::ApiResponse &r) {
                           followQueued(cli, name, r.json, QStringLiteral("back to commit"));
                       }));
}

// Follows a deploy already running (another terminal's, the desktop's, a webhook's) as
// `deploy --wait` does; one that has ended is reported at once.
void watchDeploy(Cli &cli)
{
    const QString id = cli.args().arguments.value(0);
    cli.api().deployDetail(
        id, cli.handle([&cli, id](const client::ApiResponse &r) { followDeploy(cli, id, str(r.json, "app")); }));
}

void cancelDeploy(Cli &cli)
{
    const QString id = cli.args().arguments.value(0);
    cli.api().cancelDeploy(id, cli.handle([&cli, id](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        else
            printOut(QStringLiteral("deploy %1 is being cancelled; the serving version stays (pando deploys watch %1 "
                                    "follows it to its end)")
                         .arg(id));
        cli.finish(ExitOk);
    }));
}

// The spec as it was written, comments and all: ready to edit and give back to apps update.
void showSpec(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    cli.api().app(name, cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json.value(QStringLiteral("spec")).toObject());
            return cli.finish(ExitOk);
        }
        QString text = r.json.value(QStringLiteral("spec_text")).toString();
        if (text.endsWith(u'\n'))
            text.chop(1);
        printOut(text);
        cli.finish(ExitOk);
    }));
}

void listDeploys(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    cli.api().deploys(
        name, cli.args().count(QStringLiteral("limit")), cli.handle([&cli, name](const client::ApiResponse &r) {
            if (cli.args().json) {
                printJson(r.json);
                return cli.finish(ExitOk);
            }
            const QJsonArray deploys = r.json.value(QStringLiteral("deploys")).toArray();
            if (deploys.isEmpty()) {
                printOut(QStringLiteral("no deploys of %1 yet").arg(name));
                return cli.finish(ExitOk);
            }
            QList<QStringList> rows;
            for (const QJsonValue value : deploys) {
                const QJsonObject d = value.toObject();
                rows << QStringList{str(d, "id"),
                                    str(d, "status"),
                                    orDash(str(d, "ref")),
                                    shortCommit(str(d, "commit")),
                                    timestamp(num(d, "created_ms")),
                                    num(d, "duration_ms") > 0 ? duration(num(d, "duration_ms")) : QStringLiteral("-"),
                                    str(d, "failed_step").isEmpty()
                                        ? QString()
                                        : str(d, "failed_step") + QStringLiteral(": ") + str(d, "error")};
            }
            printOut(
                table({QStringLiteral("ID"), QStringLiteral("STATUS"), QStringLiteral("REF"), QStringLiteral("COMMIT"),
                       QStringLiteral("CREATED"), QStringLiteral("DURATION"), QStringLiteral("ERROR")},
                      rows));
            cli.finish(ExitOk);
        }));
}

void showDeploy(Cli &cli)
{
    const QString id = cli.args().arguments.value(0);
    cli.api().deployDetail(id, cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonObject &d = r.json;
        QList<std::pair<QString, QString>> pairs = {
            {QStringLiteral("deploy"), str(d, "id")},
            {QStringLiteral("app"), str(d, "app")},
            {QStringLiteral("status"), str(d, "status")},
            {QStringLiteral("ref"), orDash(str(d, "ref"))},
            {QStringLiteral("commit"), orDash(str(d, "commit"))},
            {QStringLiteral("port"), num(d, "port") > 0 ? QString::number(num(d, "port")) : QStringLiteral("-")},
            {QStringLiteral("by"), orDash(str(d, "actor"))},
            {QStringLiteral("created"), timestamp(num(d, "created_ms"))},
            {QStringLiteral("duration"),
             num(d, "duration_ms") > 0 ? duration(num(d, "duration_ms")) : QStringLiteral("-")},
        };
        if (!str(d, "error").isEmpty())
            pairs.append({QStringLiteral("error"), str(d, "failed_step") + QStringLiteral(": ") + str(d, "error")});
        printOut(keyValues(pairs));
        QList<QStringList> rows;
        for (const QJsonValue value : d.value(QStringLiteral("steps")).toArray()) {
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
        cli.finish(ExitOk);
    }));
}

// `pando deploys log ID [--step NAME]`: what the deploy's steps printed, each line under its
// step's name (one step's alone with --step).
void deployLog(Cli &cli)
{
    const QString id = cli.args().arguments.value(0);
    const QString only = cli.args().value(QStringLiteral("step"));
    cli.api().deployDetail(id, cli.handle([&cli, id, only](const client::ApiResponse &detail) {
        QHash<int, QString> names;
        for (const QJsonValue value : detail.json.value(QStringLiteral("steps")).toArray())
            names.insert(int(num(value.toObject(), "seq")), str(value.toObject(), "name"));
        std::optional<int> seq;
        if (!only.isEmpty()) {
            seq = stepSeq(detail.json, only);
            if (*seq < 0)
                return cli.failWith(Error{ErrorCode::NotFound, QStringLiteral("deploy %1 has no step %2").arg(id, only),
                                          QStringLiteral("--step"),
                                          QStringLiteral("its steps: ") + QStringList(names.values()).join(u", ")});
        }
        cli.api().deployLog(id, seq, 0, 5000, cli.handle([&cli, names, seq](const client::ApiResponse &r) {
            if (cli.args().json) {
                printJson(r.json);
                return cli.finish(ExitOk);
            }
            for (const QJsonValue value : r.json.value(QStringLiteral("lines")).toArray()) {
                const QJsonObject line = value.toObject();
                printOut(seq ? str(line, "text")
                             : names.value(int(num(line, "step"))) + QStringLiteral(" | ") + str(line, "text"));
            }
            cli.finish(ExitOk);
        }));
    }));
}

void logs(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    const int tail = cli.args().count(QStringLiteral("tail")).value_or(100);
    auto print = [&cli](const QJsonObject &line) {
        if (cli.args().json)
            printOut(QString::fromUtf8(QJsonDocument(line).toJson(QJsonDocument::Compact)));
        else if (line.contains(QStringLiteral("ended")))
            printErr(QStringLiteral("pando: the log stream ended: %1").arg(str(line, "ended")));
        else
            printOut(logLineText(line));
    };
    if (!cli.args().has(QStringLiteral("follow"))) {
        cli.api().logTail(name, tail, cli.handle([&cli, print](const client::ApiResponse &r) {
            for (const QJsonValue value : r.json.value(QStringLiteral("lines")).toArray())
                print(value.toObject());
            cli.finish(ExitOk);
        }));
        return;
    }
    // One stream for the last lines and the live ones: nothing written in between is lost.
    QWebSocket *stream = cli.api().followLogs(
        name, tail,
        [&cli, print](const QJsonObject &line) {
            if (!cli.isFinished())
                print(line);
        },
        [&cli](const Status &closed) {
            if (cli.isFinished())
                return;
            if (!closed)
                return cli.failWith(closed.error());
            cli.finish(ExitOk);
        });
    cli.own(stream);
}

void forwardApp(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    const int port = cli.args().count(QStringLiteral("port")).value_or(0);
    if (port > 65535)
        return cli.failWithCode(Error{ErrorCode::Invalid, QStringLiteral("%1 is not a port").arg(port),
                                      QStringLiteral("--port"), QStringLiteral("a port is 1 to 65535; 0 picks one")},
                                ExitUsage);
    auto *forwarder = new client::AppForwarder(cli.api().client(), name, &cli);
    // A connection that fails (the app stopped, a cap was reached) is said; the others go on.
    QObject::connect(forwarder, &client::AppForwarder::connectionFailed, &cli, [&cli, name](const Error &error) {
        if (!cli.isFinished())
            printErr(QStringLiteral("pando: a connection to app %1 failed: %2").arg(name, error.text()));
    });
    forwarder->start(quint16(port), [&cli, forwarder, name](const Result<quint16> &listening) {
        if (cli.isFinished())
            return;
        if (!listening)
            return cli.failWith(listening.error());
        const QString local = QStringLiteral("http://127.0.0.1:%1").arg(*listening);
        const QString server = forwarder->server().toString();
        if (cli.args().json)
            printOut(
                QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("url"), QString(local + QLatin1Char('/'))},
                                                            {QStringLiteral("port"), double(*listening)},
                                                            {QStringLiteral("app"), name},
                                                            {QStringLiteral("server"), server}})
                                      .toJson(QJsonDocument::Compact)));
        else
            printOut(QStringLiteral("Forwarding %1 -> app %2 on %3 (Ctrl+C to stop)").arg(local, name, server));
        // Runs until Ctrl-C (exit 130, as every command that waits).
        cli.setOnInterrupt([forwarder] { forwarder->stop(); });
    });
}

constexpr CommandDef AppTable[] = {
    {"apps",
     "create",
     "",
     0,
     0,
     {{{&flags::File, 'f', Required}}},
     "create an app from its spec (-f - reads stdin)",
     &createApp},
    {"apps",
     "update",
     "NAME",
     1,
     1,
     {{{&flags::File, 'f', Required}, {&flags::Yes, 'y'}}},
     "replace an app's spec, showing the diff (and asking, on a terminal); the next deploy runs it",
     &updateApp},
    {"apps", "list", "", 0, 0, {}, "list the apps", &listApps},
    {"apps", "show", "NAME", 1, 1, {}, "show an app: URL, status, current and last deploy", &showApp},
    {"apps",
     "forward",
     "NAME",
     1,
     1,
     {{{&flags::Port}}},
     "reach an app from this machine: http://127.0.0.1:PORT through the server, until Ctrl+C",
     &forwardApp,
     Needs::Token,
     nullptr,
     "Each connection to the local port rides a WebSocket to the server, with the token and the same TLS checks "
     "as every other command; the server connects to the app's stable route. Needs read access to the app."},
    {"apps",
     "rm",
     "NAME",
     1,
     1,
     {{{&flags::NoWait}, {&flags::KeepData}, {&flags::DeleteData}}},
     "remove an app and wait until it is gone",
     &removeApp,
     Needs::Token,
     nullptr,
     "An app with services needs --keep-data or --delete-data (asked on a terminal)."},
    {"",
     "deploy",
     "NAME",
     1,
     1,
     {{{&flags::Ref}, {&flags::Wait}, {&flags::Quiet}}},
     "deploy an app; --wait follows its steps and the build's output to the end",
     &deploy},
    {"",
     "rollback",
     "NAME",
     1,
     1,
     {{{&flags::To}, {&flags::Wait}, {&flags::Quiet}}},
     "deploy the version before the serving one again (or --to's), reusing its image",
     &rollback},
    {"deploys", "list", "NAME", 1, 1, {{{&flags::Limit}}}, "list an app's deploys", &listDeploys},
    {"deploys", "show", "ID", 1, 1, {}, "show a deploy and its steps", &showDeploy},
    {"deploys",
     "watch",
     "ID",
     1,
     1,
     {{{&flags::Quiet}}},
     "follow a deploy and what its steps print to its end, as deploy --wait does",
     &watchDeploy},
    {"deploys",
     "cancel",
     "ID",
     1,
     1,
     {},
     "cancel a queued or running deploy; the serving version stays",
     &cancelDeploy},
    {"apps", "spec", "NAME", 1, 1, {}, "print an app's spec as it was written (--json: as JSON)", &showSpec},
    {"apps",
     "exec",
     "NAME -- COMMAND [ARG...]",
     2,
     1000,
     {{{&flags::Tty, 't'}}},
     "run a command in the container the app serves from; exits with its exit code",
     &execInApp,
     Needs::Token,
     nullptr,
     "Standard input goes to the command and its output comes back as it prints it. --tty gives it a\n"
     "terminal: pando apps exec web -t -- sh. Needs the right to change the app; audited (the command's\n"
     "first word only). A command left when pando is stopped may go on in the container."},
    {"deploys",
     "log",
     "ID",
     1,
     1,
     {{{&flags::Step}}},
     "print what a deploy's steps printed (the build's output, …)",
     &deployLog},
    {"",
     "logs",
     "NAME",
     1,
     1,
     {{{&flags::Follow, 'f'}, {&flags::Tail}}},
     "print an app's log; -f follows new lines",
     &logs},
};
static_assert(isComplete(AppTable), "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> appCommands()
{
    return AppTable;
}

} // namespace pando::cli
