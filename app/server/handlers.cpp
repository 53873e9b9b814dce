// The REST handlers and the route table they are registered from. Handlers run on the server's
// thread and call the engine's query and command methods, which only touch the database and
// return quickly (the engine's threading contract); long work is queued by the engine.

#include "audithandlers.h"
#include "httperror.h"
#include "pipelinehandlers.h"
#include "replies.h"
#include "routes.h"

#include "core/spec/appspec.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QUrlQuery>

#ifndef PANDO_VERSION
#define PANDO_VERSION "0.0.0"
#endif

namespace pando::server {
namespace {

Reply health(Call &)
{
    return Reply{200, QJsonObject{{QStringLiteral("status"), QStringLiteral("ok")},
                                  {QStringLiteral("version"), QStringLiteral(PANDO_VERSION)}}};
}

Reply listApps(Call &call)
{
    auto apps = call.engine.apps();
    if (!apps)
        return errorReply(apps.error());
    QJsonArray list;
    for (const core::AppView &app : *apps)
        list.append(app.toJson());
    return Reply{200, QJsonObject{{QStringLiteral("apps"), list}}};
}

bool isSpecContentType(const QByteArray &contentType)
{
    const QByteArray type = contentType.split(';').constFirst().trimmed().toLower();
    return type.isEmpty() || type == "application/yaml" || type == "text/yaml" || type == "application/x-yaml" ||
           type == "text/x-yaml" || type == "application/json" || type == "text/plain";
}

Reply createApp(Call &call)
{
    const QByteArray body = call.request.body;
    // The transport guard refuses large bodies before they are read; this catches the rest.
    if (body.size() > core::MaxSpecBytes)
        return errorReply(Error{ErrorCode::TooLarge,
                                QStringLiteral("the spec is %1 bytes, more than the limit of %2 bytes")
                                    .arg(body.size())
                                    .arg(core::MaxSpecBytes),
                                QStringLiteral("body")});
    const QByteArray contentType = call.request.contentType;
    if (!isSpecContentType(contentType))
        return invalid(QStringLiteral("unsupported content type \"%1\"").arg(QString::fromLatin1(contentType)),
                       QStringLiteral("Content-Type"),
                       QStringLiteral("send the AppSpec as application/yaml or application/json"));
    if (body.trimmed().isEmpty())
        return invalid(QStringLiteral("the request has no body; it must hold the AppSpec"), QStringLiteral("body"));
    // JSON is YAML, so the engine's one parser reads both.
    auto app = call.engine.createApp(body, call.actor);
    if (!app)
        return errorReply(app.error());
    return Reply{201, app->toJson()};
}

Reply showApp(Call &call)
{
    auto app = call.engine.app(call.args.value(0));
    if (!app)
        return errorReply(app.error());
    return Reply{200, app->toJson()};
}

Reply removeApp(Call &call)
{
    auto removed = call.engine.removeApp(call.args.value(0), call.actor);
    if (!removed)
        return errorReply(removed.error());
    return Reply{202, QJsonObject{{QStringLiteral("status"), QStringLiteral("removing")}}};
}

Reply startDeploy(Call &call)
{
    QString ref;
    const QByteArray body = call.request.body.trimmed();
    if (!body.isEmpty()) {
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(body, &parseError);
        if (parseError.error != QJsonParseError::NoError)
            return invalid(QStringLiteral("malformed JSON: %1").arg(parseError.errorString()),
                           QStringLiteral("body, offset %1").arg(parseError.offset),
                           QStringLiteral("send {\"ref\":\"main\"} or no body"));
        if (!doc.isObject())
            return invalid(QStringLiteral("must be a JSON object"), QStringLiteral("body"));
        const QJsonObject object = doc.object();
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (it.key() != QLatin1String("ref"))
                return invalid(QStringLiteral("unknown field"), it.key(), QStringLiteral("the only field is \"ref\""));
        }
        const QJsonValue refValue = object.value(QStringLiteral("ref"));
        if (!refValue.isUndefined() && !refValue.isString())
            return invalid(QStringLiteral("must be a string"), QStringLiteral("ref"));
        ref = refValue.toString();
    }
    auto deploy = call.engine.deploy(call.args.value(0), ref, call.actor);
    if (!deploy)
        return errorReply(deploy.error());
    return Reply{202, core::toJson(*deploy)};
}

Reply listDeploys(Call &call)
{
    auto limit = intParam(call.request, QStringLiteral("limit"), 20, 1, 1000);
    if (!limit)
        return errorReply(limit.error());
    auto deploys = call.engine.deploys(call.args.value(0), *limit);
    if (!deploys)
        return errorReply(deploys.error());
    QJsonArray list;
    for (const core::DeployRecord &deploy : *deploys)
        list.append(core::toJson(deploy));
    return Reply{200, QJsonObject{{QStringLiteral("deploys"), list}}};
}

Reply showDeploy(Call &call)
{
    auto view = call.engine.deployView(call.args.value(0));
    if (!view)
        return errorReply(view.error());
    return Reply{200, view->toJson()};
}

Reply cancelDeploy(Call &call)
{
    auto cancelled = call.engine.cancelDeploy(call.args.value(0), call.actor);
    if (!cancelled)
        return errorReply(cancelled.error());
    return Reply{202, QJsonObject{{QStringLiteral("status"), QStringLiteral("cancelling")}}};
}

Reply logTail(Call &call)
{
    auto tail = intParam(call.request, QStringLiteral("tail"), 100, 0, 100000);
    if (!tail)
        return errorReply(tail.error());
    auto lines = call.engine.logTail(call.args.value(0), *tail);
    if (!lines)
        return errorReply(lines.error());
    QJsonArray list;
    for (const adapters::LogLine &line : *lines)
        list.append(core::toJson(line));
    return Reply{200, QJsonObject{{QStringLiteral("lines"), list}}};
}

// A WebSocket route reached without the upgrade: say how to use it.
Reply upgradeRequired(Call &)
{
    return errorReply(Error{ErrorCode::Invalid, QStringLiteral("this route is served over a WebSocket"),
                            QStringLiteral("Upgrade"),
                            QStringLiteral("connect with a WebSocket client (ws:// or wss://)")});
}

using namespace permission;

constexpr RouteDef Routes[] = {
    {"GET", "/api/v1/health", Public, false, &health},
    {"GET", "/api/v1/apps", AppsRead, false, &listApps},
    {"POST", "/api/v1/apps", AppsWrite, false, &createApp},
    {"GET", "/api/v1/apps/{name}", AppsRead, false, &showApp},
    {"DELETE", "/api/v1/apps/{name}", AppsWrite, false, &removeApp},
    {"POST", "/api/v1/apps/{name}/deploys", DeploysWrite, false, &startDeploy},
    {"GET", "/api/v1/apps/{name}/deploys", AppsRead, false, &listDeploys},
    {"GET", "/api/v1/deploys/{id}", AppsRead, false, &showDeploy},
    {"POST", "/api/v1/deploys/{id}/cancel", DeploysWrite, false, &cancelDeploy},
    {"GET", "/api/v1/apps/{name}/logs", LogsRead, false, &logTail},
    {"GET", "/api/v1/apps/{name}/logs/follow", LogsRead, true, &upgradeRequired},
    {"GET", "/api/v1/events", AppsRead, true, &upgradeRequired},
    // The pipeline runner (503 while the engine has none).
    {"GET", "/api/v1/pipelines", PipelinesRead, false, &pipelineapi::listPipelines},
    {"PUT", "/api/v1/pipelines/{name}", PipelinesWrite, false, &pipelineapi::setPipeline},
    {"GET", "/api/v1/pipelines/{name}", PipelinesRead, false, &pipelineapi::showPipeline},
    {"DELETE", "/api/v1/pipelines/{name}", PipelinesWrite, false, &pipelineapi::removePipeline},
    {"POST", "/api/v1/pipelines/{name}/pause", PipelinesWrite, false, &pipelineapi::pausePipeline},
    {"POST", "/api/v1/pipelines/{name}/unpause", PipelinesWrite, false, &pipelineapi::unpausePipeline},
    {"POST", "/api/v1/pipelines/{name}/jobs/{job}/runs", RunsWrite, false, &pipelineapi::triggerJob},
    {"GET", "/api/v1/pipelines/{name}/runs", PipelinesRead, false, &pipelineapi::listPipelineRuns},
    // Public: a forge cannot hold a bearer token; the resource's webhook token is checked instead.
    {"POST", "/api/v1/pipelines/{name}/resources/{resource}/check", Public, false, &pipelineapi::webhook},
    {"GET", "/api/v1/runs", PipelinesRead, false, &pipelineapi::listRuns},
    {"GET", "/api/v1/runs/{id}", PipelinesRead, false, &pipelineapi::showRun},
    {"GET", "/api/v1/runs/{id}/events", PipelinesRead, false, &pipelineapi::runEvents},
    {"POST", "/api/v1/runs/{id}/abort", RunsWrite, false, &pipelineapi::abortRun},
    {"GET", "/api/v1/runs/{id}/follow", PipelinesRead, true, &upgradeRequired},
    {"GET", "/api/v1/secrets", PipelinesRead, false, &pipelineapi::listSecrets},
    {"PUT", "/api/v1/secrets/{name}", PipelinesWrite, false, &pipelineapi::setSecret},
    {"DELETE", "/api/v1/secrets/{name}", PipelinesWrite, false, &pipelineapi::removeSecret},
    {"GET", "/api/v1/audit", AuditRead, false, &auditapi::listAudit},
    {"GET", "/api/v1/audit/verify", AuditRead, false, &auditapi::verifyAudit},
};

constexpr bool everyRouteIsComplete()
{
    for (const RouteDef &route : Routes) {
        if (!isKnownPermission(route.permission) || route.handler == nullptr || route.method.empty() ||
            !route.path.starts_with("/api/v1/"))
            return false;
    }
    return true;
}
static_assert(everyRouteIsComplete(), "every route needs a method, an /api/v1 path, a known permission and a handler");

} // namespace

std::span<const RouteDef> routeDefs()
{
    return Routes;
}

RouteMatch matchRoute(const QString &method, const QString &path)
{
    RouteMatch match;
    const QStringList segments = path.split(QLatin1Char('/'));
    for (const RouteDef &route : Routes) {
        const QStringList pattern =
            QString::fromLatin1(route.path.data(), qsizetype(route.path.size())).split(QLatin1Char('/'));
        if (pattern.size() != segments.size())
            continue;
        QStringList args;
        bool same = true;
        for (qsizetype i = 0; i < pattern.size() && same; ++i) {
            if (pattern[i].startsWith(QLatin1Char('{'))) {
                if (segments[i].isEmpty())
                    same = false;
                else
                    args.append(segments[i]);
            } else if (pattern[i] != segments[i]) {
                same = false;
            }
        }
        if (!same)
            continue;
        match.pathKnown = true;
        if (QLatin1String(route.method.data(), qsizetype(route.method.size())) == method) {
            match.route = &route;
            match.args = args;
            return match;
        }
    }
    return match;
}

} // namespace pando::server
