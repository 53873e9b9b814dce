// The attack catalogue (attacks/*.json, described in README.md) run against a real pandod: one
// data row per entry, each sent as raw bytes over its own connection, with the answer, the
// connection's fate, pandod's memory and its health afterwards checked against what the entry
// expects. pandod processes are started as the entries ask (one per distinct set of flags) and
// kept for the rows that share them; each has an administrator and, as entries ask for them,
// users of the other roles.

#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"
#include "tests/support/gitfixture.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <algorithm>
#include <csignal>
#include <memory>

using namespace pando;
using namespace pando::test;

namespace {

int freePort()
{
    QTcpServer server;
    server.listen(QHostAddress::LocalHost, 0);
    return server.serverPort();
}

// A pandod of its own data directory, on a free loopback port.
struct Daemon {
    QTemporaryDir dir;
    QProcess process;
    int port = 0;
    QByteArray token;                     // the administrator's session
    QMap<QString, QByteArray> principals; // "member", "member/2", … → a session token
    QMap<QString, QByteArray> saved;      // values steps saved, for {saved:name}

    ~Daemon()
    {
        if (process.state() == QProcess::Running) {
            ::kill(pid_t(process.processId()), SIGTERM);
            if (!process.waitForFinished(20000))
                process.kill();
            process.waitForFinished(5000);
        }
    }
    qint64 rssKiB() const
    {
        QFile status(QStringLiteral("/proc/%1/status").arg(process.processId()));
        if (!status.open(QIODevice::ReadOnly))
            return -1;
        for (const QByteArray &line : status.readAll().split('\n'))
            if (line.startsWith("VmRSS:"))
                return line.mid(6).trimmed().split(' ').value(0).toLongLong();
        return -1;
    }
};

struct Answer {
    int status = 0; // 0: none came
    QJsonObject json;
    QByteArray raw;
};

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
            const QJsonObject &body = {})
{
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, quint16(port));
    if (!socket.waitForConnected(2000))
        return {};
    const QByteArray json = body.isEmpty() ? QByteArray() : QJsonDocument(body).toJson(QJsonDocument::Compact);
    QByteArray head = method + ' ' + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (!token.isEmpty())
        head += "Authorization: Bearer " + token + "\r\n";
    if (!json.isEmpty())
        head += "Content-Type: application/json\r\nContent-Length: " + QByteArray::number(json.size()) + "\r\n";
    socket.write(head + "\r\n" + json);
    QByteArray buffer;
    return readAnswer(socket, buffer, 5000);
}

const QString Password = QStringLiteral("catalogue-password-1");

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

class Catalogue {
public:
    // Every *.json file in the directory, in name order; ids are unique across them.
    bool loadDirectory(const QString &path, QString *error)
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

private:
    bool load(const QString &path, QString *error)
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
            if (kind == QLatin1String("requests")) {
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

public:
    static QStringList knownKinds()
    {
        return {QStringLiteral("raw"), QStringLiteral("parallel"), QStringLiteral("repeat"), QStringLiteral("requests"),
                QStringLiteral("timing")};
    }
    const QStringList &ids() const { return m_order; }
    QJsonObject entry(const QString &id) const { return m_entries.value(id); }

private:
    QStringList m_order;
    QMap<QString, QJsonObject> m_entries;
};

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
QByteArray expand(const QString &text, Daemon &daemon, int n = 0)
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

} // namespace

class TestAttacks : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void attack_data();
    void attack();

private:
    Daemon *daemonFor(const QStringList &flags);
    void runRaw(const QJsonObject &entry, Daemon &daemon);
    void runParallel(const QJsonObject &entry, Daemon &daemon);
    void runRepeat(const QJsonObject &entry, Daemon &daemon);
    void runRequests(const QJsonObject &entry, Daemon &daemon);
    void runTiming(const QJsonObject &entry, Daemon &daemon);
    QByteArray requestOf(const QJsonObject &step, Daemon &daemon, int n = 0);
    // Sends the writes over one new connection and checks what expect says of it.
    // The last answer goes to *answer when given.
    void sendAndCheck(const QList<QByteArray> &writes, int pauseMs, const QJsonObject &expect, Daemon &daemon,
                      const QString &what, Answer *answer = nullptr);

    // The entry's "repos" as real git repositories; {saved:repo-NAME} is each one's file:// URL.
    void makeRepos(const QJsonObject &entry, Daemon &daemon);

    Catalogue m_catalogue;
    std::map<QString, std::unique_ptr<Daemon>> m_daemons;
    std::unique_ptr<GitFixture> m_git; // made when an entry first asks for repos
};

void TestAttacks::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), QStringLiteral("Docker Engine: ") + why);
    QString error;
    QVERIFY2(m_catalogue.loadDirectory(sourceDir() + QStringLiteral("/tests/security/attacks"), &error),
             qPrintable(error));
}

void TestAttacks::cleanupTestCase()
{
    m_daemons.clear();
}

Daemon *TestAttacks::daemonFor(const QStringList &flags)
{
    const QString key = flags.join(QLatin1Char(' '));
    if (auto found = m_daemons.find(key); found != m_daemons.end())
        return found->second->process.state() == QProcess::Running ? found->second.get() : nullptr;
    auto daemon = std::make_unique<Daemon>();
    Daemon *raw = daemon.get();
    m_daemons.emplace(key, std::move(daemon));
    raw->port = freePort();
    raw->process.setProcessChannelMode(QProcess::MergedChannels);
    raw->process.start(binaryDir() + QStringLiteral("/app/daemon/pandod"),
                       QStringList{QStringLiteral("--data-dir"), raw->dir.path() + QStringLiteral("/data"),
                                   QStringLiteral("--listen"), QStringLiteral("127.0.0.1:%1").arg(raw->port),
                                   QStringLiteral("--incus"), QStringLiteral("off")} +
                           flags);
    if (!raw->process.waitForStarted(5000))
        return nullptr;
    for (int i = 0; i < 200 && !healthy(raw->port); ++i) {
        if (raw->process.state() != QProcess::Running) {
            qWarning().noquote() << "pandod" << key << "did not start:" << raw->process.readAll();
            return nullptr;
        }
        QTest::qWait(50);
    }
    // The administrator: bootstrapped with the initial token, then logged in.
    QFile initial(raw->dir.path() + QStringLiteral("/data/initial-admin-token"));
    if (!initial.open(QIODevice::ReadOnly))
        return nullptr;
    const Answer admin = call(raw->port, "POST", "/api/v1/bootstrap", {},
                              {{QStringLiteral("token"), QString::fromUtf8(initial.readAll().trimmed())},
                               {QStringLiteral("username"), QStringLiteral("cat-admin")},
                               {QStringLiteral("password"), Password}});
    if (admin.status != 201) {
        qWarning().noquote() << "bootstrap answered" << admin.raw.left(300);
        return nullptr;
    }
    raw->token = sessionOf(raw->port, {}, QStringLiteral("cat-admin"), {});
    return healthy(raw->port) && !raw->token.isEmpty() ? raw : nullptr;
}

void TestAttacks::attack_data()
{
    QTest::addColumn<QString>("id");
    for (const QString &id : m_catalogue.ids())
        QTest::newRow(qPrintable(id)) << id;
}

void TestAttacks::attack()
{
    QFETCH(QString, id);
    const QJsonObject entry = m_catalogue.entry(id);
    QStringList flags;
    for (const QJsonValue &flag : entry.value(QStringLiteral("daemon")).toArray())
        flags.append(flag.toString());
    Daemon *daemon = daemonFor(flags);
    QVERIFY2(daemon, "pandod did not start");
    const qint64 rssBefore = daemon->rssKiB();

    const QString kind = entry.value(QStringLiteral("kind")).toString(QStringLiteral("raw"));
    if (kind == QLatin1String("raw"))
        runRaw(entry, *daemon);
    else if (kind == QLatin1String("parallel"))
        runParallel(entry, *daemon);
    else if (kind == QLatin1String("repeat"))
        runRepeat(entry, *daemon);
    else if (kind == QLatin1String("requests"))
        runRequests(entry, *daemon);
    else if (kind == QLatin1String("timing"))
        runTiming(entry, *daemon);
    if (QTest::currentTestFailed()) {
        // What pandod said meanwhile, to see why.
        qWarning().noquote() << "pandod said:" << daemon->process.readAll().right(4000);
        return;
    }
    daemon->process.readAll();

    const QJsonObject expect = entry.value(QStringLiteral("expect")).toObject();
    if (expect.contains(QStringLiteral("rssGrowthMiB"))) {
        const qint64 growthMiB = (daemon->rssKiB() - rssBefore) / 1024;
        QVERIFY2(growthMiB <= expect.value(QStringLiteral("rssGrowthMiB")).toInt(),
                 qPrintable(QStringLiteral("pandod grew by %1 MiB").arg(growthMiB)));
    }
    // Whatever was sent, pandod goes on serving others.
    if (expect.value(QStringLiteral("healthAfter")).toBool(true))
        QVERIFY2(healthy(daemon->port), "pandod no longer answers /api/v1/health");
}

void TestAttacks::runRaw(const QJsonObject &entry, Daemon &daemon)
{
    // Connections held open while the entry runs, each having sent its write.
    std::vector<std::unique_ptr<QTcpSocket>> held;
    const QJsonObject hold = entry.value(QStringLiteral("hold")).toObject();
    // The connections of the checks before (health probes) are gone from pandod's count first.
    if (!hold.isEmpty())
        QTest::qWait(500);
    for (int i = 0; i < hold.value(QStringLiteral("count")).toInt(); ++i) {
        auto socket = std::make_unique<QTcpSocket>();
        socket->connectToHost(QHostAddress::LocalHost, quint16(daemon.port));
        QVERIFY(socket->waitForConnected(5000));
        socket->write(writeBytes(hold.value(QStringLiteral("send")), daemon));
        socket->waitForBytesWritten(2000);
        held.push_back(std::move(socket));
    }
    // Until pandod took them all (and upgraded the WebSockets among them).
    for (auto &socket : held)
        socket->waitForReadyRead(hold.value(QStringLiteral("send")).isUndefined() ? 1 : 2000);
    QTest::qWait(hold.isEmpty() ? 0 : 200);

    QList<QByteArray> writes;
    for (const QJsonValue &write : entry.value(QStringLiteral("send")).toArray())
        writes.append(writeBytes(write, daemon));
    QVERIFY2(!writes.isEmpty(), "the entry sends nothing");
    const int pauseMs = entry.value(QStringLiteral("pauseMs")).toInt(50);
    const QJsonObject expect = entry.value(QStringLiteral("expect")).toObject();
    if (!entry.value(QStringLiteral("splitEachPoint")).toBool()) {
        sendAndCheck(writes, pauseMs, expect, daemon, {});
        return;
    }
    // The same bytes once per point they can be split at, each split a read boundary.
    const QByteArray all = writes.join();
    QVERIFY2(all.size() <= 4096, "splitEachPoint is for requests of at most 4096 bytes");
    for (qsizetype at = 1; at < all.size(); ++at) {
        sendAndCheck({all.left(at), all.mid(at)}, pauseMs, expect, daemon,
                     QStringLiteral("split after byte %1 (%2)")
                         .arg(at)
                         .arg(QString::fromLatin1(all.mid(std::max<qsizetype>(0, at - 8), 8).toPercentEncoding())));
        if (QTest::currentTestFailed())
            return;
    }
}

void TestAttacks::runParallel(const QJsonObject &entry, Daemon &daemon)
{
    // count connections send their request at once; while they wait, a probe must be answered.
    const int count = entry.value(QStringLiteral("count")).toInt();
    const QString request = entry.value(QStringLiteral("send")).toString();
    std::vector<std::unique_ptr<QTcpSocket>> sockets;
    for (int n = 0; n < count; ++n) {
        auto socket = std::make_unique<QTcpSocket>();
        socket->connectToHost(QHostAddress::LocalHost, quint16(daemon.port));
        QVERIFY(socket->waitForConnected(5000));
        QByteArray bytes = expand(request, daemon, n);
        // With a body, the head ends at its last header line and gets the body's length.
        if (entry.contains(QStringLiteral("body"))) {
            const QByteArray body = expand(entry.value(QStringLiteral("body")).toString(), daemon, n);
            bytes += "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body;
        }
        socket->write(bytes);
        socket->waitForBytesWritten(2000);
        sockets.push_back(std::move(socket));
    }
    QTest::qWait(entry.value(QStringLiteral("probeAfterMs")).toInt(500));
    const int probeWithin = entry.value(QStringLiteral("probeWithinMs")).toInt(1000);
    QElapsedTimer timer;
    timer.start();
    QTcpSocket probe;
    probe.connectToHost(QHostAddress::LocalHost, quint16(daemon.port));
    QVERIFY(probe.waitForConnected(2000));
    probe.write(expand(entry.value(QStringLiteral("probe")).toString(), daemon));
    QByteArray probeBuffer;
    const Answer probed = readAnswer(probe, probeBuffer, probeWithin);
    QVERIFY2(
        probed.status == entry.value(QStringLiteral("probeStatus")).toInt(200),
        qPrintable(QStringLiteral("the probe got %1 after %2 ms while %3 requests waited")
                       .arg(probed.status ? QString::fromLatin1(probed.raw.left(200)) : QStringLiteral("no answer"))
                       .arg(timer.elapsed())
                       .arg(count)));
    // And every one of them is answered, within its deadline.
    const QJsonObject expect = entry.value(QStringLiteral("expect")).toObject();
    const int timeoutMs = expect.value(QStringLiteral("timeoutMs")).toInt(5000);
    const int wanted = expect.value(QStringLiteral("status")).toInt();
    timer.restart();
    for (int n = 0; n < count; ++n) {
        QByteArray buffer;
        const Answer answer =
            readAnswer(*sockets[size_t(n)], buffer, int(std::max<qint64>(1, timeoutMs - timer.elapsed())));
        QVERIFY2(answer.status == wanted, qPrintable(QStringLiteral("request %1: expected %2, got %3")
                                                         .arg(n)
                                                         .arg(wanted)
                                                         .arg(answer.status ? QString::fromLatin1(answer.raw.left(300))
                                                                            : QStringLiteral("no answer"))));
        if (expect.contains(QStringLiteral("message")))
            QVERIFY2(QRegularExpression(expect.value(QStringLiteral("message")).toString())
                         .match(answer.json.value(QStringLiteral("error"))
                                    .toObject()
                                    .value(QStringLiteral("message"))
                                    .toString())
                         .hasMatch(),
                     answer.raw.left(300).constData());
    }
}

void TestAttacks::runRepeat(const QJsonObject &entry, Daemon &daemon)
{
    // The same request count times, one connection each, every answer as expect says.
    const int count = entry.value(QStringLiteral("count")).toInt();
    const QJsonObject expect = entry.value(QStringLiteral("expect")).toObject();
    const QByteArray request = writeBytes(entry.value(QStringLiteral("send")), daemon);
    for (int i = 0; i < count; ++i) {
        sendAndCheck({request}, 0, expect, daemon, QStringLiteral("attempt %1").arg(i + 1));
        if (QTest::currentTestFailed())
            return;
    }
    // Then what the audit trail holds of them.
    const QJsonObject audit = entry.value(QStringLiteral("audit")).toObject();
    if (audit.isEmpty())
        return;
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, quint16(daemon.port));
    QVERIFY(socket.waitForConnected(2000));
    socket.write("GET /api/v1/audit?limit=10000&action=" +
                 QUrl::toPercentEncoding(audit.value(QStringLiteral("action")).toString()) +
                 " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + daemon.token + "\r\n\r\n");
    QByteArray buffer;
    const Answer answer = readAnswer(socket, buffer, 5000);
    QCOMPARE(answer.status, 200);
    const qsizetype lines = answer.json.value(QStringLiteral("lines")).toArray().size();
    QVERIFY2(lines >= 1 && lines <= audit.value(QStringLiteral("maxLines")).toInt(),
             qPrintable(QStringLiteral("%1 audit lines %2 for %3 attempts")
                            .arg(lines)
                            .arg(audit.value(QStringLiteral("action")).toString())
                            .arg(count)));
}

QByteArray TestAttacks::requestOf(const QJsonObject &step, Daemon &daemon, int n)
{
    const QByteArray line = expand(step.value(QStringLiteral("request")).toString(), daemon, n);
    const QByteArray token = tokenOf(daemon, step.value(QStringLiteral("as")).toString(QStringLiteral("admin")));
    QByteArray body;
    QByteArray type;
    if (const QJsonValue json = step.value(QStringLiteral("json")); !json.isUndefined()) {
        body = expand(QString::fromUtf8(json.isObject() ? QJsonDocument(json.toObject()).toJson(QJsonDocument::Compact)
                                                        : QJsonDocument(json.toArray()).toJson(QJsonDocument::Compact)),
                      daemon, n);
        type = "application/json";
    } else if (step.contains(QStringLiteral("body"))) {
        body = writeBytes(step.value(QStringLiteral("body")), daemon);
        type = step.value(QStringLiteral("contentType")).toString(QStringLiteral("application/yaml")).toUtf8();
    }
    QByteArray head = line + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (!token.isEmpty())
        head += "Authorization: Bearer " + token + "\r\n";
    if (!type.isEmpty())
        head += "Content-Type: " + type + "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n";
    return head + "\r\n" + body;
}

void TestAttacks::runTiming(const QJsonObject &entry, Daemon &daemon)
{
    // "a" and "b" (requests as in "steps"; {n} is the attempt) count times each, interleaved;
    // each answer as expect.status says, and the medians' ratio (either way) under maxRatio.
    const QJsonObject expect = entry.value(QStringLiteral("expect")).toObject();
    for (const QJsonValue &user : entry.value(QStringLiteral("users")).toArray())
        QVERIFY2(!tokenOf(daemon, user.toString()).isEmpty(), "the entry's users exist");
    const int count = entry.value(QStringLiteral("count")).toInt(3);
    QList<qint64> times[2];
    for (int n = 0; n < count; ++n) {
        for (int side = 0; side < 2; ++side) {
            const QJsonObject step = entry.value(side == 0 ? QStringLiteral("a") : QStringLiteral("b")).toObject();
            const QByteArray request = requestOf(step, daemon, n);
            QElapsedTimer timer;
            timer.start();
            sendAndCheck({request}, 0, QJsonObject{{QStringLiteral("status"), expect.value(QStringLiteral("status"))}},
                         daemon, QStringLiteral("%1 #%2").arg(side == 0 ? u'a' : u'b').arg(n + 1));
            times[side] << timer.nsecsElapsed();
            if (QTest::currentTestFailed())
                return;
        }
    }
    for (auto &list : times)
        std::sort(list.begin(), list.end());
    const double a = double(times[0][count / 2]), b = double(std::max<qint64>(1, times[1][count / 2]));
    const double maxRatio = expect.value(QStringLiteral("maxRatio")).toDouble(2);
    QVERIFY2(a / b < maxRatio && b / a < maxRatio,
             qPrintable(QStringLiteral("median a %1 ms, b %2 ms").arg(a / 1e6, 0, 'f', 1).arg(b / 1e6, 0, 'f', 1)));
}

void TestAttacks::makeRepos(const QJsonObject &entry, Daemon &daemon)
{
    const QJsonObject repos = entry.value(QStringLiteral("repos")).toObject();
    if (repos.isEmpty())
        return;
    if (!m_git)
        m_git = std::make_unique<GitFixture>();
    QVERIFY2(m_git->isValid(), "git is needed for entries with repos (Debian's git)");
    for (auto repo = repos.begin(); repo != repos.end(); ++repo) {
        // Named for the entry too: entries sharing a pandod may reuse a repository name.
        const QString name = entry.value(QStringLiteral("id")).toString() + QLatin1Char('-') + repo.key();
        const QString url = m_git->createRepository(name);
        QVERIFY2(!url.isEmpty(), qPrintable(m_git->errorString()));
        GitFiles files;
        const QJsonObject tree = repo.value().toObject();
        for (auto file = tree.begin(); file != tree.end(); ++file) {
            const QJsonObject link = file.value().toObject();
            files.insert(file.key(),
                         link.isEmpty() ? GitFile{file.value().toString().toUtf8()}
                                        : GitFile{link.value(QStringLiteral("link")).toString().toUtf8(), false, true});
        }
        QVERIFY2(!m_git->commit(name, QStringLiteral("main"), files).isEmpty(), qPrintable(m_git->errorString()));
        daemon.saved.insert(QStringLiteral("repo-") + repo.key(), url.toUtf8());
    }
}

void TestAttacks::runRequests(const QJsonObject &entry, Daemon &daemon)
{
    // Steps in order, each one request as a principal, its answer checked and values saved.
    const QJsonArray steps = entry.value(QStringLiteral("steps")).toArray();
    QVERIFY2(!steps.isEmpty(), "the entry has no steps");
    makeRepos(entry, daemon);
    if (QTest::currentTestFailed())
        return;
    for (qsizetype i = 0; i < steps.size(); ++i) {
        const QJsonObject step = steps[i].toObject();
        const QByteArray line = expand(step.value(QStringLiteral("request")).toString(), daemon);
        QVERIFY2(line.count(' ') == 1,
                 qPrintable(QStringLiteral("step %1: \"request\" is \"METHOD /path\"").arg(i + 1)));
        const QByteArray request = requestOf(step, daemon);
        // "poll": {"field": "status", "until": ["failed", ...], "ms": 30000} asks again until the
        // answer's field holds one of those values (a deploy that ends in the background).
        const QJsonObject poll = step.value(QStringLiteral("poll")).toObject();
        if (!poll.isEmpty()) {
            QElapsedTimer waited;
            waited.start();
            QString value;
            const QJsonArray until = poll.value(QStringLiteral("until")).toArray();
            while (!until.contains(QJsonValue(value)) &&
                   waited.elapsed() < poll.value(QStringLiteral("ms")).toInt(30000)) {
                QTcpSocket socket;
                socket.connectToHost(QHostAddress::LocalHost, quint16(daemon.port));
                if (socket.waitForConnected(2000)) {
                    socket.write(request);
                    QByteArray buffer;
                    value = readAnswer(socket, buffer, 5000)
                                .json.value(poll.value(QStringLiteral("field")).toString())
                                .toString();
                }
                if (!until.contains(QJsonValue(value)))
                    QTest::qWait(200);
            }
        }
        Answer answer;
        sendAndCheck({request}, 0, step.value(QStringLiteral("expect")).toObject(), daemon,
                     QStringLiteral("step %1: %2").arg(i + 1).arg(QString::fromUtf8(line)), &answer);
        if (QTest::currentTestFailed())
            return;
        // "save": {"name": "field/inner"} keeps a field of the answer for {saved:name}.
        const QJsonObject save = step.value(QStringLiteral("save")).toObject();
        for (auto it = save.begin(); it != save.end(); ++it) {
            QJsonValue value = answer.json;
            for (const QString &key : it.value().toString().split(QLatin1Char('/')))
                value = value.isArray() ? value.toArray().at(key.toInt()) : value.toObject().value(key);
            QVERIFY2(!value.isUndefined(),
                     qPrintable(QStringLiteral("step %1: the answer has no %2").arg(i + 1).arg(it.value().toString())));
            daemon.saved.insert(it.key(),
                                value.isString() ? value.toString().toUtf8() : QByteArray::number(value.toInteger()));
        }
    }
}

void TestAttacks::sendAndCheck(const QList<QByteArray> &writes, int pauseMs, const QJsonObject &expect, Daemon &daemon,
                               const QString &what, Answer *answer)
{
    const QByteArray where = what.isEmpty() ? QByteArray() : " [" + what.toUtf8() + "]";
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, quint16(daemon.port));
    QVERIFY(socket.waitForConnected(5000));
    socket.setSocketOption(QAbstractSocket::LowDelayOption, 1);
    QByteArray buffer;
    for (qsizetype i = 0; i < writes.size(); ++i) {
        if (i > 0)
            QTest::qWait(pauseMs);
        if (socket.state() != QAbstractSocket::ConnectedState)
            break;
        socket.write(writes[i]);
        while (socket.bytesToWrite() > 0 && socket.state() == QAbstractSocket::ConnectedState)
            if (!socket.waitForBytesWritten(5000))
                break;
        buffer += socket.readAll();
    }
    const int timeoutMs = expect.value(QStringLiteral("timeoutMs")).toInt(5000);
    QList<int> statuses;
    const QJsonValue status = expect.value(QStringLiteral("status"));
    if (status.isArray())
        for (const QJsonValue &s : status.toArray())
            statuses.append(s.toInt());
    else if (!status.isUndefined())
        statuses.append(status.toInt());
    Answer last;
    for (const int wanted : std::as_const(statuses)) {
        last = readAnswer(socket, buffer, timeoutMs);
        QVERIFY2(last.status == wanted, QByteArray(QByteArray("expected ") + QByteArray::number(wanted) + ", got " +
                                                   (last.status ? last.raw.left(300) : QByteArray("no answer")) + where)
                                            .constData());
    }
    if (answer)
        *answer = last;
    // Text the answer (head and body) must hold, and text it must not (a secret, a host path).
    for (const QJsonValue &text : expect.value(QStringLiteral("has")).toArray())
        QVERIFY2(last.raw.contains(expand(text.toString(), daemon)),
                 QByteArray("the answer lacks \"" + text.toString().toUtf8() + "\": " + last.raw.left(300) + where)
                     .constData());
    for (const QJsonValue &text : expect.value(QStringLiteral("lacks")).toArray())
        QVERIFY2(!last.raw.contains(expand(text.toString(), daemon)),
                 QByteArray("the answer holds \"" + text.toString().toUtf8() + "\": " + last.raw.left(300) + where)
                     .constData());
    const QJsonObject error = last.json.value(QStringLiteral("error")).toObject();
    if (expect.contains(QStringLiteral("code")))
        QVERIFY2(error.value(QStringLiteral("code")).toString() == expect.value(QStringLiteral("code")).toString(),
                 QByteArray(last.raw.left(300) + where).constData());
    if (expect.contains(QStringLiteral("where")))
        QVERIFY2(error.value(QStringLiteral("where")).toString() == expect.value(QStringLiteral("where")).toString(),
                 QByteArray(last.raw.left(300) + where).constData());
    if (expect.contains(QStringLiteral("message")))
        QVERIFY2(QRegularExpression(expect.value(QStringLiteral("message")).toString())
                     .match(error.value(QStringLiteral("message")).toString())
                     .hasMatch(),
                 QByteArray(last.raw.left(300) + where).constData());
    if (expect.contains(QStringLiteral("closeCode"))) {
        // A WebSocket close frame from the server (unmasked, short payload) with this code.
        const int wanted = expect.value(QStringLiteral("closeCode")).toInt();
        const auto found = [&] {
            for (qsizetype i = 0; i + 3 < buffer.size(); ++i)
                if (uchar(buffer[i]) == 0x88 && uchar(buffer[i + 1]) >= 2 && uchar(buffer[i + 1]) < 126 &&
                    ((uchar(buffer[i + 2]) << 8) | uchar(buffer[i + 3])) == wanted)
                    return true;
            return false;
        };
        QElapsedTimer timer;
        timer.start();
        while (!found() && timer.elapsed() < timeoutMs && socket.state() == QAbstractSocket::ConnectedState) {
            socket.waitForReadyRead(50);
            buffer += socket.readAll();
        }
        buffer += socket.readAll();
        QVERIFY2(found(), QByteArray(QByteArray("expected a close frame with code ") + QByteArray::number(wanted) +
                                     ", got " + buffer.left(64).toHex(' ') + where)
                              .constData());
    }
    if (expect.contains(QStringLiteral("neverReceives"))) {
        // For a second after the answers, these bytes never come (an HTTP answer inside a WebSocket).
        const QByteArray unwanted = expect.value(QStringLiteral("neverReceives")).toString().toUtf8();
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < 1000 && socket.state() == QAbstractSocket::ConnectedState) {
            socket.waitForReadyRead(50);
            buffer += socket.readAll();
        }
        QVERIFY2(!buffer.contains(unwanted), QByteArray(QByteArray("received ") + unwanted + where).constData());
        QVERIFY2(socket.state() == QAbstractSocket::ConnectedState,
                 QByteArray(QByteArray("pandod closed the connection") + where).constData());
    }
    if (expect.value(QStringLiteral("noAnswer")).toBool()) {
        buffer += socket.readAll();
        QVERIFY2(buffer.isEmpty(),
                 QByteArray(QByteArray("expected no answer, got ") + buffer.left(300) + where).constData());
    }
    if (expect.contains(QStringLiteral("closedWithinMs")))
        QVERIFY2(closesWithin(socket, expect.value(QStringLiteral("closedWithinMs")).toInt()),
                 QByteArray(QByteArray("pandod kept the connection open") + where).constData());
}

QTEST_GUILESS_MAIN(TestAttacks)
#include "tst_attacks.moc"
