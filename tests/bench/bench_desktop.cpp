// pando-desktop's start and memory, with the headless pandod as the floor, on a store holding
// 1,000 apps (each with a finished deploy) and 10,000 finished runs. Side by side in one run:
//   start:  pandod from exec to its first API answer, against pando-desktop (its engine in
//           process, the offscreen platform) from exec to its first frame, and to the Apps view
//           drawn with every app. Target: the desktop's first frame under 600 ms.
//   memory: resident set of pandod after listing the apps and runs over its API, against the
//           desktop's once its Apps view is drawn and settled. Target: under 150 MB.
// PANDO_BENCH_QUICK=1: one round, no verdict. PANDO_BENCH_ROUNDS=N (default 5).

#include "core/state/database.h"
#include "core/state/pipelinerepositories.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSqlError>
#include <QSqlQuery>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QThread>
#include <algorithm>
#include <csignal>
#include <cstdio>

using namespace pando;
using namespace Qt::StringLiterals;

namespace {

constexpr int Apps = 1000;
constexpr int Runs = 10000;

int fail(const QString &message)
{
    std::fprintf(stderr, "bench_desktop: %s\n", qPrintable(message));
    return 1;
}

// The store a busy team's install has, written straight into SQLite in one transaction.
Status seed(const QString &dataDir)
{
    core::Database db(core::DatabaseConfig::fromUrl(u"sqlite://"_s + dataDir + u"/pando.db"_s).value());
    if (Status opened = db.open(); !opened)
        return opened;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    auto pipeline = core::PipelineRepository(db).set(
        u"bench"_s,
        u"jobs:\n- name: unit\n  plan:\n  - task: t\n    config: {platform: host, run: {path: \"true\"}}\n"_s, {}, now);
    if (!pipeline)
        return std::unexpected(pipeline.error());
    auto connection = db.connection();
    if (!connection)
        return std::unexpected(connection.error());
    QSqlDatabase sql = *connection;
    sql.transaction();
    QSqlQuery app(sql), deploy(sql), run(sql);
    app.prepare(u"INSERT INTO apps (name, spec_yaml, created_ms, updated_ms) VALUES (?, ?, ?, ?)"_s);
    deploy.prepare(u"INSERT INTO deploys (id, app, ref, commit_id, status, actor, created_ms, started_ms, "
                   u"finished_ms) VALUES (?, ?, 'main', ?, 'succeeded', 'user:bench', ?, ?, ?)"_s);
    run.prepare(u"INSERT INTO runs (id, pipeline, job, number, queue_seq, status, trigger, actor, inputs_json, "
                u"config_version, created_ms, started_ms, finished_ms) "
                u"VALUES (?, 'bench', 'unit', ?, ?, 'succeeded', 'manual', 'user:bench', '{}', ?, ?, ?, ?)"_s);
    for (int i = 0; i < Apps; ++i) {
        const QString name = u"app-%1"_s.arg(i, 4, 10, QLatin1Char('0'));
        app.addBindValue(name);
        app.addBindValue(
            u"name: %1\nsource:\n  repo: https://git.example/%1.git\n  ref: main\nrun:\n  port: 8080\n"_s.arg(name));
        app.addBindValue(now - 86'400'000);
        app.addBindValue(now - 86'400'000);
        if (!app.exec())
            return fail(ErrorCode::Internal, app.lastError().text(), u"apps"_s);
        const qint64 at = now - 3'600'000 + i * 1000;
        deploy.addBindValue(u"d%1"_s.arg(i, 12, 16, QLatin1Char('0')));
        deploy.addBindValue(name);
        deploy.addBindValue(u"%1"_s.arg(i, 40, 16, QLatin1Char('a')));
        deploy.addBindValue(at);
        deploy.addBindValue(at);
        deploy.addBindValue(at + 4000);
        if (!deploy.exec())
            return fail(ErrorCode::Internal, deploy.lastError().text(), u"deploys"_s);
    }
    for (int i = 1; i <= Runs; ++i) {
        const qint64 at = now - 86'400'000 + i * 5000;
        run.addBindValue(u"r%1"_s.arg(i, 12, 16, QLatin1Char('0')));
        run.addBindValue(i);
        run.addBindValue(i);
        run.addBindValue(pipeline->configVersion);
        run.addBindValue(at);
        run.addBindValue(at);
        run.addBindValue(at + 2000);
        if (!run.exec())
            return fail(ErrorCode::Internal, run.lastError().text(), u"runs"_s);
    }
    if (!sql.commit())
        return fail(ErrorCode::Internal, sql.lastError().text(), u"commit"_s);
    return {};
}

quint16 freePort()
{
    QTcpServer probe;
    probe.listen(QHostAddress::LocalHost, 0);
    return probe.serverPort();
}

// One plain HTTP GET; the status, or 0 when nothing answered.
int httpGet(quint16 port, const QByteArray &path, const QByteArray &token = {})
{
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, port);
    if (!socket.waitForConnected(200))
        return 0;
    QByteArray request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
    if (!token.isEmpty())
        request += "Authorization: Bearer " + token + "\r\n";
    socket.write(request + "\r\n");
    // Read until the body's Content-Length is in: the server may keep the connection open.
    QByteArray answer;
    while (socket.waitForReadyRead(10000)) {
        answer += socket.readAll();
        const qsizetype end = answer.indexOf("\r\n\r\n");
        if (end < 0)
            continue;
        qsizetype length = 0;
        for (const QByteArray &header : answer.left(end).split('\n'))
            if (header.toLower().startsWith("content-length:"))
                length = header.mid(15).trimmed().toLongLong();
        if (answer.size() >= end + 4 + length)
            break;
    }
    return answer.startsWith("HTTP/1.1 ") ? answer.mid(9, 3).toInt() : 0;
}

double residentMb(qint64 pid)
{
    QFile status(u"/proc/%1/status"_s.arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024.0;
    return -1;
}

void stop(QProcess &process)
{
    if (process.state() == QProcess::NotRunning)
        return;
    ::kill(pid_t(process.processId()), SIGTERM);
    if (!process.waitForFinished(15000)) {
        process.kill();
        process.waitForFinished(5000);
    }
}

struct Round {
    qint64 pandodStartMs = 0;
    double pandodMb = 0;
    qint64 desktopFrameMs = 0;
    qint64 desktopAppsMs = 0;
    double desktopMb = 0;
};

Result<Round> measure(const QString &dataDir, const QString &home)
{
    Round round;
    {
        QProcess pandod;
        pandod.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        pandod.setStandardOutputFile(QProcess::nullDevice());
        const quint16 port = freePort();
        QElapsedTimer timer;
        timer.start();
        pandod.start(QStringLiteral(PANDOD_PROGRAM), {u"--data-dir"_s, dataDir, u"--listen"_s,
                                                      u"127.0.0.1:%1"_s.arg(port), u"--install-id"_s, u"bench"_s});
        while (httpGet(port, "/api/v1/health") != 200) {
            if (pandod.state() == QProcess::NotRunning || timer.elapsed() > 30000)
                return fail(ErrorCode::Unavailable, u"pandod did not answer"_s);
            QThread::msleep(2);
        }
        round.pandodStartMs = timer.elapsed();
        // The first start's one-time admin token, or the token the desktop's engine wrote for itself
        // in an earlier round.
        QFile tokenFile(dataDir + u"/initial-admin-token"_s);
        if (!tokenFile.exists())
            tokenFile.setFileName(dataDir + u"/desktop-token"_s);
        if (!tokenFile.open(QIODevice::ReadOnly))
            return fail(ErrorCode::Internal, u"no API token to list with"_s, tokenFile.fileName());
        const QByteArray token = tokenFile.readAll().trimmed();
        if (int s = httpGet(port, "/api/v1/apps", token); s != 200)
            return fail(ErrorCode::Internal, u"listing apps answered %1"_s.arg(s));
        if (int s = httpGet(port, "/api/v1/runs?limit=100", token); s != 200)
            return fail(ErrorCode::Internal, u"listing runs answered %1"_s.arg(s));
        QThread::msleep(500);
        round.pandodMb = residentMb(pandod.processId());
        stop(pandod);
    }
    {
        QProcess desktop;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"PANDO_DESKTOP_TRACE"_s, u"1"_s);
        env.insert(u"QT_QPA_PLATFORM"_s, u"offscreen"_s);
        env.insert(u"QT_QUICK_BACKEND"_s, u"software"_s);
        env.insert(u"XDG_CONFIG_HOME"_s, home + u"/config"_s);
        env.insert(u"XDG_RUNTIME_DIR"_s, home + u"/run"_s);
        env.insert(u"HOME"_s, home);
        desktop.setProcessEnvironment(env);
        desktop.setStandardOutputFile(QProcess::nullDevice());
        QElapsedTimer timer;
        timer.start();
        desktop.start(QStringLiteral(PANDO_DESKTOP_PROGRAM), {u"--no-single-instance"_s, u"--data-dir"_s, dataDir});
        QByteArray said;
        while (round.desktopAppsMs == 0) {
            if (desktop.state() == QProcess::NotRunning || timer.elapsed() > 60000) {
                stop(desktop);
                return fail(ErrorCode::Unavailable, u"pando-desktop did not draw its apps: %1"_s.arg(
                                                        QString::fromLocal8Bit(said + desktop.readAllStandardError())));
            }
            desktop.waitForReadyRead(20);
            while (desktop.canReadLine()) {
                const QByteArray line = desktop.readLine();
                said += line;
                if (line.startsWith("pando-desktop: first frame"))
                    round.desktopFrameMs = timer.elapsed();
                else if (line.startsWith("pando-desktop: apps view drawn with ")) {
                    round.desktopAppsMs = timer.elapsed();
                    if (!line.contains(QByteArray(QByteArray::number(Apps) + " apps"))) {
                        stop(desktop);
                        return fail(ErrorCode::Internal, u"the Apps view showed %1"_s.arg(QString::fromUtf8(line)));
                    }
                }
            }
            desktop.setReadChannel(QProcess::StandardError);
        }
        QThread::msleep(1000);
        round.desktopMb = residentMb(desktop.processId());
        stop(desktop);
    }
    return round;
}

template<typename T> T median(QList<T> values)
{
    std::sort(values.begin(), values.end());
    return values.at(values.size() / 2);
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    const bool quick = qEnvironmentVariableIsSet("PANDO_BENCH_QUICK");
    const int rounds = quick ? 1 : std::max(1, qEnvironmentVariableIntValue("PANDO_BENCH_ROUNDS") ?: 5);
    QTemporaryDir work;
    work.setAutoRemove(!qEnvironmentVariableIsSet("PANDO_BENCH_KEEP"));
    if (!work.isValid())
        return fail(u"no temporary directory"_s);
    const QString dataDir = work.filePath(u"data"_s);
    QDir().mkpath(dataDir);
    QDir().mkpath(work.filePath(u"run"_s));
    QFile::setPermissions(work.filePath(u"run"_s),
                          QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    QElapsedTimer seeding;
    seeding.start();
    if (Status seeded = seed(dataDir); !seeded)
        return fail(u"seeding the store failed: "_s + seeded.error().text());
    std::printf("store: %d apps with a deploy each, %d runs, written in %lld ms\n", Apps, Runs, seeding.elapsed());

    QList<qint64> pandodStart, desktopFrame, desktopApps;
    QList<double> pandodMb, desktopMb;
    for (int i = 0; i < rounds; ++i) {
        auto round = measure(dataDir, work.path());
        if (!round)
            return fail(round.error().text());
        std::printf("round %d: pandod answers after %lld ms (%.0f MB); pando-desktop first frame %lld ms, apps "
                    "drawn %lld ms (%.0f MB)\n",
                    i + 1, round->pandodStartMs, round->pandodMb, round->desktopFrameMs, round->desktopAppsMs,
                    round->desktopMb);
        std::fflush(stdout);
        pandodStart << round->pandodStartMs;
        desktopFrame << round->desktopFrameMs;
        desktopApps << round->desktopAppsMs;
        pandodMb << round->pandodMb;
        desktopMb << round->desktopMb;
    }
    const qint64 frame = median(desktopFrame);
    const double memory = median(desktopMb);
    std::printf("bench_desktop: start: pando-desktop first frame median %lld ms (apps view with %d apps drawn at %lld "
                "ms), pandod first answer median %lld ms, ratio %.2f (target: first frame < 600 ms), %d rounds\n",
                frame, Apps, median(desktopApps), median(pandodStart),
                double(frame) / double(std::max<qint64>(1, median(pandodStart))), rounds);
    std::printf("bench_desktop: memory with %d apps and %d runs: pando-desktop median %.0f MB, pandod median %.0f "
                "MB, ratio %.2f (target: < 150 MB)\n",
                Apps, Runs, memory, median(pandodMb), memory / std::max(1.0, median(pandodMb)));
    if (quick) {
        std::printf("quick mode: no verdict\n");
        return 0;
    }
    return frame < 600 && memory < 150 ? 0 : 1;
}
