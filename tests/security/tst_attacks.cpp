// The attack catalogue (attacks/*.json, described in README.md) run against a real pandod: one
// data row per entry, each sent as raw bytes over its own connection, with the answer, the
// connection's fate, pandod's memory and its health afterwards checked against what the entry
// expects. pandod processes are started as the entries ask (one per distinct set of flags) and
// kept for the rows that share them; each has an administrator and, as entries ask for them,
// users of the other roles.

#include "attackkit.h"
#include "sweep.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"
#include "tests/support/gitfixture.h"
#include "tests/support/ports.h"

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
#include <functional>
#include <memory>

using namespace pando;
using namespace pando::test;

using namespace pando::test::attacks;

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
    // heard (when given) gets each step's answer, with the step it answered.
    void runRequests(const QJsonObject &entry, Daemon &daemon,
                     const std::function<void(const QString &step, const QByteArray &answer)> &heard = {});
    void runSweep(const QJsonObject &entry, Daemon &daemon);
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
    raw->port = unusedPort();
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
    else if (kind == QLatin1String("sweep"))
        runSweep(entry, *daemon);
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
    return httpRequest(line, token, type, body);
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

namespace {

// A field of an answer: "a/b/0" walks objects and arrays.
QJsonValue fieldAt(const QJsonObject &json, const QString &path)
{
    QJsonValue value = json;
    for (const QString &key : path.split(QLatin1Char('/')))
        value = value.isArray() ? value.toArray().at(key.toInt()) : value.toObject().value(key);
    return value;
}

} // namespace

void TestAttacks::runRequests(const QJsonObject &entry, Daemon &daemon,
                              const std::function<void(const QString &, const QByteArray &)> &heard)
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
                    value =
                        fieldAt(readAnswer(socket, buffer, 5000).json, poll.value(QStringLiteral("field")).toString())
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
        // Named without its query, which may carry what a sweep looks for.
        if (heard) {
            const QString path = QString::fromUtf8(line).section(QLatin1Char('?'), 0, 0);
            heard(QStringLiteral("step %1 (%2)").arg(i + 1).arg(path), answer.raw);
        }
        // "save": {"name": "field/inner"} keeps a field of the answer for {saved:name}.
        const QJsonObject save = step.value(QStringLiteral("save")).toObject();
        for (auto it = save.begin(); it != save.end(); ++it) {
            const QJsonValue value = fieldAt(answer.json, it.value().toString());
            QVERIFY2(!value.isUndefined(),
                     qPrintable(QStringLiteral("step %1: the answer has no %2").arg(i + 1).arg(it.value().toString())));
            daemon.saved.insert(it.key(),
                                value.isString() ? value.toString().toUtf8() : QByteArray::number(value.toInteger()));
        }
    }
}

void TestAttacks::runSweep(const QJsonObject &entry, Daemon &daemon)
{
    // The steps plant the entry's secrets (as requests do); then every place pandod shows or
    // leaves things in is read and searched for them (sweep.h).
    Sweep sweep(entry, daemon);
    QString why;
    QVERIFY2(sweep.start(&why), qPrintable(why));
    runRequests(sweep.entry(), daemon,
                [&sweep](const QString &step, const QByteArray &answer) { sweep.look(step, answer); });
    const bool stepsFailed = QTest::currentTestFailed();
    QStringList problems = stepsFailed ? QStringList() : sweep.finish();
    // What the steps made goes whatever came of them; a step's failure is the one reported.
    problems += sweep.cleanUp();
    // One line each: a failure message is cut at 1 KiB.
    for (const QString &line : std::as_const(problems))
        qWarning().noquote() << line;
    if (stepsFailed)
        return;
    QVERIFY2(problems.isEmpty(), qPrintable(QStringLiteral("%1 problems (secrets found, places not read): the lines "
                                                           "above say where and in which form")
                                                .arg(problems.size())));
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
