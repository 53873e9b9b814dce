#include "servicehandlers.h"

#include "replies.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QTemporaryFile>

using namespace Qt::StringLiterals;

namespace pando::server::serviceapi {

namespace {

// A dump a killed pandod left behind (older than any backup takes) is removed by the next one.
void removeStaleBackups(const QString &dir)
{
    const QDateTime before = QDateTime::currentDateTimeUtc().addDays(-1);
    const QFileInfoList stale =
        QDir(dir).entryInfoList({u"service-backup-*.partial"_s}, QDir::Files | QDir::NoSymLinks);
    for (const QFileInfo &file : stale)
        if (file.lastModified().toUTC() < before)
            QFile::remove(file.filePath());
}

Reply servicesReply(const Result<QList<core::ServiceView>> &views)
{
    if (!views)
        return errorReply(views.error());
    QJsonArray list;
    for (const core::ServiceView &view : *views)
        list.append(view.toJson());
    return Reply{200, QJsonObject{{u"services"_s, list}}};
}

} // namespace

Reply listAllServices(Call &call)
{
    return servicesReply(call.engine.services({}));
}

Reply listAppServices(Call &call)
{
    return servicesReply(call.engine.services(call.args.value(0)));
}

Reply backupService(Call &call)
{
    const QString app = call.args.value(0);
    const QString slot = call.args.value(1);
    auto views = call.engine.services(app);
    if (!views)
        return errorReply(views.error());
    const auto view =
        std::find_if(views->cbegin(), views->cend(), [&](const core::ServiceView &v) { return v.slot == slot; });
    if (view == views->cend())
        return errorReply(Error{ErrorCode::NotFound, u"app %1 has no service in slot %2"_s.arg(app, slot),
                                u"services."_s + slot, u"pando services list %1 names its slots"_s.arg(app)});
    if (view->status() != u"running")
        return errorReply(Error{ErrorCode::Conflict,
                                u"the %1 service in slot %2 of app %3 is %4: a backup needs it running"_s.arg(
                                    view->kind, slot, app, view->status()),
                                u"services."_s + slot, u"deploy the app to start its services again"_s});

    // On disk in the data directory, not in memory: a dump may be larger than the server's RAM.
    const QString dir = call.engine.options().dataDir;
    removeStaleBackups(dir);
    QTemporaryFile out(QDir(dir).filePath(u"service-backup-XXXXXX.partial"_s));
    if (!out.open())
        return errorReply(
            Error{ErrorCode::Internal, u"cannot make a file for the backup: %1"_s.arg(out.errorString()), dir});
    auto written = call.engine.backupService(app, slot, out, CancelToken(), {}, call.actor);
    if (!written)
        return errorReply(written.error()); // the temporary file goes with `out`
    if (!out.flush())
        return errorReply(
            Error{ErrorCode::Internal, u"cannot write the backup: %1"_s.arg(out.errorString()), out.fileName()});
    // From here the reply owns the file and removes it once sent.
    out.setAutoRemove(false);
    auto body = std::make_shared<FileBody>();
    body->path = out.fileName();
    out.close();
    const QString name = call.engine.backupFileName(app, slot, view->kind);
    body->contentType = "application/octet-stream";
    body->disposition = "attachment; filename=\"" + name.toUtf8() + '"';
    return Reply{200, {}, body};
}

Reply removeService(Call &call)
{
    const QString app = call.args.value(0);
    const QString slot = call.args.value(1);
    const QString data = queryParam(call.request, u"data"_s);
    if (data != u"keep" && data != u"delete")
        return errorReply(Error{
            ErrorCode::Invalid,
            data.isEmpty() ? u"say what becomes of the service's data"_s
                           : u"expected keep or delete, got \"%1\""_s.arg(data),
            u"query.data"_s,
            u"?data=keep removes the container and keeps the volume and credentials; ?data=delete removes them too"_s});
    // A slot the spec declares would be provisioned again by the next deploy (with its old data,
    // or empty with new credentials), under an app whose container still uses it.
    if (auto current = call.engine.app(app); current && current->spec.services.contains(slot))
        return errorReply(Error{
            ErrorCode::Conflict,
            u"app %1's spec still declares the service in slot %2: the next deploy would provision it again"_s.arg(
                app, slot),
            u"services."_s + slot,
            u"remove the slot from the spec (pando apps update %1 -f SPEC) and deploy first, or remove the app "
            "(pando apps rm %1)"_s.arg(app)});
    if (auto removed = call.engine.removeService(app, slot, data == u"delete", call.actor); !removed)
        return errorReply(removed.error());
    return Reply{200, QJsonObject{{u"app"_s, app},
                                  {u"slot"_s, slot},
                                  {u"status"_s, u"removed"_s},
                                  {u"data"_s, data == u"delete" ? u"deleted"_s : u"kept"_s}}};
}

} // namespace pando::server::serviceapi
