#pragma once
// The Pando API, one function per operation: the `pando` CLI and the desktop's RemoteSession
// call these instead of building URLs. Every path is built here, from segments that are each
// percent-encoded (an app, user or secret name is never spliced raw into a URL), and every query
// value is percent-encoded too, so "a&b=c" stays one value. Answers are the API's JSON
// (ApiResponse), as docs/api/openapi.yaml describes them.
//
// Api is a thin value over an ApiClient it does not own (transport, auth, TLS pinning, errors).
// Threading: as ApiClient's, whose thread it must be used on.

#include "app/client/apiclient.h"

#include <QJsonArray>
#include <QStringList>
#include <initializer_list>
#include <optional>
#include <utility>

class QIODevice;
class QWebSocket;

namespace pando::client {

// "/api/v1/a/b%20c": the API's prefix, then each segment percent-encoded, literal ones too (they
// are unreserved characters, so encoding leaves them as they are).
QString apiPath(std::initializer_list<QString> segments);

// A query string whose names and values are percent-encoded; empty items are left out only
// where the caller says so (addIf*).
class Query {
public:
    Query &add(const QString &name, const QString &value);
    Query &add(const QString &name, qint64 value) { return add(name, QString::number(value)); }
    Query &addIfSet(const QString &name, const QString &value) { return value.isEmpty() ? *this : add(name, value); }
    template<typename T> Query &addIfSet(const QString &name, const std::optional<T> &value)
    {
        return value ? add(name, qint64(*value)) : *this;
    }
    bool isEmpty() const { return m_items.isEmpty(); }
    // "" or "?a=1&b=x%26y".
    QString suffix() const;

private:
    QStringList m_items;
};

// What `DELETE` does with an app's or a service's data; Unsaid lets pandod refuse, naming both.
enum class ServiceData { Unsaid, Keep, Delete };
// What POST /apps/{name}/start|stop|restart does to the app's serving container.
enum class AppAction { Start, Stop, Restart };
enum class SpecFormat { Yaml, Json };
enum class Decision { Approve, Reject };
// The objects that carry grants.
enum class GrantKind { App, Pipeline, Connection };

struct AuditQuery {
    QString actor;
    QString action;
    QString object;
    std::optional<qint64> sinceMs;
    std::optional<qint64> untilMs;
    std::optional<int> limit;
};

struct TokenRequest {
    QString name;
    QStringList scopes; // none: the server's default
    QString expiresIn;  // "30d"; empty: never
};

class Api {
public:
    using Callback = ApiClient::Callback;
    using MessageCallback = ApiClient::MessageCallback;
    using ClosedCallback = ApiClient::ClosedCallback;
    using ProgressCallback = ApiClient::ProgressCallback;

    explicit Api(ApiClient *client) : m_client(client) {}
    ApiClient *client() const { return m_client; }

    void health(Callback done) const;

    // Accounts, tokens, users, pairings.
    void bootstrap(const QString &initialToken, const QString &username, const QString &password, Callback done) const;
    void login(const QString &username, const QString &password, Callback done) const;
    void logout(Callback done) const;
    void users(Callback done) const;
    void createUser(const QString &username, const QString &password, const QString &role, Callback done) const;
    void disableUser(const QString &username, Callback done) const;
    void createPairing(const QString &username, Callback done) const;
    // Public: the one-time code is the credential; name labels the device.
    void redeemPairing(const QString &code, const QString &deviceName, Callback done) const;
    void connections(Callback done) const;
    void tokens(Callback done) const;
    void createToken(const TokenRequest &request, Callback done) const;
    void revokeToken(const QString &id, Callback done) const;

    // Apps and deploys.
    void apps(Callback done) const;
    void app(const QString &name, Callback done) const;
    void createApp(const QByteArray &spec, SpecFormat format, Callback done) const;
    void updateApp(const QString &name, const QByteArray &spec, SpecFormat format, Callback done) const;
    void removeApp(const QString &name, ServiceData data, Callback done) const;
    // Starts, stops (and holds stopped) or restarts the serving container; the app's JSON after.
    void appAction(const QString &name, AppAction action, Callback done) const;
    // What the app's container finds in its environment; run.env changed ({set, unset}) as a new
    // spec revision.
    void appEnv(const QString &name, Callback done) const;
    void changeAppEnv(const QString &name, const QJsonObject &change, Callback done) const;
    // ref empty: the spec's.
    void deploy(const QString &app, const QString &ref, Callback done) const;
    // to empty: the version before the serving one.
    void rollback(const QString &app, const QString &to, Callback done) const;
    void deploys(const QString &app, std::optional<int> limit, Callback done) const;
    void deployDetail(const QString &id, Callback done) const;
    // A deploy's step output: step (its number) nullopt for every step's; lines after `after`.
    void deployLog(const QString &id, std::optional<int> step, int after, int limit, Callback done) const;
    void cancelDeploy(const QString &id, Callback done) const;
    void logTail(const QString &app, int tail, Callback done) const;
    QWebSocket *followLogs(const QString &app, int tail, MessageCallback onMessage, ClosedCallback onClosed) const;
    // A command in the app's container (appexec.h on the server): send the command as the first
    // text message once connected; output comes as binary messages, {"exit": code} at the end.
    QWebSocket *exec(const QString &app, MessageCallback onMessage, ClosedCallback onClosed) const;
    // A deploy's output kept so far, then each line as its steps print it, then {"finished": status}.
    QWebSocket *followDeployLog(const QString &id, MessageCallback onMessage, ClosedCallback onClosed) const;
    // The install's events; app non-empty: only that app's.
    QWebSocket *followEvents(const QString &app, MessageCallback onMessage, ClosedCallback onClosed) const;

    // Source connections: a credential goes in with addConnection ({name, kind, url, owner,
    // username, token | ssh_key + known_hosts}) and never comes back.
    // Deploy on push: the app's webhook and newest deliveries; a new secret (empty: Pando makes
    // one and answers it once).
    void appHook(const QString &app, std::optional<int> limit, Callback done) const;
    void newHookSecret(const QString &app, const QString &secret, Callback done) const;
    // Registers the app's webhook on its forge, at publicUrl + /api/v1/hooks/APP, with a new secret.
    void registerAppHook(const QString &app, const QString &publicUrl, Callback done) const;
    // The app's preview deployments, one per pull request; removing one now.
    void appPreviews(const QString &app, Callback done) const;
    void removeAppPreview(const QString &app, int number, Callback done) const;
    void sourceConnections(Callback done) const;
    void sourceConnection(const QString &name, Callback done) const;
    void addSourceConnection(const QJsonObject &connection, Callback done) const;
    // An OAuth connection: begun with {name, kind, url, owner, client_id, client_secret,
    // redirect_uri} (or again for connection name, with redirect_uri alone), which answers
    // {authorize_url, state, expires_ms}; completed with the state and the code the forge sent to
    // redirect_uri (OAuthLoopback), which answers the connection.
    void beginSourceAuthorization(const QJsonObject &body, Callback done) const;
    void reauthorizeSourceConnection(const QString &name, const QString &redirectUri, Callback done) const;
    void completeSourceAuthorization(const QString &state, const QString &code, Callback done) const;
    void removeSourceConnection(const QString &name, Callback done) const;
    void testSourceConnection(const QString &name, const QString &repo, const QString &ref, Callback done) const;
    // A registry connection's test: image read (empty: the login alone).
    void testRegistryConnection(const QString &name, const QString &image, Callback done) const;
    // What the connection's forge API shows: {repositories: [...]}, and repo's {branches: [...]}.
    void sourceConnectionRepositories(const QString &name, Callback done) const;
    void sourceConnectionBranches(const QString &name, const QString &repo, Callback done) const;

    // App secrets (values only go in).
    void appSecrets(const QString &app, Callback done) const;
    void setAppSecret(const QString &app, const QString &name, const QString &value, Callback done) const;
    void removeAppSecret(const QString &app, const QString &name, Callback done) const;

    // Backing services.
    void services(Callback done) const;
    void appServices(const QString &app, Callback done) const;
    // Streams the dump into out (see ApiClient::download).
    void backupService(const QString &app, const QString &slot, QIODevice *out, int idleTimeoutMs,
                       const ProgressCallback &progress, Callback done) const;
    void removeService(const QString &app, const QString &slot, ServiceData data, Callback done) const;
    // Streams an archive of an app volume's files into out (see ApiClient::download).
    void backupVolume(const QString &app, const QString &volume, QIODevice *out, int idleTimeoutMs,
                      const ProgressCallback &progress, Callback done) const;
    // Sends the archive in (size bytes, read from its position) to restore the volume over the
    // restore WebSocket (volumerestore.h on the server: an archive may be larger than a body);
    // progress gets the bytes sent; done gets the app ({"app"}'s object as json) once the server
    // restored it, or the server's error. archive must outlive the call; closing the returned
    // socket gives up (the server then restores nothing, or finishes what it started).
    QWebSocket *restoreVolume(const QString &app, const QString &volume, QIODevice *archive, qint64 size,
                              const ProgressCallback &progress, Callback done) const;

    // Pipelines and runs.
    // includeArchived: archived pipelines too (fly pipelines --include-archived).
    void pipelines(bool includeArchived, Callback done) const;
    void pipeline(const QString &name, Callback done) const;
    // How a pipeline is set: vars (empty: none); varFlags, [{name, value, yaml}] set on top of
    // vars (`pando pipelines set -v`, `--yaml-var`); dryRun: the diff only, nothing changes;
    // unpaused: a pipeline this creates starts active instead of paused.
    struct PipelineSet {
        QString config;
        QString vars;
        QJsonArray varFlags;
        bool dryRun = false;
        bool unpaused = false;
    };
    void setPipeline(const QString &name, const PipelineSet &set, Callback done) const;
    void setPipeline(const QString &name, const QString &config, const QString &vars, bool dryRun, Callback done) const;
    void removePipeline(const QString &name, Callback done) const;
    void renamePipeline(const QString &name, const QString &to, Callback done) const;
    void archivePipeline(const QString &name, Callback done) const;
    void setPipelinePaused(const QString &name, bool paused, Callback done) const;
    // Host execution: the install's setting, and an administrator's mark on one pipeline.
    void settings(Callback done) const;
    void setHostExecution(bool enabled, Callback done) const;
    // PUT /api/v1/settings with the given fields (host_execution, local_repositories, ssh_agent,
    // internal_hosts: booleans; member_ports: "FIRST-LAST" or "none").
    void updateSettings(const QJsonObject &fields, Callback done) const;
    void setPipelineHostExecution(const QString &name, bool allowed, Callback done) const;
    // The pipeline's jobs with their state; pausing one holds back its runs.
    void jobs(const QString &pipeline, Callback done) const;
    void setJobPaused(const QString &pipeline, const QString &job, bool paused, Callback done) const;
    // force: the run runs every step, restoring nothing unchanged.
    void triggerJob(const QString &pipeline, const QString &job, bool force, Callback done) const;
    // pipeline empty: every pipeline's runs; job empty: every job's.
    void runs(const QString &pipeline, const QString &job, std::optional<int> limit, Callback done) const;
    void run(const QString &id, Callback done) const;
    void runEvents(const QString &id, qint64 after, int limit, Callback done) const;
    void abortRun(const QString &id, Callback done) const;
    QWebSocket *followRun(const QString &id, qint64 after, MessageCallback onMessage, ClosedCallback onClosed) const;
    // What a forge calls (public; the resource's webhook token is the credential).
    void checkResource(const QString &pipeline, const QString &resource, const QString &webhookToken,
                       Callback done) const;

    // A pipeline's resources: their last check and pin; the versions checks found (newest
    // first); pin (the newest known version with version's fields) and unpin; check now, from
    // the newest version found or from `from` when it has fields.
    void resources(const QString &pipeline, Callback done) const;
    void resourceVersions(const QString &pipeline, const QString &resource, std::optional<int> limit,
                          Callback done) const;
    void pinResource(const QString &pipeline, const QString &resource, const QJsonObject &version, Callback done) const;
    void unpinResource(const QString &pipeline, const QString &resource, Callback done) const;
    void checkResourceNow(const QString &pipeline, const QString &resource, const QJsonObject &from,
                          Callback done) const;

    // Pipeline secrets: scope is a pipeline's name, or empty for the install's.
    void secrets(const QString &scope, Callback done) const;
    void setSecret(const QString &name, const QString &scope, const QString &value, Callback done) const;
    void removeSecret(const QString &name, const QString &scope, Callback done) const;
    // Which pipelines may read the install-wide secret: all of them, or exactly those listed.
    void setSecretAccess(const QString &name, bool all, const QStringList &pipelines, Callback done) const;

    // Grants on an app, a pipeline or a source connection.
    void grants(GrantKind kind, const QString &object, Callback done) const;
    void addGrant(GrantKind kind, const QString &object, const QString &user, const QString &role, Callback done) const;
    void removeGrant(GrantKind kind, const QString &object, const QString &user, const QString &role,
                     Callback done) const;

    // Approvals: status empty lists every status.
    void approvals(const QString &status, std::optional<int> limit, Callback done) const;
    void approval(const QString &id, Callback done) const;
    // reason empty: none given.
    void decideApproval(const QString &id, Decision decision, const QString &reason, Callback done) const;

    // The audit log, its hash chain and its sinks.
    void audit(const AuditQuery &query, Callback done) const;
    void verifyAudit(Callback done) const;
    void auditSinks(Callback done) const;

    // Each runtime's capacity beside what is committed on it.
    void capacity(Callback done) const;
    // What serves the apps, and whether it does.
    void edge(Callback done) const;
    void edgeCa(Callback done) const;
    // The JWKS that verifies the identity assertions apps are given (GET /.well-known/jwks.json).
    void assertionKeys(Callback done) const;
    // A new assertion signing key now (administrators).
    void rotateAssertionKey(Callback done) const;

private:
    void get(const QString &path, Callback done) const;
    void sendJson(const QByteArray &method, const QString &path, const QJsonObject &body, Callback done) const;
    void sendEmpty(const QByteArray &method, const QString &path, Callback done) const;

    ApiClient *m_client;
};

} // namespace pando::client
