#pragma once
// RemoteSession: a Session over the API (app/client's ApiClient): REST for requests, one
// WebSocket for the install's event stream and one per live follow. It attaches to a pandod or to
// another desktop's embedded server with a base URL and a bearer token, and is also what
// InProcessSession uses to reach this computer's own engine on loopback.
//
// Connecting: a health check (is the server there, is it Pando), then the event stream (is the
// token good for reading). Connected once the stream is open. If the stream drops later, the
// session reconnects with a growing delay (state Connecting, failure() saying why); a refused
// token ends in Failed.
//
// appLink() forwards (client::AppForwarder) live here too, on the GUI thread like the session's
// other sockets: their I/O never blocks (each read is at most 32 KiB, and a forward reads its
// local side only while its WebSocket's queue is short), so a browser loading an app costs the
// event loop what the event stream does. A forward moving bulk data (a large download) would
// want a thread of its own; that is not done yet.
//
// Threading: see session.h.

#include "app/desktop/session/session.h"

#include <QHash>
#include <QTimer>
#include <QUrl>

#include "app/client/apiclient.h"

namespace pando::client {
class Api;
class AppForwarder;
} // namespace pando::client

namespace pando::desktop {

class RemoteSession : public Session {
    Q_OBJECT
public:
    RemoteSession(QUrl baseUrl, QString token, QObject *parent = nullptr);
    ~RemoteSession() override;

    QString displayName() const override;
    QUrl baseUrl() const { return m_baseUrl; }
    // Before open(): accept exactly the TLS certificate with this SHA-256 fingerprint (a pairing
    // link's fp=), self-signed or not, and refuse any other with an error naming both.
    void setPinnedFingerprint(const QString &sha256Hex) { m_fingerprint = sha256Hex; }
    QString pinnedFingerprint() const { return m_fingerprint; }
    void open() override;

    void apps(ListCallback done) override;
    void app(const QString &name, ObjectCallback done) override;
    void createApp(const QByteArray &specText, ObjectCallback done) override;
    void updateApp(const QString &name, const QByteArray &specText, ObjectCallback done) override;
    void changeAppEnv(const QString &name, const QJsonObject &change, ObjectCallback done) override;
    void removeApp(const QString &name, DoneCallback done) override;
    void appSecrets(const QString &app, ObjectCallback done) override;
    void setAppSecret(const QString &app, const QString &name, const QString &value, ObjectCallback done) override;
    void removeAppSecret(const QString &app, const QString &name, DoneCallback done) override;
    void appHook(const QString &app, int limit, ObjectCallback done) override;
    void registerAppHook(const QString &app, const QString &publicUrl, ObjectCallback done) override;
    void appPreviews(const QString &app, ObjectCallback done) override;
    void removeAppPreview(const QString &app, int number, DoneCallback done) override;
    void newHookSecret(const QString &app, const QString &secret, ObjectCallback done) override;
    void appServices(const QString &app, ListCallback done) override;
    void backupService(const QString &app, const QString &slot, QIODevice *out,
                       std::function<void(qint64 bytes)> progress, DoneCallback done) override;
    void backupVolume(const QString &app, const QString &volume, QIODevice *out,
                      std::function<void(qint64 bytes)> progress, DoneCallback done) override;
    void restoreVolume(const QString &app, const QString &volume, QIODevice *archive, qint64 size,
                       std::function<void(qint64 bytes)> progress, ObjectCallback done) override;
    void appAction(const QString &name, AppAction action, ObjectCallback done) override;
    void appLink(const QString &app, ObjectCallback done) override;
    QString linksThrough() const override;
    void auditLines(const QString &object, int limit, ListCallback done) override;

    void deploy(const QString &app, const QString &ref, ObjectCallback done) override;
    void deploys(const QString &app, int limit, ListCallback done) override;
    void deployDetail(const QString &id, ObjectCallback done) override;
    void cancelDeploy(const QString &id, DoneCallback done) override;
    void deployLog(const QString &id, int step, int after, ListCallback done) override;

    void logTail(const QString &app, int lines, ListCallback done) override;
    Subscription *followLogs(const QString &app, int tail, QObject *parent) override;
    Subscription *followDeployLog(const QString &id, QObject *parent) override;
    Subscription *runInApp(const QString &app, const QStringList &command, bool input, QObject *parent) override;

    void pipelines(bool includeArchived, ListCallback done) override;
    void pipeline(const QString &name, ObjectCallback done) override;
    void setPipeline(const QString &name, const QByteArray &configYaml, const QByteArray &varsYaml,
                     ObjectCallback done) override;
    void setPipelinePaused(const QString &name, bool paused, ObjectCallback done) override;
    void renamePipeline(const QString &name, const QString &to, ObjectCallback done) override;
    void archivePipeline(const QString &name, ObjectCallback done) override;
    void setJobPaused(const QString &pipeline, const QString &job, bool paused, ObjectCallback done) override;
    void settings(ObjectCallback done) override;
    void updateSettings(const QJsonObject &fields, ObjectCallback done) override;
    void capacity(ObjectCallback done) override;
    void edge(ObjectCallback done) override;
    void assertionKeys(ObjectCallback done) override;
    void edgeCa(ObjectCallback done) override;
    void runs(const QString &pipeline, int limit, ListCallback done) override;
    void run(const QString &id, ObjectCallback done) override;
    void triggerJob(const QString &pipeline, const QString &job, bool force, ObjectCallback done) override;
    void abortRun(const QString &id, DoneCallback done) override;
    void resources(const QString &pipeline, ListCallback done) override;
    void resourceVersions(const QString &pipeline, const QString &resource, int limit, ListCallback done) override;
    void pinResource(const QString &pipeline, const QString &resource, const QJsonObject &version,
                     ObjectCallback done) override;
    void unpinResource(const QString &pipeline, const QString &resource, DoneCallback done) override;
    void checkResource(const QString &pipeline, const QString &resource, const QJsonObject &from,
                       DoneCallback done) override;
    Subscription *followRun(const QString &id, qint64 after, QObject *parent) override;

    void approvals(const QString &status, ListCallback done) override;
    void approval(const QString &id, ObjectCallback done) override;
    void decideApproval(const QString &id, bool approve, const QString &reason, ObjectCallback done) override;

    void users(ListCallback done) override;
    void createPairing(const QString &user, ObjectCallback done) override;
    void connectedClients(ListCallback done) override;
    void sourceConnections(ListCallback done) override;
    void addSourceConnection(const QJsonObject &connection, ObjectCallback done) override;
    void beginSourceAuthorization(const QJsonObject &body, ObjectCallback done) override;
    void reauthorizeSourceConnection(const QString &name, const QString &redirectUri, ObjectCallback done) override;
    void completeSourceAuthorization(const QString &state, const QString &code, ObjectCallback done) override;
    void removeSourceConnection(const QString &name, DoneCallback done) override;
    void testSourceConnection(const QString &name, const QString &repo, ObjectCallback done) override;
    void testRegistryConnection(const QString &name, const QString &image, ObjectCallback done) override;
    void sourceConnectionRepositories(const QString &name, ListCallback done) override;
    void sourceConnectionBranches(const QString &name, const QString &repo, ListCallback done) override;

protected:
    // For InProcessSession: a session whose server is not known yet; attach() supplies it.
    explicit RemoteSession(QObject *parent);
    // Points the session at a server and connects.
    void attach(const QUrl &baseUrl, const QString &token);
    // Closes every stream and forgets the server (requests still in flight never answer).
    void detach();
    // Requests made while there is no server fail with this.
    virtual Error notReady() const;

private:
    using RawCallback = std::function<void(const Result<QJsonObject> &)>;
    // One operation of the typed client (app/client/api.h), given the callback to answer.
    using Request = std::function<void(const client::Api &, client::ApiClient::Callback)>;
    using Stream = std::function<QWebSocket *(const client::Api &, client::ApiClient::MessageCallback,
                                              client::ApiClient::ClosedCallback)>;
    // Runs request, or answers notReady() (later, never from inside the call) without a server.
    void call(const Request &request, RawCallback done);
    void callList(const Request &request, const QString &key, ListCallback done);
    // A backup downloaded into out by start, which the API call makes.
    using Download = std::function<void(const client::Api &, QIODevice *out, int idleTimeoutMs,
                                        const client::ApiClient::ProgressCallback &, client::ApiClient::Callback)>;
    void download(const Download &start, QIODevice *out, std::function<void(qint64 bytes)> progress, DoneCallback done);
    Subscription *follow(const Stream &open, QObject *parent);
    void openEventStream();
    void streamLost(const Error &why);

    QUrl m_baseUrl;
    QString m_token;
    QString m_fingerprint;
    client::ApiClient *m_client = nullptr;
    QPointer<QWebSocket> m_events;
    // appLink()'s forwards by app, and the callbacks that wait for one being started.
    struct Forward {
        QPointer<client::AppForwarder> forwarder;
        QList<ObjectCallback> waiting;
    };
    QHash<QString, Forward> m_forwards;
    QTimer m_retry;
    int m_retryDelayMs = 0;
};

} // namespace pando::desktop
