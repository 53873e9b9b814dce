// The API server over a real engine (temporary SQLite data directory, fake adapters): who gets
// in, how errors look, and the WebSocket streams.

#include "apicall.h"
#include "fakes.h"

#include "app/server/websocketsession.h"
#include "app/wiring/auditwiring.h"
#include "core/engine/enginewiring.h"
#include "tests/support/component.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryFile>
#include <QTest>
#include <QWebSocket>

using namespace pando;
using namespace Qt::StringLiterals;

namespace {

using Answer = test::ApiAnswer;

QString concrete(QString path)
{
    // Placeholders get values that exist in no install.
    path.replace(QStringLiteral("{name}"), QStringLiteral("nosuchapp"));
    path.replace(QStringLiteral("{id}"), QStringLiteral("d000000000000"));
    return path;
}

} // namespace

class TestApiServer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void health();
    void unauthorized_data();
    void unauthorized();
    void unknownRoute();
    void createApp();
    void createAppErrors_data();
    void createAppErrors();
    void oversizedBodyIsRefused();
    void oversizedChunkedBodyIsRefused();
    void bodyLimitIsThreeMebibytes();
    void headerFloodIsRefused_data();
    void headerFloodIsRefused();
    void duplicateApp();
    void unknownApp();
    void encodedSlashStaysInItsArgument();
    void deployBodyErrors_data();
    void deployBodyErrors();
    void badQueryParameter();
    void plainGetOnWebSocketRoute();
    void webSocketWithoutTokenIsClosed_data();
    void webSocketWithoutTokenIsClosed();
    void eventsStream();
    void unknownWebSocketPathIs404_data();
    void unknownWebSocketPathIs404();
    void webSocketGoneBeforeItsSessionIsForgotten();
    void takenPortIsConflict();
    void auditSinkLag();

private:
    Answer call(const QByteArray &method, const QString &path, const QByteArray &body = {},
                const QByteArray &contentType = {}, const QByteArray &authorization = "default");

    test::TestInstall m_install;
    QNetworkAccessManager m_network;
};

void TestApiServer::initTestCase()
{
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
}

void TestApiServer::cleanupTestCase()
{}

Answer TestApiServer::call(const QByteArray &method, const QString &path, const QByteArray &body,
                           const QByteArray &contentType, const QByteArray &authorization)
{
    return test::callApi(m_network, m_install.baseUrl(), method, path, body, contentType,
                         authorization == "default" ? "Bearer " + m_install.token.toUtf8() : authorization);
}

void TestApiServer::health()
{
    const Answer answer = call("GET", QStringLiteral("/api/v1/health"), {}, {}, {});
    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.json.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QVERIFY(!answer.json.value(QStringLiteral("version")).toString().isEmpty());
    QVERIFY(answer.requestId.startsWith('r'));
}

void TestApiServer::unauthorized_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QByteArray>("authorization");
    for (const server::RouteInfo &route : server::ApiServer::routeTable()) {
        if (route.permission == QLatin1String("public"))
            continue;
        const QByteArray name = (route.method + QLatin1Char(' ') + route.path).toUtf8();
        QTest::newRow(QByteArray(name + " no token").constData())
            << route.method.toUtf8() << concrete(route.path) << QByteArray();
        QTest::newRow(QByteArray(name + " wrong token").constData())
            << route.method.toUtf8() << concrete(route.path) << QByteArray("Bearer pando_wrongwrongwrong");
        QTest::newRow(QByteArray(name + " not bearer").constData())
            << route.method.toUtf8() << concrete(route.path) << QByteArray("Basic YWRtaW46YWRtaW4=");
    }
}

void TestApiServer::unauthorized()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(QByteArray, authorization);
    const Answer answer = call(method, path, {}, {}, authorization);
    QCOMPARE(answer.status, 401);
    const QJsonObject error = answer.json.value(QStringLiteral("error")).toObject();
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("unauthorized"));
    QVERIFY(!error.value(QStringLiteral("message")).toString().isEmpty());
    QVERIFY(answer.authenticate.startsWith("Bearer"));
    QVERIFY(!answer.requestId.isEmpty());
}

void TestApiServer::unknownRoute()
{
    QCOMPARE(call("GET", QStringLiteral("/api/v1/nothing/here"), {}, {}, {}).status, 401);
    QCOMPARE(call("GET", QStringLiteral("/api/v1/nothing/here")).status, 404);
    QCOMPARE(call("GET", QStringLiteral("/")).status, 404);
    // A known path with another method is not a route either.
    const Answer answer = call("PUT", QStringLiteral("/api/v1/apps"));
    QCOMPARE(answer.status, 404);
    QCOMPARE(answer.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toString(),
             QStringLiteral("not_found"));
}

void TestApiServer::createApp()
{
    const Answer created = call("POST", QStringLiteral("/api/v1/apps"), test::helloSpec(), "application/yaml");
    QCOMPARE(created.status, 201);
    QCOMPARE(created.json.value(QStringLiteral("name")).toString(), QStringLiteral("hello"));

    const Answer shown = call("GET", QStringLiteral("/api/v1/apps/hello"));
    QCOMPARE(shown.status, 200);
    QCOMPARE(shown.json.value(QStringLiteral("name")).toString(), QStringLiteral("hello"));

    const Answer listed = call("GET", QStringLiteral("/api/v1/apps"));
    QCOMPARE(listed.status, 200);
    QCOMPARE(listed.json.value(QStringLiteral("apps")).toArray().size(), 1);

    // JSON is YAML: the same spec as JSON creates an app too.
    const QByteArray json = R"({"name":"hellojson","source":{"repo":"https://git.example/h.git"},"run":{"port":80}})";
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), json, "application/json").status, 201);

    const Answer deploys = call("GET", QStringLiteral("/api/v1/apps/hello/deploys?limit=5"));
    QCOMPARE(deploys.status, 200);
    QVERIFY(deploys.json.value(QStringLiteral("deploys")).isArray());
}

void TestApiServer::createAppErrors_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("contentType");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("where"); // a regular expression

    QTest::newRow("malformed yaml") << QByteArray("name: x\nsource: [unclosed\n") << QByteArray("application/yaml")
                                    << 400 << QStringLiteral("^line \\d+, column \\d+$");
    QTest::newRow("unknown field") << QByteArray(test::helloSpec(QStringLiteral("unknownfield")) + "  bogus: 1\n")
                                   << QByteArray("text/yaml") << 400 << QStringLiteral("run\\.bogus");
    QTest::newRow("bad port") << QByteArray(
                                     "name: badport\nsource:\n  repo: https://g.example/x.git\nrun:\n  port: 0\n")
                              << QByteArray("application/yaml") << 400 << QStringLiteral("^run\\.port$");
    QTest::newRow("empty body") << QByteArray() << QByteArray("application/yaml") << 400 << QStringLiteral("^body$");
    QTest::newRow("wrong content type") << test::helloSpec(QStringLiteral("ct")) << QByteArray("image/png") << 415
                                        << QStringLiteral("^Content-Type$");
    // What a web page may send to any site without asking first.
    QTest::newRow("text/plain") << test::helloSpec(QStringLiteral("ct")) << QByteArray("text/plain") << 415
                                << QStringLiteral("^Content-Type$");
}

void TestApiServer::createAppErrors()
{
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, contentType);
    QFETCH(int, status);
    QFETCH(QString, where);
    const Answer answer = call("POST", QStringLiteral("/api/v1/apps"), body, contentType);
    QCOMPARE(answer.status, status);
    const QJsonObject error = answer.json.value(QStringLiteral("error")).toObject();
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("invalid"));
    QVERIFY2(QRegularExpression(where).match(error.value(QStringLiteral("where")).toString()).hasMatch(),
             QJsonDocument(answer.json).toJson(QJsonDocument::Compact).constData());
    QVERIFY(!error.value(QStringLiteral("message")).toString().isEmpty());
}

void TestApiServer::oversizedBodyIsRefused()
{
    QByteArray body = test::helloSpec(QStringLiteral("big"));
    body += "labels:\n  filler: \"" + QByteArray(int(core::MaxSpecBytes), 'x') + "\"\n";
    const Answer answer = call("POST", QStringLiteral("/api/v1/apps"), body, "application/yaml");
    QCOMPARE(answer.status, 413);
    QCOMPARE(answer.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toString(),
             QStringLiteral("too_large"));
    // The server still answers afterwards.
    QCOMPARE(call("GET", QStringLiteral("/api/v1/health")).status, 200);
}

void TestApiServer::oversizedChunkedBodyIsRefused()
{
    // No Content-Length to judge by: the guard counts the chunks as they come.
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, m_install.port);
    QVERIFY(socket.waitForConnected(5000));
    QByteArray request = "POST /api/v1/apps HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
                         m_install.token.toUtf8() +
                         "\r\nContent-Type: application/yaml\r\nTransfer-Encoding: chunked\r\n\r\n";
    const QByteArray chunk(64 * 1024, 'x');
    for (int i = 0; i < 3 * 16 + 4; ++i)
        request += QByteArray::number(chunk.size(), 16) + "\r\n" + chunk + "\r\n";
    socket.write(request);
    QByteArray answer;
    QTRY_VERIFY_WITH_TIMEOUT((answer += socket.readAll()).contains("\r\n\r\n"), 5000);
    QVERIFY2(answer.startsWith("HTTP/1.1 413"), answer.left(200).constData());
    QVERIFY(answer.contains("too_large"));
}

void TestApiServer::bodyLimitIsThreeMebibytes()
{
    // A deploy body of JSON padded with spaces: only a body read whole parses, so the handler's
    // answer (no such app) shows it came through.
    const auto deployBody = [](qint64 size) {
        QByteArray body = R"({"ref":"main"})";
        body += QByteArray(size - body.size(), ' ');
        return body;
    };
    const qint64 limit = server::MaxRequestBodyBytes;
    QCOMPARE(limit, 3LL * 1024 * 1024);
    Answer answer =
        call("POST", QStringLiteral("/api/v1/apps/nosuchapp/deploys"), deployBody(limit - 1), "application/json");
    QVERIFY2(answer.status == 404, QJsonDocument(answer.json).toJson(QJsonDocument::Compact).constData());
    QVERIFY(answer.json.value(QStringLiteral("error"))
                .toObject()
                .value(QStringLiteral("message"))
                .toString()
                .contains(QLatin1String("nosuchapp")));

    answer = call("POST", QStringLiteral("/api/v1/apps/nosuchapp/deploys"), deployBody(limit + 1), "application/json");
    QCOMPARE(answer.status, 413);
    const QJsonObject error = answer.json.value(QStringLiteral("error")).toObject();
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("too_large"));
    QVERIFY2(error.value(QStringLiteral("message")).toString().contains(QString::number(limit)),
             qPrintable(error.value(QStringLiteral("message")).toString()));
    QCOMPARE(call("GET", QStringLiteral("/api/v1/health")).status, 200);

    // An AppSpec is still held to its own 1 MiB, by the handler.
    QByteArray spec = test::helloSpec(QStringLiteral("big2"));
    spec += "labels:\n  filler: \"" + QByteArray(int(core::MaxSpecBytes), 'x') + "\"\n";
    QVERIFY(spec.size() < limit);
    answer = call("POST", QStringLiteral("/api/v1/apps"), spec, "application/yaml");
    QCOMPARE(answer.status, 413);
    QVERIFY(answer.json.value(QStringLiteral("error"))
                .toObject()
                .value(QStringLiteral("message"))
                .toString()
                .startsWith(QLatin1String("the spec is")));
}

void TestApiServer::headerFloodIsRefused_data()
{
    QTest::addColumn<QByteArray>("headers");
    QByteArray many;
    for (int i = 0; i < 10000; ++i)
        many += "X-Flood-" + QByteArray::number(i) + ": x\r\n";
    QTest::newRow("10000 header lines") << many;
    // Few enough bytes to pass the byte limit: the line count alone refuses it.
    QByteArray tiny;
    for (int i = 0; i < 2000; ++i)
        tiny += "a:b\r\n";
    QTest::newRow("2000 tiny header lines") << tiny;
    QTest::newRow("one header of 1 MiB") << "X-Big: " + QByteArray(1024 * 1024, 'y') + "\r\n";
}

void TestApiServer::headerFloodIsRefused()
{
    QFETCH(QByteArray, headers);
    QTcpSocket flood;
    flood.connectToHost(QHostAddress::LocalHost, m_install.port);
    QVERIFY(flood.waitForConnected(5000));
    flood.write("GET /api/v1/apps HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + m_install.token.toUtf8() +
                "\r\n" + headers + "\r\n");

    // Meanwhile another client is served.
    QCOMPARE(call("GET", QStringLiteral("/api/v1/health"), {}, {}, {}).status, 200);

    QByteArray answer;
    QTRY_VERIFY_WITH_TIMEOUT(
        (answer += flood.readAll()).contains("\r\n\r\n") || flood.state() == QAbstractSocket::UnconnectedState, 5000);
    QVERIFY2(answer.startsWith("HTTP/1.1 431"), answer.left(200).constData());
    const qsizetype bodyStart = answer.indexOf("\r\n\r\n") + 4;
    QTRY_VERIFY_WITH_TIMEOUT((answer += flood.readAll()).size() > bodyStart &&
                                 QJsonDocument::fromJson(answer.mid(bodyStart)).isObject(),
                             5000);
    const QJsonObject error =
        QJsonDocument::fromJson(answer.mid(bodyStart)).object().value(QStringLiteral("error")).toObject();
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("too_large"));
    QCOMPARE(error.value(QStringLiteral("where")).toString(), QStringLiteral("headers"));
    // The server ends the connection; it never reaches the route.
    QTRY_COMPARE_WITH_TIMEOUT(flood.state(), QAbstractSocket::UnconnectedState, 5000);
    QCOMPARE(call("GET", QStringLiteral("/api/v1/health"), {}, {}, {}).status, 200);
}

void TestApiServer::duplicateApp()
{
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), test::helloSpec(QStringLiteral("twice")), "application/yaml")
                 .status,
             201);
    const Answer again =
        call("POST", QStringLiteral("/api/v1/apps"), test::helloSpec(QStringLiteral("twice")), "application/yaml");
    QCOMPARE(again.status, 409);
    QCOMPARE(again.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toString(),
             QStringLiteral("conflict"));
}

void TestApiServer::unknownApp()
{
    const Answer answer = call("GET", QStringLiteral("/api/v1/apps/nosuchapp"));
    QCOMPARE(answer.status, 404);
    QCOMPARE(answer.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toString(),
             QStringLiteral("not_found"));
    QCOMPARE(call("GET", QStringLiteral("/api/v1/deploys/d000000000000")).status, 404);
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/apps/nosuchapp")).status, 404);
}

void TestApiServer::encodedSlashStaysInItsArgument()
{
    // The client encodes a "/" inside a name as %2F: the server matches the route first and decodes
    // the argument after, so the handler is asked about the app "a/b" (which cannot exist) rather
    // than the request being taken for a longer path no route has.
    const Answer slash = call("GET", QStringLiteral("/api/v1/apps/a%2Fb/deploys"));
    QCOMPARE(slash.status, 404);
    const QString message = slash.json.value(u"error"_s).toObject().value(u"message"_s).toString();
    QVERIFY2(message.contains(u"\"a/b\""_s) || message.contains(u" a/b"_s), qPrintable(message));
    QVERIFY2(!message.contains(u"route"_s), qPrintable(message));
    // A percent sign and a space are decoded exactly once.
    const Answer percent = call("GET", QStringLiteral("/api/v1/apps/x%2520y"));
    const QString percentMessage = percent.json.value(u"error"_s).toObject().value(u"message"_s).toString();
    QVERIFY2(percentMessage.contains(u"x%20y"_s), qPrintable(percentMessage));
}

void TestApiServer::deployBodyErrors_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("where");
    QTest::newRow("malformed") << QByteArray("{\"ref\":") << QStringLiteral("body, offset");
    QTest::newRow("not an object") << QByteArray("[1]") << QStringLiteral("body");
    QTest::newRow("unknown field") << QByteArray(R"({"reff":"main"})") << QStringLiteral("reff");
    QTest::newRow("ref not a string") << QByteArray(R"({"ref":1})") << QStringLiteral("ref");
}

void TestApiServer::deployBodyErrors()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, where);
    const Answer answer = call("POST", QStringLiteral("/api/v1/apps/hello/deploys"), body, "application/json");
    QCOMPARE(answer.status, 400);
    QVERIFY2(answer.json.value(QStringLiteral("error"))
                 .toObject()
                 .value(QStringLiteral("where"))
                 .toString()
                 .startsWith(where),
             QJsonDocument(answer.json).toJson(QJsonDocument::Compact).constData());
}

void TestApiServer::badQueryParameter()
{
    const Answer answer = call("GET", QStringLiteral("/api/v1/apps/hello/deploys?limit=lots"));
    QCOMPARE(answer.status, 400);
    QCOMPARE(answer.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("where")).toString(),
             QStringLiteral("query.limit"));
    QCOMPARE(call("GET", QStringLiteral("/api/v1/apps/hello/logs?tail=-1")).status, 400);
}

void TestApiServer::plainGetOnWebSocketRoute()
{
    const Answer answer = call("GET", QStringLiteral("/api/v1/events"));
    QCOMPARE(answer.status, 400);
    QCOMPARE(answer.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("where")).toString(),
             QStringLiteral("Upgrade"));
}

void TestApiServer::webSocketWithoutTokenIsClosed_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QByteArray>("authorization");
    QTest::addColumn<QByteArray>("origin");
    QTest::newRow("events, no token") << QStringLiteral("/api/v1/events") << QByteArray() << QByteArray();
    QTest::newRow("events, wrong token") << QStringLiteral("/api/v1/events") << QByteArray("Bearer pando_nope")
                                         << QByteArray();
    QTest::newRow("logs, no token") << QStringLiteral("/api/v1/apps/hello/logs/follow") << QByteArray() << QByteArray();
    QTest::newRow("events, foreign origin")
        << QStringLiteral("/api/v1/events") << QByteArray("default") << QByteArray("http://evil.example");
}

void TestApiServer::webSocketWithoutTokenIsClosed()
{
    QFETCH(QString, path);
    QFETCH(QByteArray, authorization);
    QFETCH(QByteArray, origin);
    QWebSocket socket(QString::fromLatin1(origin));
    QSignalSpy disconnected(&socket, &QWebSocket::disconnected);
    QSignalSpy messages(&socket, &QWebSocket::textMessageReceived);
    QNetworkRequest request(QUrl(QStringLiteral("ws://127.0.0.1:%1%2").arg(m_install.port).arg(path)));
    if (authorization == "default")
        request.setRawHeader("Authorization", "Bearer " + m_install.token.toUtf8());
    else if (!authorization.isEmpty())
        request.setRawHeader("Authorization", authorization);
    socket.open(request);
    QVERIFY(disconnected.wait(5000));
    QCOMPARE(socket.closeCode(), QWebSocketProtocol::CloseCodePolicyViolated);
    QCOMPARE(messages.size(), 0);
}

void TestApiServer::eventsStream()
{
    QWebSocket socket;
    QSignalSpy connected(&socket, &QWebSocket::connected);
    QSignalSpy messages(&socket, &QWebSocket::textMessageReceived);
    QNetworkRequest request(QUrl(QStringLiteral("ws://127.0.0.1:%1/api/v1/events?app=streamed").arg(m_install.port)));
    request.setRawHeader("Authorization", "Bearer " + m_install.token.toUtf8());
    socket.open(request);
    QVERIFY(connected.wait(5000));
    QTRY_COMPARE(m_install.server->webSocketCount(), 1);

    // Another app's event is filtered out; this app's arrives.
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), test::helloSpec(QStringLiteral("other")), "application/yaml")
                 .status,
             201);
    QCOMPARE(
        call("POST", QStringLiteral("/api/v1/apps"), test::helloSpec(QStringLiteral("streamed")), "application/yaml")
            .status,
        201);
    QTRY_VERIFY_WITH_TIMEOUT(messages.size() >= 1, 5000);
    const QJsonObject event = QJsonDocument::fromJson(messages.first().first().toString().toUtf8()).object();
    QCOMPARE(event.value(QStringLiteral("type")).toString(), QStringLiteral("app.created"));
    QCOMPARE(event.value(QStringLiteral("app")).toString(), QStringLiteral("streamed"));
    socket.close();
    QTRY_COMPARE(m_install.server->webSocketCount(), 0);
}

void TestApiServer::unknownWebSocketPathIs404_data()
{
    QTest::addColumn<QString>("path");
    QTest::newRow("no such path") << QStringLiteral("/api/v1/apps/hello/logs/stream");
    // An HTTP route is not a stream: it neither upgrades nor answers as for a plain GET.
    QTest::newRow("an HTTP route") << QStringLiteral("/api/v1/apps");
    QTest::newRow("outside the API") << QStringLiteral("/follow");
}

// Only the route table's WebSocket routes upgrade; any other path asked to is answered 404 (not
// a log stream, not the HTTP route's answer), and the connection ends.
// A client that closed before the server took its socket stayed counted for ever: open streams
// are capped per user, so such leaks locked the user out (tst_cli saw one linger).
void TestApiServer::webSocketGoneBeforeItsSessionIsForgotten()
{
    QObject server;
    new server::detail::WebSocketSession(new QWebSocket, 0, &server);
    QTRY_COMPARE(server.findChildren<server::detail::WebSocketSession *>().size(), 0);
}

void TestApiServer::unknownWebSocketPathIs404()
{
    QFETCH(QString, path);
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, m_install.port);
    QVERIFY(socket.waitForConnected(5000));
    socket.write("GET " + path.toLatin1() +
                 " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                 "Authorization: Bearer " +
                 m_install.token.toUtf8() + "\r\n\r\n");
    QByteArray answer;
    QTRY_VERIFY_WITH_TIMEOUT((answer += socket.readAll(), socket.state() == QAbstractSocket::UnconnectedState), 5000);
    answer += socket.readAll();
    QVERIFY2(answer.startsWith("HTTP/1.1 404"), answer.constData());
    const QJsonObject error = QJsonDocument::fromJson(answer.mid(answer.indexOf("\r\n\r\n") + 4))
                                  .object()
                                  .value(QStringLiteral("error"))
                                  .toObject();
    QCOMPARE(error.value(QStringLiteral("message")).toString(), QStringLiteral("no WebSocket route ") + path);
    QCOMPARE(m_install.server->webSocketCount(), 0);
}

void TestApiServer::takenPortIsConflict()
{
    server::ApiServer second(*m_install.engine);
    auto bound = second.listen(QHostAddress::LocalHost, m_install.port);
    QVERIFY(!bound);
    QCOMPARE(bound.error().code, ErrorCode::Conflict);
    QVERIFY(bound.error().where.contains(QString::number(m_install.port)));
}

void TestApiServer::auditSinkLag()
{
    test::TestInstall install;
    QVERIFY2(install.start(), qPrintable(install.error));
    const auto sinks = [&]() {
        QNetworkRequest request(QUrl(install.baseUrl() + QStringLiteral("/api/v1/audit/sinks")));
        request.setRawHeader("Authorization", "Bearer " + install.token.toUtf8());
        QNetworkReply *reply = m_network.get(request);
        QSignalSpy finished(reply, &QNetworkReply::finished);
        if (!reply->isFinished())
            finished.wait(10000);
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const QJsonObject body = QJsonDocument::fromJson(reply->readAll()).object();
        reply->deleteLater();
        return std::pair{status, body};
    };
    // No sinks configured: an empty list.
    auto [status, body] = sinks();
    QCOMPARE(status, 200);
    QCOMPARE(body.value(QStringLiteral("sinks")).toArray().size(), 0);

    // A syslog collector on a port where nothing listens yet: connections are refused.
    quint16 port = 0;
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        port = probe.serverPort();
    }
    QTemporaryFile config;
    QVERIFY(config.open());
    config.write(
        QJsonDocument(QJsonObject{{QStringLiteral("sinks"),
                                   QJsonArray{QJsonObject{{QStringLiteral("kind"), QStringLiteral("syslog")},
                                                          {QStringLiteral("name"), QStringLiteral("siem")},
                                                          {QStringLiteral("host"), QStringLiteral("127.0.0.1")},
                                                          {QStringLiteral("port"), int(port)},
                                                          {QStringLiteral("tls"), false},
                                                          {QStringLiteral("timeoutMs"), 1000}}}}})
            .toJson());
    config.close();
    auto stream = wiring::startAuditSinks(*install.engine, config.fileName());
    QVERIFY2(stream, qPrintable(stream ? QString() : stream.error().text()));

    // Creating the accounts wrote lines already; none can be delivered.
    const auto sink = [&]() {
        auto [status, body] = sinks();
        const QJsonArray list = body.value(QStringLiteral("sinks")).toArray();
        return status == 200 && list.size() == 1 ? list.first().toObject() : QJsonObject{};
    };
    QTRY_VERIFY_WITH_TIMEOUT(!sink().value(QStringLiteral("last_error")).toString().isEmpty(), 10000);
    QJsonObject down = sink();
    QCOMPARE(down.value(QStringLiteral("name")).toString(), QStringLiteral("siem"));
    QCOMPARE(down.value(QStringLiteral("kind")).toString(), QStringLiteral("syslog"));
    QCOMPARE(down.value(QStringLiteral("cursor")).toInteger(), 0);
    QVERIFY(down.value(QStringLiteral("failures")).toInt() >= 1);
    QVERIFY(down.value(QStringLiteral("last_delivery_ms")).isNull());
    const qint64 lagBefore = down.value(QStringLiteral("lag")).toInteger();
    QVERIFY(lagBefore > 0);
    QCOMPARE(lagBefore, down.value(QStringLiteral("newest")).toInteger());

    // The lag grows with the log.
    for (int i = 0; i < 3; ++i)
        QVERIFY(core::wiringParts(*install.engine)
                    .audit.record(core::Actor::system(QStringLiteral("test")), QStringLiteral("test.line"),
                                  QStringLiteral("test/%1").arg(i), QStringLiteral("success")));
    down = sink();
    QCOMPARE(down.value(QStringLiteral("lag")).toInteger(), lagBefore + 3);
    QCOMPARE(down.value(QStringLiteral("cursor")).toInteger(), 0);

    // Only an administrator reads it.
    QNetworkRequest asViewer(QUrl(install.baseUrl() + QStringLiteral("/api/v1/audit/sinks")));
    asViewer.setRawHeader("Authorization", "Bearer " + install.tokens.value(QStringLiteral("operator")).toUtf8());
    QNetworkReply *refused = m_network.get(asViewer);
    QSignalSpy refusedDone(refused, &QNetworkReply::finished);
    QVERIFY(refusedDone.wait(10000));
    QCOMPARE(refused->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 403);
    refused->deleteLater();

    // The collector comes up on that port: the backlog goes out and the lag drops to 0.
    QTcpServer collector;
    QVERIFY2(collector.listen(QHostAddress::LocalHost, port), qPrintable(collector.errorString()));
    QByteArray received;
    connect(&collector, &QTcpServer::newConnection, this, [&] {
        while (QTcpSocket *socket = collector.nextPendingConnection()) {
            connect(socket, &QTcpSocket::readyRead, this, [&received, socket] { received += socket->readAll(); });
        }
    });
    QTRY_VERIFY_WITH_TIMEOUT(sink().value(QStringLiteral("lag")).toInteger() == 0, 20000);
    const QJsonObject up = sink();
    QVERIFY(up.value(QStringLiteral("last_error")).isNull());
    QCOMPARE(up.value(QStringLiteral("cursor")).toInteger(), up.value(QStringLiteral("newest")).toInteger());
    QVERIFY(up.value(QStringLiteral("last_delivery_ms")).toInteger() > 0);
    QTRY_VERIFY_WITH_TIMEOUT(received.contains("test/2"), 5000);
    (*stream)->stop();
}

QTEST_GUILESS_MAIN(TestApiServer)
#include "tst_apiserver.moc"
