#include "appsecrethandlers.h"

#include "replies.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace pando::server::appsecretapi {

namespace {

QJsonObject infoJson(const core::secrets::AppSecretInfo &info, const core::AppSpec &spec)
{
    QJsonObject o{{u"name"_s, info.name}, {u"created_ms"_s, info.createdMs}, {u"updated_ms"_s, info.updatedMs}};
    if (auto file = spec.secrets.constFind(info.name); file != spec.secrets.cend()) {
        o.insert(u"injected_as"_s, u"file"_s);
        o.insert(u"file"_s, file->path);
    } else {
        o.insert(u"injected_as"_s, u"env"_s);
    }
    return o;
}

} // namespace

Reply listSecrets(Call &call)
{
    const QString app = call.args.value(0);
    auto view = call.engine.app(app);
    if (!view)
        return errorReply(view.error());
    auto list = call.engine.appSecrets(app);
    if (!list)
        return errorReply(list.error());
    QJsonArray secrets;
    QStringList set;
    for (const core::secrets::AppSecretInfo &info : std::as_const(*list)) {
        secrets.append(infoJson(info, view->spec));
        set << info.name;
    }
    // What the spec asks for as a file but nobody set yet: the next deploy would fail on it.
    QJsonArray missing;
    for (auto it = view->spec.secrets.cbegin(); it != view->spec.secrets.cend(); ++it) {
        if (!set.contains(it.key()))
            missing.append(it.key());
    }
    return Reply{200, QJsonObject{{u"app"_s, app}, {u"secrets"_s, secrets}, {u"missing"_s, missing}}};
}

Reply setSecret(Call &call)
{
    const QString app = call.args.value(0);
    const QString name = call.args.value(1);
    const QString example = u"{\"value\": \"...\"}"_s;
    auto body = jsonObjectBody(call.request, {u"value"_s}, example);
    if (!body)
        return errorReply(body.error());
    const QJsonValue value = body->value(u"value"_s);
    if (!value.isString())
        return invalid(value.isUndefined() ? u"missing required field"_s : u"must be a string"_s, u"value"_s,
                       u"send "_s + example);
    QByteArray bytes = value.toString().toUtf8();
    auto view = call.engine.app(app);
    if (!view) {
        core::pipelines::SealBox::wipe(bytes);
        return errorReply(view.error());
    }
    // The engine refuses a value the spec would inject as a variable that cannot be one.
    auto set = call.engine.setAppSecret(app, name, bytes, call.actor);
    core::pipelines::SealBox::wipe(bytes);
    if (!set)
        return errorReply(set.error());
    QJsonObject reply = infoJson(*set, view->spec);
    reply.insert(u"app"_s, app);
    return Reply{set->created ? 201 : 200, reply};
}

Reply removeSecret(Call &call)
{
    if (auto removed = call.engine.removeAppSecret(call.args.value(0), call.args.value(1), call.actor); !removed)
        return errorReply(removed.error());
    return Reply{204, {}};
}

} // namespace pando::server::appsecretapi
