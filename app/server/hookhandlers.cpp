#include "hookhandlers.h"

#include "replies.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace pando::server::hookapi {

Reply receive(Call &call)
{
    const core::autodeploy::HookRequest request{call.request.forgeHeaders, call.request.body};
    auto delivery = call.engine.receiveHook(call.args.value(0), request, call.actor);
    if (!delivery)
        return errorReply(delivery.error());
    QJsonObject body = core::toJson(*delivery);
    body.insert(u"app"_s, call.args.value(0));
    // Accepted: the deploy is being queued (GET /api/v1/apps/{name}/hook shows which).
    return Reply{delivery->outcome == u"accepted" ? 202 : 200, body};
}

Reply show(Call &call)
{
    auto limit = intParam(call.request, u"limit"_s, 20, 1, core::autodeploy::MaxDeliveriesPerApp);
    if (!limit)
        return errorReply(limit.error());
    auto view = call.engine.appHook(call.args.value(0), *limit);
    if (!view)
        return errorReply(view.error());
    return Reply{200, view->toJson()};
}

Reply newSecret(Call &call)
{
    const QString example = u"{} for a new random secret, or {\"secret\": \"...\"} to set one"_s;
    auto body = jsonObjectBody(call.request, {u"secret"_s}, example);
    if (!body)
        return errorReply(body.error());
    const QJsonValue given = body->value(u"secret"_s);
    if (!given.isUndefined() && !given.isString())
        return invalid(u"must be a string"_s, u"secret"_s, example);
    QByteArray chosen = given.toString().toUtf8();
    auto secret = call.engine.setHookSecret(call.args.value(0), chosen, call.actor);
    const bool made = chosen.isEmpty();
    core::pipelines::SealBox::wipe(chosen);
    if (!secret)
        return errorReply(secret.error());
    QJsonObject reply{{u"app"_s, call.args.value(0)}, {u"path"_s, u"/api/v1/hooks/%1"_s.arg(call.args.value(0))}};
    // A secret Pando made is shown this once; one the caller sent is not sent back.
    if (made)
        reply.insert(u"secret"_s, QString::fromLatin1(*secret));
    core::pipelines::SealBox::wipe(*secret);
    return Reply{201, reply};
}

Reply registerOnForge(Call &call)
{
    const QString example = u"{\"url\": \"https://pando.example.com\"}: the address the forge reaches this server at"_s;
    auto body = jsonObjectBody(call.request, {u"url"_s}, example);
    if (!body)
        return errorReply(body.error());
    const QJsonValue url = body->value(u"url"_s);
    if (!url.isString() || url.toString().trimmed().isEmpty())
        return invalid(u"missing: the address the forge reaches this server at"_s, u"url"_s, example);
    auto hook = call.engine.registerAppHook(call.args.value(0), url.toString(), call.actor);
    if (!hook)
        return errorReply(hook.error());
    return Reply{200, QJsonObject{{u"app"_s, call.args.value(0)}, {u"url"_s, hook->url}, {u"hook"_s, hook->id}}};
}

Reply listPreviews(Call &call)
{
    auto previews = call.engine.previews(call.args.value(0));
    if (!previews)
        return errorReply(previews.error());
    QJsonArray list;
    for (const core::PreviewView &preview : std::as_const(*previews))
        list.append(preview.toJson());
    return Reply{200, QJsonObject{{u"app"_s, call.args.value(0)}, {u"previews"_s, list}}};
}

Reply removePreview(Call &call)
{
    bool ok = false;
    const int number = call.args.value(1).toInt(&ok);
    if (!ok || number <= 0)
        return invalid(u"\"%1\" is not a pull request's number"_s.arg(call.args.value(1).left(40)), u"number"_s,
                       u"DELETE /api/v1/apps/NAME/previews/12 removes the preview of pull request #12"_s);
    if (auto removed = call.engine.removePreview(call.args.value(0), number, call.actor); !removed)
        return errorReply(removed.error());
    // The teardown is queued: GET /api/v1/apps/{name}/previews shows it gone once it ran.
    return Reply{202, QJsonObject{{u"app"_s, call.args.value(0)}, {u"number"_s, number}, {u"removing"_s, true}}};
}

} // namespace pando::server::hookapi
