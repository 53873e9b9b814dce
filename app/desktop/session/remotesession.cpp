#include "remotesession.h"

#include "app/client/apiclient.h"

#include <QJsonDocument>
#include <QUrlQuery>
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

QString pathPart(const QString &segment)
{
    return QString::fromLatin1(QUrl::toPercentEncoding(segment));
}

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
    m_client->get(u"/api/v1/health"_s, [self](const Result<client::ApiResponse> &health) {
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
    QWebSocket *socket = m_client->follow(
        u"/api/v1/events"_s,
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

void RemoteSession::send(const QByteArray &method, const QString &path, const QByteArray &body,
                         const QByteArray &contentType, RawCallback done)
{
    if (!m_client) {
        // Still asynchronous: callers may rely on the answer coming later.
        QMetaObject::invokeMethod(
            this, [done = std::move(done), error = notReady()]() { done(std::unexpected(error)); },
            Qt::QueuedConnection);
        return;
    }
    const QUrl server = m_baseUrl;
    m_client->request(method, path, body, contentType,
                      [done = std::move(done), server](const Result<client::ApiResponse> &response) {
                          if (!response) {
                              done(std::unexpected(forDesktop(response.error(), server)));
                              return;
                          }
                          done(response->json);
                      });
}

void RemoteSession::getList(const QString &path, const QString &key, ListCallback done)
{
    send("GET", path, {}, {}, [done = std::move(done), key](const Result<QJsonObject> &answer) {
        if (!answer) {
            done(std::unexpected(answer.error()));
            return;
        }
        done(answer->value(key).toArray());
    });
}

namespace {

QByteArray json(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

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

} // namespace

void RemoteSession::apps(ListCallback done)
{
    getList(u"/api/v1/apps"_s, u"apps"_s, std::move(done));
}

void RemoteSession::app(const QString &name, ObjectCallback done)
{
    send("GET", u"/api/v1/apps/"_s + pathPart(name), {}, {}, std::move(done));
}

void RemoteSession::createApp(const QByteArray &specText, ObjectCallback done)
{
    send("POST", u"/api/v1/apps"_s, specText, "application/yaml", std::move(done));
}

void RemoteSession::updateApp(const QString &name, const QByteArray &specText, ObjectCallback done)
{
    send("PUT", u"/api/v1/apps/"_s + pathPart(name), specText, "application/yaml", std::move(done));
}

void RemoteSession::removeApp(const QString &name, DoneCallback done)
{
    send("DELETE", u"/api/v1/apps/"_s + pathPart(name), {}, {}, toDone(std::move(done)));
}

void RemoteSession::deploy(const QString &app, const QString &ref, ObjectCallback done)
{
    const QByteArray body = ref.isEmpty() ? QByteArray() : json(QJsonObject{{u"ref"_s, ref}});
    send("POST", u"/api/v1/apps/%1/deploys"_s.arg(pathPart(app)), body, "application/json", std::move(done));
}

void RemoteSession::deploys(const QString &app, int limit, ListCallback done)
{
    getList(u"/api/v1/apps/%1/deploys?limit=%2"_s.arg(pathPart(app)).arg(limit), u"deploys"_s, std::move(done));
}

void RemoteSession::deployDetail(const QString &id, ObjectCallback done)
{
    send("GET", u"/api/v1/deploys/"_s + pathPart(id), {}, {}, std::move(done));
}

void RemoteSession::cancelDeploy(const QString &id, DoneCallback done)
{
    send("POST", u"/api/v1/deploys/%1/cancel"_s.arg(pathPart(id)), {}, {}, toDone(std::move(done)));
}

void RemoteSession::logTail(const QString &app, int lines, ListCallback done)
{
    getList(u"/api/v1/apps/%1/logs?tail=%2"_s.arg(pathPart(app)).arg(lines), u"lines"_s, std::move(done));
}

Subscription *RemoteSession::follow(const QString &path, QObject *parent)
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
    QWebSocket *socket = m_client->follow(
        path,
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
    return follow(u"/api/v1/apps/%1/logs/follow?tail=%2"_s.arg(pathPart(app)).arg(tail), parent);
}

void RemoteSession::pipelines(ListCallback done)
{
    getList(u"/api/v1/pipelines"_s, u"pipelines"_s, std::move(done));
}

void RemoteSession::pipeline(const QString &name, ObjectCallback done)
{
    send("GET", u"/api/v1/pipelines/"_s + pathPart(name), {}, {}, std::move(done));
}

void RemoteSession::setPipeline(const QString &name, const QByteArray &configYaml, const QByteArray &varsYaml,
                                ObjectCallback done)
{
    QJsonObject body{{u"config"_s, QString::fromUtf8(configYaml)}};
    if (!varsYaml.isEmpty())
        body.insert(u"vars"_s, QString::fromUtf8(varsYaml));
    send("PUT", u"/api/v1/pipelines/"_s + pathPart(name), json(body), "application/json", std::move(done));
}

void RemoteSession::setPipelinePaused(const QString &name, bool paused, ObjectCallback done)
{
    send("POST", u"/api/v1/pipelines/%1/%2"_s.arg(pathPart(name), paused ? u"pause"_s : u"unpause"_s), {}, {},
         std::move(done));
}

void RemoteSession::runs(const QString &pipeline, int limit, ListCallback done)
{
    const QString path = pipeline.isEmpty()
                             ? u"/api/v1/runs?limit=%1"_s.arg(limit)
                             : u"/api/v1/pipelines/%1/runs?limit=%2"_s.arg(pathPart(pipeline)).arg(limit);
    getList(path, u"runs"_s, std::move(done));
}

void RemoteSession::run(const QString &id, ObjectCallback done)
{
    send("GET", u"/api/v1/runs/"_s + pathPart(id), {}, {}, std::move(done));
}

void RemoteSession::triggerJob(const QString &pipeline, const QString &job, ObjectCallback done)
{
    send("POST", u"/api/v1/pipelines/%1/jobs/%2/runs"_s.arg(pathPart(pipeline), pathPart(job)), {}, {},
         std::move(done));
}

void RemoteSession::abortRun(const QString &id, DoneCallback done)
{
    send("POST", u"/api/v1/runs/%1/abort"_s.arg(pathPart(id)), {}, {}, toDone(std::move(done)));
}

Subscription *RemoteSession::followRun(const QString &id, qint64 after, QObject *parent)
{
    return follow(u"/api/v1/runs/%1/follow?after=%2"_s.arg(pathPart(id)).arg(after), parent);
}

void RemoteSession::approvals(const QString &status, ListCallback done)
{
    QUrlQuery query;
    if (!status.isEmpty())
        query.addQueryItem(u"status"_s, status);
    const QString suffix = query.isEmpty() ? QString() : u"?"_s + query.toString(QUrl::FullyEncoded);
    getList(u"/api/v1/approvals"_s + suffix, u"approvals"_s, std::move(done));
}

void RemoteSession::approval(const QString &id, ObjectCallback done)
{
    send("GET", u"/api/v1/approvals/"_s + pathPart(id), {}, {}, std::move(done));
}

void RemoteSession::decideApproval(const QString &id, bool approve, const QString &reason, ObjectCallback done)
{
    const QByteArray body = reason.isEmpty() ? QByteArray() : json(QJsonObject{{u"reason"_s, reason}});
    send("POST", u"/api/v1/approvals/%1/%2"_s.arg(pathPart(id), approve ? u"approve"_s : u"reject"_s), body,
         "application/json", std::move(done));
}

void RemoteSession::users(ListCallback done)
{
    getList(u"/api/v1/users"_s, u"users"_s, std::move(done));
}

void RemoteSession::createPairing(const QString &user, ObjectCallback done)
{
    send("POST", u"/api/v1/users/%1/pairings"_s.arg(pathPart(user)), {}, {}, std::move(done));
}

void RemoteSession::connectedClients(ListCallback done)
{
    getList(u"/api/v1/connections"_s, u"connections"_s, std::move(done));
}

} // namespace pando::desktop
