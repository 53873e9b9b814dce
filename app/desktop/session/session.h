#pragma once
// Package session: what the desktop's views, models and tray ask of a Pando install — apps,
// deploys, logs, pipelines, runs, approvals and the live event stream — behind one interface
// with two implementations: RemoteSession (HTTP + WebSocket to a pandod or another desktop's
// embedded server) and InProcessSession (this computer's own engine, served on loopback and
// reached through the same RemoteSession code, so the desktop has no path the API lacks).
//
// Results are the API's JSON objects, exactly as docs/api/openapi.yaml describes them: the views
// show what a remote client can show, and a field the API adds reaches them without a second
// type to keep in step. Failures are pando::Error values carrying the server's code, message,
// field ("where") and what to do next ("hint").
//
// Threading: a Session and everything it returns live on the thread that created it (the GUI
// thread). No method blocks; each callback runs later on that thread's event loop, exactly once,
// unless the session is destroyed first (then never). A callback that touches an object which
// may die before the answer arrives must guard it (QPointer, or check the object's own state).

#include "adapters/api/error.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <functional>

class QIODevice;
class QWebSocket;

namespace pando::desktop {

// One live stream (an app's log follow, a run's follow): messages until it ends. The caller owns
// it; deleting it or calling cancel() closes the stream on the server too.
class Subscription : public QObject {
    Q_OBJECT
public:
    explicit Subscription(QObject *parent = nullptr) : QObject(parent) {}
    ~Subscription() override;

    bool isActive() const { return m_active; }
    // How the stream ended, once ended() was emitted: success when the server closed it normally
    // or cancel() was called; an Error otherwise (Unauthorized, Forbidden, NotFound for an unknown
    // app or run, Unavailable when the link dropped).
    const Status &result() const { return m_result; }
    // Closes the stream; ended() then follows with a successful result().
    void cancel();

    // What the caller sends back on the stream, where its protocol takes any (a command's input):
    // false when the stream is not open (ended, or not connected yet for sendBinary's peers that
    // refuse early input).
    bool sendBinary(const QByteArray &data);
    bool sendText(const QString &text);

    // For implementations: the socket carrying the stream, and its end.
    void attach(QWebSocket *socket);
    void finish(const Status &status);
    void deliver(const QJsonObject &message) { Q_EMIT received(message); }

Q_SIGNALS:
    // The stream is open: messages from now on are live.
    void opened();
    // One message as the API sends it: a log line {time_ms, stderr, text}, {"ended": reason}, a
    // run event, ...
    void received(const QJsonObject &message);
    // Once, when the stream is over; result() says how.
    void ended();

private:
    QPointer<QWebSocket> m_socket;
    bool m_active = true;
    Status m_result;
};

class Session : public QObject {
    Q_OBJECT
public:
    enum class State {
        Disconnected, // not opened yet, or closed
        Connecting,   // opening, or reconnecting after the link dropped (failure() says why)
        Connected,    // requests are answered and the event stream is live
        Failed,       // gave up: failure() says why and what to do next
    };
    Q_ENUM(State)

    using ObjectCallback = std::function<void(const Result<QJsonObject> &)>;
    using ListCallback = std::function<void(const Result<QJsonArray> &)>;
    using DoneCallback = std::function<void(const Status &)>;

    using QObject::QObject;
    ~Session() override;

    State state() const { return m_state; }
    // Why the session failed or is reconnecting; empty message while all is well.
    const Error &failure() const { return m_failure; }
    // What the sidebar shows: "This computer", or the remote install's address.
    virtual QString displayName() const = 0;

    // Starts connecting (asynchronous: watch stateChanged). Calling it again after a failure
    // retries.
    virtual void open() = 0;

    // Apps. specText is the AppSpec as YAML or JSON; errors name the field ("run.port").
    virtual void apps(ListCallback done) = 0;
    virtual void app(const QString &name, ObjectCallback done) = 0;
    virtual void createApp(const QByteArray &specText, ObjectCallback done) = 0;
    virtual void updateApp(const QString &name, const QByteArray &specText, ObjectCallback done) = 0;
    // run.env changed ({set: {NAME: value}, unset: [NAME]}) in the spec's own text, its other
    // lines as written; the answer is {app, changes}.
    virtual void changeAppEnv(const QString &name, const QJsonObject &change, ObjectCallback done) = 0;
    // Queues the app's teardown; app.removed on the event stream says when it is gone.
    virtual void removeApp(const QString &name, DoneCallback done) = 0;
    // The app's secrets by name ({app, secrets: [{name, created_ms, updated_ms, injected_as, file}],
    // missing: [names the spec asks for as files that are not set]}); a value is never answered.
    virtual void appSecrets(const QString &app, ObjectCallback done) = 0;
    // Creates or replaces one secret (the answer is the secret without its value); the app sees
    // it on its next deploy. The value goes only into the request body.
    virtual void setAppSecret(const QString &app, const QString &name, const QString &value, ObjectCallback done) = 0;
    virtual void removeAppSecret(const QString &app, const QString &name, DoneCallback done) = 0;
    // Deploy on push (docs/autodeploy.md). The app's webhook with its newest `limit` deliveries,
    // newest first: {app, mode ("off", "push", "poll"), branch, tags, path ("/api/v1/hooks/NAME"),
    // secret_set, secret_set_by, secret_set_at, deliveries: [{id, forge, event, ref, commit, pusher,
    // outcome ("accepted", "deployed", "ignored", "failed"), detail, deploy, received_ms,
    // received_at}], and for polling poll: {every_s, polled_at, commit, error}}.
    virtual void appHook(const QString &app, int limit, ObjectCallback done) = 0;
    // Replaces the webhook's secret: secret empty makes a random one, answered this once as
    // {app, path, secret}; a chosen one goes only into the request body and is not answered back
    // ({app, path}). Deliveries signed with the old secret are refused from then on.
    virtual void newHookSecret(const QString &app, const QString &secret, ObjectCallback done) = 0;
    // Registers the webhook on the app's forge at publicUrl + its path, with a new secret the
    // forge and the install share (never answered): {app, url, hook}.
    virtual void registerAppHook(const QString &app, const QString &publicUrl, ObjectCallback done) = 0;
    // The app's preview deployments, newest pull request first: {app, previews: [{app, parent,
    // number, title, head_branch, head_commit, repo, fork, author, web_url, created_at,
    // updated_at, expires_at, commented, status, url, deploy: {id, status, commit}}]}.
    virtual void appPreviews(const QString &app, ObjectCallback done) = 0;
    // Removes the preview of pull request `number` now, with its data (queued).
    virtual void removeAppPreview(const QString &app, int number, DoneCallback done) = 0;
    // The app's backing services ({app, slot, kind, version, status, user, database, volume, env:
    // [variable names]}), never a password; Unavailable when the install runs without services.
    virtual void appServices(const QString &app, ListCallback done) = 0;
    // Streams a dump of the service's data into out, which must live until done is called (it is
    // left open: the caller closes it, and keeps or discards it by the answer). progress, when
    // set, hears the bytes written so far.
    virtual void backupService(const QString &app, const QString &slot, QIODevice *out,
                               std::function<void(qint64 bytes)> progress, DoneCallback done) = 0;
    // The same for an archive of one of the app's volumes (run.volumes).
    virtual void backupVolume(const QString &app, const QString &volume, QIODevice *out,
                              std::function<void(qint64 bytes)> progress, DoneCallback done) = 0;
    // Replaces the volume's files with those of archive (size bytes from its position, as
    // backupVolume() wrote it), which must live until done; progress hears the bytes sent. The
    // server reads it through first and refuses a wrong one, stops the app and runs it again on
    // the restored files; done gets the app's JSON after.
    virtual void restoreVolume(const QString &app, const QString &volume, QIODevice *archive, qint64 size,
                               std::function<void(qint64 bytes)> progress, ObjectCallback done) = 0;
    // Starts the serving version again (also after Pando stopped it for its disk use), stops it
    // and holds it stopped, or restarts it; the app's JSON after.
    enum class AppAction { Start, Stop, Restart };
    virtual void appAction(const QString &name, AppAction action, ObjectCallback done) = 0;
    // Where this computer's browser reaches the app: {url, through}. A session with an install
    // on another machine answers a port-forward on this computer's loopback
    // (client::AppForwarder over the tunnel route, with the session's token and pinned
    // certificate: "http://127.0.0.1:PORT/"), started on the first ask for the app and reused
    // after, and through names the server; this computer's own engine answers the app's own URL
    // and no through. NotFound or Forbidden as the server says; Conflict for an app not routed yet.
    virtual void appLink(const QString &app, ObjectCallback done) = 0;
    // The server the links of appLink() go through, so that a view can say so before the click;
    // empty when they lead straight to the apps.
    virtual QString linksThrough() const = 0;
    // Audit lines about one object ("app/NAME", "deploy/ID", "approval/ID"), newest first, at
    // most limit. Reading the audit log needs the audit.read permission (administrators):
    // Forbidden otherwise.
    virtual void auditLines(const QString &object, int limit, ListCallback done) = 0;

    // Deploys. ref empty: the spec's ref. The answer is the queued deploy; its progress arrives as
    // deploy.* events.
    virtual void deploy(const QString &app, const QString &ref, ObjectCallback done) = 0;
    virtual void deploys(const QString &app, int limit, ListCallback done) = 0;
    // The deploy with its steps ("steps": [{name, status, detail, started_ms, finished_ms}, ...]).
    virtual void deployDetail(const QString &id, ObjectCallback done) = 0;
    virtual void cancelDeploy(const QString &id, DoneCallback done) = 0;
    // What step `step` (its seq) of the deploy printed, after line `after`:
    // [{step, line, time_ms, stderr, text}, ...] (at most 5000 lines a step are kept).
    virtual void deployLog(const QString &id, int step, int after, ListCallback done) = 0;

    // Logs: the last lines of the app's current container; and a live follow that starts with
    // the last `tail` lines (at most 5000), with nothing lost or repeated between the two.
    virtual void logTail(const QString &app, int lines, ListCallback done) = 0;
    virtual Subscription *followLogs(const QString &app, int tail, QObject *parent) = 0;
    // A deploy's output kept so far, then each line as its steps print it, with the steps' states
    // ({"progress": step}), until {"finished": status} (GET /api/v1/deploys/{id}/log/follow).
    virtual Subscription *followDeployLog(const QString &id, QObject *parent) = 0;
    // A command run once in the app's container (GET /api/v1/apps/{name}/exec): what it prints
    // as {"stream": 1|2, "text": "..."} as it prints it, then {"exit": code}. Without input its
    // standard input ends at once; with input, the caller writes it with sendBinary() and ends it
    // with sendText("{\"eof\":true}") (no terminal: the command reads lines as sent).
    virtual Subscription *runInApp(const QString &app, const QStringList &command, bool input, QObject *parent) = 0;

    // Pipelines and runs (Unavailable when the install runs without the pipeline runner).
    // includeArchived: archived pipelines too (each with "archived": true).
    virtual void pipelines(bool includeArchived, ListCallback done) = 0;
    virtual void pipeline(const QString &name, ObjectCallback done) = 0;
    virtual void setPipeline(const QString &name, const QByteArray &configYaml, const QByteArray &varsYaml,
                             ObjectCallback done) = 0;
    virtual void setPipelinePaused(const QString &name, bool paused, ObjectCallback done) = 0;
    // Renames the pipeline with its runs and all it has; answers it under its new name.
    virtual void renamePipeline(const QString &name, const QString &to, ObjectCallback done) = 0;
    // Archives the pipeline (fly archive-pipeline); answers it as it is now, archived.
    virtual void archivePipeline(const QString &name, ObjectCallback done) = 0;
    // Pauses or unpauses one job; answers the job ({name, paused, paused_reason, …}).
    virtual void setJobPaused(const QString &pipeline, const QString &job, bool paused, ObjectCallback done) = 0;
    // The install's settings ({"host_execution": bool, "base_domain", "allowed_domains": [names],
    // "wildcard_domains": bool}); updateSettings changes the fields given (administrators only:
    // Forbidden otherwise; a bad value is an Error naming the field in "where") and answers them all.
    virtual void settings(ObjectCallback done) = 0;
    virtual void updateSettings(const QJsonObject &fields, ObjectCallback done) = 0;
    // Each runtime's room and whether it answered ({"runtimes": [{kind, reachable, note, …}]}).
    virtual void capacity(ObjectCallback done) = 0;
    // GET /api/v1/edge: what serves the apps, and whether it does.
    virtual void edge(ObjectCallback done) = 0;
    // GET /.well-known/jwks.json: the keys apps verify identity assertions with ({"keys": [...]}).
    virtual void assertionKeys(ObjectCallback done) = 0;
    // GET /api/v1/edge/ca: the install CA's root certificate ({pem}); NotFound until it exists.
    virtual void edgeCa(ObjectCallback done) = 0;
    // pipeline empty: runs of every pipeline, newest first.
    virtual void runs(const QString &pipeline, int limit, ListCallback done) = 0;
    // The run with its step tree.
    virtual void run(const QString &id, ObjectCallback done) = 0;
    // force: the run runs every step, restoring nothing unchanged.
    virtual void triggerJob(const QString &pipeline, const QString &job, bool force, ObjectCallback done) = 0;
    virtual void abortRun(const QString &id, DoneCallback done) = 0;
    // A pipeline's resources ({name, type, checked_ms, check_error, pinned_version, ...}); the
    // versions checks found, newest first ({seq, version, found_ms, pinned}); pinning the version
    // with these fields (the answer is the resource, pinned) and unpinning; checking now (what it
    // finds shows in the next versions() answer).
    virtual void resources(const QString &pipeline, ListCallback done) = 0;
    virtual void resourceVersions(const QString &pipeline, const QString &resource, int limit, ListCallback done) = 0;
    virtual void pinResource(const QString &pipeline, const QString &resource, const QJsonObject &version,
                             ObjectCallback done) = 0;
    virtual void unpinResource(const QString &pipeline, const QString &resource, DoneCallback done) = 0;
    // Checks now, from the newest version found or from `from` when it has fields.
    virtual void checkResource(const QString &pipeline, const QString &resource, const QJsonObject &from,
                               DoneCallback done) = 0;
    // A run's events from after (a seq; 0: from the start), then live until the run ends.
    virtual Subscription *followRun(const QString &id, qint64 after, QObject *parent) = 0;

    // Approvals. status empty: all; "pending" for what waits.
    virtual void approvals(const QString &status, ListCallback done) = 0;
    virtual void approval(const QString &id, ObjectCallback done) = 0;
    virtual void decideApproval(const QString &id, bool approve, const QString &reason, ObjectCallback done) = 0;

    // People and teammates (administrators only): the users; a one-time pairing code for one of
    // them ({id, user, token, expiresMs}, and "link" when the install serves TLS); and who holds a
    // live stream open now ({user, address, stream, sinceMs, tls}).
    virtual void users(ListCallback done) = 0;
    virtual void createPairing(const QString &user, ObjectCallback done) = 0;
    virtual void connectedClients(ListCallback done) = 0;

    // Source connections (docs/user-guide.md, "Private repositories"): those the user may use
    // ({name, kind, url, owner, auth, username, fingerprint, checked_ms, check_result, …}); adding
    // one ({name, kind, url, owner, username, token | ssh_key + known_hosts}; administrators only,
    // the credential never comes back); removing one (Conflict while apps read through it);
    // testing one on a repository ({commit}, or an Error saying why the forge refused).
    virtual void sourceConnections(ListCallback done) = 0;
    virtual void addSourceConnection(const QJsonObject &connection, ObjectCallback done) = 0;
    // An OAuth connection: begun with {name, kind, url, owner, client_id, client_secret,
    // redirect_uri} or again for one there is, answering {authorize_url, state, expires_ms};
    // completed with the state and the code the forge sent to redirect_uri (client::OAuthLoopback).
    virtual void beginSourceAuthorization(const QJsonObject &body, ObjectCallback done) = 0;
    virtual void reauthorizeSourceConnection(const QString &name, const QString &redirectUri, ObjectCallback done) = 0;
    virtual void completeSourceAuthorization(const QString &state, const QString &code, ObjectCallback done) = 0;
    virtual void removeSourceConnection(const QString &name, DoneCallback done) = 0;
    virtual void testSourceConnection(const QString &name, const QString &repo, ObjectCallback done) = 0;
    // A registry connection's test: image read (its digest), or with none the login alone.
    virtual void testRegistryConnection(const QString &name, const QString &image, ObjectCallback done) = 0;
    // What the connection's forge API shows (token connections to GitHub, GitLab, Gitea, Bitbucket
    // and Azure DevOps; an Error with a hint for a deploy key or a generic host): the
    // repositories its token sees ({full_name, clone_url, ssh_url, web_url, default_branch,
    // private}) and a repository's branches ({name, commit}).
    virtual void sourceConnectionRepositories(const QString &name, ListCallback done) = 0;
    virtual void sourceConnectionBranches(const QString &name, const QString &repo, ListCallback done) = 0;

Q_SIGNALS:
    void stateChanged(pando::desktop::Session::State state);
    // One event of the install as the API's event stream sends it: {type, app, deploy, data,
    // time_ms} for deploy.*, app.*, approval.*, run.* and the rest of core/events' catalogue.
    void eventReceived(const QJsonObject &event);

protected:
    void setState(State state, const Error &failure = {});

private:
    State m_state = State::Disconnected;
    Error m_failure;
};

// The Session behind a QML property of holder (QML hands views their session as a QObject);
// null, with a warning naming holder's class, for an object that is not one.
Session *sessionOf(QObject *object, const QObject *holder);

} // namespace pando::desktop
