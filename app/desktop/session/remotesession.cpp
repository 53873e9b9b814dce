#include "remotesession.h"

#include "app/client/api.h"
#include "app/client/apiclient.h"
#include "app/client/appforwarder.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QStringDecoder>
#include <QWebSocket>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

constexpr int FirstRetryMs = 500;
constexpr int LastRetryMs = 10000;

// ApiClient's hints speak to the CLI's flags; the desktop's user fixes a connection instead.
Error forDesktop(Error error, const QUrl &server)
{
    if (error.code == ErrorCode::Unavailable || error.code == ErrorCode::Timeout) {
        if (error.hint.contains(u"--server"_s) || error.hint.isEmpty())
            error.hint =
                u"check that the install at %1 is running and reachable from this computer"_s.arg(server.toString());
    } else if (error.code == ErrorCode::Unauthorized && error.hint.isEmpty()) {
        error.hint = u"the token was refused: pair this connection again, or ask the install's admin for a new token"_s;
    }
    return error;
}

} // namespace

RemoteSession::RemoteSession(QUrl baseUrl, QString token, QObject *parent)
    : Session(parent), m_baseUrl(std::move(baseUrl)), m_token(std::move(token))
{
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &RemoteSession::openEventStream);
}

RemoteSession::RemoteSession(QObject *parent) : Session(parent)
{
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &RemoteSession::openEventStream);
}

RemoteSession::~RemoteSession()
{
    detach();
}

QString RemoteSession::displayName() const
{
    return m_baseUrl.port() > 0 ? u"%1:%2"_s.arg(m_baseUrl.host()).arg(m_baseUrl.port()) : m_baseUrl.host();
}

void RemoteSession::attach(const QUrl &baseUrl, const QString &token)
{
    detach();
    m_baseUrl = baseUrl;
    m_token = token;
    open();
}

void RemoteSession::detach()
{
    m_retry.stop();
    // Forwards lead to the server being left: they go with it (their local ports close).
    for (const Forward &forward : std::as_const(m_forwards))
        delete forward.forwarder.data();
    m_forwards.clear();
    if (m_client) {
        // Streams first: their close callbacks must not see a half-gone client.
        if (m_events)
            m_events->abort();
        delete m_client;
        m_client = nullptr;
    }
    if (state() != State::Failed)
        setState(State::Disconnected);
}

Error RemoteSession::notReady() const
{
    return Error{ErrorCode::Unavailable, u"the session is not connected"_s, displayName(),
                 u"open the session and wait until it is connected"_s};
}

void RemoteSession::open()
{
    if (!m_baseUrl.isValid() || m_baseUrl.host().isEmpty()) {
        setState(State::Failed, notReady());
        return;
    }
    if (!m_client) {
        m_client = new client::ApiClient(m_baseUrl, m_token, this);
        m_client->setPinnedFingerprint(m_fingerprint);
    }
    m_retry.stop();
    m_retryDelayMs = 0;
    if (m_events)
        m_events->abort();
    setState(State::Connecting);
    // Health first: it tells "nothing answers there" and "that is not a Pando install" apart
    // from "the token is refused", which the event stream reports.
    QPointer<RemoteSession> self(this);
    client::Api(m_client).health([self](const Result<client::ApiResponse> &health) {
        if (!self)
            return;
        if (!health) {
            self->setState(State::Failed, forDesktop(health.error(), self->m_baseUrl));
            return;
        }
        if (health->json.value(u"status"_s).toString() != u"ok"_s) {
            self->setState(State::Failed,
                           Error{ErrorCode::Unavailable, u"the server at this address is not a Pando install"_s,
                                 self->m_baseUrl.toString(),
                                 u"check the address: it must point at pandod or a desktop's embedded server"_s});
            return;
        }
        self->openEventStream();
    });
}

void RemoteSession::openEventStream()
{
    if (!m_client)
        return;
    QPointer<RemoteSession> self(this);
    QWebSocket *socket = client::Api(m_client).followEvents(
        {},
        [self](const QJsonObject &event) {
            if (self)
                Q_EMIT self->eventReceived(event);
        },
        [self](const Status &closed) {
            if (!self)
                return;
            self->streamLost(closed ? Error{ErrorCode::Unavailable, u"the server closed the event stream"_s,
                                            self->m_baseUrl.toString()}
                                    : closed.error());
        });
    m_events = socket;
    connect(socket, &QWebSocket::connected, this, [this]() {
        m_retryDelayMs = 0;
        setState(State::Connected);
    });
}

void RemoteSession::streamLost(const Error &why)
{
    m_events = nullptr;
    const Error error = forDesktop(why, m_baseUrl);
    if (error.code == ErrorCode::Unauthorized || error.code == ErrorCode::Forbidden) {
        setState(State::Failed, error);
        return;
    }
    // A dropped link comes back by itself; the views keep what they show meanwhile.
    m_retryDelayMs = m_retryDelayMs == 0 ? FirstRetryMs : std::min(m_retryDelayMs * 2, LastRetryMs);
    setState(State::Connecting, error);
    m_retry.start(m_retryDelayMs);
}

void RemoteSession::call(const Request &request, RawCallback done)
{
    if (!m_client) {
        // Still asynchronous: callers may rely on the answer coming later.
        QMetaObject::invokeMethod(
            this, [done = std::move(done), error = notReady()]() { done(std::unexpected(error)); },
            Qt::QueuedConnection);
        return;
    }
    const QUrl server = m_baseUrl;
    request(client::Api(m_client), [done = std::move(done), server](const Result<client::ApiResponse> &response) {
        if (!response) {
            done(std::unexpected(forDesktop(response.error(), server)));
            return;
        }
        done(response->json);
    });
}

void RemoteSession::callList(const Request &request, const QString &key, ListCallback done)
{
    call(request, [done = std::move(done), key](const Result<QJsonObject> &answer) {
        if (!answer) {
            done(std::unexpected(answer.error()));
            return;
        }
        done(answer->value(key).toArray());
    });
}

namespace {

// Adapts an object answer to a done-or-error callback.
auto toDone(Session::DoneCallback done)
{
    return [done = std::move(done)](const Result<QJsonObject> &answer) {
        if (!answer)
            done(std::unexpected(answer.error()));
        else
            done({});
    };
}

using client::Api;
using Callback = client::Api::Callback;

} // namespace

void RemoteSession::apps(ListCallback done)
{
    callList([](const Api &api, Callback cb) { api.apps(std::move(cb)); }, u"apps"_s, std::move(done));
}

void RemoteSession::app(const QString &name, ObjectCallback done)
{
    call([name](const Api &api, Callback cb) { api.app(name, std::move(cb)); }, std::move(done));
}

QString RemoteSession::linksThrough() const
{
    return displayName();
}

void RemoteSession::appLink(const QString &app, ObjectCallback done)
{
    if (!m_client) {
        QMetaObject::invokeMethod(
            this, [done = std::move(done), error = notReady()]() { done(std::unexpected(error)); },
            Qt::QueuedConnection);
        return;
    }
    Forward &forward = m_forwards[app];
    if (forward.forwarder && forward.forwarder->isListening()) {
        // Reused: one local port per app for as long as the session lasts.
        QMetaObject::invokeMethod(
            this,
            [done = std::move(done), url = forward.forwarder->localUrl().toString(), through = linksThrough()]() {
                done(QJsonObject{{u"url"_s, url}, {u"through"_s, through}});
            },
            Qt::QueuedConnection);
        return;
    }
    forward.waiting.append(std::move(done));
    if (forward.forwarder)
        return; // being started: answered with the others when it listens
    auto *forwarder = new client::AppForwarder(m_client, app, this);
    forward.forwarder = forwarder;
    const QUrl server = m_baseUrl;
    forwarder->start(0, [this, forwarder, app, server](const Result<quint16> &listening) {
        auto it = m_forwards.find(app);
        if (it == m_forwards.end() || it->forwarder != forwarder)
            return;
        const QList<ObjectCallback> waiting = std::exchange(it->waiting, {});
        Result<QJsonObject> answer = std::unexpected(Error{});
        if (listening) {
            answer = QJsonObject{{u"url"_s, forwarder->localUrl().toString()}, {u"through"_s, linksThrough()}};
        } else {
            // Not kept: the next ask tries again (the grant may have come, the app been deployed).
            answer = std::unexpected(forDesktop(listening.error(), server));
            m_forwards.erase(it);
            forwarder->deleteLater();
        }
        for (const ObjectCallback &callback : waiting)
            callback(answer);
    });
}

void RemoteSession::createApp(const QByteArray &specText, ObjectCallback done)
{
    call([specText](const Api &api, Callback cb) { api.createApp(specText, client::SpecFormat::Yaml, std::move(cb)); },
         std::move(done));
}

void RemoteSession::updateApp(const QString &name, const QByteArray &specText, ObjectCallback done)
{
    call([name, specText](const Api &api,
                          Callback cb) { api.updateApp(name, specText, client::SpecFormat::Yaml, std::move(cb)); },
         std::move(done));
}

void RemoteSession::changeAppEnv(const QString &name, const QJsonObject &change, ObjectCallback done)
{
    call([name, change](const Api &api, Callback cb) { api.changeAppEnv(name, change, std::move(cb)); },
         std::move(done));
}

void RemoteSession::removeApp(const QString &name, DoneCallback done)
{
    call([name](const Api &api, Callback cb) { api.removeApp(name, client::ServiceData::Unsaid, std::move(cb)); },
         toDone(std::move(done)));
}

void RemoteSession::appSecrets(const QString &app, ObjectCallback done)
{
    call([app](const Api &api, Callback cb) { api.appSecrets(app, std::move(cb)); }, std::move(done));
}

void RemoteSession::setAppSecret(const QString &app, const QString &name, const QString &value, ObjectCallback done)
{
    call([app, name, value](const Api &api, Callback cb) { api.setAppSecret(app, name, value, std::move(cb)); },
         std::move(done));
}

void RemoteSession::removeAppSecret(const QString &app, const QString &name, DoneCallback done)
{
    call([app, name](const Api &api, Callback cb) { api.removeAppSecret(app, name, std::move(cb)); },
         toDone(std::move(done)));
}

void RemoteSession::appHook(const QString &app, int limit, ObjectCallback done)
{
    const std::optional<int> asked = limit > 0 ? std::optional<int>(limit) : std::nullopt;
    call([app, asked](const Api &api, Callback cb) { api.appHook(app, asked, std::move(cb)); }, std::move(done));
}

void RemoteSession::registerAppHook(const QString &app, const QString &publicUrl, ObjectCallback done)
{
    call([app, publicUrl](const Api &api, Callback cb) { api.registerAppHook(app, publicUrl, std::move(cb)); },
         std::move(done));
}

void RemoteSession::appPreviews(const QString &app, ObjectCallback done)
{
    call([app](const Api &api, Callback cb) { api.appPreviews(app, std::move(cb)); }, std::move(done));
}

void RemoteSession::removeAppPreview(const QString &app, int number, DoneCallback done)
{
    call([app, number](const Api &api, Callback cb) { api.removeAppPreview(app, number, std::move(cb)); },
         toDone(std::move(done)));
}

void RemoteSession::newHookSecret(const QString &app, const QString &secret, ObjectCallback done)
{
    call([app, secret](const Api &api, Callback cb) { api.newHookSecret(app, secret, std::move(cb)); },
         std::move(done));
}

void RemoteSession::appServices(const QString &app, ListCallback done)
{
    callList([app](const Api &api, Callback cb) { api.appServices(app, std::move(cb)); }, u"services"_s,
             std::move(done));
}

void RemoteSession::download(const Download &start, QIODevice *out, std::function<void(qint64 bytes)> progress,
                             DoneCallback done)
{
    // A backup starts only once the server has made it whole: the idle limit covers that wait.
    constexpr int IdleTimeoutMs = 10 * 60 * 1000;
    QPointer<QIODevice> target(out);
    call(
        [start, target, progress = std::move(progress)](const Api &api, Callback cb) {
            if (!target) {
                cb(std::unexpected(Error{ErrorCode::Invalid, u"no file to write the backup to"_s, u"file"_s}));
                return;
            }
            start(
                api, target.data(), IdleTimeoutMs,
                [progress](qint64 bytes) {
                    if (progress)
                        progress(bytes);
                },
                std::move(cb));
        },
        toDone(std::move(done)));
}

void RemoteSession::backupService(const QString &app, const QString &slot, QIODevice *out,
                                  std::function<void(qint64 bytes)> progress, DoneCallback done)
{
    download([app, slot](const Api &api, QIODevice *target, int idleTimeoutMs, const Api::ProgressCallback &p,
                         Callback cb) { api.backupService(app, slot, target, idleTimeoutMs, p, std::move(cb)); },
             out, std::move(progress), std::move(done));
}

void RemoteSession::backupVolume(const QString &app, const QString &volume, QIODevice *out,
                                 std::function<void(qint64 bytes)> progress, DoneCallback done)
{
    download([app, volume](const Api &api, QIODevice *target, int idleTimeoutMs, const Api::ProgressCallback &p,
                           Callback cb) { api.backupVolume(app, volume, target, idleTimeoutMs, p, std::move(cb)); },
             out, std::move(progress), std::move(done));
}

void RemoteSession::restoreVolume(const QString &app, const QString &volume, QIODevice *archive, qint64 size,
                                  std::function<void(qint64 bytes)> progress, ObjectCallback done)
{
    QPointer<QIODevice> source(archive);
    call(
        [app, volume, source, size, progress = std::move(progress)](const Api &api, Callback cb) {
            if (!source) {
                cb(std::unexpected(Error{ErrorCode::Invalid, u"no archive to restore from"_s, u"file"_s}));
                return;
            }
            api.restoreVolume(
                app, volume, source.data(), size,
                [progress](qint64 bytes) {
                    if (progress)
                        progress(bytes);
                },
                std::move(cb));
        },
        std::move(done));
}

void RemoteSession::appAction(const QString &name, AppAction action, ObjectCallback done)
{
    const client::AppAction wanted = action == AppAction::Start  ? client::AppAction::Start
                                     : action == AppAction::Stop ? client::AppAction::Stop
                                                                 : client::AppAction::Restart;
    call([name, wanted](const Api &api, Callback cb) { api.appAction(name, wanted, std::move(cb)); }, std::move(done));
}

void RemoteSession::auditLines(const QString &object, int limit, ListCallback done)
{
    client::AuditQuery query;
    query.object = object;
    query.limit = limit;
    callList([query](const Api &api, Callback cb) { api.audit(query, std::move(cb)); }, u"lines"_s, std::move(done));
}

void RemoteSession::deploy(const QString &app, const QString &ref, ObjectCallback done)
{
    call([app, ref](const Api &api, Callback cb) { api.deploy(app, ref, std::move(cb)); }, std::move(done));
}

void RemoteSession::deploys(const QString &app, int limit, ListCallback done)
{
    callList([app, limit](const Api &api, Callback cb) { api.deploys(app, limit, std::move(cb)); }, u"deploys"_s,
             std::move(done));
}

void RemoteSession::deployDetail(const QString &id, ObjectCallback done)
{
    call([id](const Api &api, Callback cb) { api.deployDetail(id, std::move(cb)); }, std::move(done));
}

void RemoteSession::cancelDeploy(const QString &id, DoneCallback done)
{
    call([id](const Api &api, Callback cb) { api.cancelDeploy(id, std::move(cb)); }, toDone(std::move(done)));
}

void RemoteSession::deployLog(const QString &id, int step, int after, ListCallback done)
{
    callList([id, step, after](const Api &api, Callback cb) { api.deployLog(id, step, after, 5000, std::move(cb)); },
             u"lines"_s, std::move(done));
}

void RemoteSession::logTail(const QString &app, int lines, ListCallback done)
{
    callList([app, lines](const Api &api, Callback cb) { api.logTail(app, lines, std::move(cb)); }, u"lines"_s,
             std::move(done));
}

Subscription *RemoteSession::follow(const Stream &open, QObject *parent)
{
    auto *subscription = new Subscription(parent);
    if (!m_client) {
        QMetaObject::invokeMethod(
            subscription, [subscription, error = notReady()]() { subscription->finish(std::unexpected(error)); },
            Qt::QueuedConnection);
        return subscription;
    }
    QPointer<Subscription> guard(subscription);
    const QUrl server = m_baseUrl;
    QWebSocket *socket = open(
        Api(m_client),
        [guard](const QJsonObject &message) {
            if (guard && guard->isActive())
                guard->deliver(message);
        },
        [guard, server](const Status &closed) {
            if (!guard)
                return;
            if (closed)
                guard->finish({});
            else
                guard->finish(std::unexpected(forDesktop(closed.error(), server)));
        });
    subscription->attach(socket);
    return subscription;
}

Subscription *RemoteSession::followLogs(const QString &app, int tail, QObject *parent)
{
    return follow(
        [app, tail](const Api &api, Api::MessageCallback onMessage, Api::ClosedCallback onClosed) {
            return api.followLogs(app, tail, std::move(onMessage), std::move(onClosed));
        },
        parent);
}

Subscription *RemoteSession::followDeployLog(const QString &id, QObject *parent)
{
    return follow(
        [id](const Api &api, Api::MessageCallback onMessage, Api::ClosedCallback onClosed) {
            return api.followDeployLog(id, std::move(onMessage), std::move(onClosed));
        },
        parent);
}

Subscription *RemoteSession::runInApp(const QString &app, const QStringList &command, bool input, QObject *parent)
{
    return follow(
        [app, command, input](const Api &api, Api::MessageCallback onMessage, Api::ClosedCallback onClosed) {
            // Output comes as binary messages, the stream's number first: handed on as text.
            auto deliver = std::make_shared<Api::MessageCallback>(std::move(onMessage));
            QWebSocket *socket = api.exec(
                app, [deliver](const QJsonObject &m) { (*deliver)(m); }, std::move(onClosed));
            QObject::connect(socket, &QWebSocket::connected, socket, [socket, command, input] {
                socket->sendTextMessage(
                    QString::fromUtf8(QJsonDocument(QJsonObject{{u"command"_s, QJsonArray::fromStringList(command)}})
                                          .toJson(QJsonDocument::Compact)));
                if (!input)
                    socket->sendTextMessage(u"{\"eof\":true}"_s);
            });
            // One decoder a stream: a character may be cut between two messages.
            auto decoders = std::make_shared<std::array<QStringDecoder, 2>>(std::array<QStringDecoder, 2>{
                QStringDecoder(QStringDecoder::Utf8), QStringDecoder(QStringDecoder::Utf8)});
            QObject::connect(socket, &QWebSocket::binaryMessageReceived, socket,
                             [deliver, decoders](const QByteArray &m) {
                                 if (m.isEmpty())
                                     return;
                                 const int stream = m.at(0) == 2 ? 2 : 1;
                                 const QString text = (*decoders)[stream - 1].decode(QByteArrayView(m).sliced(1));
                                 (*deliver)(QJsonObject{{u"stream"_s, stream}, {u"text"_s, text}});
                             });
            return socket;
        },
        parent);
}

void RemoteSession::pipelines(bool includeArchived, ListCallback done)
{
    callList([includeArchived](const Api &api, Callback cb) { api.pipelines(includeArchived, std::move(cb)); },
             u"pipelines"_s, std::move(done));
}

void RemoteSession::pipeline(const QString &name, ObjectCallback done)
{
    call([name](const Api &api, Callback cb) { api.pipeline(name, std::move(cb)); }, std::move(done));
}

void RemoteSession::setPipeline(const QString &name, const QByteArray &configYaml, const QByteArray &varsYaml,
                                ObjectCallback done)
{
    call([name, config = QString::fromUtf8(configYaml), vars = QString::fromUtf8(varsYaml)](
             const Api &api, Callback cb) { api.setPipeline(name, config, vars, false, std::move(cb)); },
         std::move(done));
}

void RemoteSession::setPipelinePaused(const QString &name, bool paused, ObjectCallback done)
{
    call([name, paused](const Api &api, Callback cb) { api.setPipelinePaused(name, paused, std::move(cb)); },
         std::move(done));
}

void RemoteSession::renamePipeline(const QString &name, const QString &to, ObjectCallback done)
{
    call([name, to](const Api &api, Callback cb) { api.renamePipeline(name, to, std::move(cb)); }, std::move(done));
}

void RemoteSession::archivePipeline(const QString &name, ObjectCallback done)
{
    call([name](const Api &api, Callback cb) { api.archivePipeline(name, std::move(cb)); }, std::move(done));
}

void RemoteSession::setJobPaused(const QString &pipeline, const QString &job, bool paused, ObjectCallback done)
{
    call([pipeline, job, paused](const Api &api,
                                 Callback cb) { api.setJobPaused(pipeline, job, paused, std::move(cb)); },
         std::move(done));
}

void RemoteSession::settings(ObjectCallback done)
{
    call([](const Api &api, Callback cb) { api.settings(std::move(cb)); }, std::move(done));
}

void RemoteSession::updateSettings(const QJsonObject &fields, ObjectCallback done)
{
    call([fields](const Api &api, Callback cb) { api.updateSettings(fields, std::move(cb)); }, std::move(done));
}

void RemoteSession::capacity(ObjectCallback done)
{
    call([](const Api &api, Callback cb) { api.capacity(std::move(cb)); }, std::move(done));
}

void RemoteSession::edge(ObjectCallback done)
{
    call([](const Api &api, Callback cb) { api.edge(std::move(cb)); }, std::move(done));
}

void RemoteSession::assertionKeys(ObjectCallback done)
{
    call([](const Api &api, Callback cb) { api.assertionKeys(std::move(cb)); }, std::move(done));
}

void RemoteSession::edgeCa(ObjectCallback done)
{
    call([](const Api &api, Callback cb) { api.edgeCa(std::move(cb)); }, std::move(done));
}

void RemoteSession::runs(const QString &pipeline, int limit, ListCallback done)
{
    callList([pipeline, limit](const Api &api, Callback cb) { api.runs(pipeline, {}, limit, std::move(cb)); },
             u"runs"_s, std::move(done));
}

void RemoteSession::run(const QString &id, ObjectCallback done)
{
    call([id](const Api &api, Callback cb) { api.run(id, std::move(cb)); }, std::move(done));
}

void RemoteSession::triggerJob(const QString &pipeline, const QString &job, bool force, ObjectCallback done)
{
    call([pipeline, job, force](const Api &api, Callback cb) { api.triggerJob(pipeline, job, force, std::move(cb)); },
         std::move(done));
}

void RemoteSession::abortRun(const QString &id, DoneCallback done)
{
    call([id](const Api &api, Callback cb) { api.abortRun(id, std::move(cb)); }, toDone(std::move(done)));
}

void RemoteSession::resources(const QString &pipeline, ListCallback done)
{
    callList([pipeline](const Api &api, Callback cb) { api.resources(pipeline, std::move(cb)); }, u"resources"_s,
             std::move(done));
}

void RemoteSession::resourceVersions(const QString &pipeline, const QString &resource, int limit, ListCallback done)
{
    callList([pipeline, resource,
              limit](const Api &api, Callback cb) { api.resourceVersions(pipeline, resource, limit, std::move(cb)); },
             u"versions"_s, std::move(done));
}

void RemoteSession::pinResource(const QString &pipeline, const QString &resource, const QJsonObject &version,
                                ObjectCallback done)
{
    call([pipeline, resource, version](const Api &api,
                                       Callback cb) { api.pinResource(pipeline, resource, version, std::move(cb)); },
         std::move(done));
}

void RemoteSession::unpinResource(const QString &pipeline, const QString &resource, DoneCallback done)
{
    call([pipeline, resource](const Api &api, Callback cb) { api.unpinResource(pipeline, resource, std::move(cb)); },
         toDone(std::move(done)));
}

void RemoteSession::checkResource(const QString &pipeline, const QString &resource, const QJsonObject &from,
                                  DoneCallback done)
{
    call([pipeline, resource, from](const Api &api,
                                    Callback cb) { api.checkResourceNow(pipeline, resource, from, std::move(cb)); },
         toDone(std::move(done)));
}

Subscription *RemoteSession::followRun(const QString &id, qint64 after, QObject *parent)
{
    return follow(
        [id, after](const Api &api, Api::MessageCallback onMessage, Api::ClosedCallback onClosed) {
            return api.followRun(id, after, std::move(onMessage), std::move(onClosed));
        },
        parent);
}

void RemoteSession::approvals(const QString &status, ListCallback done)
{
    callList([status](const Api &api, Callback cb) { api.approvals(status, std::nullopt, std::move(cb)); },
             u"approvals"_s, std::move(done));
}

void RemoteSession::approval(const QString &id, ObjectCallback done)
{
    call([id](const Api &api, Callback cb) { api.approval(id, std::move(cb)); }, std::move(done));
}

void RemoteSession::decideApproval(const QString &id, bool approve, const QString &reason, ObjectCallback done)
{
    const client::Decision decision = approve ? client::Decision::Approve : client::Decision::Reject;
    call([id, decision, reason](const Api &api,
                                Callback cb) { api.decideApproval(id, decision, reason, std::move(cb)); },
         std::move(done));
}

void RemoteSession::users(ListCallback done)
{
    callList([](const Api &api, Callback cb) { api.users(std::move(cb)); }, u"users"_s, std::move(done));
}

void RemoteSession::createPairing(const QString &user, ObjectCallback done)
{
    call([user](const Api &api, Callback cb) { api.createPairing(user, std::move(cb)); }, std::move(done));
}

void RemoteSession::connectedClients(ListCallback done)
{
    callList([](const Api &api, Callback cb) { api.connections(std::move(cb)); }, u"connections"_s, std::move(done));
}

void RemoteSession::sourceConnections(ListCallback done)
{
    callList([](const Api &api, Callback cb) { api.sourceConnections(std::move(cb)); }, u"connections"_s,
             std::move(done));
}

void RemoteSession::addSourceConnection(const QJsonObject &connection, ObjectCallback done)
{
    call([connection](const Api &api, Callback cb) { api.addSourceConnection(connection, std::move(cb)); },
         std::move(done));
}

void RemoteSession::beginSourceAuthorization(const QJsonObject &body, ObjectCallback done)
{
    call([body](const Api &api, Callback cb) { api.beginSourceAuthorization(body, std::move(cb)); }, std::move(done));
}

void RemoteSession::reauthorizeSourceConnection(const QString &name, const QString &redirectUri, ObjectCallback done)
{
    call([name, redirectUri](const Api &api,
                             Callback cb) { api.reauthorizeSourceConnection(name, redirectUri, std::move(cb)); },
         std::move(done));
}

void RemoteSession::completeSourceAuthorization(const QString &state, const QString &code, ObjectCallback done)
{
    call([state, code](const Api &api, Callback cb) { api.completeSourceAuthorization(state, code, std::move(cb)); },
         std::move(done));
}

void RemoteSession::removeSourceConnection(const QString &name, DoneCallback done)
{
    call([name](const Api &api, Callback cb) { api.removeSourceConnection(name, std::move(cb)); },
         toDone(std::move(done)));
}

void RemoteSession::testSourceConnection(const QString &name, const QString &repo, ObjectCallback done)
{
    call([name, repo](const Api &api, Callback cb) { api.testSourceConnection(name, repo, {}, std::move(cb)); },
         std::move(done));
}

void RemoteSession::testRegistryConnection(const QString &name, const QString &image, ObjectCallback done)
{
    call([name, image](const Api &api, Callback cb) { api.testRegistryConnection(name, image, std::move(cb)); },
         std::move(done));
}

void RemoteSession::sourceConnectionRepositories(const QString &name, ListCallback done)
{
    callList([name](const Api &api, Callback cb) { api.sourceConnectionRepositories(name, std::move(cb)); },
             u"repositories"_s, std::move(done));
}

void RemoteSession::sourceConnectionBranches(const QString &name, const QString &repo, ListCallback done)
{
    callList([name, repo](const Api &api, Callback cb) { api.sourceConnectionBranches(name, repo, std::move(cb)); },
             u"branches"_s, std::move(done));
}

} // namespace pando::desktop
