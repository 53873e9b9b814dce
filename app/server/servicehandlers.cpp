#include "servicehandlers.h"

#include "replies.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace pando::server::serviceapi {

namespace {

Reply servicesReply(Call &call, const Result<QList<core::ServiceView>> &views)
{
    if (!views)
        return errorReply(views.error());
    auto visible = call.engine.visibility(call.principal);
    if (!visible)
        return errorReply(visible.error());
    QJsonArray list;
    for (const core::ServiceView &view : *views)
        if (visible->seesApp(view.app))
            list.append(view.toJson());
    return Reply{200, QJsonObject{{u"services"_s, list}}};
}

} // namespace

Reply listAllServices(Call &call)
{
    return servicesReply(call, call.engine.services({}));
}

Reply listAppServices(Call &call)
{
    return servicesReply(call, call.engine.services(call.args.value(0)));
}

namespace {

// A backup the engine made as a file, sent as a download; the reply owns the file from here
// and removes it once sent.
Reply backupReply(const Result<core::ServiceBackupFile> &backup)
{
    if (!backup)
        return errorReply(backup.error());
    auto body = std::make_shared<FileBody>();
    body->path = backup->path;
    body->contentType = "application/octet-stream";
    body->disposition = "attachment; filename=\"" + backup->fileName.toUtf8() + '"';
    return Reply{200, {}, body};
}

} // namespace

Reply backupService(Call &call)
{
    // The engine refuses a slot that does not run and an unaudited dump.
    return backupReply(
        call.engine.backupServiceToFile(call.args.value(0), call.args.value(1), CancelToken(), call.actor));
}

Reply backupVolume(Call &call)
{
    // The engine refuses a volume the spec does not have or no deploy made, and an unaudited one.
    return backupReply(
        call.engine.backupVolumeToFile(call.args.value(0), call.args.value(1), CancelToken(), call.actor));
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
    // The engine refuses a slot the spec still declares.
    if (auto removed = call.engine.removeService(app, slot, data == u"delete", call.actor); !removed)
        return errorReply(removed.error());
    return Reply{200, QJsonObject{{u"app"_s, app},
                                  {u"slot"_s, slot},
                                  {u"status"_s, u"removed"_s},
                                  {u"data"_s, data == u"delete" ? u"deleted"_s : u"kept"_s}}};
}

} // namespace pando::server::serviceapi
