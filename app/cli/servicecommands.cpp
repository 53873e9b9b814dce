// `pando services list|backup|rm`: an app's backing services (docs/services.md), and the question
// `pando apps rm` asks about their data on a terminal.
#include "cli.h"
#include "output.h"
#include "prompt.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace pando::cli {

namespace {

// The server dumps the whole service before its answer starts: a large database takes a while.
constexpr int BackupIdleTimeoutMs = 60 * 60 * 1000;
constexpr qint64 ProgressEveryMs = 100;

QString sizeText(qint64 bytes)
{
    if (bytes < 1024)
        return QStringLiteral("%1 B").arg(bytes);
    if (bytes < 1024 * 1024)
        return QStringLiteral("%1 KiB").arg(double(bytes) / 1024, 0, 'f', 1);
    if (bytes < qint64(1024) * 1024 * 1024)
        return QStringLiteral("%1 MiB").arg(double(bytes) / (1024 * 1024), 0, 'f', 1);
    return QStringLiteral("%1 GiB").arg(double(bytes) / (1024.0 * 1024 * 1024), 0, 'f', 2);
}

QString servicesPath(const QString &app)
{
    return QStringLiteral("/api/v1/apps/") + segment(app) + QStringLiteral("/services");
}

} // namespace

void Cli::listServices()
{
    const QString app = m_args.arguments.value(0);
    const QString path = app.isEmpty() ? QStringLiteral("/api/v1/services") : servicesPath(app);
    m_client->get(path, handle([this, app](const client::ApiResponse &r) {
                      if (m_args.json) {
                          printJson(r.json);
                          return finish(ExitOk);
                      }
                      const QJsonArray services = r.json.value(QStringLiteral("services")).toArray();
                      if (services.isEmpty()) {
                          printOut(app.isEmpty() ? QStringLiteral("no services yet; an app declares them in its "
                                                                  "spec's services: slots")
                                                 : QStringLiteral("app %1 has no services").arg(app));
                          return finish(ExitOk);
                      }
                      QList<QStringList> rows;
                      for (const QJsonValue &value : services) {
                          const QJsonObject s = value.toObject();
                          QStringList row;
                          if (app.isEmpty())
                              row << str(s, "app");
                          const qint64 created = num(s, "created_ms");
                          row << str(s, "slot") << str(s, "kind") << orDash(str(s, "version")) << str(s, "status")
                              << orDash(str(s, "volume")) << (created > 0 ? timestamp(created) : QStringLiteral("-"));
                          rows << row;
                      }
                      QStringList headers{QStringLiteral("SLOT"),    QStringLiteral("KIND"),
                                          QStringLiteral("VERSION"), QStringLiteral("STATUS"),
                                          QStringLiteral("VOLUME"),  QStringLiteral("CREATED")};
                      if (app.isEmpty())
                          headers.prepend(QStringLiteral("APP"));
                      printOut(table(headers, rows));
                      finish(ExitOk);
                  }));
}

void Cli::backupService()
{
    const QString app = m_args.arguments.value(0);
    const QString slot = m_args.arguments.value(1);
    const QString target = m_args.value(QStringLiteral("out"));
    if (target.isEmpty())
        return failWithCode(Error{ErrorCode::Invalid, QStringLiteral("needs a file name"), QStringLiteral("--out")},
                            ExitUsage);
    if (QFileInfo::exists(target) && !m_args.has(QStringLiteral("force")))
        return failWith(Error{ErrorCode::Conflict, QStringLiteral("%1 exists already").arg(target),
                              QStringLiteral("--out"), QStringLiteral("pass --force to replace it")});
    // Written beside the target and renamed over it at the end: FILE is never half a dump.
    m_backupPartial = target + QStringLiteral(".partial");
    auto *file = new QFile(m_backupPartial, this);
    if (!file->open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        const Error error{ErrorCode::Failed, QStringLiteral("cannot write: %1").arg(file->errorString()),
                          m_backupPartial};
        m_backupPartial.clear();
        return failWith(error);
    }
    auto clock = std::make_shared<QElapsedTimer>();
    clock->start();
    auto lastShown = std::make_shared<qint64>(-ProgressEveryMs);
    const auto progress = [clock, lastShown](qint64 bytes) {
        if (clock->elapsed() - *lastShown < ProgressEveryMs)
            return;
        *lastShown = clock->elapsed();
        printStatus(QStringLiteral("  %1 written").arg(sizeText(bytes)));
    };
    const QString path = servicesPath(app) + QLatin1Char('/') + segment(slot) + QStringLiteral("/backup");
    if (!m_args.json)
        printStatus(QStringLiteral("  dumping %1/%2 …").arg(app, slot));
    m_client->download(
        "POST", path, file, BackupIdleTimeoutMs, progress,
        [this, file, app, slot, target, clock](const Result<client::ApiResponse> &r) {
            if (m_finished)
                return;
            const qint64 bytes = file->size();
            const bool flushed = r && file->flush();
            const QString writeError = file->errorString();
            file->close();
            const QString partial = std::exchange(m_backupPartial, QString());
            if (!r || !flushed) {
                QFile::remove(partial);
                return failWith(
                    r ? Error{ErrorCode::Failed, QStringLiteral("cannot write: %1").arg(writeError), partial}
                      : r.error());
            }
            // rename(2) replaces an existing file (--force) in one step.
            if (std::rename(QFile::encodeName(partial).constData(), QFile::encodeName(target).constData()) != 0) {
                const QString reason = QString::fromLocal8Bit(std::strerror(errno));
                QFile::remove(partial);
                return failWith(Error{ErrorCode::Failed,
                                      QStringLiteral("cannot rename %1 to it: %2").arg(partial, reason), target});
            }
            if (m_args.json)
                printJson(QJsonObject{{QStringLiteral("app"), app},
                                      {QStringLiteral("slot"), slot},
                                      {QStringLiteral("file"), target},
                                      {QStringLiteral("bytes"), bytes}});
            else
                printOut(QStringLiteral("backed up %1/%2 to %3 (%4 in %5)")
                             .arg(app, slot, target, sizeText(bytes), duration(clock->elapsed())));
            finish(ExitOk);
        });
}

void Cli::removeService()
{
    const QString app = m_args.arguments.value(0);
    const QString slot = m_args.arguments.value(1);
    const bool keepData = m_args.has(QStringLiteral("keep-data"));
    const bool deleteData = m_args.has(QStringLiteral("delete-data"));
    if (keepData == deleteData)
        return failWithCode(Error{ErrorCode::Invalid,
                                  keepData ? QStringLiteral("pass --keep-data or --delete-data, not both")
                                           : QStringLiteral("say what becomes of the service's data"),
                                  QStringLiteral("services rm"),
                                  QStringLiteral("--keep-data removes the container and keeps the volume and "
                                                 "credentials; --delete-data removes them too")},
                            ExitUsage);
    const QString path = servicesPath(app) + QLatin1Char('/') + segment(slot) +
                         (deleteData ? QStringLiteral("?data=delete") : QStringLiteral("?data=keep"));
    m_client->remove(path, handle([this, app, slot, deleteData](const client::ApiResponse &r) {
                         if (m_args.json)
                             printJson(r.json);
                         else
                             printOut(
                                 QStringLiteral("removed service %1 of %2; its data was %3")
                                     .arg(slot, app, deleteData ? QStringLiteral("deleted") : QStringLiteral("kept")));
                         finish(ExitOk);
                     }));
}

void Cli::askServiceData(const QString &app, std::function<void(const QString &choice)> then)
{
    // Only a person at a terminal can answer; otherwise pandod's refusal names both flags.
    if (!stdinIsTerminal())
        return then(QString());
    m_client->get(servicesPath(app), [this, app, then = std::move(then)](const Result<client::ApiResponse> &r) {
        if (m_finished)
            return;
        const QJsonArray services = r ? r->json.value(QStringLiteral("services")).toArray() : QJsonArray();
        if (services.isEmpty())
            return then(QString());
        QStringList slots;
        for (const QJsonValue &value : services)
            slots << str(value.toObject(), "slot") + QStringLiteral(": ") + str(value.toObject(), "kind");
        if (!m_reader)
            m_reader = new LineReader(this);
        m_reader->ask(QStringLiteral("keep or delete the data of its services (%1)? [k/d] ")
                          .arg(slots.join(QStringLiteral(", "))),
                      false, [this, then](const std::optional<QString> &answer) {
                          if (m_finished)
                              return;
                          const QString a = answer.value_or(QString()).trimmed().toLower();
                          if (a == QLatin1String("k") || a == QLatin1String("keep"))
                              return then(QStringLiteral("keep"));
                          if (a == QLatin1String("d") || a == QLatin1String("delete"))
                              return then(QStringLiteral("delete"));
                          failWith(Error{ErrorCode::Cancelled, QStringLiteral("nothing removed: answer k or d"),
                                         QStringLiteral("apps rm"),
                                         QStringLiteral("or pass --keep-data or --delete-data")});
                      });
    });
}

} // namespace pando::cli
