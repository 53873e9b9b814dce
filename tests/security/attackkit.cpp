#include "attackkit.h"

#include "tests/support/gitfixture.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <csignal>

namespace pando::test::attacks {

Daemon::~Daemon()
{
    if (process.state() == QProcess::Running) {
        ::kill(pid_t(process.processId()), SIGTERM);
        if (!process.waitForFinished(20000))
            process.kill();
        process.waitForFinished(5000);
    }
}

qint64 Daemon::rssKiB() const
{
    QFile status(QStringLiteral("/proc/%1/status").arg(process.processId()));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
    return -1;
}

// One HTTP answer off the socket: the status line, headers and a Content-Length body.
Answer readAnswer(QTcpSocket &socket, QByteArray &buffer, int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    Answer answer;
    while (timer.elapsed() < timeoutMs) {
        const qsizetype end = buffer.indexOf("\r\n\r\n");
        if (end >= 0) {
            const QByteArray head = buffer.left(end);
            qint64 length = 0;
            for (const QByteArray &line : head.split('\n'))
                if (line.toLower().startsWith("content-length:"))
                    length = line.mid(15).trimmed().toLongLong();
            const bool switching = head.startsWith("HTTP/1.1 101");
            if (switching || buffer.size() >= end + 4 + length) {
                answer.raw = buffer.left(end + 4 + (switching ? 0 : length));
                answer.status = head.mid(9, 3).toInt();
                answer.json = QJsonDocument::fromJson(buffer.mid(end + 4, length)).object();
                buffer.remove(0, answer.raw.size());
                return answer;
            }
        }
        if (socket.state() != QAbstractSocket::ConnectedState && socket.bytesAvailable() == 0)
            break;
        socket.waitForReadyRead(50);
        buffer += socket.readAll();
    }
    return answer;
}

// Whether the server ends the connection within timeoutMs (what it still sends is dropped).
bool closesWithin(QTcpSocket &socket, int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < timeoutMs) {
        if (socket.state() == QAbstractSocket::UnconnectedState)
            return true;
        socket.waitForReadyRead(50);
        socket.readAll();
    }
    return socket.state() == QAbstractSocket::UnconnectedState;
}

namespace {

bool healthyOnce(int port)
{
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, quint16(port));
    if (!socket.waitForConnected(2000))
        return false;
    socket.write("GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    QByteArray buffer;
    return readAnswer(socket, buffer, 3000).status == 200;
}

} // namespace

// Within a second: connections an entry held are gone from pandod's count a moment after they close.
bool healthy(int port)
{
    for (int i = 0; i < 10; ++i) {
        if (healthyOnce(port))
            return true;
        QTest::qWait(100);
    }
    return false;
}

// One request over a new connection, answered within 5 s.
Answer call(int port, const QByteArray &method, const QByteArray &path, const QByteArray &token,
            const QJsonObject &body)
{
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, quint16(port));
    if (!socket.waitForConnected(2000))
        return {};
    if (body.isEmpty())
        socket.write(httpRequest(method + ' ' + path, token));
    else
        socket.write(httpRequest(method + ' ' + path, token, "application/json",
                                 QJsonDocument(body).toJson(QJsonDocument::Compact)));
    QByteArray buffer;
    return readAnswer(socket, buffer, 5000);
}

QByteArray httpRequest(const QByteArray &line, const QByteArray &token, const QByteArray &type, const QByteArray &body)
{
    QByteArray head = line + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (!token.isEmpty())
        head += "Authorization: Bearer " + token + "\r\n";
    if (!type.isEmpty())
        head += "Content-Type: " + type + "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n";
    return head + "\r\n" + body;
}

// A session of the user `name` (created with `role` by the administrator when it is new).
QByteArray sessionOf(int port, const QByteArray &adminToken, const QString &name, const QString &role)
{
    if (!adminToken.isEmpty()) {
        const Answer created = call(port, "POST", "/api/v1/users", adminToken,
                                    {{QStringLiteral("username"), name},
                                     {QStringLiteral("password"), Password},
                                     {QStringLiteral("role"), role}});
        if (created.status != 201) {
            qWarning().noquote() << "creating" << name << "answered" << created.raw.left(300);
            return {};
        }
    }
    const Answer login = call(port, "POST", "/api/v1/sessions", {},
                              {{QStringLiteral("username"), name}, {QStringLiteral("password"), Password}});
    if (login.status != 201)
        qWarning().noquote() << "logging in as" << name << "answered" << login.raw.left(300);
    return login.json.value(QStringLiteral("token")).toString().toUtf8();
}

// The token of a principal: "admin", "anonymous" (none), or a role with an optional "/n" for
// another user of it ("member", "member/2"), created the first time it is named.
QByteArray tokenOf(Daemon &daemon, const QString &principal)
{
    if (principal == QLatin1String("admin"))
        return daemon.token;
    if (principal == QLatin1String("anonymous"))
        return {};
    // A token a step made and saved ("saved:narrow"): speaking as that token itself.
    if (principal.startsWith(QLatin1String("saved:")))
        return daemon.saved.value(principal.mid(6));
    if (auto found = daemon.principals.constFind(principal); found != daemon.principals.cend())
        return *found;
    const QString role = principal.section(QLatin1Char('/'), 0, 0);
    const QString n = principal.section(QLatin1Char('/'), 1, 1);
    const QByteArray token = sessionOf(daemon.port, daemon.token,
                                       QStringLiteral("cat-%1%2").arg(role, n.isEmpty() ? QString() : u'-' + n), role);
    daemon.principals.insert(principal, token);
    return token;
}

bool Catalogue::loadDirectory(const QString &path, QString *error)
{
    const QDir dir(path);
    const QStringList files = dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    for (const QString &file : files)
        if (!load(dir.filePath(file), error))
            return false;
    if (m_order.isEmpty()) {
        *error = path + QStringLiteral(": no attacks");
        return false;
    }
    return true;
}

bool Catalogue::load(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = path + QStringLiteral(": cannot be read");
        return false;
    }
    QJsonParseError parse;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &parse);
    if (parse.error != QJsonParseError::NoError) {
        *error = QStringLiteral("%1: offset %2: %3").arg(path).arg(parse.offset).arg(parse.errorString());
        return false;
    }
    const QJsonArray entries = doc.object().value(QStringLiteral("attacks")).toArray();
    for (const QJsonValue &value : entries) {
        const QJsonObject entry = value.toObject();
        const QString id = entry.value(QStringLiteral("id")).toString();
        const auto bad = [&](const QString &why) {
            *error = QStringLiteral("%1: entry \"%2\": %3").arg(path, id, why);
            return false;
        };
        if (id.isEmpty() || m_entries.contains(id))
            return bad(QStringLiteral("needs an id of its own"));
        if (entry.value(QStringLiteral("issue")).toString().isEmpty())
            return bad(QStringLiteral("needs \"issue\": the issue item it proves"));
        const QString kind = entry.value(QStringLiteral("kind")).toString(QStringLiteral("raw"));
        if (kind == QLatin1String("sweep") && entry.value(QStringLiteral("secrets")).toObject().isEmpty())
            return bad(QStringLiteral("needs \"secrets\": the values its steps plant"));
        if (kind == QLatin1String("requests") || kind == QLatin1String("sweep")) {
            const QJsonArray steps = entry.value(QStringLiteral("steps")).toArray();
            if (steps.isEmpty())
                return bad(QStringLiteral("needs \"steps\""));
            for (qsizetype i = 0; i < steps.size(); ++i)
                if (!steps[i].toObject().value(QStringLiteral("request")).isString() ||
                    !steps[i].toObject().value(QStringLiteral("expect")).isObject())
                    return bad(QStringLiteral("step %1 needs \"request\" and \"expect\"").arg(i + 1));
        } else if (!entry.value(QStringLiteral("expect")).isObject()) {
            return bad(QStringLiteral("needs \"expect\""));
        }
        if (!knownKinds().contains(kind))
            return bad(QStringLiteral("kind \"%1\" is not one of %2").arg(kind, knownKinds().join(u", ")));
        m_order.append(id);
        m_entries.insert(id, entry);
    }
    if (entries.isEmpty()) {
        *error = path + QStringLiteral(": no attacks");
        return false;
    }
    return true;
}

QStringList Catalogue::knownKinds()
{
    return {QStringLiteral("raw"),      QStringLiteral("parallel"), QStringLiteral("repeat"),
            QStringLiteral("requests"), QStringLiteral("timing"),   QStringLiteral("sweep")};
}

// A listener that accepts connections (the kernel does, from its backlog) and never answers:
// a git host that hangs.
QTcpServer &blackhole()
{
    static QTcpServer server;
    if (!server.isListening())
        server.listen(QHostAddress::LocalHost, 0);
    server.setMaxPendingConnections(1000);
    return server;
}

// A git repository with one commit on main, for entries that create apps: its file:// URL, or
// empty when git is missing (the entry then fails on the refused create).
QByteArray gitRepo()
{
    static GitFixture git;
    static const QByteArray url = [] {
        if (!git.isValid() || git.createRepository(QStringLiteral("app")).isEmpty() ||
            git.commit(QStringLiteral("app"), QStringLiteral("main"), {{QStringLiteral("README"), GitFile{"hello\n"}}})
                .isEmpty())
            return QByteArray();
        return git.url(QStringLiteral("app")).toUtf8();
    }();
    return url;
}

// Placeholders in strings: {token} the administrator's token, {token:P} principal P's (see
// tokenOf), {saved:name} what a step saved, {port} pandod's port, {blackhole} the port of a
// listener that never answers, {gitrepo} a file:// git repository with a commit on main, {n}
// the connection's number (kind parallel).
QByteArray expand(const QString &text, Daemon &daemon, int n)
{
    QByteArray bytes = text.toUtf8();
    bytes.replace("{token}", daemon.token);
    static const QRegularExpression named(QStringLiteral("\\{(token|saved):([a-z0-9/_-]+)\\}"));
    for (qsizetype from = 0;;) {
        const QRegularExpressionMatch match = named.match(QString::fromUtf8(bytes), from);
        if (!match.hasMatch())
            break;
        const QByteArray value = match.captured(1) == QLatin1String("token") ? tokenOf(daemon, match.captured(2))
                                                                             : daemon.saved.value(match.captured(2));
        bytes.replace(match.capturedStart(), match.capturedLength(), value);
        from = match.capturedStart() + value.size();
    }
    bytes.replace("{port}", QByteArray::number(daemon.port));
    if (bytes.contains("{blackhole}"))
        bytes.replace("{blackhole}", QByteArray::number(blackhole().serverPort()));
    if (bytes.contains("{gitrepo}"))
        bytes.replace("{gitrepo}", gitRepo());
    bytes.replace("{n}", QByteArray::number(n));
    return bytes;
}

// One write: a string, or a list of pieces: strings, {"repeat": write, "times": n},
// {"fill": n, "byte": "x"} and {"hex": "81ff"} (bytes a JSON string cannot hold as themselves).
QByteArray writeBytes(const QJsonValue &write, Daemon &daemon)
{
    if (write.isString())
        return expand(write.toString(), daemon);
    QByteArray bytes;
    for (const QJsonValue &piece : write.toArray()) {
        if (piece.isString()) {
            bytes += expand(piece.toString(), daemon);
            continue;
        }
        const QJsonObject object = piece.toObject();
        if (object.contains(QStringLiteral("repeat"))) {
            bytes += writeBytes(object.value(QStringLiteral("repeat")), daemon)
                         .repeated(object.value(QStringLiteral("times")).toInt());
        } else if (object.contains(QStringLiteral("hex"))) {
            bytes += QByteArray::fromHex(object.value(QStringLiteral("hex")).toString().toLatin1());
        } else if (object.contains(QStringLiteral("fill"))) {
            const QByteArray fill = object.value(QStringLiteral("byte")).toString(QStringLiteral("x")).toLatin1();
            bytes += QByteArray(object.value(QStringLiteral("fill")).toInt(), fill.isEmpty() ? 'x' : fill.at(0));
        }
    }
    return bytes;
}

} // namespace pando::test::attacks
