#include "api.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QUrl>
#include <QWebSocket>
#include <memory>
#include <optional>

using namespace Qt::StringLiterals;

namespace pando::client {

namespace {

QString encoded(const QString &text)
{
    return QString::fromLatin1(QUrl::toPercentEncoding(text));
}

QString serviceDataWord(ServiceData data)
{
    switch (data) {
    case ServiceData::Keep:
        return u"keep"_s;
    case ServiceData::Delete:
        return u"delete"_s;
    case ServiceData::Unsaid:
        break;
    }
    return {};
}

QString collection(GrantKind kind)
{
    switch (kind) {
    case GrantKind::App:
        return u"apps"_s;
    case GrantKind::Pipeline:
        return u"pipelines"_s;
    case GrantKind::Connection:
        break;
    }
    return u"source-connections"_s;
}

QByteArray contentTypeOf(SpecFormat format)
{
    return format == SpecFormat::Json ? QByteArrayLiteral("application/json") : QByteArrayLiteral("application/yaml");
}

} // namespace

QString apiPath(std::initializer_list<QString> segments)
{
    QString path = u"/api/v1"_s;
    for (const QString &segment : segments)
        path += u'/' + encoded(segment);
    return path;
}

Query &Query::add(const QString &name, const QString &value)
{
    m_items << encoded(name) + u'=' + encoded(value);
    return *this;
}

QString Query::suffix() const
{
    return m_items.isEmpty() ? QString() : u'?' + m_items.join(u'&');
}

void Api::get(const QString &path, Callback done) const
{
    m_client->get(path, std::move(done));
}

void Api::sendJson(const QByteArray &method, const QString &path, const QJsonObject &body, Callback done) const
{
    m_client->request(method, path, QJsonDocument(body).toJson(QJsonDocument::Compact), "application/json",
                      std::move(done));
}

void Api::sendEmpty(const QByteArray &method, const QString &path, Callback done) const
{
    m_client->request(method, path, {}, {}, std::move(done));
}

void Api::health(Callback done) const
{
    get(apiPath({u"health"_s}), std::move(done));
}

void Api::bootstrap(const QString &initialToken, const QString &username, const QString &password, Callback done) const
{
    sendJson("POST", apiPath({u"bootstrap"_s}),
             {{u"token"_s, initialToken}, {u"username"_s, username}, {u"password"_s, password}}, std::move(done));
}

void Api::login(const QString &username, const QString &password, Callback done) const
{
    sendJson("POST", apiPath({u"sessions"_s}), {{u"username"_s, username}, {u"password"_s, password}}, std::move(done));
}

void Api::logout(Callback done) const
{
    sendEmpty("DELETE", apiPath({u"sessions"_s, u"current"_s}), std::move(done));
}

void Api::users(Callback done) const
{
    get(apiPath({u"users"_s}), std::move(done));
}

void Api::createUser(const QString &username, const QString &password, const QString &role, Callback done) const
{
    sendJson("POST", apiPath({u"users"_s}), {{u"username"_s, username}, {u"password"_s, password}, {u"role"_s, role}},
             std::move(done));
}

void Api::disableUser(const QString &username, Callback done) const
{
    sendJson("POST", apiPath({u"users"_s, username, u"disable"_s}), {}, std::move(done));
}

void Api::createPairing(const QString &username, Callback done) const
{
    sendEmpty("POST", apiPath({u"users"_s, username, u"pairings"_s}), std::move(done));
}

void Api::redeemPairing(const QString &code, const QString &deviceName, Callback done) const
{
    sendJson("POST", apiPath({u"pairings"_s, u"redeem"_s}), {{u"token"_s, code}, {u"name"_s, deviceName}},
             std::move(done));
}

void Api::connections(Callback done) const
{
    get(apiPath({u"connections"_s}), std::move(done));
}

void Api::tokens(Callback done) const
{
    get(apiPath({u"tokens"_s}), std::move(done));
}

void Api::createToken(const TokenRequest &request, Callback done) const
{
    QJsonObject body{{u"name"_s, request.name}};
    if (!request.scopes.isEmpty())
        body.insert(u"scopes"_s, QJsonArray::fromStringList(request.scopes));
    if (!request.expiresIn.isEmpty())
        body.insert(u"expiresIn"_s, request.expiresIn);
    sendJson("POST", apiPath({u"tokens"_s}), body, std::move(done));
}

void Api::revokeToken(const QString &id, Callback done) const
{
    sendEmpty("DELETE", apiPath({u"tokens"_s, id}), std::move(done));
}

void Api::apps(Callback done) const
{
    get(apiPath({u"apps"_s}), std::move(done));
}

void Api::app(const QString &name, Callback done) const
{
    get(apiPath({u"apps"_s, name}), std::move(done));
}

void Api::createApp(const QByteArray &spec, SpecFormat format, Callback done) const
{
    m_client->request("POST", apiPath({u"apps"_s}), spec, contentTypeOf(format), std::move(done));
}

void Api::updateApp(const QString &name, const QByteArray &spec, SpecFormat format, Callback done) const
{
    m_client->request("PUT", apiPath({u"apps"_s, name}), spec, contentTypeOf(format), std::move(done));
}

void Api::removeApp(const QString &name, ServiceData data, Callback done) const
{
    sendEmpty("DELETE",
              apiPath({u"apps"_s, name}) + Query().addIfSet(u"service_data"_s, serviceDataWord(data)).suffix(),
              std::move(done));
}

void Api::appAction(const QString &name, AppAction action, Callback done) const
{
    const QString verb = action == AppAction::Start ? u"start"_s : action == AppAction::Stop ? u"stop"_s : u"restart"_s;
    sendJson("POST", apiPath({u"apps"_s, name, verb}), {}, std::move(done));
}

void Api::appEnv(const QString &name, Callback done) const
{
    get(apiPath({u"apps"_s, name, u"env"_s}), std::move(done));
}

void Api::changeAppEnv(const QString &name, const QJsonObject &change, Callback done) const
{
    sendJson("PATCH", apiPath({u"apps"_s, name, u"env"_s}), change, std::move(done));
}

void Api::deploy(const QString &app, const QString &ref, Callback done) const
{
    QJsonObject body;
    if (!ref.isEmpty())
        body.insert(u"ref"_s, ref);
    sendJson("POST", apiPath({u"apps"_s, app, u"deploys"_s}), body, std::move(done));
}

void Api::rollback(const QString &app, const QString &to, Callback done) const
{
    QJsonObject body;
    if (!to.isEmpty())
        body.insert(u"to"_s, to);
    sendJson("POST", apiPath({u"apps"_s, app, u"rollback"_s}), body, std::move(done));
}

void Api::deploys(const QString &app, std::optional<int> limit, Callback done) const
{
    get(apiPath({u"apps"_s, app, u"deploys"_s}) + Query().addIfSet(u"limit"_s, limit).suffix(), std::move(done));
}

void Api::deployDetail(const QString &id, Callback done) const
{
    get(apiPath({u"deploys"_s, id}), std::move(done));
}

void Api::deployLog(const QString &id, std::optional<int> step, int after, int limit, Callback done) const
{
    get(apiPath({u"deploys"_s, id, u"log"_s}) +
            Query().addIfSet(u"step"_s, step).add(u"after"_s, after).add(u"limit"_s, limit).suffix(),
        std::move(done));
}

void Api::cancelDeploy(const QString &id, Callback done) const
{
    sendEmpty("POST", apiPath({u"deploys"_s, id, u"cancel"_s}), std::move(done));
}

void Api::logTail(const QString &app, int tail, Callback done) const
{
    get(apiPath({u"apps"_s, app, u"logs"_s}) + Query().add(u"tail"_s, tail).suffix(), std::move(done));
}

QWebSocket *Api::followLogs(const QString &app, int tail, MessageCallback onMessage, ClosedCallback onClosed) const
{
    return m_client->follow(apiPath({u"apps"_s, app, u"logs"_s, u"follow"_s}) + Query().add(u"tail"_s, tail).suffix(),
                            std::move(onMessage), std::move(onClosed));
}

QWebSocket *Api::followEvents(const QString &app, MessageCallback onMessage, ClosedCallback onClosed) const
{
    return m_client->follow(apiPath({u"events"_s}) + Query().addIfSet(u"app"_s, app).suffix(), std::move(onMessage),
                            std::move(onClosed));
}

void Api::appSecrets(const QString &app, Callback done) const
{
    get(apiPath({u"apps"_s, app, u"secrets"_s}), std::move(done));
}

void Api::setAppSecret(const QString &app, const QString &name, const QString &value, Callback done) const
{
    sendJson("PUT", apiPath({u"apps"_s, app, u"secrets"_s, name}), {{u"value"_s, value}}, std::move(done));
}

void Api::removeAppSecret(const QString &app, const QString &name, Callback done) const
{
    sendEmpty("DELETE", apiPath({u"apps"_s, app, u"secrets"_s, name}), std::move(done));
}

void Api::registerAppHook(const QString &app, const QString &publicUrl, Callback done) const
{
    sendJson("POST", apiPath({u"apps"_s, app, u"hook"_s, u"register"_s}), QJsonObject{{u"url"_s, publicUrl}},
             std::move(done));
}

void Api::appPreviews(const QString &app, Callback done) const
{
    get(apiPath({u"apps"_s, app, u"previews"_s}), std::move(done));
}

void Api::removeAppPreview(const QString &app, int number, Callback done) const
{
    sendEmpty("DELETE", apiPath({u"apps"_s, app, u"previews"_s, QString::number(number)}), std::move(done));
}

void Api::appHook(const QString &app, std::optional<int> limit, Callback done) const
{
    get(apiPath({u"apps"_s, app, u"hook"_s}) + Query().addIfSet(u"limit"_s, limit).suffix(), std::move(done));
}

void Api::newHookSecret(const QString &app, const QString &secret, Callback done) const
{
    QJsonObject body;
    if (!secret.isEmpty())
        body.insert(u"secret"_s, secret);
    sendJson("POST", apiPath({u"apps"_s, app, u"hook"_s, u"secret"_s}), body, std::move(done));
}

void Api::sourceConnections(Callback done) const
{
    get(apiPath({u"source-connections"_s}), std::move(done));
}

void Api::sourceConnection(const QString &name, Callback done) const
{
    get(apiPath({u"source-connections"_s, name}), std::move(done));
}

void Api::addSourceConnection(const QJsonObject &connection, Callback done) const
{
    sendJson("POST", apiPath({u"source-connections"_s}), connection, std::move(done));
}

void Api::beginSourceAuthorization(const QJsonObject &body, Callback done) const
{
    sendJson("POST", apiPath({u"source-connections"_s, u"authorizations"_s}), body, std::move(done));
}

void Api::reauthorizeSourceConnection(const QString &name, const QString &redirectUri, Callback done) const
{
    sendJson("POST", apiPath({u"source-connections"_s, name, u"authorize"_s}),
             QJsonObject{{u"redirect_uri"_s, redirectUri}}, std::move(done));
}

void Api::completeSourceAuthorization(const QString &state, const QString &code, Callback done) const
{
    sendJson("POST", apiPath({u"source-connections"_s, u"authorizations"_s, u"complete"_s}),
             QJsonObject{{u"state"_s, state}, {u"code"_s, code}}, std::move(done));
}

void Api::removeSourceConnection(const QString &name, Callback done) const
{
    sendEmpty("DELETE", apiPath({u"source-connections"_s, name}), std::move(done));
}

void Api::testRegistryConnection(const QString &name, const QString &image, Callback done) const
{
    sendJson("POST", apiPath({u"source-connections"_s, name, u"test"_s}), QJsonObject{{u"image"_s, image}},
             std::move(done));
}

void Api::testSourceConnection(const QString &name, const QString &repo, const QString &ref, Callback done) const
{
    QJsonObject body{{u"repo"_s, repo}};
    if (!ref.isEmpty())
        body.insert(u"ref"_s, ref);
    sendJson("POST", apiPath({u"source-connections"_s, name, u"test"_s}), body, std::move(done));
}

void Api::sourceConnectionRepositories(const QString &name, Callback done) const
{
    get(apiPath({u"source-connections"_s, name, u"repositories"_s}), std::move(done));
}

void Api::sourceConnectionBranches(const QString &name, const QString &repo, Callback done) const
{
    get(apiPath({u"source-connections"_s, name, u"branches"_s}) + Query().add(u"repo"_s, repo).suffix(),
        std::move(done));
}

void Api::services(Callback done) const
{
    get(apiPath({u"services"_s}), std::move(done));
}

void Api::appServices(const QString &app, Callback done) const
{
    get(apiPath({u"apps"_s, app, u"services"_s}), std::move(done));
}

void Api::backupService(const QString &app, const QString &slot, QIODevice *out, int idleTimeoutMs,
                        const ProgressCallback &progress, Callback done) const
{
    m_client->download("POST", apiPath({u"apps"_s, app, u"services"_s, slot, u"backup"_s}), out, idleTimeoutMs,
                       progress, std::move(done));
}

void Api::backupVolume(const QString &app, const QString &volume, QIODevice *out, int idleTimeoutMs,
                       const ProgressCallback &progress, Callback done) const
{
    m_client->download("POST", apiPath({u"apps"_s, app, u"volumes"_s, volume, u"backup"_s}), out, idleTimeoutMs,
                       progress, std::move(done));
}

void Api::removeService(const QString &app, const QString &slot, ServiceData data, Callback done) const
{
    sendEmpty("DELETE",
              apiPath({u"apps"_s, app, u"services"_s, slot}) +
                  Query().addIfSet(u"data"_s, serviceDataWord(data)).suffix(),
              std::move(done));
}

void Api::pipelines(bool includeArchived, Callback done) const
{
    get(apiPath({u"pipelines"_s}) +
            (includeArchived ? Query().add(u"include_archived"_s, u"true"_s).suffix() : QString()),
        std::move(done));
}

void Api::pipeline(const QString &name, Callback done) const
{
    get(apiPath({u"pipelines"_s, name}), std::move(done));
}

void Api::setPipeline(const QString &name, const QString &config, const QString &vars, bool dryRun, Callback done) const
{
    setPipeline(name, PipelineSet{.config = config, .vars = vars, .dryRun = dryRun}, std::move(done));
}

void Api::setPipeline(const QString &name, const PipelineSet &set, Callback done) const
{
    QJsonObject body{{u"config"_s, set.config}, {u"dry_run"_s, set.dryRun}};
    if (!set.vars.isEmpty())
        body.insert(u"vars"_s, set.vars);
    if (!set.varFlags.isEmpty())
        body.insert(u"var_flags"_s, set.varFlags);
    if (set.unpaused)
        body.insert(u"paused"_s, false);
    sendJson("PUT", apiPath({u"pipelines"_s, name}), body, std::move(done));
}

void Api::removePipeline(const QString &name, Callback done) const
{
    sendEmpty("DELETE", apiPath({u"pipelines"_s, name}), std::move(done));
}

void Api::archivePipeline(const QString &name, Callback done) const
{
    sendJson("POST", apiPath({u"pipelines"_s, name, u"archive"_s}), {}, std::move(done));
}

void Api::renamePipeline(const QString &name, const QString &to, Callback done) const
{
    sendJson("POST", apiPath({u"pipelines"_s, name, u"rename"_s}), {{u"name"_s, to}}, std::move(done));
}

void Api::setPipelinePaused(const QString &name, bool paused, Callback done) const
{
    sendJson("POST", apiPath({u"pipelines"_s, name, paused ? u"pause"_s : u"unpause"_s}), {}, std::move(done));
}

void Api::settings(Callback done) const
{
    get(apiPath({u"settings"_s}), std::move(done));
}

void Api::setHostExecution(bool enabled, Callback done) const
{
    sendJson("PUT", apiPath({u"settings"_s}), {{u"host_execution"_s, enabled}}, std::move(done));
}

void Api::updateSettings(const QJsonObject &fields, Callback done) const
{
    sendJson("PUT", apiPath({u"settings"_s}), fields, std::move(done));
}

void Api::setPipelineHostExecution(const QString &name, bool allowed, Callback done) const
{
    sendJson("PUT", apiPath({u"pipelines"_s, name, u"host-execution"_s}), {{u"allowed"_s, allowed}}, std::move(done));
}

void Api::jobs(const QString &pipeline, Callback done) const
{
    get(apiPath({u"pipelines"_s, pipeline, u"jobs"_s}), std::move(done));
}

void Api::setJobPaused(const QString &pipeline, const QString &job, bool paused, Callback done) const
{
    sendJson("POST", apiPath({u"pipelines"_s, pipeline, u"jobs"_s, job, paused ? u"pause"_s : u"unpause"_s}), {},
             std::move(done));
}

void Api::triggerJob(const QString &pipeline, const QString &job, bool force, Callback done) const
{
    sendJson("POST", apiPath({u"pipelines"_s, pipeline, u"jobs"_s, job, u"runs"_s}),
             force ? QJsonObject{{u"force"_s, true}} : QJsonObject{}, std::move(done));
}

void Api::runs(const QString &pipeline, const QString &job, std::optional<int> limit, Callback done) const
{
    const QString path = pipeline.isEmpty() ? apiPath({u"runs"_s}) : apiPath({u"pipelines"_s, pipeline, u"runs"_s});
    get(path + Query().addIfSet(u"job"_s, job).addIfSet(u"limit"_s, limit).suffix(), std::move(done));
}

void Api::run(const QString &id, Callback done) const
{
    get(apiPath({u"runs"_s, id}), std::move(done));
}

void Api::runEvents(const QString &id, qint64 after, int limit, Callback done) const
{
    get(apiPath({u"runs"_s, id, u"events"_s}) + Query().add(u"after"_s, after).add(u"limit"_s, limit).suffix(),
        std::move(done));
}

void Api::abortRun(const QString &id, Callback done) const
{
    sendJson("POST", apiPath({u"runs"_s, id, u"abort"_s}), {}, std::move(done));
}

QWebSocket *Api::exec(const QString &app, MessageCallback onMessage, ClosedCallback onClosed) const
{
    return m_client->follow(apiPath({u"apps"_s, app, u"exec"_s}), std::move(onMessage), std::move(onClosed));
}

QWebSocket *Api::restoreVolume(const QString &app, const QString &volume, QIODevice *archive, qint64 size,
                               const ProgressCallback &progress, Callback done) const
{
    // What the socket keeps in flight toward the server: enough to keep it busy, not the archive.
    static constexpr qint64 ChunkBytes = qint64(32) * 1024; // the server takes messages of up to 64 KiB
    static constexpr qint64 InFlightBytes = qint64(4) * 1024 * 1024;
    struct State {
        qint64 sent = 0;
        qint64 inFlight = 0;
        QJsonObject app;
        std::optional<Error> error;
        std::function<void()> pump; // once the server is ready for the archive
    };
    auto state = std::make_shared<State>();
    QWebSocket *socket = m_client->follow(
        apiPath({u"apps"_s, app, u"volumes"_s, volume, u"restore"_s}),
        [state](const QJsonObject &message) {
            if (message.value(u"ready"_s).toBool() && state->pump)
                state->pump();
            else if (message.contains(u"app"_s))
                state->app = message.value(u"app"_s).toObject();
            else if (message.contains(u"error"_s))
                state->error = errorFromResponse(400, QJsonDocument(message).toJson());
        },
        [state, done = std::move(done)](const Status &closed) {
            if (state->error)
                return done(std::unexpected(*state->error));
            if (!closed)
                return done(std::unexpected(closed.error()));
            if (state->app.isEmpty())
                return done(fail(ErrorCode::Unavailable, u"the server closed before it said how the restore ended"_s));
            done(ApiResponse{200, state->app, {}, {}});
        });
    // Holds only a weak hold on the state it lives in.
    state->pump = [socket, archive, size, weak = std::weak_ptr<State>(state), progress] {
        const std::shared_ptr<State> state = weak.lock();
        if (!state)
            return;
        while (state->sent < size && state->inFlight < InFlightBytes) {
            const QByteArray chunk = archive->read(std::min(ChunkBytes, size - state->sent));
            if (chunk.isEmpty()) {
                state->error = Error{ErrorCode::Failed, u"cannot read the archive: %1"_s.arg(archive->errorString())};
                socket->close(QWebSocketProtocol::CloseCodeGoingAway, u"the archive could not be read"_s);
                return;
            }
            socket->sendBinaryMessage(chunk);
            state->sent += chunk.size();
            state->inFlight += chunk.size();
            if (progress)
                progress(state->sent);
        }
    };
    QObject::connect(socket, &QWebSocket::connected, socket, [socket, size] {
        socket->sendTextMessage(
            QString::fromUtf8(QJsonDocument(QJsonObject{{u"bytes"_s, double(size)}}).toJson(QJsonDocument::Compact)));
    });
    QObject::connect(socket, &QWebSocket::bytesWritten, socket, [state](qint64 written) {
        state->inFlight = std::max<qint64>(0, state->inFlight - written);
        if (state->sent > 0)
            state->pump();
    });
    return socket;
}

QWebSocket *Api::followDeployLog(const QString &id, MessageCallback onMessage, ClosedCallback onClosed) const
{
    return m_client->follow(apiPath({u"deploys"_s, id, u"log"_s, u"follow"_s}), std::move(onMessage),
                            std::move(onClosed));
}

QWebSocket *Api::followRun(const QString &id, qint64 after, MessageCallback onMessage, ClosedCallback onClosed) const
{
    return m_client->follow(apiPath({u"runs"_s, id, u"follow"_s}) + Query().add(u"after"_s, after).suffix(),
                            std::move(onMessage), std::move(onClosed));
}

void Api::resources(const QString &pipeline, Callback done) const
{
    get(apiPath({u"pipelines"_s, pipeline, u"resources"_s}), std::move(done));
}

void Api::resourceVersions(const QString &pipeline, const QString &resource, std::optional<int> limit,
                           Callback done) const
{
    get(apiPath({u"pipelines"_s, pipeline, u"resources"_s, resource, u"versions"_s}) +
            Query().addIfSet(u"limit"_s, limit).suffix(),
        std::move(done));
}

void Api::pinResource(const QString &pipeline, const QString &resource, const QJsonObject &version, Callback done) const
{
    sendJson("PUT", apiPath({u"pipelines"_s, pipeline, u"resources"_s, resource, u"pin"_s}), {{u"version"_s, version}},
             std::move(done));
}

void Api::unpinResource(const QString &pipeline, const QString &resource, Callback done) const
{
    sendEmpty("DELETE", apiPath({u"pipelines"_s, pipeline, u"resources"_s, resource, u"pin"_s}), std::move(done));
}

void Api::checkResourceNow(const QString &pipeline, const QString &resource, const QJsonObject &from,
                           Callback done) const
{
    sendJson("POST", apiPath({u"pipelines"_s, pipeline, u"resources"_s, resource, u"check-now"_s}),
             from.isEmpty() ? QJsonObject{} : QJsonObject{{u"from"_s, from}}, std::move(done));
}

void Api::checkResource(const QString &pipeline, const QString &resource, const QString &webhookToken,
                        Callback done) const
{
    sendEmpty("POST",
              apiPath({u"pipelines"_s, pipeline, u"resources"_s, resource, u"check"_s}) +
                  Query().add(u"webhook_token"_s, webhookToken).suffix(),
              std::move(done));
}

void Api::secrets(const QString &scope, Callback done) const
{
    // scope= is always sent: empty names the install's secrets.
    get(apiPath({u"secrets"_s}) + Query().add(u"scope"_s, scope).suffix(), std::move(done));
}

void Api::setSecret(const QString &name, const QString &scope, const QString &value, Callback done) const
{
    sendJson("PUT", apiPath({u"secrets"_s, name}), {{u"value"_s, value}, {u"scope"_s, scope}}, std::move(done));
}

void Api::setSecretAccess(const QString &name, bool all, const QStringList &pipelines, Callback done) const
{
    QJsonObject body;
    if (all)
        body.insert(u"all"_s, true);
    else
        body.insert(u"pipelines"_s, QJsonArray::fromStringList(pipelines));
    sendJson("PUT", apiPath({u"secrets"_s, name, u"access"_s}), body, std::move(done));
}

void Api::removeSecret(const QString &name, const QString &scope, Callback done) const
{
    sendEmpty("DELETE", apiPath({u"secrets"_s, name}) + Query().add(u"scope"_s, scope).suffix(), std::move(done));
}

void Api::grants(GrantKind kind, const QString &object, Callback done) const
{
    get(apiPath({collection(kind), object, u"grants"_s}), std::move(done));
}

void Api::addGrant(GrantKind kind, const QString &object, const QString &user, const QString &role, Callback done) const
{
    sendJson("POST", apiPath({collection(kind), object, u"grants"_s}), {{u"user"_s, user}, {u"role"_s, role}},
             std::move(done));
}

void Api::removeGrant(GrantKind kind, const QString &object, const QString &user, const QString &role,
                      Callback done) const
{
    sendEmpty("DELETE", apiPath({collection(kind), object, u"grants"_s, user, role}), std::move(done));
}

void Api::approvals(const QString &status, std::optional<int> limit, Callback done) const
{
    get(apiPath({u"approvals"_s}) + Query().addIfSet(u"status"_s, status).addIfSet(u"limit"_s, limit).suffix(),
        std::move(done));
}

void Api::approval(const QString &id, Callback done) const
{
    get(apiPath({u"approvals"_s, id}), std::move(done));
}

void Api::decideApproval(const QString &id, Decision decision, const QString &reason, Callback done) const
{
    QJsonObject body;
    if (!reason.isEmpty())
        body.insert(u"reason"_s, reason);
    sendJson("POST", apiPath({u"approvals"_s, id, decision == Decision::Approve ? u"approve"_s : u"reject"_s}), body,
             std::move(done));
}

void Api::audit(const AuditQuery &query, Callback done) const
{
    get(apiPath({u"audit"_s}) + Query()
                                    .addIfSet(u"actor"_s, query.actor)
                                    .addIfSet(u"action"_s, query.action)
                                    .addIfSet(u"object"_s, query.object)
                                    .addIfSet(u"since_ms"_s, query.sinceMs)
                                    .addIfSet(u"until_ms"_s, query.untilMs)
                                    .addIfSet(u"limit"_s, query.limit)
                                    .suffix(),
        std::move(done));
}

void Api::verifyAudit(Callback done) const
{
    get(apiPath({u"audit"_s, u"verify"_s}), std::move(done));
}

void Api::auditSinks(Callback done) const
{
    get(apiPath({u"audit"_s, u"sinks"_s}), std::move(done));
}

void Api::capacity(Callback done) const
{
    get(apiPath({u"capacity"_s}), std::move(done));
}

void Api::edge(Callback done) const
{
    get(apiPath({u"edge"_s}), std::move(done));
}

void Api::assertionKeys(Callback done) const
{
    // Where JWT libraries look for it, outside /api/v1.
    get(u"/.well-known/jwks.json"_s, std::move(done));
}

void Api::rotateAssertionKey(Callback done) const
{
    sendJson("POST", apiPath({u"edge"_s, u"keys"_s, u"rotate"_s}), {}, std::move(done));
}

void Api::edgeCa(Callback done) const
{
    get(apiPath({u"edge"_s, u"ca"_s}), std::move(done));
}

} // namespace pando::client
