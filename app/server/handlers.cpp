// The REST handlers and the route table they are registered from. Handlers run on the server's
// thread and call the engine's query and command methods, which only touch the database and
// return quickly (the engine's threading contract); long work is queued by the engine.

#include "accounthandlers.h"
#include "approvalhandlers.h"
#include "appsecrethandlers.h"
#include "audithandlers.h"
#include "capacityhandlers.h"
#include "connectionhandlers.h"
#include "edgehandlers.h"
#include "envhandlers.h"
#include "granthandlers.h"
#include "hookhandlers.h"
#include "httperror.h"
#include "pairinghandlers.h"
#include "pipelinehandlers.h"
#include "replies.h"
#include "resourcehandlers.h"
#include "routes.h"
#include "servicehandlers.h"
#include "streamhandlers.h"

#include "core/spec/appspec.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QUrl>
#include <QUrlQuery>
#include <limits>

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
    // Members and viewers see the apps they hold a grant on (core/authz decides).
    auto visible = call.engine.visibility(call.principal);
    if (!visible)
        return errorReply(visible.error());
    QJsonArray list;
    for (const core::AppView &app : *apps)
        if (visible->seesApp(app.record.name))
            list.append(app.toJson());
    return Reply{200, QJsonObject{{QStringLiteral("apps"), list}}};
}

bool isSpecContentType(const QByteArray &contentType)
{
    const QByteArray type = contentType.split(';').constFirst().trimmed().toLower();
    return type.isEmpty() || type == "application/yaml" || type == "text/yaml" || type == "application/x-yaml" ||
           type == "text/x-yaml" || type == "application/json";
}

// Why the body cannot be an AppSpec, as the reply; nullopt when it may be one.
std::optional<Reply> refuseSpecBody(const Call &call)
{
    const QByteArray &body = call.request.body;
    // The transport guard refuses bodies over MaxRequestBodyBytes before they are read; a spec
    // is held to the smaller core::MaxSpecBytes here.
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
    return std::nullopt;
}

Reply updateApp(Call &call)
{
    if (auto refused = refuseSpecBody(call))
        return *refused;
    // The engine holds the change to specgate for the caller's role (call.actor carries it).
    auto app = call.engine.updateApp(call.args.value(0), call.request.body, call.actor);
    if (!app)
        return errorReply(app.error());
    return Reply{200, app->toJson()};
}

Reply createApp(Call &call)
{
    if (auto refused = refuseSpecBody(call))
        return *refused;
    // JSON is YAML, so the engine's one parser reads both. The creator owns the app: the engine
    // grants it in the same commit.
    auto app = call.engine.createApp(call.request.body, call.actor);
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
    // What becomes of the app's services' data (docs/services.md); without it, an app with
    // services is refused with the choices named.
    const QString data = QUrlQuery(call.request.url).queryItemValue(QStringLiteral("service_data"));
    if (!data.isEmpty() && data != QLatin1String("keep") && data != QLatin1String("delete"))
        return errorReply(Error{ErrorCode::Invalid,
                                QStringLiteral("expected keep or delete, got \"%1\"").arg(data),
                                QStringLiteral("query.service_data"),
                                {}});
    auto removed = call.engine.removeApp(call.args.value(0), call.actor,
                                         data == QLatin1String("keep")     ? core::Engine::ServiceData::Keep
                                         : data == QLatin1String("delete") ? core::Engine::ServiceData::Delete
                                                                           : core::Engine::ServiceData::Ask);
    // Its grants go when the teardown succeeded (the engine's remove job), not now.
    if (!removed)
        return errorReply(removed.error());
    return Reply{202, QJsonObject{{QStringLiteral("status"), core::toString(core::AppStatus::Removing)}}};
}

// The one optional string field of a small JSON body ({"ref": "main"}), or none at all.
Result<QString> onlyField(const QByteArray &rawBody, const QString &field)
{
    const QByteArray body = rawBody.trimmed();
    if (body.isEmpty())
        return QString();
    const QString example = QStringLiteral("send {\"%1\":\"...\"} or no body").arg(field);
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(ErrorCode::Invalid, QStringLiteral("malformed JSON: %1").arg(parseError.errorString()),
                    QStringLiteral("body, offset %1").arg(parseError.offset), example);
    if (!doc.isObject())
        return fail(ErrorCode::Invalid, QStringLiteral("must be a JSON object"), QStringLiteral("body"), example);
    const QJsonObject object = doc.object();
    for (auto it = object.begin(); it != object.end(); ++it)
        if (it.key() != field)
            return fail(ErrorCode::Invalid, QStringLiteral("unknown field"), it.key(),
                        QStringLiteral("the only field is \"%1\"").arg(field));
    const QJsonValue value = object.value(field);
    if (!value.isUndefined() && !value.isString())
        return fail(ErrorCode::Invalid, QStringLiteral("must be a string"), field);
    return value.toString();
}

Reply startDeploy(Call &call)
{
    auto ref = onlyField(call.request.body, QStringLiteral("ref"));
    if (!ref)
        return errorReply(ref.error());
    auto deploy = call.engine.deploy(call.args.value(0), *ref, call.actor);
    if (!deploy)
        return errorReply(deploy.error());
    return Reply{202, core::toJson(*deploy)};
}

Reply rollback(Call &call)
{
    auto to = onlyField(call.request.body, QStringLiteral("to"));
    if (!to)
        return errorReply(to.error());
    auto deploy = call.engine.rollback(call.args.value(0), *to, call.actor);
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

// ?step=N (a step's number; absent: every step's), &after=L (its lines after L), &limit=M.
Reply deployLog(Call &call)
{
    auto step = intParam(call.request, QStringLiteral("step"), -1, 0, 1000);
    if (!step)
        return errorReply(step.error());
    auto after = intParam(call.request, QStringLiteral("after"), 0, 0, std::numeric_limits<int>::max());
    if (!after)
        return errorReply(after.error());
    auto limit = intParam(call.request, QStringLiteral("limit"), 1000, 1, 5000);
    if (!limit)
        return errorReply(limit.error());
    auto lines = call.engine.deployLog(call.args.value(0), *step, *after, *limit);
    if (!lines)
        return errorReply(lines.error());
    QJsonArray list;
    for (const core::StepLogLine &line : std::as_const(*lines))
        list.append(core::toJson(line));
    return Reply{200, QJsonObject{{QStringLiteral("lines"), list}}};
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

constexpr ObjectArg None = ObjectArg::None;
constexpr ObjectArg App = ObjectArg::App;
constexpr ObjectArg Pipeline = ObjectArg::Pipeline;
constexpr ObjectArg Deploy = ObjectArg::Deploy;
constexpr ObjectArg Run = ObjectArg::Run;
constexpr ObjectArg Token = ObjectArg::Token;
constexpr ObjectArg Approval = ObjectArg::Approval;

constexpr RouteDef Routes[] = {
    {"GET", "/api/v1/health", Public, None, false, &health},
    // Accounts. Bootstrap works once, with the initial token in the body; login is throttled.
    {"POST", "/api/v1/bootstrap", Public, None, false, &accountapi::bootstrap},
    {"POST", "/api/v1/sessions", Public, None, false, &accountapi::login},
    {"DELETE", "/api/v1/sessions/current", Self, None, false, &accountapi::logout},
    {"GET", "/api/v1/users", UsersRead, None, false, &accountapi::listUsers},
    {"POST", "/api/v1/users", UsersWrite, None, false, &accountapi::createUser},
    {"POST", "/api/v1/users/{name}/disable", UsersWrite, None, false, &accountapi::disableUser},
    // Pairing: an administrator makes a one-time code for an account; the code is its own
    // credential when redeemed (single use, short-lived, throttled per address like logins).
    {"POST", "/api/v1/users/{name}/pairings", UsersWrite, None, false, &pairingapi::createPairing},
    {"POST", "/api/v1/pairings/redeem", Public, None, false, &pairingapi::redeemPairing},
    {"GET", "/api/v1/connections", UsersRead, None, false, &pairingapi::listConnections},
    {"GET", "/api/v1/tokens", Self, None, false, &accountapi::listTokens},
    {"POST", "/api/v1/tokens", Self, None, false, &accountapi::createToken},
    {"DELETE", "/api/v1/tokens/{id}", Self, Token, false, &accountapi::revokeToken},
    {"GET", "/api/v1/apps", AppsRead, None, false, &listApps},
    {"POST", "/api/v1/apps", AppsWrite, None, false, &createApp},
    {"GET", "/api/v1/apps/{name}", AppsRead, App, false, &showApp},
    {"PUT", "/api/v1/apps/{name}", AppsWrite, App, false, &updateApp},
    {"DELETE", "/api/v1/apps/{name}", AppsWrite, App, false, &removeApp},
    {"POST", "/api/v1/apps/{name}/deploys", DeploysWrite, App, false, &startDeploy},
    {"POST", "/api/v1/apps/{name}/rollback", DeploysWrite, App, false, &rollback},
    // Starting the serving version again (after its disk limit stopped it) is a deployer's call.
    {"POST", "/api/v1/apps/{name}/start", DeploysWrite, App, false, &capacityapi::startApp},
    {"POST", "/api/v1/apps/{name}/stop", DeploysWrite, App, false, &capacityapi::stopApp},
    {"POST", "/api/v1/apps/{name}/restart", DeploysWrite, App, false, &capacityapi::restartApp},
    {"GET", "/api/v1/apps/{name}/deploys", AppsRead, App, false, &listDeploys},
    {"GET", "/api/v1/deploys/{id}", AppsRead, Deploy, false, &showDeploy},
    {"GET", "/api/v1/deploys/{id}/log", AppsRead, Deploy, false, &deployLog},
    {"POST", "/api/v1/deploys/{id}/cancel", DeploysWrite, Deploy, false, &cancelDeploy},
    {"GET", "/api/v1/apps/{name}/logs", LogsRead, App, false, &logTail},
    // App secrets: names are readable like the spec that declares them; values only go in.
    {"GET", "/api/v1/apps/{name}/secrets", AppsRead, App, false, &appsecretapi::listSecrets},
    {"PUT", "/api/v1/apps/{name}/secrets/{secret}", AppsWrite, App, false, &appsecretapi::setSecret},
    {"DELETE", "/api/v1/apps/{name}/secrets/{secret}", AppsWrite, App, false, &appsecretapi::removeSecret},
    // Its environment: run.env is the spec's, written as the spec is.
    {"GET", "/api/v1/apps/{name}/env", AppsRead, App, false, &envapi::showEnv},
    {"PATCH", "/api/v1/apps/{name}/env", AppsWrite, App, false, &envapi::changeEnv},
    {"GET", "/api/v1/apps/{name}/hook", AppsRead, App, false, &hookapi::show},
    {"POST", "/api/v1/apps/{name}/hook/secret", AppsWrite, App, false, &hookapi::newSecret},
    {"POST", "/api/v1/apps/{name}/hook/register", AppsWrite, App, false, &hookapi::registerOnForge},
    // Its previews (docs/autodeploy.md): removing one is removing an app, an apps.write of the app's.
    {"GET", "/api/v1/apps/{name}/previews", AppsRead, App, false, &hookapi::listPreviews},
    {"DELETE", "/api/v1/apps/{name}/previews/{number}", AppsWrite, App, false, &hookapi::removePreview},
    // Backing services (docs/services.md): a backup holds the whole data, so it needs apps.write.
    {"GET", "/api/v1/services", AppsRead, None, false, &serviceapi::listAllServices},
    {"GET", "/api/v1/apps/{name}/services", AppsRead, App, false, &serviceapi::listAppServices},
    {"POST", "/api/v1/apps/{name}/services/{slot}/backup", AppsWrite, App, false, &serviceapi::backupService},
    {"DELETE", "/api/v1/apps/{name}/services/{slot}", AppsWrite, App, false, &serviceapi::removeService},
    // An app volume's files (run.volumes), as an archive: all of its data, so apps.write.
    {"POST", "/api/v1/apps/{name}/volumes/{volume}/backup", AppsWrite, App, false, &serviceapi::backupVolume},
    // The archive comes over a WebSocket (app/server/volumerestore.h): it may be far larger than a body.
    {"GET", "/api/v1/apps/{name}/volumes/{volume}/restore", AppsWrite, App, true, &upgradeRequired,
     &streamapi::restoreVolume},
    {"GET", "/api/v1/apps/{name}/logs/follow", LogsRead, App, true, &upgradeRequired, &streamapi::followLogs},
    {"GET", "/api/v1/deploys/{id}/log/follow", AppsRead, Deploy, true, &upgradeRequired, &streamapi::followDeployLog},
    // A command in the app's container: it reads the app's secrets as the app does, so it takes
    // what changing the app takes.
    {"GET", "/api/v1/apps/{name}/exec", AppsWrite, App, true, &upgradeRequired, &streamapi::exec},
    // A port-forward to the app (docs/edge.md, "Teammates"): reading the app lets one open it.
    {"GET", "/api/v1/apps/{name}/tunnel", AppsRead, App, true, &upgradeRequired, &streamapi::tunnel,
     &streamapi::tunnelReady},
    {"GET", "/api/v1/events", AppsRead, None, true, &upgradeRequired, &streamapi::events},
    // The pipeline runner (503 while the engine has none).
    {"GET", "/api/v1/pipelines", PipelinesRead, None, false, &pipelineapi::listPipelines},
    {"PUT", "/api/v1/pipelines/{name}", PipelinesWrite, Pipeline, false, &pipelineapi::setPipeline},
    {"GET", "/api/v1/pipelines/{name}", PipelinesRead, Pipeline, false, &pipelineapi::showPipeline},
    {"DELETE", "/api/v1/pipelines/{name}", PipelinesWrite, Pipeline, false, &pipelineapi::removePipeline},
    {"POST", "/api/v1/pipelines/{name}/rename", PipelinesWrite, Pipeline, false, &pipelineapi::renamePipeline},
    {"POST", "/api/v1/pipelines/{name}/pause", PipelinesWrite, Pipeline, false, &pipelineapi::pausePipeline},
    {"POST", "/api/v1/pipelines/{name}/unpause", PipelinesWrite, Pipeline, false, &pipelineapi::unpausePipeline},
    {"POST", "/api/v1/pipelines/{name}/archive", PipelinesWrite, Pipeline, false, &pipelineapi::archivePipeline},
    {"POST", "/api/v1/pipelines/{name}/jobs/{job}/runs", RunsWrite, Pipeline, false, &pipelineapi::triggerJob},
    // Jobs and their state (fly jobs); pausing one holds back its runs, an operator's as a trigger is.
    {"GET", "/api/v1/pipelines/{name}/jobs", PipelinesRead, Pipeline, false, &pipelineapi::listJobs},
    {"POST", "/api/v1/pipelines/{name}/jobs/{job}/pause", RunsWrite, Pipeline, false, &pipelineapi::pauseJob},
    {"POST", "/api/v1/pipelines/{name}/jobs/{job}/unpause", RunsWrite, Pipeline, false, &pipelineapi::unpauseJob},
    {"GET", "/api/v1/pipelines/{name}/runs", PipelinesRead, Pipeline, false, &pipelineapi::listPipelineRuns},
    // Public: a forge cannot hold a bearer token; the resource's webhook token is checked instead.
    {"POST", "/api/v1/pipelines/{name}/resources/{resource}/check", Public, None, false, &pipelineapi::webhook},
    // Public for the same reason: the delivery's signature against the app's secret is checked.
    {"POST", "/api/v1/hooks/{name}", Public, None, false, &hookapi::receive},
    // Resources: their versions are read like runs; pinning one and checking now are an operator's,
    // like triggering a job (Concourse's pipeline-operator).
    {"GET", "/api/v1/pipelines/{name}/resources", PipelinesRead, Pipeline, false, &resourceapi::listResources},
    {"GET", "/api/v1/pipelines/{name}/resources/{resource}/versions", PipelinesRead, Pipeline, false,
     &resourceapi::listVersions},
    {"PUT", "/api/v1/pipelines/{name}/resources/{resource}/pin", RunsWrite, Pipeline, false, &resourceapi::pinVersion},
    {"DELETE", "/api/v1/pipelines/{name}/resources/{resource}/pin", RunsWrite, Pipeline, false,
     &resourceapi::unpinVersion},
    {"POST", "/api/v1/pipelines/{name}/resources/{resource}/check-now", RunsWrite, Pipeline, false,
     &resourceapi::checkNow},
    // Host execution: off for the install unless an administrator turns it on, and then only for
    // the pipelines an administrator marks (docs/pipelines.md). Anyone signed in may read it.
    {"GET", "/api/v1/settings", PipelinesRead, None, false, &pipelineapi::showSettings},
    {"PUT", "/api/v1/settings", SettingsWrite, None, false, &pipelineapi::updateSettings},
    {"PUT", "/api/v1/pipelines/{name}/host-execution", SettingsWrite, Pipeline, false,
     &pipelineapi::setPipelineHostExecution},
    {"GET", "/api/v1/runs", PipelinesRead, None, false, &pipelineapi::listRuns},
    {"GET", "/api/v1/runs/{id}", PipelinesRead, Run, false, &pipelineapi::showRun},
    {"GET", "/api/v1/runs/{id}/events", PipelinesRead, Run, false, &pipelineapi::runEvents},
    {"POST", "/api/v1/runs/{id}/abort", RunsWrite, Run, false, &pipelineapi::abortRun},
    {"GET", "/api/v1/runs/{id}/follow", PipelinesRead, Run, true, &upgradeRequired, &streamapi::followRun},
    // Secrets are install-wide: no member holds pipelines.write on them.
    {"GET", "/api/v1/secrets", PipelinesRead, None, false, &pipelineapi::listSecrets},
    {"PUT", "/api/v1/secrets/{name}", PipelinesWrite, None, false, &pipelineapi::setSecret},
    // Which pipelines may read an install-wide secret (docs/pipelines.md, "Secrets").
    {"PUT", "/api/v1/secrets/{name}/access", PipelinesWrite, None, false, &pipelineapi::setSecretAccess},
    {"DELETE", "/api/v1/secrets/{name}", PipelinesWrite, None, false, &pipelineapi::removeSecret},
    // Grants are managed by whoever may change the object: its owner, operators, admins.
    {"GET", "/api/v1/apps/{name}/grants", AppsWrite, App, false, &grantapi::listAppGrants},
    {"POST", "/api/v1/apps/{name}/grants", AppsWrite, App, false, &grantapi::addAppGrant},
    {"DELETE", "/api/v1/apps/{name}/grants/{user}/{role}", AppsWrite, App, false, &grantapi::removeAppGrant},
    {"GET", "/api/v1/pipelines/{name}/grants", PipelinesWrite, Pipeline, false, &grantapi::listPipelineGrants},
    {"POST", "/api/v1/pipelines/{name}/grants", PipelinesWrite, Pipeline, false, &grantapi::addPipelineGrant},
    {"DELETE", "/api/v1/pipelines/{name}/grants/{user}/{role}", PipelinesWrite, Pipeline, false,
     &grantapi::removePipelineGrant},
    // Source connections (docs/user-guide.md, "Private repositories"): everyone signed in lists
    // the ones they may use; adding, testing, removing and granting are install settings.
    {"GET", "/api/v1/source-connections", AppsRead, None, false, &connectionapi::listConnections},
    {"POST", "/api/v1/source-connections", SettingsWrite, None, false, &connectionapi::addConnection},
    {"GET", "/api/v1/source-connections/{name}", AppsRead, None, false, &connectionapi::showConnection},
    {"DELETE", "/api/v1/source-connections/{name}", SettingsWrite, None, false, &connectionapi::removeConnection},
    {"POST", "/api/v1/source-connections/{name}/test", SettingsWrite, None, false, &connectionapi::testConnection},
    {"POST", "/api/v1/source-connections/authorizations", SettingsWrite, None, false,
     &connectionapi::beginAuthorization},
    {"POST", "/api/v1/source-connections/authorizations/complete", SettingsWrite, None, false,
     &connectionapi::completeAuthorization},
    {"POST", "/api/v1/source-connections/{name}/authorize", SettingsWrite, None, false,
     &connectionapi::reauthorizeConnection},
    {"GET", "/api/v1/source-connections/{name}/repositories", AppsRead, None, false,
     &connectionapi::connectionRepositories},
    {"GET", "/api/v1/source-connections/{name}/branches", AppsRead, None, false, &connectionapi::connectionBranches},
    {"GET", "/api/v1/source-connections/{name}/grants", SettingsWrite, None, false, &grantapi::listConnectionGrants},
    {"POST", "/api/v1/source-connections/{name}/grants", SettingsWrite, None, false, &grantapi::addConnectionGrant},
    {"DELETE", "/api/v1/source-connections/{name}/grants/{user}/{role}", SettingsWrite, None, false,
     &grantapi::removeConnectionGrant},
    // Approvals: anyone who can read sees them; deciding needs approvals.write on what waits.
    {"GET", "/api/v1/approvals", AppsRead, None, false, &approvalapi::listApprovals},
    {"GET", "/api/v1/approvals/{id}", AppsRead, Approval, false, &approvalapi::showApproval},
    {"POST", "/api/v1/approvals/{id}/approve", ApprovalsWrite, Approval, false, &approvalapi::approve},
    {"POST", "/api/v1/approvals/{id}/reject", ApprovalsWrite, Approval, false, &approvalapi::reject},
    {"GET", "/api/v1/audit", AuditRead, None, false, &auditapi::listAudit},
    {"GET", "/api/v1/audit/verify", AuditRead, None, false, &auditapi::verifyAudit},
    {"GET", "/api/v1/audit/sinks", AuditRead, None, false, &auditapi::listSinks},
    // Install-wide figures (totals, sums, counts; no app names): whoever may read apps, as a
    // refused deploy shows a deployer the same figures.
    {"GET", "/api/v1/capacity", AppsRead, None, false, &capacityapi::showCapacity},
    {"GET", "/api/v1/edge", AppsRead, None, false, &capacityapi::showEdge},
    // The install CA's root is no secret: whoever uses the install's apps trusts it.
    {"GET", "/api/v1/edge/ca", AppsRead, None, false, &capacityapi::showEdgeCa},
    // Identity assertions (docs/edge.md): the edge asks per request to an app that wants them.
    // Public in the table because the handler's credential may be the pando_session cookie,
    // which no other route reads; the engine authenticates it and decides apps.read on the app.
    {"GET", "/api/v1/edge/auth", Public, None, false, &edgeapi::auth},
    // The sign-in page the edge serves on an app's host at /.pando/sign-in: public, as a login is;
    // the form's POST is the one route that takes a form (a browser cannot send JSON by itself).
    {"GET", "/api/v1/edge/sign-in", Public, None, false, &edgeapi::signInPage},
    {"POST", "/api/v1/edge/sign-in", Public, None, false, &edgeapi::signIn},
    {"GET", "/api/v1/edge/sign-out", Public, None, false, &edgeapi::signOutPage},
    {"POST", "/api/v1/edge/sign-out", Public, None, false, &edgeapi::signOut},
    // A new signing key at once (a key file that may have leaked): an install setting.
    {"POST", "/api/v1/edge/keys/rotate", SettingsWrite, None, false, &edgeapi::rotateKey},
    // Where JWT libraries look for the keys (RFC 8414's well-known place); public keys only.
    {"GET", "/.well-known/jwks.json", Public, None, false, &edgeapi::jwks},
};

constexpr bool everyRouteIsComplete()
{
    for (const RouteDef &route : Routes) {
        const bool wellKnown = route.path == "/.well-known/jwks.json" && route.permission == permission::Public;
        if (!isKnownPermission(route.permission) || route.handler == nullptr || route.method.empty() ||
            !(route.path.starts_with("/api/v1/") || wellKnown) || route.object == ObjectArg::Undeclared)
            return false;
        // An object comes from the first {placeholder}: a route that names one needs one.
        if (route.object != ObjectArg::None && route.path.find('{') == std::string_view::npos)
            return false;
        // A WebSocket route is served by its stream after the upgrade, and only it has one.
        if (route.webSocket != (route.stream != nullptr) || (route.webSocket && route.method != "GET"))
            return false;
        if (route.beforeUpgrade != nullptr && !route.webSocket)
            return false;
    }
    return true;
}
static_assert(everyRouteIsComplete(), "every route needs a method, an /api/v1 path (or the public JWKS URL), a "
                                      "known permission, its object "
                                      "and a handler; a WebSocket route (GET) also its stream handler");

} // namespace

std::span<const RouteDef> routeDefs()
{
    return Routes;
}

bool reachesOut(const RouteDef &route)
{
    // Both resolve the spec's source ref on its git remote before answering.
    return route.handler == &createApp || route.handler == &updateApp;
}

std::optional<Reply> refuseBodyType(const RouteDef &route, const RequestData &request)
{
    // The resource webhook takes what forges send, the edge's sign-in and sign-out forms what
    // browsers send (their handlers check it).
    if (request.body.isEmpty() || route.handler == &pipelineapi::webhook || route.handler == &hookapi::receive ||
        route.handler == &edgeapi::signIn || route.handler == &edgeapi::signOut)
        return std::nullopt;
    const QByteArray type = request.contentType.split(';').constFirst().trimmed().toLower();
    const bool json = type == "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
    const bool spec = route.handler == &createApp || route.handler == &updateApp;
    if (json || (spec && !type.isEmpty() && isSpecContentType(type)))
        return std::nullopt;
    return Reply{415,
                 errorBody(Error{ErrorCode::Invalid,
                                 QStringLiteral("unsupported content type \"%1\"; this route takes %2")
                                     .arg(QString::fromLatin1(type.left(100)),
                                          spec ? QStringLiteral("an AppSpec as YAML or JSON") : QStringLiteral("JSON")),
                                 QStringLiteral("Content-Type"),
                                 spec ? QStringLiteral("send Content-Type: application/yaml or application/json")
                                      : QStringLiteral("send Content-Type: application/json")})};
}

RouteMatch matchRoute(const QString &method, const QString &encodedPath)
{
    RouteMatch match;
    QStringList segments = encodedPath.split(QLatin1Char('/'));
    for (QString &segment : segments)
        segment = QUrl::fromPercentEncoding(segment.toUtf8());
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
