// `pando services list|backup|rm`: an app's backing services (docs/services.md), and the question
// `pando apps rm` asks about their data on a terminal; `pando volumes backup|restore`: an app
// volume's files.
#include "cli.h"
#include "commands.h"
#include "output.h"
#include "prompt.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>

namespace pando::cli {

namespace {

// The server dumps the whole service before its answer starts: a large database takes a while.
constexpr int BackupIdleTimeoutMs = 60 * 60 * 1000;
constexpr qint64 ProgressEveryMs = 100;

QString sizeText(qint64 bytes)
{
    if (bytes < 1024)
        return QStringLiteral("%1 B").arg(bytes);
    if (bytes < 1024LL * 1024)
        return QStringLiteral("%1 KiB").arg(double(bytes) / 1024, 0, 'f', 1);
    if (bytes < qint64(1024) * 1024 * 1024)
        return QStringLiteral("%1 MiB").arg(double(bytes) / (1024 * 1024), 0, 'f', 1);
    return QStringLiteral("%1 GiB").arg(double(bytes) / (1024.0 * 1024 * 1024), 0, 'f', 2);
}

void listServices(Cli &cli)
{
    const QString app = cli.args().arguments.value(0);
    const auto done = cli.handle([&cli, app](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonArray services = r.json.value(QStringLiteral("services")).toArray();
        if (services.isEmpty()) {
            printOut(app.isEmpty() ? QStringLiteral("no services yet; an app declares them in its "
                                                    "spec's services: slots")
                                   : QStringLiteral("app %1 has no services").arg(app));
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue value : services) {
            const QJsonObject s = value.toObject();
            QStringList row;
            if (app.isEmpty())
                row << str(s, "app");
            const qint64 created = num(s, "created_ms");
            row << str(s, "slot") << str(s, "kind") << orDash(str(s, "version")) << str(s, "status")
                << orDash(str(s, "volume")) << (created > 0 ? timestamp(created) : QStringLiteral("-"));
            rows << row;
        }
        QStringList headers{QStringLiteral("SLOT"),   QStringLiteral("KIND"),   QStringLiteral("VERSION"),
                            QStringLiteral("STATUS"), QStringLiteral("VOLUME"), QStringLiteral("CREATED")};
        if (app.isEmpty())
            headers.prepend(QStringLiteral("APP"));
        printOut(table(headers, rows));
        cli.finish(ExitOk);
    });
    if (app.isEmpty())
        cli.api().services(done);
    else
        cli.api().appServices(app, done);
}

// Downloads a backup of app's what (a service slot, a volume) to --out, started by request;
// jsonKey names what in --json output ("slot", "volume").
void downloadBackup(Cli &cli, const QString &jsonKey, const QString &doing,
                    const std::function<void(QIODevice *out, const client::Api::ProgressCallback &progress,
                                             client::Api::Callback done)> &request)
{
    const QString app = cli.args().arguments.value(0);
    const QString what = cli.args().arguments.value(1);
    const QString target = cli.args().value(QStringLiteral("out"));
    if (target.isEmpty())
        return cli.failWithCode(Error{ErrorCode::Invalid, QStringLiteral("needs a file name"), QStringLiteral("--out")},
                                ExitUsage);
    if (QFileInfo::exists(target) && !cli.args().has(QStringLiteral("force")))
        return cli.failWith(Error{ErrorCode::Conflict, QStringLiteral("%1 exists already").arg(target),
                                  QStringLiteral("--out"), QStringLiteral("pass --force to replace it")});
    // Written beside the target and renamed over it at the end: FILE is never half a backup.
    const QString partial = target + QStringLiteral(".partial");
    auto *file = new QFile(partial, &cli);
    if (!file->open(QIODevice::WriteOnly | QIODevice::Truncate))
        return cli.failWith(
            Error{ErrorCode::Failed, QStringLiteral("cannot write: %1").arg(file->errorString()), partial});
    // An interrupted backup leaves no half file behind.
    cli.setOnInterrupt([partial] { QFile::remove(partial); });
    auto clock = std::make_shared<QElapsedTimer>();
    clock->start();
    auto lastShown = std::make_shared<qint64>(-ProgressEveryMs);
    const auto progress = [clock, lastShown](qint64 bytes) {
        if (clock->elapsed() - *lastShown < ProgressEveryMs)
            return;
        *lastShown = clock->elapsed();
        printStatus(QStringLiteral("  %1 written").arg(sizeText(bytes)));
    };
    if (!cli.args().json)
        printStatus(QStringLiteral("  %1 %2/%3 …").arg(doing, app, what));
    request(file, progress,
            [&cli, file, app, what, jsonKey, target, clock, partial](const Result<client::ApiResponse> &r) {
                if (cli.isFinished())
                    return;
                const qint64 bytes = file->size();
                const bool flushed = r && file->flush();
                const QString writeError = file->errorString();
                file->close();
                cli.setOnInterrupt({});
                if (!r || !flushed) {
                    QFile::remove(partial);
                    return cli.failWith(
                        r ? Error{ErrorCode::Failed, QStringLiteral("cannot write: %1").arg(writeError), partial}
                          : r.error());
                }
                // rename(2) replaces an existing file (--force) in one step.
                if (std::rename(QFile::encodeName(partial).constData(), QFile::encodeName(target).constData()) != 0) {
                    const QString reason = QString::fromLocal8Bit(std::strerror(errno));
                    QFile::remove(partial);
                    return cli.failWith(Error{
                        ErrorCode::Failed, QStringLiteral("cannot rename %1 to it: %2").arg(partial, reason), target});
                }
                if (cli.args().json)
                    printJson(QJsonObject{{QStringLiteral("app"), app},
                                          {jsonKey, what},
                                          {QStringLiteral("file"), target},
                                          {QStringLiteral("bytes"), bytes}});
                else
                    printOut(QStringLiteral("backed up %1/%2 to %3 (%4 in %5)")
                                 .arg(app, what, target, sizeText(bytes), duration(clock->elapsed())));
                cli.finish(ExitOk);
            });
}

void backupService(Cli &cli)
{
    downloadBackup(cli, QStringLiteral("slot"), QStringLiteral("dumping"),
                   [&cli](QIODevice *out, const client::Api::ProgressCallback &progress, client::Api::Callback done) {
                       cli.api().backupService(cli.args().arguments.value(0), cli.args().arguments.value(1), out,
                                               BackupIdleTimeoutMs, progress, std::move(done));
                   });
}

void backupVolume(Cli &cli)
{
    downloadBackup(cli, QStringLiteral("volume"), QStringLiteral("archiving"),
                   [&cli](QIODevice *out, const client::Api::ProgressCallback &progress, client::Api::Callback done) {
                       cli.api().backupVolume(cli.args().arguments.value(0), cli.args().arguments.value(1), out,
                                              BackupIdleTimeoutMs, progress, std::move(done));
                   });
}

void restoreVolume(Cli &cli)
{
    const QString app = cli.args().arguments.value(0);
    const QString volume = cli.args().arguments.value(1);
    const QString source = cli.args().value(QStringLiteral("from"));
    auto *file = new QFile(source, &cli);
    if (!file->open(QIODevice::ReadOnly))
        return cli.failWith(
            Error{ErrorCode::Invalid, QStringLiteral("cannot read: %1").arg(file->errorString()), source});
    const qint64 size = file->size();
    if (size <= 0)
        return cli.failWith(Error{ErrorCode::Invalid, QStringLiteral("the file is empty"), source,
                                  QStringLiteral("restore an archive pando volumes backup wrote")});
    const auto send = [&cli, app, volume, file, size] {
        auto clock = std::make_shared<QElapsedTimer>();
        clock->start();
        auto lastShown = std::make_shared<qint64>(-ProgressEveryMs);
        const bool quiet = cli.args().json;
        const auto progress = [clock, lastShown, size, quiet](qint64 sent) {
            if (quiet || (clock->elapsed() - *lastShown < ProgressEveryMs && sent < size))
                return;
            *lastShown = clock->elapsed();
            printStatus(QStringLiteral("  %1 of %2 sent").arg(sizeText(sent), sizeText(size)));
            if (sent == size)
                printStatus(QStringLiteral("  restoring %1 (the app runs again on it) …").arg(sizeText(size)));
        };
        cli.own(cli.api().restoreVolume(
            app, volume, file, size, progress,
            cli.handle([&cli, app, volume, size, clock](const client::ApiResponse &r) {
                if (cli.args().json)
                    printJson(QJsonObject{{QStringLiteral("app"), r.json},
                                          {QStringLiteral("volume"), volume},
                                          {QStringLiteral("bytes"), size}});
                else
                    printOut(QStringLiteral("restored volume %1 of %2 from %3 in %4; the app is %5")
                                 .arg(volume, app, sizeText(size), duration(clock->elapsed()),
                                      orDash(str(r.json, "status"))));
                cli.finish(ExitOk);
            })));
    };
    cli.confirm(QStringLiteral("replace every file of volume %1 of app %2 with the archive's? The app stops "
                               "while it is restored.")
                    .arg(volume, app),
                QStringLiteral("volumes restore"), send);
}

void removeService(Cli &cli)
{
    const QString app = cli.args().arguments.value(0);
    const QString slot = cli.args().arguments.value(1);
    const bool keepData = cli.args().has(QStringLiteral("keep-data"));
    const bool deleteData = cli.args().has(QStringLiteral("delete-data"));
    if (keepData == deleteData)
        return cli.failWithCode(Error{ErrorCode::Invalid,
                                      keepData ? QStringLiteral("pass --keep-data or --delete-data, not both")
                                               : QStringLiteral("say what becomes of the service's data"),
                                      QStringLiteral("services rm"),
                                      QStringLiteral("--keep-data removes the container and keeps the volume and "
                                                     "credentials; --delete-data removes them too")},
                                ExitUsage);
    cli.api().removeService(
        app, slot, deleteData ? client::ServiceData::Delete : client::ServiceData::Keep,
        cli.handle([&cli, app, slot, deleteData](const client::ApiResponse &r) {
            if (cli.args().json)
                printJson(r.json);
            else
                printOut(QStringLiteral("removed service %1 of %2; its data was %3")
                             .arg(slot, app, deleteData ? QStringLiteral("deleted") : QStringLiteral("kept")));
            cli.finish(ExitOk);
        }));
}

constexpr CommandDef ServiceTable[] = {
    {"services", "list", "[APP]", 0, 1, {}, "backing services: slot, kind, status, volume", &listServices},
    {"services",
     "backup",
     "APP SLOT",
     2,
     2,
     {{{&flags::Out, 0, Required}, {&flags::Force}}},
     "dump a service's data to FILE (pg_dump, mysqldump, redis RDB)",
     &backupService,
     Needs::Token,
     nullptr,
     "FILE is written as FILE.partial and renamed at the end, so it is never half a dump; --force replaces an\n"
     "existing FILE."},
    {"volumes",
     "backup",
     "APP VOLUME",
     2,
     2,
     {{{&flags::Out, 0, Required}, {&flags::Force}}},
     "archive an app volume's files to FILE (run.volumes)",
     &backupVolume,
     Needs::Token,
     nullptr,
     "Docker: a tar of the volume's files (as docker cp writes it), read through the app's container; Incus:\n"
     "Incus's own volume backup tarball (incus storage volume import restores it). FILE is written as\n"
     "FILE.partial and renamed at the end, so it is never half an archive; --force replaces an existing FILE."},
    {"volumes",
     "restore",
     "APP VOLUME",
     2,
     2,
     {{{&flags::From, 0, Required}, {&flags::Yes, 'y'}}},
     "replace an app volume's files with an archive's (a backup)",
     &restoreVolume,
     Needs::Token,
     nullptr,
     "The archive is what pando volumes backup wrote of a volume on the same kind of runtime (on Docker,\n"
     "any tar whose entries are below one top directory). The server reads it through first and refuses\n"
     "one with an entry outside it, touching nothing; then it stops the app, makes the volume again from\n"
     "the archive and runs the app again. A failure puts the old files back. Asks first on a terminal;\n"
     "--yes does not ask."},
    {"services",
     "rm",
     "APP SLOT",
     2,
     2,
     {{{&flags::KeepData}, {&flags::DeleteData}}},
     "remove a service the app's spec no longer declares",
     &removeService,
     Needs::Token,
     nullptr,
     "--keep-data removes the container and keeps the volume and credentials; --delete-data removes them\n"
     "too. One of the two is required."},
};
static_assert(isComplete(ServiceTable), "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> serviceCommands()
{
    return ServiceTable;
}

void askServiceData(Cli &cli, const QString &app, std::function<void(client::ServiceData choice)> then)
{
    // Only a person at a terminal can answer; otherwise pandod's refusal names both flags.
    if (!stdinIsTerminal())
        return then(client::ServiceData::Unsaid);
    cli.api().appServices(app, [&cli, app, then = std::move(then)](const Result<client::ApiResponse> &r) {
        if (cli.isFinished())
            return;
        const QJsonArray services = r ? r->json.value(QStringLiteral("services")).toArray() : QJsonArray();
        if (services.isEmpty())
            return then(client::ServiceData::Unsaid);
        QStringList slots;
        for (const QJsonValue value : services)
            slots << str(value.toObject(), "slot") + QStringLiteral(": ") + str(value.toObject(), "kind");
        cli.reader()->ask(QStringLiteral("keep or delete the data of its services (%1)? [k/d] ")
                              .arg(slots.join(QStringLiteral(", "))),
                          false, [&cli, then](const std::optional<QString> &answer) {
                              if (cli.isFinished())
                                  return;
                              const QString a = answer.value_or(QString()).trimmed().toLower();
                              if (a == QLatin1String("k") || a == QLatin1String("keep"))
                                  return then(client::ServiceData::Keep);
                              if (a == QLatin1String("d") || a == QLatin1String("delete"))
                                  return then(client::ServiceData::Delete);
                              cli.failWith(Error{ErrorCode::Cancelled, QStringLiteral("nothing removed: answer k or d"),
                                                 QStringLiteral("apps rm"),
                                                 QStringLiteral("or pass --keep-data or --delete-data")});
                          });
    });
}

} // namespace pando::cli
