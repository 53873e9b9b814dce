#include "envhandlers.h"

#include "replies.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace pando::server::envapi {

namespace {

const QString Example = u"{\"set\": {\"LOG_LEVEL\": \"debug\"}, \"unset\": [\"OLD_FLAG\"]}"_s;

QJsonObject changeJson(const core::EnvChange &change)
{
    QJsonObject out{{u"name"_s, change.name}};
    if (change.before)
        out.insert(u"before"_s, *change.before);
    if (change.after)
        out.insert(u"after"_s, *change.after);
    return out;
}

} // namespace

Reply showEnv(Call &call)
{
    const QString app = call.args.value(0);
    auto variables = call.engine.appEnvironment(app);
    if (!variables)
        return errorReply(variables.error());
    QJsonArray out;
    for (const core::Engine::EnvVariable &variable : std::as_const(*variables))
        out.append(variable.toJson());
    return Reply{200, QJsonObject{{u"app"_s, app}, {u"variables"_s, out}}};
}

Reply changeEnv(Call &call)
{
    auto body = jsonObjectBody(call.request, {u"set"_s, u"unset"_s}, Example);
    if (!body)
        return errorReply(body.error());
    core::EnvEdit edit;
    const QJsonValue set = body->value(u"set"_s);
    if (!set.isUndefined() && !set.isObject())
        return invalid(u"must be an object of names and string values"_s, u"set"_s, Example);
    const QJsonObject values = set.toObject();
    for (auto it = values.constBegin(); it != values.constEnd(); ++it) {
        if (!it.value().isString())
            return invalid(u"must be a string (numbers and booleans too: \"8080\", \"true\")"_s, u"set."_s + it.key(),
                           Example);
        edit.set.insert(it.key(), it.value().toString());
    }
    const QJsonValue unset = body->value(u"unset"_s);
    if (!unset.isUndefined() && !unset.isArray())
        return invalid(u"must be an array of names"_s, u"unset"_s, Example);
    const QJsonArray names = unset.toArray();
    for (qsizetype i = 0; i < names.size(); ++i) {
        const QString where = u"unset[%1]"_s.arg(i);
        if (!names[i].isString() || names[i].toString().isEmpty())
            return invalid(u"must be a variable's name"_s, where, Example);
        if (edit.set.contains(names[i].toString()))
            return invalid(u"%1 is both set and unset"_s.arg(names[i].toString()), where);
        edit.unset.append(names[i].toString());
    }
    if (edit.set.isEmpty() && edit.unset.isEmpty())
        return invalid(u"nothing to change: give set, unset or both"_s, u"body"_s, Example);
    auto update = call.engine.changeAppEnv(call.args.value(0), edit, call.actor);
    if (!update)
        return errorReply(update.error());
    QJsonArray changes;
    for (const core::EnvChange &change : std::as_const(update->changes))
        changes.append(changeJson(change));
    return Reply{200, QJsonObject{{u"app"_s, update->app.toJson()}, {u"changes"_s, changes}}};
}

} // namespace pando::server::envapi
