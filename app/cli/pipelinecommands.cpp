// `pando pipelines|jobs|runs|secrets`: the pipeline runner's commands, over the same API as
// everything else. Following a run lives in runwatch.cpp.

#include "cli.h"
#include "output.h"
#include "prompt.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QStringDecoder>

namespace pando::cli {
namespace {

Result<QByteArray> readInput(const QString &path, const QString &what)
{
    QFile file;
    bool opened = false;
    if (path == QLatin1String("-")) {
        opened = file.open(stdin, QIODevice::ReadOnly);
    } else {
        file.setFileName(path);
        opened = file.open(QIODevice::ReadOnly);
    }
    if (!opened)
        return fail(ErrorCode::Invalid, QStringLiteral("cannot read the %1: %2").arg(what, file.errorString()), path);
    return file.readAll();
}

bool useColour()
{
    return stdoutIsTerminal() && qEnvironmentVariableIsEmpty("NO_COLOR");
}

QString colouredDiffLine(const QString &line)
{
    if (!useColour())
        return line;
    const char *colour = nullptr;
    if (line.startsWith(QLatin1String("+++")) || line.startsWith(QLatin1String("---")))
        colour = "\033[1m";
    else if (line.startsWith(QLatin1Char('+')))
        colour = "\033[32m";
    else if (line.startsWith(QLatin1Char('-')))
        colour = "\033[31m";
    else if (line.startsWith(QLatin1String("@@")))
        colour = "\033[36m";
    if (!colour)
        return line;
    return QLatin1String(colour) + line + QStringLiteral("\033[0m");
}

QString runTitle(const QJsonObject &run)
{
    return QStringLiteral("%1/%2 #%3").arg(str(run, "pipeline"), str(run, "job")).arg(num(run, "number"));
}

QString durationOrDash(const QJsonObject &o)
{
    return num(o, "duration_ms") > 0 ? duration(num(o, "duration_ms")) : QStringLiteral("-");
}

QString stepLabel(const QJsonObject &step)
{
    const QString kind = str(step, "kind");
    const QString name = str(step, "name");
    if (name.isEmpty() || name == kind)
        return kind;
    return kind.isEmpty() ? name : kind + QLatin1Char(' ') + name;
}

void stepRows(const QJsonArray &steps, int depth, QList<QStringList> &rows)
{
    for (const QJsonValue &value : steps) {
        const QJsonObject step = value.toObject();
        const bool cached = step.value(QStringLiteral("cached")).toBool();
        rows << QStringList{
            QString(depth * 2, QLatin1Char(' ')) + stepLabel(step),
            cached ? QStringLiteral("unchanged") : str(step, "status"),
            cached ? QStringLiteral("-") : durationOrDash(step),
            step.contains(QStringLiteral("attempt")) ? QString::number(num(step, "attempt")) : QStringLiteral("-"),
            step.contains(QStringLiteral("exit_code")) ? QString::number(num(step, "exit_code")) : QStringLiteral("-"),
            str(step, "error")};
        stepRows(step.value(QStringLiteral("children")).toArray(), depth + 1, rows);
    }
}

// "waiting for approval a0123… (approve ship): pando approvals approve a0123…", one per waiting step.
void waitingApprovals(const QJsonArray &steps, QStringList &lines)
{
    for (const QJsonValue &value : steps) {
        const QJsonObject step = value.toObject();
        const QJsonObject approval = step.value(QStringLiteral("approval")).toObject();
        if (str(approval, "status") == QLatin1String("pending"))
            lines << QStringLiteral("waiting for approval %1 (%2): %3")
                         .arg(str(approval, "id"), stepLabel(step), str(approval, "approve"));
        waitingApprovals(step.value(QStringLiteral("children")).toArray(), lines);
    }
}

QString scopeName(const QString &scope)
{
    return scope.isEmpty() ? QStringLiteral("the install") : QStringLiteral("pipeline ") + scope;
}

} // namespace

void Cli::failWithCode(const Error &error, int code)
{
    if (m_finished)
        return;
    printError(error);
    finish(code);
}

void Cli::confirm(const QString &question, const QString &where, std::function<void()> onYes)
{
    if (m_args.has(QStringLiteral("yes")))
        return onYes();
    if (!stdinIsTerminal())
        return failWith(Error{ErrorCode::Invalid,
                              QStringLiteral("not confirmed: standard input is not a terminal, so pando cannot ask"),
                              where, QStringLiteral("pass --yes to go ahead without asking")});
    if (!m_reader)
        m_reader = new LineReader(this);
    m_reader->ask(question + QStringLiteral(" [y/N] "), false,
                  [this, where, onYes = std::move(onYes)](const std::optional<QString> &answer) {
                      if (m_finished)
                          return;
                      if (answer && isYes(*answer))
                          return onYes();
                      failWith(Error{ErrorCode::Cancelled, QStringLiteral("nothing changed: not confirmed"), where});
                  });
}

void Cli::setPipeline()
{
    const QString name = m_args.arguments.value(0);
    auto config = readInput(m_args.value(QStringLiteral("config")), QStringLiteral("pipeline config"));
    if (!config)
        return failWith(config.error());
    QByteArray vars;
    if (m_args.has(QStringLiteral("vars"))) {
        auto read = readInput(m_args.value(QStringLiteral("vars")), QStringLiteral("vars file"));
        if (!read)
            return failWith(read.error());
        vars = *read;
    }
    QJsonObject body{{QStringLiteral("config"), QString::fromUtf8(*config)}, {QStringLiteral("dry_run"), true}};
    if (!vars.isEmpty())
        body.insert(QStringLiteral("vars"), QString::fromUtf8(vars));
    const QString path = QStringLiteral("/api/v1/pipelines/") + segment(name);
    m_client->request("PUT", path, QJsonDocument(body).toJson(QJsonDocument::Compact), "application/json",
                      handle([this, name, body](const client::ApiResponse &r) {
                          const bool changed = r.json.value(QStringLiteral("changed")).toBool();
                          const QJsonObject pipeline = r.json.value(QStringLiteral("pipeline")).toObject();
                          if (!changed) {
                              if (m_args.json)
                                  printJson(r.json);
                              else
                                  printOut(QStringLiteral("pipeline %1 is unchanged (version %2)")
                                               .arg(name)
                                               .arg(num(pipeline, "config_version")));
                              return finish(ExitOk);
                          }
                          if (!m_args.json) {
                              if (r.json.value(QStringLiteral("created")).toBool())
                                  printOut(QStringLiteral("pipeline %1 is new:").arg(name));
                              for (const QJsonValue &line : r.json.value(QStringLiteral("diff")).toArray())
                                  printOut(colouredDiffLine(line.toString()));
                          }
                          QJsonObject apply = body;
                          apply.insert(QStringLiteral("dry_run"), false);
                          confirm(QStringLiteral("apply these changes?"), QStringLiteral("pipelines set ") + name,
                                  [this, apply] { applyPipeline(apply); });
                      }));
}

void Cli::applyPipeline(const QJsonObject &body)
{
    const QString name = m_args.arguments.value(0);
    m_client->request(
        "PUT", QStringLiteral("/api/v1/pipelines/") + segment(name), QJsonDocument(body).toJson(QJsonDocument::Compact),
        "application/json", handle([this, name](const client::ApiResponse &r) {
            if (m_args.json) {
                printJson(r.json);
                return finish(ExitOk);
            }
            const QJsonObject pipeline = r.json.value(QStringLiteral("pipeline")).toObject();
            printOut(QStringLiteral("%1 pipeline %2 (version %3)")
                         .arg(r.json.value(QStringLiteral("created")).toBool() ? QStringLiteral("created")
                                                                               : QStringLiteral("updated"),
                              name)
                         .arg(num(pipeline, "config_version")));
            if (pipeline.value(QStringLiteral("paused")).toBool())
                printOut(QStringLiteral("it is paused; start it with: pando pipelines unpause %1").arg(name));
            finish(ExitOk);
        }));
}

void Cli::listPipelines()
{
    m_client->get(QStringLiteral("/api/v1/pipelines"), handle([this](const client::ApiResponse &r) {
                      if (m_args.json) {
                          printJson(r.json);
                          return finish(ExitOk);
                      }
                      const QJsonArray pipelines = r.json.value(QStringLiteral("pipelines")).toArray();
                      if (pipelines.isEmpty()) {
                          printOut(QStringLiteral("no pipelines yet; set one with: pando pipelines set NAME -c "
                                                  "pipeline.yml"));
                          return finish(ExitOk);
                      }
                      QList<QStringList> rows;
                      for (const QJsonValue &value : pipelines) {
                          const QJsonObject p = value.toObject();
                          const bool paused = p.value(QStringLiteral("paused")).toBool();
                          rows << QStringList{
                              str(p, "name"), QString::number(p.value(QStringLiteral("jobs")).toArray().size()),
                              QString::number(num(p, "config_version")), timestamp(num(p, "updated_ms")),
                              paused ? QStringLiteral("paused: ") + orDash(str(p, "paused_reason"))
                                     : QStringLiteral("active")};
                      }
                      printOut(table({QStringLiteral("NAME"), QStringLiteral("JOBS"), QStringLiteral("VERSION"),
                                      QStringLiteral("UPDATED"), QStringLiteral("STATE")},
                                     rows));
                      finish(ExitOk);
                  }));
}

void Cli::showPipeline()
{
    const QString name = m_args.arguments.value(0);
    m_client->get(
        QStringLiteral("/api/v1/pipelines/") + segment(name), handle([this](const client::ApiResponse &r) {
            if (m_args.json) {
                printJson(r.json);
                return finish(ExitOk);
            }
            QStringList jobs;
            for (const QJsonValue &job : r.json.value(QStringLiteral("jobs")).toArray())
                jobs << job.toString();
            const bool paused = r.json.value(QStringLiteral("paused")).toBool();
            printOut(keyValues({
                {QStringLiteral("name"), str(r.json, "name")},
                {QStringLiteral("version"), QString::number(num(r.json, "config_version"))},
                {QStringLiteral("state"),
                 paused ? QStringLiteral("paused: ") + orDash(str(r.json, "paused_reason")) : QStringLiteral("active")},
                {QStringLiteral("max runs"), QString::number(num(r.json, "max_runs"))},
                {QStringLiteral("jobs"), orDash(jobs.join(QStringLiteral(", ")))},
                {QStringLiteral("updated"), timestamp(num(r.json, "updated_ms"))},
            }));
            finish(ExitOk);
        }));
}

void Cli::pausePipeline(bool pause)
{
    const QString name = m_args.arguments.value(0);
    m_client->postJson(QStringLiteral("/api/v1/pipelines/") + segment(name) +
                           (pause ? QStringLiteral("/pause") : QStringLiteral("/unpause")),
                       {}, handle([this, name, pause](const client::ApiResponse &r) {
                           if (m_args.json)
                               printJson(r.json);
                           else
                               printOut(pause ? QStringLiteral("paused %1").arg(name)
                                              : QStringLiteral("unpaused %1").arg(name));
                           finish(ExitOk);
                       }));
}

void Cli::removePipeline()
{
    const QString name = m_args.arguments.value(0);
    confirm(QStringLiteral("remove pipeline %1 with its runs and secrets?").arg(name),
            QStringLiteral("pipelines rm ") + name, [this, name] {
                m_client->remove(QStringLiteral("/api/v1/pipelines/") + segment(name),
                                 handle([this, name](const client::ApiResponse &) {
                                     if (m_args.json)
                                         printJson(QJsonObject{{QStringLiteral("name"), name},
                                                               {QStringLiteral("status"), QStringLiteral("removed")}});
                                     else
                                         printOut(QStringLiteral("removed pipeline %1").arg(name));
                                     finish(ExitOk);
                                 }));
            });
}

void Cli::triggerJob()
{
    const QStringList parts = m_args.arguments.value(0).split(QLatin1Char('/'));
    const QString path = QStringLiteral("/api/v1/pipelines/%1/jobs/%2/runs").arg(segment(parts[0]), segment(parts[1]));
    m_client->postJson(path, {}, handle([this](const client::ApiResponse &r) {
                           const QString id = str(r.json, "id");
                           if (m_args.has(QStringLiteral("watch"))) {
                               if (!m_args.json)
                                   printOut(QStringLiteral("started %1 (run %2)").arg(runTitle(r.json), id));
                               return watchRun(id);
                           }
                           if (m_args.json)
                               printJson(r.json);
                           else
                               printOut(QStringLiteral("queued %1 (run %2); follow it with: pando runs watch %2")
                                            .arg(runTitle(r.json), id));
                           finish(ExitOk);
                       }));
}

void Cli::listRuns()
{
    const QString target = m_args.arguments.value(0);
    QString path = QStringLiteral("/api/v1/runs");
    QStringList query;
    if (!target.isEmpty()) {
        const QStringList parts = target.split(QLatin1Char('/'));
        path = QStringLiteral("/api/v1/pipelines/%1/runs").arg(segment(parts[0]));
        if (parts.size() > 1)
            query << QStringLiteral("job=") + segment(parts[1]);
    }
    if (m_args.has(QStringLiteral("limit")))
        query << QStringLiteral("limit=") + m_args.value(QStringLiteral("limit"));
    if (!query.isEmpty())
        path += QLatin1Char('?') + query.join(QLatin1Char('&'));
    m_client->get(path, handle([this](const client::ApiResponse &r) {
                      if (m_args.json) {
                          printJson(r.json);
                          return finish(ExitOk);
                      }
                      const QJsonArray runs = r.json.value(QStringLiteral("runs")).toArray();
                      if (runs.isEmpty()) {
                          printOut(QStringLiteral("no runs yet"));
                          return finish(ExitOk);
                      }
                      QList<QStringList> rows;
                      for (const QJsonValue &value : runs) {
                          const QJsonObject run = value.toObject();
                          rows << QStringList{str(run, "id"),
                                              runTitle(run),
                                              str(run, "status"),
                                              orDash(str(run, "trigger")),
                                              timestamp(num(run, "created_ms")),
                                              durationOrDash(run),
                                              str(run, "error")};
                      }
                      printOut(table({QStringLiteral("ID"), QStringLiteral("RUN"), QStringLiteral("STATUS"),
                                      QStringLiteral("TRIGGER"), QStringLiteral("CREATED"), QStringLiteral("DURATION"),
                                      QStringLiteral("ERROR")},
                                     rows));
                      finish(ExitOk);
                  }));
}

void Cli::showRun()
{
    const QString id = m_args.arguments.value(0);
    m_client->get(QStringLiteral("/api/v1/runs/") + segment(id), handle([this](const client::ApiResponse &r) {
                      if (m_args.json) {
                          printJson(r.json);
                          return finish(ExitOk);
                      }
                      const QJsonObject &run = r.json;
                      QList<std::pair<QString, QString>> pairs = {
                          {QStringLiteral("run"), str(run, "id")},
                          {QStringLiteral("job"), runTitle(run)},
                          {QStringLiteral("status"), str(run, "status")},
                          {QStringLiteral("trigger"), orDash(str(run, "trigger"))},
                          {QStringLiteral("by"), orDash(str(run, "actor"))},
                          {QStringLiteral("created"), timestamp(num(run, "created_ms"))},
                          {QStringLiteral("duration"), durationOrDash(run)},
                          {QStringLiteral("steps"), QStringLiteral("%1 (%2 unchanged, %3 failed)")
                                                        .arg(num(run, "step_count"))
                                                        .arg(num(run, "cached_count"))
                                                        .arg(num(run, "failed_count"))},
                      };
                      if (!str(run, "error").isEmpty())
                          pairs.append({QStringLiteral("error"), str(run, "error")});
                      printOut(keyValues(pairs));
                      QList<QStringList> rows;
                      stepRows(run.value(QStringLiteral("steps")).toArray(), 0, rows);
                      if (!rows.isEmpty()) {
                          printOut(QString());
                          printOut(table({QStringLiteral("STEP"), QStringLiteral("STATUS"), QStringLiteral("DURATION"),
                                          QStringLiteral("ATTEMPT"), QStringLiteral("EXIT"), QStringLiteral("ERROR")},
                                         rows));
                      }
                      QStringList waiting;
                      waitingApprovals(run.value(QStringLiteral("steps")).toArray(), waiting);
                      if (!waiting.isEmpty()) {
                          printOut(QString());
                          printOut(waiting.join(QLatin1Char('\n')));
                      }
                      finish(ExitOk);
                  }));
}

void Cli::abortRun()
{
    const QString id = m_args.arguments.value(0);
    m_client->postJson(QStringLiteral("/api/v1/runs/") + segment(id) + QStringLiteral("/abort"), {},
                       handle([this, id](const client::ApiResponse &r) {
                           if (m_args.json)
                               printJson(r.json);
                           else
                               printOut(QStringLiteral("aborting run %1").arg(id));
                           finish(ExitOk);
                       }));
}

void Cli::setSecret()
{
    const QString name = m_args.arguments.constLast();
    // Never from argv: a value there lands in the shell's history and in ps.
    if (m_args.has(QStringLiteral("from-file"))) {
        const QString path = m_args.value(QStringLiteral("from-file"));
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return failWith(Error{ErrorCode::Invalid,
                                  QStringLiteral("cannot read the secret's file: %1").arg(file.errorString()),
                                  QStringLiteral("--from-file %1").arg(path)});
        // The file's bytes are the value exactly: a PEM file keeps its last line break.
        QByteArray bytes = file.readAll();
        QStringDecoder utf8(QStringDecoder::Utf8);
        QString value = utf8(bytes);
        bytes.fill('\0');
        if (utf8.hasError())
            return failWith(Error{ErrorCode::Invalid, QStringLiteral("the file is not UTF-8 text; secrets are text"),
                                  QStringLiteral("--from-file %1").arg(path),
                                  QStringLiteral("encode binary data, e.g. with base64, and decode it in the app")});
        sendSecret(value);
        value.fill(QChar(u'\0'));
        return;
    }
    if (stdinIsTerminal()) {
        if (!m_reader)
            m_reader = new LineReader(this);
        m_reader->ask(QStringLiteral("value for secret %1: ").arg(name), true,
                      [this](const std::optional<QString> &value) {
                          if (m_finished)
                              return;
                          sendSecret(value.value_or(QString()));
                      });
        return;
    }
    QFile input;
    if (!input.open(stdin, QIODevice::ReadOnly))
        return failWith(Error{ErrorCode::Invalid,
                              QStringLiteral("cannot read standard input: %1").arg(input.errorString()),
                              QStringLiteral("stdin")});
    QByteArray bytes = input.readAll();
    // `echo value | pando secrets set` adds a newline that is not part of the secret.
    if (bytes.endsWith('\n'))
        bytes.chop(1);
    if (bytes.endsWith('\r'))
        bytes.chop(1);
    const QString value = QString::fromUtf8(bytes);
    bytes.fill('\0');
    sendSecret(value);
}

void Cli::sendSecret(const QString &value)
{
    const QString name = m_args.arguments.constLast();
    const bool forApp = isAppSecretCommand(m_args);
    const QString app = forApp ? m_args.arguments.constFirst() : QString();
    if (value.isEmpty())
        return failWith(
            Error{ErrorCode::Invalid, QStringLiteral("the secret's value is empty"),
                  m_args.has(QStringLiteral("from-file")) ? QStringLiteral("--from-file") : QStringLiteral("stdin"),
                  QStringLiteral("pipe the value in: pando secrets set %1 < file")
                      .arg(forApp ? app + QLatin1Char(' ') + name : name)});
    if (forApp) {
        const QJsonObject body{{QStringLiteral("value"), value}};
        m_client->request("PUT",
                          QStringLiteral("/api/v1/apps/") + segment(app) + QStringLiteral("/secrets/") + segment(name),
                          QJsonDocument(body).toJson(QJsonDocument::Compact), "application/json",
                          handle([this, app, name](const client::ApiResponse &r) {
                              if (m_args.json)
                                  printJson(r.json);
                              else
                                  printOut(QStringLiteral("set secret %1 of app %2 (as %3); it reaches the app on its "
                                                          "next deploy: pando deploy %2")
                                               .arg(name, app, str(r.json, "injected_as")));
                              finish(ExitOk);
                          }));
        return;
    }
    const QString scope = m_args.value(QStringLiteral("pipeline"));
    const QJsonObject body{{QStringLiteral("value"), value}, {QStringLiteral("scope"), scope}};
    m_client->request("PUT", QStringLiteral("/api/v1/secrets/") + segment(name),
                      QJsonDocument(body).toJson(QJsonDocument::Compact), "application/json",
                      handle([this, name, scope](const client::ApiResponse &) {
                          if (m_args.json)
                              printJson(QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("scope"), scope}});
                          else
                              printOut(QStringLiteral("set secret %1 for %2").arg(name, scopeName(scope)));
                          finish(ExitOk);
                      }));
}

void Cli::listSecrets()
{
    if (isAppSecretCommand(m_args)) {
        const QString app = m_args.arguments.constFirst();
        m_client->get(QStringLiteral("/api/v1/apps/") + segment(app) + QStringLiteral("/secrets"),
                      handle([this, app](const client::ApiResponse &r) {
                          if (m_args.json) {
                              printJson(r.json);
                              return finish(ExitOk);
                          }
                          QList<QStringList> rows;
                          for (const QJsonValue &v : r.json.value(QStringLiteral("secrets")).toArray()) {
                              const QJsonObject o = v.toObject();
                              const QString how = str(o, "injected_as") == QLatin1String("file")
                                                      ? QStringLiteral("file ") + str(o, "file")
                                                      : QStringLiteral("env");
                              rows << QStringList{str(o, "name"), how, timestamp(num(o, "created_ms")),
                                                  timestamp(num(o, "updated_ms"))};
                          }
                          if (rows.isEmpty())
                              printOut(QStringLiteral("no secrets for app %1").arg(app));
                          else
                              printOut(table({QStringLiteral("NAME"), QStringLiteral("INJECTED AS"),
                                              QStringLiteral("SET"), QStringLiteral("UPDATED")},
                                             rows));
                          for (const QJsonValue &v : r.json.value(QStringLiteral("missing")).toArray())
                              printErr(QStringLiteral("warning: the spec asks for secret %1, which is not set; "
                                                      "the next deploy fails until it is")
                                           .arg(v.toString()));
                          finish(ExitOk);
                      }));
        return;
    }
    const QString scope = m_args.value(QStringLiteral("pipeline"));
    m_client->get(QStringLiteral("/api/v1/secrets?scope=") + segment(scope),
                  handle([this, scope](const client::ApiResponse &r) {
                      if (m_args.json) {
                          printJson(r.json);
                          return finish(ExitOk);
                      }
                      const QJsonArray names = r.json.value(QStringLiteral("secrets")).toArray();
                      if (names.isEmpty())
                          printOut(QStringLiteral("no secrets for %1").arg(scopeName(scope)));
                      for (const QJsonValue &name : names)
                          printOut(name.toString());
                      finish(ExitOk);
                  }));
}

void Cli::removeSecret()
{
    const QString name = m_args.arguments.constLast();
    if (isAppSecretCommand(m_args)) {
        const QString app = m_args.arguments.constFirst();
        m_client->remove(QStringLiteral("/api/v1/apps/") + segment(app) + QStringLiteral("/secrets/") + segment(name),
                         handle([this, app, name](const client::ApiResponse &) {
                             if (m_args.json)
                                 printJson(QJsonObject{{QStringLiteral("app"), app},
                                                       {QStringLiteral("name"), name},
                                                       {QStringLiteral("status"), QStringLiteral("removed")}});
                             else
                                 printOut(QStringLiteral("removed secret %1 of app %2; the app keeps it until its "
                                                         "next deploy")
                                              .arg(name, app));
                             finish(ExitOk);
                         }));
        return;
    }
    const QString scope = m_args.value(QStringLiteral("pipeline"));
    m_client->remove(QStringLiteral("/api/v1/secrets/") + segment(name) + QStringLiteral("?scope=") + segment(scope),
                     handle([this, name, scope](const client::ApiResponse &) {
                         if (m_args.json)
                             printJson(QJsonObject{{QStringLiteral("name"), name},
                                                   {QStringLiteral("scope"), scope},
                                                   {QStringLiteral("status"), QStringLiteral("removed")}});
                         else
                             printOut(QStringLiteral("removed secret %1 from %2").arg(name, scopeName(scope)));
                         finish(ExitOk);
                     }));
}

} // namespace pando::cli
