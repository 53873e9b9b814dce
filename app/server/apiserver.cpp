#include "apiserver.h"

#include "accounthandlers.h"
#include "approvalhandlers.h"
#include "hostallowlist.h"
#include "httperror.h"
#include "requestguard.h"
#include "routes.h"
#include "serverstate.h"
#include "tlsidentity.h"
#include "websocketsession.h"
#include "whenready.h"

#include "core/accounts/accountservice.h"
#include "core/authz/authz.h"
#include "core/common/clock.h"
#include "core/engine/engine.h"
#include "core/pipelines/service/pipelineservice.h"

#include <QAbstractHttpServer>
#include <QFile>
#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTcpSocket>
#include <QThreadPool>
#include <QTimer>
#include <QWebSocket>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <utility>

namespace pando::server {

Q_LOGGING_CATEGORY(lcApi, "pando.server")

namespace {

QString toQString(std::string_view view)
{
    return QString::fromLatin1(view.data(), qsizetype(view.size()));
}

QByteArray newRequestId()
{
    const quint64 value = QRandomGenerator::system()->generate64();
    return "r" + QByteArray::number(value, 16).rightJustified(16, '0');
}

QString methodName(QHttpServerRequest::Method method)
{
    switch (method) {
    case QHttpServerRequest::Method::Get:
        return QStringLiteral("GET");
    case QHttpServerRequest::Method::Put:
        return QStringLiteral("PUT");
    case QHttpServerRequest::Method::Delete:
        return QStringLiteral("DELETE");
    case QHttpServerRequest::Method::Post:
        return QStringLiteral("POST");
    case QHttpServerRequest::Method::Head:
        return QStringLiteral("HEAD");
    case QHttpServerRequest::Method::Options:
        return QStringLiteral("OPTIONS");
    case QHttpServerRequest::Method::Patch:
        return QStringLiteral("PATCH");
    case QHttpServerRequest::Method::Connect:
        return QStringLiteral("CONNECT");
    case QHttpServerRequest::Method::Trace:
        return QStringLiteral("TRACE");
    default:
        return QStringLiteral("UNKNOWN");
    }
}

// "Bearer <token>" → the token; anything else → empty.
QString bearerToken(const QByteArray &authorization)
{
    const QByteArray value = authorization.trimmed();
    if (!value.toLower().startsWith("bearer "))
        return {};
    return QString::fromLatin1(value.mid(7).trimmed());
}

// Who the bearer stands for: through the account service when the engine has one (it still takes
// the initial token before bootstrap), else the engine's initial token alone. Unauthorized
// whatever the reason, and without echoing the token.
Result<core::accounts::Principal> authenticate(core::Engine &engine, const QByteArray &authorization)
{
    if (authorization.isEmpty())
        return fail(ErrorCode::Unauthorized, QStringLiteral("this route needs a bearer token"),
                    QStringLiteral("Authorization"), QStringLiteral("send the header Authorization: Bearer <token>"));
    const QString token = bearerToken(authorization);
    if (token.isEmpty())
        return fail(ErrorCode::Unauthorized, QStringLiteral("the Authorization header is not \"Bearer <token>\""),
                    QStringLiteral("Authorization"), QStringLiteral("send the header Authorization: Bearer <token>"));
    Result<core::accounts::Principal> principal = [&]() -> Result<core::accounts::Principal> {
        if (core::accounts::AccountService *accounts = engine.accounts())
            return accounts->authenticate(token);
        auto record = engine.authenticate(token);
        if (!record)
            return std::unexpected(record.error());
        return core::accounts::Principal{
            {}, {},         core::accounts::roleFromName(record->role).value_or(core::accounts::Role::Viewer),
            {}, record->id, core::accounts::Principal::Kind::Initial};
    }();
    if (!principal) {
        Error error = principal.error();
        if (error.code != ErrorCode::Unavailable && error.code != ErrorCode::Internal)
            error.code = ErrorCode::Unauthorized;
        if (error.where.isEmpty())
            error.where = QStringLiteral("Authorization");
        return std::unexpected(error);
    }
    return principal;
}

// The object the route's URL names, looked up where it is an ID of something else (a deploy's
// app, a run's pipeline, a token's user). Something that does not exist is an object with an
// empty name: reads go on to the handler's 404, writes that need a grant are refused.
core::authz::ObjectRef resolveObject(core::Engine &engine, const RouteDef &route, const QStringList &args)
{
    using core::authz::ObjectKind;
    const QString arg = args.value(0);
    switch (route.object) {
    case ObjectArg::App:
        return {ObjectKind::App, arg, {}};
    case ObjectArg::Pipeline:
        return {ObjectKind::Pipeline, arg, {}};
    case ObjectArg::Deploy:
        if (auto deploy = engine.deployView(arg))
            return {ObjectKind::App, deploy->record.app, {}};
        return {ObjectKind::App, {}, {}};
    case ObjectArg::Run:
        if (core::pipelines::PipelineService *pipelines = engine.pipelines()) {
            if (auto tree = pipelines->runTree(arg))
                return {ObjectKind::Pipeline, tree->run.pipeline, {}};
        }
        return {ObjectKind::Pipeline, {}, {}};
    case ObjectArg::Token:
        if (core::accounts::AccountService *accounts = engine.accounts()) {
            if (auto token = accounts->token(arg))
                return {ObjectKind::Token, arg, token->userId};
        }
        return {ObjectKind::Token, arg, {}};
    case ObjectArg::Approval:
        return approvalapi::objectOf(engine, arg);
    case ObjectArg::None:
    case ObjectArg::Undeclared:
        break;
    }
    return {};
}

// Decides the route for the principal; the engine audits a refusal, which is answered 403.
Result<core::authz::Decision> authorize(core::Engine &engine, const core::accounts::Principal &principal,
                                        const RouteDef &route, const QStringList &args, const core::Actor &actor)
{
    return engine.authorize(principal, route.permission, resolveObject(engine, route, args), actor,
                            toQString(route.method) + QLatin1Char(' ') + toQString(route.path));
}

QString objectArgName(ObjectArg object)
{
    switch (object) {
    case ObjectArg::App:
        return QStringLiteral("app");
    case ObjectArg::Pipeline:
        return QStringLiteral("pipeline");
    case ObjectArg::Deploy:
        return QStringLiteral("deploy");
    case ObjectArg::Run:
        return QStringLiteral("run");
    case ObjectArg::Token:
        return QStringLiteral("token");
    case ObjectArg::Approval:
        return QStringLiteral("approval");
    case ObjectArg::None:
    case ObjectArg::Undeclared:
        break;
    }
    return {};
}

// What Qt 6.4 upgrades: "Upgrade: websocket" with "Connection: upgrade" (its parser needs both).
// A request with the first alone is an ordinary request and gets an ordinary answer.
bool isWebSocketUpgrade(const QHttpServerRequest &request)
{
    if (request.value(QByteArrayLiteral("Upgrade")).trimmed().compare("websocket", Qt::CaseInsensitive) != 0)
        return false;
    const QList<QByteArray> tokens = request.value(QByteArrayLiteral("Connection")).split(',');
    return std::any_of(tokens.begin(), tokens.end(), [](const QByteArray &token) {
        return token.trimmed().compare("upgrade", Qt::CaseInsensitive) == 0;
    });
}

// The guard's options for a listener: the body limit, and which paths may take a WebSocket.
detail::GuardOptions guardOptions(const ConnectionLimits &limits)
{
    detail::GuardOptions options;
    options.maxBodyBytes = MaxRequestBodyBytes;
    options.limits = limits;
    options.isWebSocketPath = [](const QByteArray &path) {
        const RouteMatch match =
            matchRoute(QStringLiteral("GET"), QUrl(QString::fromLatin1(path)).path(QUrl::FullyEncoded));
        return match.route != nullptr && match.route->webSocket;
    };
    return options;
}

} // namespace

class ApiServer::Frontend : public QAbstractHttpServer {
public:
    // Routes that reach out to other hosts (a git remote for POST /apps) run on a pool of their
    // own with a bounded queue: eight requests to a host that never answered once held all eight
    // threads of the main pool, and /health with them. Past the queue they are answered 503.
    static constexpr int NetworkThreads = 4;
    static constexpr int MaxNetworkRequests = 16; // running and queued

    Frontend(core::Engine &engine, QObject *parent) : QAbstractHttpServer(parent), m_engine(engine)
    {
        m_pool.setMaxThreadCount(8);
        m_networkPool.setMaxThreadCount(NetworkThreads);
    }
    ~Frontend() override
    {
        m_networkPool.waitForDone();
        m_pool.waitForDone();
    }

    // Where handlers and WebSocket streams read the store; waited for when the server goes.
    QThreadPool &pool() { return m_pool; }
    detail::HostAllowList &hosts() { return m_hosts; }
    detail::ServerState &state() { return m_state; }

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override
    {
        const RouteMatch match = matchRoute(methodName(request.method()), request.url().path(QUrl::FullyEncoded));
        if (!m_hosts.allowsHost(request.value(QByteArrayLiteral("Host")))) {
            // An upgrade refused here is answered by missingHandler, which Qt calls next.
            if (isWebSocketUpgrade(request))
                return false;
            refuseHost(request, socket);
            return true;
        }
        if (isWebSocketUpgrade(request)) {
            // Qt 6.4 upgrades only when this returns true and has no upgrade verifier: the
            // socket is authorized right after the upgrade (acceptWebSockets). Nothing may be
            // written here, the handshake answer follows.
            if (match.route == nullptr || !match.route->webSocket)
                return false;
            if (match.route->beforeUpgrade)
                return allowUpgrade(request, socket, match);
            return true;
        }
        respond(request, socket, match);
        return true;
    }

    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override
    {
        if (m_refusedUpgrade && m_refusedUpgrade->socket == socket) {
            // Qt closes the connection once this returns: the refusal is written now.
            const RefusedUpgrade refused = std::move(*m_refusedUpgrade);
            m_refusedUpgrade.reset();
            QHttpServerResponder responder = makeResponder(request, socket);
            write(responder, refused.reply, refused.requestId);
            return;
        }
        m_refusedUpgrade.reset();
        if (!m_hosts.allowsHost(request.value(QByteArrayLiteral("Host"))))
            return refuseHost(request, socket);
        if (isWebSocketUpgrade(request)) {
            // An upgrade to a path without a WebSocket route. Qt closes the connection as soon as
            // this returns, so the answer is written now rather than from the pool; it needs no
            // store, only the route table, which docs/api/openapi.yaml publishes anyway.
            const QString path = request.url().path();
            const Error error{ErrorCode::NotFound, QStringLiteral("no WebSocket route %1").arg(path), path,
                              QStringLiteral("see docs/api/openapi.yaml for the WebSocket routes")};
            QHttpServerResponder responder = makeResponder(request, socket);
            write(responder, Reply{404, errorBody(error)}, newRequestId());
            return;
        }
        respond(request, socket, matchRoute(methodName(request.method()), request.url().path(QUrl::FullyEncoded)));
    }

private:
    // An upgrade refused before it happened, answered by missingHandler, which Qt calls next
    // with the same socket.
    struct RefusedUpgrade {
        QTcpSocket *socket = nullptr;
        Reply reply;
        QByteArray requestId;
    };

    static RequestData requestData(const QHttpServerRequest &request, QTcpSocket *socket)
    {
        return RequestData{methodName(request.method()),
                           request.url(),
                           request.body(),
                           request.value(QByteArrayLiteral("Content-Type")),
                           request.value(QByteArrayLiteral("Authorization")),
                           socket ? socket->peerAddress().toString() : request.remoteAddress().toString(),
                           request.value(QByteArrayLiteral("Cookie")),
                           request.value(QByteArrayLiteral("X-Pando-Assertion")),
                           RequestData::Forwarded{request.value(QByteArrayLiteral("X-Forwarded-Method")),
                                                  request.value(QByteArrayLiteral("X-Forwarded-Uri")),
                                                  request.value(QByteArrayLiteral("X-Forwarded-Host")),
                                                  request.value(QByteArrayLiteral("X-Forwarded-Proto")),
                                                  request.value(QByteArrayLiteral("X-Forwarded-For"))},
                           request.value(QByteArrayLiteral("Accept")),
                           request.value(QByteArrayLiteral("Origin")),
                           forgeHeaders(request)};
    }

    static QMap<QByteArray, QByteArray> forgeHeaders(const QHttpServerRequest &request)
    {
        QMap<QByteArray, QByteArray> headers;
        // Only the deploy webhook reads them; every other request skips the copy.
        if (!request.url().path().startsWith(QStringLiteral("/api/v1/hooks/")))
            return headers;
        for (const auto &[name, value] : request.headers()) {
            const QByteArray lower = name.toLower();
            if (lower.startsWith("x-") || lower == "idempotency-key" || lower == "authorization")
                headers.insert(lower, value);
        }
        return headers;
    }

    // A route that asks before its upgrade (RouteDef::beforeUpgrade) is authenticated, authorized
    // and asked here, on the server's thread, which acceptWebSockets reads the store on too: Qt
    // 6.4 has to know now whether to answer 101. A refusal is kept for missingHandler.
    bool allowUpgrade(const QHttpServerRequest &request, QTcpSocket *socket, const RouteMatch &match)
    {
        const QByteArray requestId = newRequestId();
        Reply reply =
            dispatch(requestData(request, socket), match, QString::fromLatin1(requestId), match.route->beforeUpgrade);
        if (reply.status == 200)
            return true;
        m_refusedUpgrade = RefusedUpgrade{socket, std::move(reply), requestId};
        return false;
    }

    // Written at once, before any route or token is looked at: nothing about the install goes to
    // a page that reached it under a foreign name.
    void refuseHost(const QHttpServerRequest &request, QTcpSocket *socket)
    {
        const QString host = detail::HostAllowList::hostName(request.value(QByteArrayLiteral("Host")));
        qCInfo(lcApi).noquote() << "refused a request for host" << host.left(100) << "from"
                                << (socket ? socket->peerAddress().toString() : QString());
        const Error error{ErrorCode::Invalid,
                          QStringLiteral("this server does not answer to the host name \"%1\"").arg(host.left(100)),
                          QStringLiteral("Host"),
                          QStringLiteral("reach it by a loopback address, the address it listens on, or a name its "
                                         "certificate carries; pandod --allow-host adds a name")};
        QHttpServerResponder responder = makeResponder(request, socket);
        write(responder, Reply{421, errorBody(error)}, newRequestId());
    }

    void respond(const QHttpServerRequest &request, QTcpSocket *socket, const RouteMatch &match)
    {
        const QByteArray requestId = newRequestId();
        auto data = std::make_shared<RequestData>(requestData(request, socket));
        auto responder = std::make_shared<QHttpServerResponder>(makeResponder(request, socket));
        const bool network = match.route && reachesOut(*match.route);
        if (network && m_networkRequests.fetchAndAddOrdered(1) >= MaxNetworkRequests) {
            m_networkRequests.fetchAndSubOrdered(1);
            qCWarning(lcApi) << "request" << requestId << "refused:" << MaxNetworkRequests
                             << "requests that reach other hosts are running or waiting";
            write(*responder,
                  Reply{503, errorBody(Error{ErrorCode::Unavailable,
                                             QStringLiteral("%1 requests that reach other hosts (git remotes) are "
                                                            "running or waiting, the limit")
                                                 .arg(MaxNetworkRequests),
                                             {},
                                             QStringLiteral("retry once they finished")})},
                  requestId);
            return;
        }
        // Handlers may wait on a git remote or the Docker engine; the server's thread only
        // parses and writes, so one slow request never holds up the others.
        QFuture<Reply> reply =
            QtConcurrent::run(network ? &m_networkPool : &m_pool, [this, data, match, requestId, network] {
                Reply r = dispatch(*data, match, QString::fromLatin1(requestId));
                if (network)
                    m_networkRequests.fetchAndSubOrdered(1);
                return r;
            });
        // With the socket as context, an answer for a client that went away is dropped.
        detail::whenReady(std::move(reply), socket ? static_cast<QObject *>(socket) : this,
                          [responder, requestId](const Reply &r) { write(*responder, r, requestId); });
    }

    static void write(QHttpServerResponder &responder, const Reply &reply, const QByteArray &requestId)
    {
        const auto status = static_cast<QHttpServerResponder::StatusCode>(reply.status);
        if (reply.file) {
            // Opened here, on the socket's thread, where the responder reads it chunk by chunk
            // (and deletes it); the FileBody removes the path once the reply goes.
            auto *file = new QFile(reply.file->path);
            if (!file->open(QIODevice::ReadOnly)) {
                delete file;
                const Error error{
                    ErrorCode::Internal, QStringLiteral("the answer's file cannot be read"), QStringLiteral("body"),
                    QStringLiteral("the server log names request %1").arg(QString::fromLatin1(requestId))};
                qCWarning(lcApi) << "request" << requestId << "cannot open its answer's file";
                responder.write(QJsonDocument(errorBody(error)).toJson(QJsonDocument::Compact),
                                {{"Content-Type", "application/json"}, {"X-Request-Id", requestId}},
                                QHttpServerResponder::StatusCode::InternalServerError);
                return;
            }
            responder.write(file,
                            {{"Content-Type", reply.file->contentType},
                             {"Content-Disposition", reply.file->disposition},
                             {"X-Request-Id", requestId}},
                            status);
            return;
        }
        if (reply.status == 204) {
            // No content means no body, not "{}".
            responder.write(QByteArray(), {{"X-Request-Id", requestId}}, status);
            return;
        }
        const QByteArray body =
            reply.contentType.isEmpty() ? QJsonDocument(reply.body).toJson(QJsonDocument::Compact) : reply.content;
        const QByteArray type = reply.contentType.isEmpty() ? QByteArrayLiteral("application/json") : reply.contentType;
        if (!reply.headers.isEmpty() || !reply.contentType.isEmpty()) {
            // The responder takes only a fixed list of headers in one call; written one by one.
            responder.writeStatusLine(status);
            responder.writeHeader("Content-Type", type);
            responder.writeHeader("X-Request-Id", requestId);
            if (reply.status == 401)
                responder.writeHeader("WWW-Authenticate", "Bearer realm=\"pando\"");
            for (const auto &[name, value] : reply.headers)
                responder.writeHeader(name, value);
            responder.writeHeader("Content-Length", QByteArray::number(body.size()));
            responder.writeBody(body);
            return;
        }
        if (reply.status == 401)
            responder.write(body,
                            {{"Content-Type", "application/json"},
                             {"X-Request-Id", requestId},
                             {"WWW-Authenticate", "Bearer realm=\"pando\""}},
                            status);
        else
            responder.write(body, {{"Content-Type", "application/json"}, {"X-Request-Id", requestId}}, status);
    }

    // handler: what serves the route once it is authorized; its own handler when null.
    Reply dispatch(const RequestData &request, const RouteMatch &match, const QString &requestId,
                   Handler handler = nullptr)
    {
        core::Actor actor;
        actor.name = QStringLiteral("anonymous");
        actor.source = request.peer;
        actor.requestId = requestId;

        // Before any token is looked at: a cross-site form or text/plain POST gets nowhere.
        if (match.route)
            if (std::optional<Reply> refused = refuseBodyType(*match.route, request))
                return *refused;

        core::accounts::Principal principal;
        const bool isPublic = match.route && match.route->permission == permission::Public;
        if (!isPublic) {
            // Unknown routes answer 401 too without a valid token, so that they reveal nothing.
            auto authenticated = authenticate(m_engine, request.authorization);
            if (!authenticated)
                return Reply{httpStatus(authenticated.error().code), errorBody(authenticated.error())};
            principal = *authenticated;
            actor = principal.actor(request.peer, requestId);
            if (!match.route) {
                const QString path = request.url.path();
                const QString message = match.pathKnown
                                            ? QStringLiteral("%1 is not served at %2").arg(request.method, path)
                                            : QStringLiteral("no route %1 %2").arg(request.method, path);
                return Reply{404, errorBody(Error{ErrorCode::NotFound, message, path,
                                                  QStringLiteral("see docs/api/openapi.yaml for the routes")})};
            }
            auto decision = authorize(m_engine, principal, *match.route, match.args, actor);
            if (!decision)
                return Reply{httpStatus(decision.error().code), errorBody(decision.error())};
            if (!*decision)
                return Reply{403, errorBody(Error{ErrorCode::Forbidden, decision->reason, request.url.path()})};
        }

        Call call{m_engine, request, match.args, actor, principal, &m_state};
        try {
            return (handler ? handler : match.route->handler)(call);
        } catch (const std::exception &e) {
            qCWarning(lcApi) << "request" << requestId << "failed with an exception:" << e.what();
        } catch (...) {
            qCWarning(lcApi) << "request" << requestId << "failed with an unknown exception";
        }
        return Reply{500, errorBody(Error{ErrorCode::Internal,
                                          QStringLiteral("internal error"),
                                          {},
                                          QStringLiteral("the server log names request %1").arg(requestId)})};
    }

    core::Engine &m_engine;
    detail::ServerState m_state;
    detail::HostAllowList m_hosts;
    QThreadPool m_pool;
    QThreadPool m_networkPool;
    QAtomicInt m_networkRequests; // running and queued on m_networkPool
    std::optional<RefusedUpgrade> m_refusedUpgrade;
};

using detail::WebSocketSession;

ApiServer::ApiServer(core::Engine &engine, QObject *parent)
    : QObject(parent), m_engine(engine), m_frontend(std::make_unique<Frontend>(engine, nullptr))
{
    connect(m_frontend.get(), &QAbstractHttpServer::newWebSocketConnection, this, &ApiServer::acceptWebSockets);
    connect(engine.events(), &core::EventBus::published, this, [this](const core::Event &event) {
        if (event.type != core::EventType::TokenRevoked)
            return;
        const QString id = event.data.value(QStringLiteral("tokenId")).toString();
        const QString user = event.data.value(QStringLiteral("userId")).toString();
        for (WebSocketSession *session : findChildren<WebSocketSession *>(Qt::FindDirectChildrenOnly)) {
            if ((!id.isEmpty() && session->tokenId() == id) || (!user.isEmpty() && session->userId() == user))
                session->close(QWebSocketProtocol::CloseCodePolicyViolated, QStringLiteral("the token was revoked"));
        }
    });
}

void ApiServer::addAllowedHost(const QString &name)
{
    m_frontend->hosts().addName(name);
}

void ApiServer::setConnectionLimits(const ConnectionLimits &limits)
{
    m_limits = limits;
}

void ApiServer::setAuthzOptions(const core::authz::AuthzOptions &options)
{
    m_engine.setAuthzOptions(options);
}

ApiServer::~ApiServer()
{
    // Sessions hold subscriptions into the engine; they go before the frontend and the engine.
    qDeleteAll(findChildren<WebSocketSession *>(Qt::FindDirectChildrenOnly));
}

Result<quint16> ApiServer::listen(const QHostAddress &address, quint16 port)
{
    auto *tcp = new detail::GuardedTcpServer(guardOptions(m_limits), m_frontend.get());
    if (!tcp->listen(address, port)) {
        const bool inUse = tcp->serverError() == QAbstractSocket::AddressInUseError;
        const QString where = QStringLiteral("%1:%2").arg(address.toString()).arg(port);
        Error error =
            inUse ? Error{ErrorCode::Conflict, QStringLiteral("the port is already in use"), where,
                          QStringLiteral("choose another port, or stop the program listening there")}
                  : Error{ErrorCode::Unavailable, QStringLiteral("cannot listen: %1").arg(tcp->errorString()), where};
        delete tcp;
        return std::unexpected(error);
    }
    m_frontend->hosts().addListenAddress(address);
    m_frontend->bind(tcp);
    return tcp->serverPort();
}

Result<quint16> ApiServer::listenTls(const QHostAddress &address, quint16 port, const QSslCertificate &certificate,
                                     const QSslKey &key)
{
    const QString where = QStringLiteral("%1:%2").arg(address.toString()).arg(port);
    if (certificate.isNull() || key.isNull())
        return fail(ErrorCode::Invalid, QStringLiteral("TLS needs a certificate and its private key"), where);
    QSslConfiguration config = QSslConfiguration::defaultConfiguration();
    config.setLocalCertificate(certificate);
    config.setPrivateKey(key);
    config.setProtocol(QSsl::TlsV1_2OrLater);
    // Teammates are identified by their bearer tokens, not by client certificates.
    config.setPeerVerifyMode(QSslSocket::VerifyNone);
    auto *tls = new detail::GuardedSslServer(guardOptions(m_limits), m_frontend.get());
    tls->setSslConfiguration(config);
    if (!tls->listen(address, port)) {
        const bool inUse = tls->serverError() == QAbstractSocket::AddressInUseError;
        Error error =
            inUse ? Error{ErrorCode::Conflict, QStringLiteral("the port is already in use"), where,
                          QStringLiteral("choose another port, or stop the program listening there")}
                  : Error{ErrorCode::Unavailable, QStringLiteral("cannot listen: %1").arg(tls->errorString()), where};
        delete tls;
        return std::unexpected(error);
    }
    m_frontend->state().setTlsFingerprint(certificateFingerprint(certificate));
    m_frontend->hosts().addListenAddress(address);
    m_frontend->hosts().addCertificate(certificate);
    m_frontend->bind(tls);
    m_tlsPorts.insert(tls->serverPort());
    m_tlsListeners.append(tls);
    return tls->serverPort();
}

void ApiServer::stopTls()
{
    for (WebSocketSession *session : findChildren<WebSocketSession *>(Qt::FindDirectChildrenOnly)) {
        if (m_tlsPorts.contains(session->socket()->localPort()))
            session->close(QWebSocketProtocol::CloseCodeGoingAway, QStringLiteral("the server stopped serving TLS"));
    }
    for (QObject *listener : std::as_const(m_tlsListeners)) {
        auto *tls = static_cast<detail::GuardedSslServer *>(listener);
        tls->close();
        // Its connections are its children (QSslServer makes them so).
        for (QSslSocket *socket : tls->findChildren<QSslSocket *>())
            socket->abort();
        tls->deleteLater();
    }
    m_tlsListeners.clear();
    m_tlsPorts.clear();
    m_frontend->state().setTlsFingerprint({});
}

QList<QJsonObject> ApiServer::connections() const
{
    QList<QJsonObject> list;
    for (const detail::ConnectionInfo &connection : m_frontend->state().connections())
        list.append(connection.toJson());
    return list;
}

QList<RouteInfo> ApiServer::routeTable()
{
    QList<RouteInfo> table;
    for (const RouteDef &route : routeDefs())
        table.append(RouteInfo{toQString(route.method), toQString(route.path), toQString(route.permission),
                               route.webSocket, objectArgName(route.object)});
    return table;
}

int ApiServer::webSocketCount() const
{
    return int(findChildren<WebSocketSession *>(Qt::FindDirectChildrenOnly).size());
}

void ApiServer::acceptWebSockets()
{
    while (m_frontend->hasPendingWebSocketConnections()) {
        std::unique_ptr<QWebSocket> pending = m_frontend->nextPendingWebSocketConnection();
        if (!pending)
            break;
        QWebSocket *incoming = pending.release();
        // Before any frame is read: a client's message is a small command at most.
        incoming->setMaxAllowedIncomingMessageSize(quint64(m_limits.maxWebSocketMessageBytes));
        incoming->setMaxAllowedIncomingFrameSize(quint64(m_limits.maxWebSocketMessageBytes));
        auto *session = new WebSocketSession(incoming, qint64(m_limits.maxWebSocketPendingBytes), this);
        QWebSocket *socket = session->socket();
        const QNetworkRequest request = socket->request();
        const QUrl url = request.url();

        // A browser page from another site must not ride on a token it can reach; clients that
        // are not browsers send no Origin.
        // The Origin is held to the install's own names, never to the request's Host: a page
        // that rebinds its own name to this machine sends that name in both.
        const QString origin = socket->origin();
        if (!origin.isEmpty() && !m_frontend->hosts().allowsOrigin(origin, socket->localPort())) {
            session->close(QWebSocketProtocol::CloseCodePolicyViolated,
                           QStringLiteral("origin %1 is not allowed").arg(origin.left(200)));
            continue;
        }

        const RouteMatch match = matchRoute(QStringLiteral("GET"), url.path(QUrl::FullyEncoded));
        if (!match.route || !match.route->webSocket) {
            session->close(detail::closeCode(detail::StreamClose::NotFound),
                           QStringLiteral("no WebSocket route %1").arg(url.path()));
            continue;
        }
        auto principal = authenticate(m_engine, request.rawHeader("Authorization"));
        if (!principal) {
            session->close(QWebSocketProtocol::CloseCodePolicyViolated,
                           QStringLiteral("unauthorized: %1").arg(principal.error().message));
            continue;
        }
        const core::Actor actor =
            principal->actor(socket->peerAddress().toString(), QString::fromLatin1(newRequestId()));
        auto decision = authorize(m_engine, *principal, *match.route, match.args, actor);
        if (!decision || !*decision) {
            session->close(QWebSocketProtocol::CloseCodePolicyViolated,
                           QStringLiteral("forbidden: %1").arg(decision ? decision->reason : decision.error().message));
            continue;
        }
        // WebSockets leave their listener's count at the upgrade; they are held to the same cap here.
        if (m_limits.maxConnections > 0 && webSocketCount() > m_limits.maxConnections) {
            qCWarning(lcApi) << "refused a WebSocket:" << m_limits.maxConnections << "are open, the limit";
            session->close(static_cast<QWebSocketProtocol::CloseCode>(1013),
                           QStringLiteral("%1 WebSockets are open, the limit").arg(m_limits.maxConnections));
            continue;
        }
        // One user (or token, for the initial one) holds a bounded number of live streams.
        const QString owner = principal->userId.isEmpty() ? principal->tokenId : principal->userId;
        const auto sessions = findChildren<WebSocketSession *>(Qt::FindDirectChildrenOnly);
        const auto held = std::count_if(sessions.begin(), sessions.end(), [&](const WebSocketSession *other) {
            return other != session && (other->userId().isEmpty() ? other->tokenId() : other->userId()) == owner;
        });
        if (m_limits.maxWebSocketsPerUser > 0 && held >= m_limits.maxWebSocketsPerUser) {
            qCWarning(lcApi).nospace() << "refused a WebSocket of " << principal->actorName() << ": " << held
                                       << " are open, the limit per user";
            session->close(QWebSocketProtocol::CloseCodePolicyViolated,
                           QStringLiteral("%1 live streams are open for this user, the limit; close one first")
                               .arg(m_limits.maxWebSocketsPerUser));
            continue;
        }
        // Revoking the token, ending the session or disabling the user closes this socket too.
        session->setPrincipal(principal->tokenId, principal->userId);
        // ...and so does the token's (or session's) expiry.
        session->closeAt(principal->expiresMs);
        // Listed for GET /api/v1/connections while the socket is open; when it opened is the
        // server's own fact about a connection, read off the wall clock.
        const QString connectionId =
            m_frontend->state().addConnection(detail::ConnectionInfo{{},
                                                                     principal->username,
                                                                     principal->userId,
                                                                     principal->actorName(),
                                                                     socket->peerAddress().toString(),
                                                                     toQString(match.route->path),
                                                                     core::SystemClock::instance().nowMs(),
                                                                     m_tlsPorts.contains(socket->localPort())});
        connect(session, &QObject::destroyed, m_frontend.get(),
                [state = &m_frontend->state(), connectionId] { state->removeConnection(connectionId); });

        // ...and so does losing the access: the route's decision is asked again while the stream
        // lives (a grant taken away, the object given to others; a store that cannot answer ends
        // it too). A refusal is audited, as at the upgrade.
        if (m_limits.streamReauthorizeMs > 0) {
            auto *again = new QTimer(session);
            again->setInterval(m_limits.streamReauthorizeMs);
            connect(again, &QTimer::timeout, session,
                    [this, session, route = match.route, args = match.args, who = *principal, actor] {
                        auto decision = authorize(m_engine, who, *route, args, actor);
                        if (!decision || !*decision)
                            session->close(QWebSocketProtocol::CloseCodePolicyViolated,
                                           QStringLiteral("forbidden: %1")
                                               .arg(decision ? decision->reason : decision.error().message));
                    });
            again->start();
        }

        // The route names its stream (routes.h): the table's check makes one without a stream
        // a compile error, so there is no default to fall through to.
        StreamCall call{m_engine,   *session, url,       match.args,          m_frontend->pool(),
                        *principal, actor,    &m_limits, &m_frontend->state()};
        match.route->stream(call);
    }
}

} // namespace pando::server
