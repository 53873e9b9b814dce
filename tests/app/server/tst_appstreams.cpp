// An app's WebSocket streams beyond logs and events, over a real engine (temporary SQLite data
// directory, fake adapters), as a client other than pando drives them: a deploy's output followed
// while it builds (GET /api/v1/deploys/{id}/log/follow), a command run in the app's container
// (GET /api/v1/apps/{name}/exec) and a volume restored from an archive sent in
// (GET /api/v1/apps/{name}/volumes/{volume}/restore).

#include "apicall.h"
#include "fakes.h"

#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QSet>
#include <QSignalSpy>
#include <QTest>
#include <QWebSocket>
#include <algorithm>

using namespace pando;
using namespace Qt::StringLiterals;
using Answer = test::ApiAnswer;

class TestAppStreams : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_install.start(), qPrintable(m_install.error)); }
    void deployLogFollowsTheBuild();
    void execSpeaksItsProtocol();
    void restoreSpeaksItsProtocol();

private:
    Answer call(const QByteArray &method, const QString &path, const QByteArray &body = {},
                const QByteArray &contentType = {})
    {
        return test::callApi(m_network, m_install.baseUrl(), method, path, body, contentType,
                             "Bearer " + m_install.token.toUtf8());
    }

    // Deploys app and waits until the deploy succeeded.
    bool deployed(const QString &app)
    {
        const Answer queued = call("POST", QStringLiteral("/api/v1/apps/%1/deploys").arg(app), "{}");
        if (queued.status != 202)
            return false;
        const QString path = QStringLiteral("/api/v1/deploys/") + queued.json.value(QStringLiteral("id")).toString();
        return QTest::qWaitFor(
            [&] { return call("GET", path).json.value(QStringLiteral("status")).toString() == u"succeeded"; }, 15000);
    }

    test::TestInstall m_install;
    QNetworkAccessManager m_network;
};

// A deploy's output over its WebSocket: what was printed before the client came, each line the
// build prints while it is followed (before the build is over), each once and in order, then how
// the deploy ended and a normal close. A client joining after the end gets the same lines.
void TestAppStreams::deployLogFollowsTheBuild()
{
    // The fake runtime's containers answer on 127.0.0.1:<run.port>: point that at this API.
    const QByteArray spec = QStringLiteral("name: slowbuild\n"
                                           "source:\n  repo: https://git.example/d.git\n"
                                           "run:\n  port: %1\n"
                                           "health:\n  path: /api/v1/health\n")
                                .arg(m_install.port)
                                .toUtf8();
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), spec, "application/yaml").status, 201);
    const Answer queued = call("POST", QStringLiteral("/api/v1/apps/slowbuild/deploys"), "{}");
    QCOMPARE(queued.status, 202);
    QString id = queued.json.value(QStringLiteral("id")).toString();
    const auto follow = [this, &id](QWebSocket &socket) {
        QNetworkRequest request(
            QUrl(QStringLiteral("ws://127.0.0.1:%1/api/v1/deploys/%2/log/follow").arg(m_install.port).arg(id)));
        request.setRawHeader("Authorization", "Bearer " + m_install.token.toUtf8());
        socket.open(request);
    };
    const auto received = [](const QSignalSpy &spy) {
        QList<QJsonObject> list;
        for (const QList<QVariant> &message : spy)
            list << QJsonDocument::fromJson(message.first().toString().toUtf8()).object();
        return list;
    };

    QWebSocket socket;
    QSignalSpy messages(&socket, &QWebSocket::textMessageReceived);
    QSignalSpy disconnected(&socket, &QWebSocket::disconnected);
    follow(socket);
    // The build's first line, printed while the build waits: it came through the live feed.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (const QJsonObject &m : received(messages))
                if (m.value(QStringLiteral("text")).toString().startsWith(QStringLiteral("Step 1/2")))
                    return true;
            return false;
        }(),
        10000);
    QCOMPARE(disconnected.size(), 0);
    m_install.runtime->releaseBuild();
    QTRY_COMPARE_WITH_TIMEOUT(disconnected.size(), 1, 15000);
    QCOMPARE(socket.closeCode(), QWebSocketProtocol::CloseCodeNormal);

    const QList<QJsonObject> live = received(messages);
    QVERIFY(!live.isEmpty());
    QCOMPARE(live.last().value(QStringLiteral("finished")).toString(), QStringLiteral("succeeded"));
    QList<QPair<int, int>> numbers;
    QStringList build;
    QStringList steps;
    for (const QJsonObject &m : live.mid(0, live.size() - 1)) {
        // Each step's state, a running one before its lines and an ended one after them.
        if (m.contains(QStringLiteral("progress"))) {
            const QJsonObject step = m.value(QStringLiteral("progress")).toObject();
            steps << step.value(QStringLiteral("name")).toString() + u' ' +
                         step.value(QStringLiteral("status")).toString();
            continue;
        }
        numbers << qMakePair(m.value(QStringLiteral("step")).toInt(), m.value(QStringLiteral("line")).toInt());
        if (m.value(QStringLiteral("text")).toString().startsWith(QStringLiteral("Step ")))
            build << m.value(QStringLiteral("text")).toString();
    }
    QCOMPARE(build, QStringList({QStringLiteral("Step 1/2 : FROM pando/busybox:latest"),
                                 QStringLiteral("Step 2/2 : COPY . /srv")}));
    QVERIFY2(steps.indexOf(QStringLiteral("build running")) >= 0 &&
                 steps.indexOf(QStringLiteral("build succeeded")) > steps.indexOf(QStringLiteral("build running")),
             qPrintable(steps.join(u", ")));
    QCOMPARE(steps.last(), QStringLiteral("retire succeeded"));
    // Each line once, in order of step and number.
    QList<QPair<int, int>> sorted = numbers;
    std::sort(sorted.begin(), sorted.end());
    QCOMPARE(numbers, sorted);
    const QSet<QPair<int, int>> distinct(numbers.cbegin(), numbers.cend());
    QCOMPARE(distinct.size(), numbers.size());

    // After the end: the stored lines, the same ones, then the end.
    QWebSocket late;
    QSignalSpy lateMessages(&late, &QWebSocket::textMessageReceived);
    QSignalSpy lateClosed(&late, &QWebSocket::disconnected);
    follow(late);
    QTRY_COMPARE_WITH_TIMEOUT(lateClosed.size(), 1, 10000);
    const auto linesOf = [](const QList<QJsonObject> &messages) {
        QList<QJsonObject> lines;
        for (const QJsonObject &m : messages)
            if (!m.contains(QStringLiteral("progress")))
                lines << m;
        return lines;
    };
    QCOMPARE(linesOf(received(lateMessages)), linesOf(live));

    // An unknown deploy is closed as not found.
    id = QStringLiteral("d000000000000");
    QWebSocket unknown;
    QSignalSpy unknownClosed(&unknown, &QWebSocket::disconnected);
    follow(unknown);
    QTRY_COMPARE_WITH_TIMEOUT(unknownClosed.size(), 1, 10000);
    QCOMPARE(int(unknown.closeCode()), 4404);
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/apps/slowbuild")).status, 202);
}

// GET /api/v1/apps/{name}/exec as a client other than pando sees it: the command as the first
// message, input as binary messages and {"eof"}, output framed by stream, {"exit"} then a
// normal close; a first message that is not a command is refused naming the field.
void TestAppStreams::execSpeaksItsProtocol()
{
    const QByteArray spec = QStringLiteral("name: execd\nsource:\n  repo: https://git.example/d.git\n"
                                           "run:\n  port: %1\nhealth:\n  path: /api/v1/health\n")
                                .arg(m_install.port)
                                .toUtf8();
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), spec, "application/yaml").status, 201);
    const auto open = [this](QWebSocket &socket) {
        QNetworkRequest request(QUrl(QStringLiteral("ws://127.0.0.1:%1/api/v1/apps/execd/exec").arg(m_install.port)));
        request.setRawHeader("Authorization", "Bearer " + m_install.token.toUtf8());
        socket.open(request);
    };
    // A first message answered by a close: its code and reason.
    const auto refused = [&open](const QString &first) {
        QWebSocket socket;
        QSignalSpy connected(&socket, &QWebSocket::connected);
        QSignalSpy closed(&socket, &QWebSocket::disconnected);
        open(socket);
        if (!connected.wait(5000))
            return qMakePair(-1, QString());
        socket.sendTextMessage(first);
        if (closed.isEmpty() && !closed.wait(5000))
            return qMakePair(-1, QString());
        return qMakePair(int(socket.closeCode()), socket.closeReason());
    };
    // Nothing serves yet.
    auto [code, reason] = refused(QStringLiteral("{\"command\": [\"ls\"]}"));
    QCOMPARE(code, 4409);
    QVERIFY2(reason.contains(QStringLiteral("no running version")), qPrintable(reason));
    QVERIFY(deployed(QStringLiteral("execd")));

    QWebSocket socket;
    QSignalSpy connected(&socket, &QWebSocket::connected);
    QSignalSpy output(&socket, &QWebSocket::binaryMessageReceived);
    QSignalSpy text(&socket, &QWebSocket::textMessageReceived);
    QSignalSpy closed(&socket, &QWebSocket::disconnected);
    open(socket);
    QVERIFY(connected.wait(5000));
    socket.sendTextMessage(QStringLiteral("{\"command\": [\"cat\"]}"));
    socket.sendBinaryMessage("abc");
    socket.sendBinaryMessage("def");
    socket.sendTextMessage(QStringLiteral("{\"eof\": true}"));
    QTRY_COMPARE_WITH_TIMEOUT(closed.size(), 1, 5000);
    QCOMPARE(socket.closeCode(), QWebSocketProtocol::CloseCodeNormal);
    QByteArray stdoutBytes;
    for (const QList<QVariant> &message : std::as_const(output)) {
        const QByteArray frame = message.first().toByteArray();
        QCOMPARE(frame.at(0), char(1));
        stdoutBytes += frame.mid(1);
    }
    QCOMPARE(stdoutBytes, QByteArray("abcdef"));
    QCOMPARE(text.size(), 1);
    const QJsonObject exited = QJsonDocument::fromJson(text.first().first().toString().toUtf8()).object();
    QCOMPARE(exited.value(QStringLiteral("exit")).toInt(-1), 0);

    // Not a command: refused saying what was wrong.
    std::tie(code, reason) = refused(QStringLiteral("{\"command\": [\"ls\"], \"cmd\": 1}"));
    QCOMPARE(code, int(QWebSocketProtocol::CloseCodePolicyViolated));
    QVERIFY2(reason.startsWith(QStringLiteral("cmd: unknown field")), qPrintable(reason));
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/apps/execd")).status, 202);
}

// The restore: a size, "ready", the archive in messages, "received", the app and a normal close;
// each wrong turn refused with the API's error body and a close code saying which.
void TestAppStreams::restoreSpeaksItsProtocol()
{
    const QByteArray spec = QStringLiteral("name: vault\nsource:\n  repo: https://git.example/v.git\n"
                                           "run:\n  port: %1\n  volumes:\n    - {name: data, path: /data}\n"
                                           "health:\n  path: /api/v1/health\n")
                                .arg(m_install.port)
                                .toUtf8();
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), spec, "application/yaml").status, 201);
    struct Session {
        QList<QJsonObject> messages;
        int closeCode = -1;
    };
    // Sends what send says once connected and collects the server's messages until it closes.
    const auto session = [this](const QString &volume,
                                const std::function<void(QWebSocket &, const QJsonObject &)> &onMessage) {
        Session result;
        QWebSocket socket;
        QSignalSpy closed(&socket, &QWebSocket::disconnected);
        QObject::connect(&socket, &QWebSocket::textMessageReceived, &socket, [&](const QString &text) {
            result.messages << QJsonDocument::fromJson(text.toUtf8()).object();
            onMessage(socket, result.messages.last());
        });
        QObject::connect(&socket, &QWebSocket::connected, &socket, [&] { onMessage(socket, {}); });
        QNetworkRequest request(QUrl(
            QStringLiteral("ws://127.0.0.1:%1/api/v1/apps/vault/volumes/%2/restore").arg(m_install.port).arg(volume)));
        request.setRawHeader("Authorization", "Bearer " + m_install.token.toUtf8());
        socket.open(request);
        if (closed.wait(15000))
            result.closeCode = int(socket.closeCode());
        return result;
    };
    const auto sizeThen = [](qint64 bytes, const QList<QByteArray> &parts) {
        return [bytes, parts](QWebSocket &socket, const QJsonObject &message) {
            if (message.isEmpty())
                socket.sendTextMessage(QStringLiteral("{\"bytes\": %1}").arg(bytes));
            else if (message.value(QStringLiteral("ready")).toBool())
                for (const QByteArray &part : parts)
                    socket.sendBinaryMessage(part);
        };
    };
    const auto errorOf = [](const Session &s) {
        return s.messages.isEmpty() ? QJsonObject() : s.messages.last().value(QStringLiteral("error")).toObject();
    };

    // No deploy made the volume yet: refused before a byte is sent.
    Session early = session(QStringLiteral("data"), sizeThen(10, {}));
    QCOMPARE(early.closeCode, 4404);
    QVERIFY2(errorOf(early).value(QStringLiteral("message")).toString().contains(QStringLiteral("first deploy")),
             QJsonDocument(errorOf(early)).toJson().constData());
    QVERIFY(deployed(QStringLiteral("vault")));

    const QByteArray archive = "archive of v-vault-data, in three parts";
    Session restored = session(QStringLiteral("data"),
                               sizeThen(archive.size(), {archive.left(10), archive.mid(10, 10), archive.mid(20)}));
    QCOMPARE(restored.closeCode, int(QWebSocketProtocol::CloseCodeNormal));
    QCOMPARE(restored.messages.size(), 3);
    QCOMPARE(restored.messages.at(0).value(QStringLiteral("ready")).toBool(), true);
    QCOMPARE(restored.messages.at(1).value(QStringLiteral("received")).toInteger(), archive.size());
    QCOMPARE(restored.messages.at(2).value(QStringLiteral("app")).toObject().value(QStringLiteral("name")).toString(),
             QStringLiteral("vault"));
    QCOMPARE(m_install.runtime->importedVolume(QStringLiteral("v-vault-data")), archive);

    // More than said.
    Session tooMuch = session(QStringLiteral("data"), sizeThen(5, {archive}));
    QCOMPARE(tooMuch.closeCode, int(QWebSocketProtocol::CloseCodeTooMuchData));
    QCOMPARE(errorOf(tooMuch).value(QStringLiteral("code")).toString(), QStringLiteral("too_large"));
    // Bytes before the size.
    Session noSize = session(QStringLiteral("data"), [](QWebSocket &socket, const QJsonObject &message) {
        if (message.isEmpty())
            socket.sendBinaryMessage("archive of");
    });
    QCOMPARE(noSize.closeCode, int(QWebSocketProtocol::CloseCodeProtocolError));
    // Not a size.
    Session badSize = session(QStringLiteral("data"), [](QWebSocket &socket, const QJsonObject &message) {
        if (message.isEmpty())
            socket.sendTextMessage(QStringLiteral("{\"bytes\": -3}"));
    });
    QCOMPARE(badSize.closeCode, int(QWebSocketProtocol::CloseCodeProtocolError));
    QCOMPARE(errorOf(badSize).value(QStringLiteral("where")).toString(), QStringLiteral("bytes"));
    // An archive the runtime refuses: the error is the engine's, the volume as it was.
    const QByteArray wrong = "not an archive at all";
    Session refused = session(QStringLiteral("data"), sizeThen(wrong.size(), {wrong}));
    QCOMPARE(refused.closeCode, int(QWebSocketProtocol::CloseCodeProtocolError));
    QVERIFY2(errorOf(refused).value(QStringLiteral("message")).toString().contains(QStringLiteral("not a tar")),
             QJsonDocument(errorOf(refused)).toJson().constData());
    QCOMPARE(m_install.runtime->importedVolume(QStringLiteral("v-vault-data")), archive);
    // A volume the app does not have.
    Session unknown = session(QStringLiteral("cache"), sizeThen(archive.size(), {archive}));
    QCOMPARE(unknown.closeCode, 4404);
    QCOMPARE(errorOf(unknown).value(QStringLiteral("where")).toString(), QStringLiteral("run.volumes"));
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/apps/vault?service_data=delete")).status, 202);
}

QTEST_GUILESS_MAIN(TestAppStreams)
#include "tst_appstreams.moc"
