// pando-desktop on a store holding 1,000 apps (each with a finished deploy) and 10,000 finished
// runs, against its floors, side by side in one run (the figures of issue 13):
//   start:  pando-desktop (its engine in process) from exec to its first frame, and to the Apps
//           view drawn with every app; an empty Qt Quick window (emptyquickwindow) from exec to
//           its first frame; pandod from exec to its first API answer. Target: first frame < 300 ms.
//   memory: pando-desktop's resident set once its Apps view is drawn and settled, and again after
//           the walk below; the empty window's; pandod's after listing the apps and runs over its
//           API. Target: < 100 MB (after the walk, the larger).
//   views:  switching Apps → Pipelines → Approvals → Apps three times, each timed from the switch
//           to its frame swapped (first visits included). Target: every switch < 50 ms.
//   scroll: the Apps list scrolled from top to bottom, 100 px a frame, each frame timed from the
//           step to its frame swapped; frames a second and the worst frame. Target: no frame > 16 ms.
// Both programs run on the offscreen platform with the software renderer. The walk is
// pando-desktop's own (PANDO_DESKTOP_TRACE=walk, app/desktop/shell/desktoptrace.h); it also says
// each step's CPU time on the GUI thread, printed beside the wall clock: on a machine shared with
// other work a frame can wait for a CPU, which the wall clock counts and the CPU time does not.
// Figures are medians over rounds (the worst switch and frame: the median of each round's worst).
// PANDO_BENCH_QUICK=1: one round, no verdict. PANDO_BENCH_ROUNDS=N (default 5).

#include "core/state/database.h"
#include "core/state/pipelinerepositories.h"
#include "tests/bench/benchkit.h"
#include "tests/support/ports.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QSqlError>
#include <QSqlQuery>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QThread>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <functional>

using namespace pando;
using pando::bench::median;
using pando::test::unusedPort;
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

// One step of the walk: its wall-clock time and the GUI thread's CPU time, in ms.
struct Step {
    double ms = 0;
    double cpuMs = 0;
};

struct Round {
    qint64 pandodStartMs = 0;
    double pandodMb = 0;
    qint64 floorFrameMs = 0;
    double floorMb = 0;
    qint64 desktopFrameMs = 0;
    qint64 desktopAppsMs = 0;
    double desktopMb = 0;     // settled, the Apps view drawn
    double desktopWalkMb = 0; // after the walk
    QList<Step> switches;
    QList<Step> firstVisits; // among the switches: the first to each view
    QList<Step> frames;
    double fps = 0;
};

template<typename T> T worst(const QList<T> &values)
{
    return values.isEmpty() ? T{} : *std::max_element(values.cbegin(), values.cend());
}

QList<double> wallOf(const QList<Step> &steps)
{
    QList<double> out;
    for (const Step &step : steps)
        out << step.ms;
    return out;
}

QList<double> cpuOf(const QList<Step> &steps)
{
    QList<double> out;
    for (const Step &step : steps)
        out << step.cpuMs;
    return out;
}

QProcessEnvironment guiEnvironment(const QString &home)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(u"QT_QPA_PLATFORM"_s, u"offscreen"_s);
    env.insert(u"QT_QUICK_BACKEND"_s, u"software"_s);
    // A frame is drawn as soon as it is asked for, not after the platform's 5 ms of idling: the
    // walk's frame times are then the work of the frame (app/desktop/shell/desktoptrace.h).
    env.insert(u"QT_QPA_UPDATE_IDLE_TIME"_s, u"0"_s);
    env.insert(u"XDG_CONFIG_HOME"_s, home + u"/config"_s);
    env.insert(u"XDG_RUNTIME_DIR"_s, home + u"/run"_s);
    env.insert(u"HOME"_s, home);
    return env;
}

// Runs `program` until `done` says so of a line it wrote on stderr (or it fails, or `timeoutMs`
// passes); `done` is given the milliseconds since exec. Leaves the program running.
Status readLines(QProcess &program, qint64 timeoutMs, const std::function<bool(const QByteArray &, qint64)> &done)
{
    QElapsedTimer timer;
    timer.start();
    program.setReadChannel(QProcess::StandardError);
    QByteArray said;
    for (;;) {
        if (program.state() == QProcess::NotRunning || timer.elapsed() > timeoutMs) {
            said += program.readAllStandardError();
            return fail(ErrorCode::Unavailable,
                        u"%1 did not finish: %2"_s.arg(program.program(), QString::fromLocal8Bit(said.right(2000))));
        }
        program.waitForReadyRead(20);
        while (program.canReadLine()) {
            const QByteArray line = program.readLine();
            said += line;
            if (done(line.trimmed(), timer.elapsed()))
                return {};
        }
    }
}

Result<Round> measure(const QString &dataDir, const QString &home)
{
    Round round;
    {
        QProcess pandod;
        pandod.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        pandod.setStandardOutputFile(QProcess::nullDevice());
        const quint16 port = unusedPort();
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
        QProcess window;
        window.setProcessEnvironment(guiEnvironment(home));
        window.setStandardOutputFile(QProcess::nullDevice());
        window.start(QStringLiteral(EMPTY_QUICK_WINDOW_PROGRAM), {});
        const Status drawn = readLines(window, 30000, [&](const QByteArray &line, qint64 ms) {
            if (line != "emptyquickwindow: first frame")
                return false;
            round.floorFrameMs = ms;
            return true;
        });
        if (!drawn) {
            stop(window);
            return std::unexpected(drawn.error());
        }
        QThread::msleep(500);
        round.floorMb = residentMb(window.processId());
        stop(window);
    }
    {
        QProcess desktop;
        QProcessEnvironment env = guiEnvironment(home);
        env.insert(u"PANDO_DESKTOP_TRACE"_s, u"walk"_s);
        desktop.setProcessEnvironment(env);
        desktop.setStandardOutputFile(QProcess::nullDevice());
        desktop.start(QStringLiteral(PANDO_DESKTOP_PROGRAM), {u"--no-single-instance"_s, u"--data-dir"_s, dataDir});
        static const QRegularExpression resident(u"resident ([0-9.]+) MB"_s);
        static const QRegularExpression timed(
            u"^pando-desktop: (view switch to \\w+|scroll frame):? ([0-9.]+) ms \\(cpu "
            u"([0-9.]+) ms\\)(, first visit)?$"_s);
        static const QRegularExpression scrolled(u"^pando-desktop: scrolled .* ([0-9]+) fps,"_s);
        QString wrong;
        const Status walked = readLines(desktop, 180000, [&](const QByteArray &bytes, qint64 ms) {
            const QString line = QString::fromUtf8(bytes);
            if (line == u"pando-desktop: first frame"_s) {
                round.desktopFrameMs = ms;
            } else if (line.startsWith(u"pando-desktop: apps view drawn with "_s)) {
                round.desktopAppsMs = ms;
                if (!line.endsWith(u" %1 apps"_s.arg(Apps)))
                    wrong = u"the Apps view showed %1"_s.arg(line);
            } else if (line.startsWith(u"pando-desktop: settled"_s)) {
                round.desktopMb = resident.match(line).captured(1).toDouble();
            } else if (const auto step = timed.match(line); step.hasMatch()) {
                const Step measured{step.captured(2).toDouble(), step.captured(3).toDouble()};
                if (step.captured(1) == u"scroll frame"_s) {
                    round.frames << measured;
                } else {
                    round.switches << measured;
                    if (step.hasCaptured(4))
                        round.firstVisits << measured;
                }
            } else if (const auto rate = scrolled.match(line); rate.hasMatch()) {
                round.fps = rate.captured(1).toDouble();
            } else if (line.startsWith(u"pando-desktop: walk: "_s)) {
                wrong = line;
            } else if (line.startsWith(u"pando-desktop: walk done"_s)) {
                round.desktopWalkMb = resident.match(line).captured(1).toDouble();
                return true;
            }
            return !wrong.isEmpty();
        });
        stop(desktop);
        if (!walked)
            return std::unexpected(walked.error());
        if (!wrong.isEmpty())
            return fail(ErrorCode::Internal, wrong);
        if (round.switches.isEmpty() || round.frames.isEmpty())
            return fail(ErrorCode::Internal, u"pando-desktop's walk switched no view or scrolled no frame"_s);
    }
    return round;
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

    QList<qint64> pandodStart, floorFrame, desktopFrame, desktopApps;
    QList<double> pandodMb, floorMb, desktopMb, desktopWalkMb, switchWorst, switchCpuWorst, switchMedian,
        firstVisitWorst, frameWorst, frameCpuWorst, frameMedian, fps;
    for (int i = 0; i < rounds; ++i) {
        auto round = measure(dataDir, work.path());
        if (!round)
            return fail(round.error().text());
        const QList<double> frames = wallOf(round->frames);
        std::printf("round %d: pandod answers after %lld ms (%.0f MB); empty Qt Quick window first frame %lld ms "
                    "(%.0f MB); pando-desktop first frame %lld ms, apps drawn %lld ms (%.0f MB, %.0f MB after the "
                    "walk); view switch worst %.1f ms (cpu %.1f ms); scroll %lld frames at %.0f fps, worst frame "
                    "%.1f ms (cpu %.1f ms)\n",
                    i + 1, round->pandodStartMs, round->pandodMb, round->floorFrameMs, round->floorMb,
                    round->desktopFrameMs, round->desktopAppsMs, round->desktopMb, round->desktopWalkMb,
                    worst(wallOf(round->switches)), worst(cpuOf(round->switches)), qint64(frames.size()), round->fps,
                    worst(frames), worst(cpuOf(round->frames)));
        std::fflush(stdout);
        pandodStart << round->pandodStartMs;
        floorFrame << round->floorFrameMs;
        desktopFrame << round->desktopFrameMs;
        desktopApps << round->desktopAppsMs;
        pandodMb << round->pandodMb;
        floorMb << round->floorMb;
        desktopMb << round->desktopMb;
        desktopWalkMb << round->desktopWalkMb;
        switchWorst << worst(wallOf(round->switches));
        switchCpuWorst << worst(cpuOf(round->switches));
        switchMedian << median(wallOf(round->switches));
        firstVisitWorst << worst(wallOf(round->firstVisits));
        frameWorst << worst(frames);
        frameCpuWorst << worst(cpuOf(round->frames));
        frameMedian << median(frames);
        fps << round->fps;
    }
    const qint64 frame = median(desktopFrame);
    const double memory = std::max(median(desktopMb), median(desktopWalkMb));
    const double switchTime = median(switchWorst);
    const double scrollFrame = median(frameWorst);
    const auto ratio = [](double a, double b) {
        return a / std::max(1.0, b);
    };
    std::printf("bench_desktop: %d apps, %d runs; medians of %d rounds (the worst switch and frame: the median of "
                "each round's worst)\n",
                Apps, Runs, rounds);
    std::printf("bench_desktop: start: pando-desktop first frame %lld ms (Apps view with %d apps drawn at %lld ms) | "
                "empty Qt Quick window %lld ms, ratio %.2f | pandod first answer %lld ms, ratio %.2f (target: first "
                "frame < 300 ms)\n",
                frame, Apps, median(desktopApps), median(floorFrame), ratio(double(frame), double(median(floorFrame))),
                median(pandodStart), ratio(double(frame), double(median(pandodStart))));
    std::printf("bench_desktop: memory: pando-desktop %.0f MB with the Apps view drawn, %.0f MB after the walk | "
                "empty Qt Quick window %.0f MB, ratio %.2f | pandod %.0f MB, ratio %.2f (target: < 100 MB)\n",
                median(desktopMb), median(desktopWalkMb), median(floorMb), ratio(memory, median(floorMb)),
                median(pandodMb), ratio(memory, median(pandodMb)));
    std::printf("bench_desktop: view switch Apps -> Pipelines -> Approvals, 3 times: worst %.1f ms (a first visit: "
                "%.1f ms), median %.1f ms; GUI thread CPU worst %.1f ms (target: < 50 ms)\n",
                switchTime, median(firstVisitWorst), median(switchMedian), median(switchCpuWorst));
    std::printf("bench_desktop: scrolling the Apps list: %.0f fps, worst frame %.1f ms, median %.1f ms; GUI thread "
                "CPU worst %.1f ms a frame (target: 60 fps, no frame > 16 ms)\n",
                median(fps), scrollFrame, median(frameMedian), median(frameCpuWorst));
    if (quick) {
        std::printf("quick mode: no verdict\n");
        return 0;
    }
    const auto verdict = [](bool met) {
        return met ? "met" : "MISSED";
    };
    const bool startMet = frame < 300, memoryMet = memory < 100, switchMet = switchTime < 50,
               scrollMet = scrollFrame <= 16 && median(fps) >= 60;
    std::printf("verdict: first frame %s, memory %s, view switch %s, scrolling %s\n", verdict(startMet),
                verdict(memoryMet), verdict(switchMet), verdict(scrollMet));
    return startMet && memoryMet && switchMet && scrollMet ? 0 : 1;
}
