#include "enginefixture.h"
#include "tests/support/vocabtesting.h"

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QTcpSocket>
#include <QTest>

namespace pando::test {

HttpAnswer httpGet(const QUrl &url, int timeoutMs)
{
    HttpAnswer answer;
    QTcpSocket socket;
    socket.connectToHost(url.host(), quint16(url.port(80)));
    if (!socket.waitForConnected(timeoutMs)) {
        answer.error = socket.errorString();
        return answer;
    }
    const QByteArray path = url.path().isEmpty() ? QByteArray("/") : url.path().toUtf8();
    socket.write("GET " + path + " HTTP/1.0\r\nHost: " + url.host().toUtf8() + "\r\n\r\n");
    QByteArray data;
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < timeoutMs) {
        if (socket.state() != QAbstractSocket::ConnectedState && socket.bytesAvailable() == 0)
            break;
        if (socket.bytesAvailable() == 0 && !socket.waitForReadyRead(int(timeoutMs - timer.elapsed())))
            break;
        data += socket.readAll();
    }
    data += socket.readAll();
    const qsizetype headEnd = data.indexOf("\r\n\r\n");
    const QList<QByteArray> status = data.left(data.indexOf('\n')).split(' ');
    if (headEnd < 0 || status.size() < 2) {
        answer.error = data.isEmpty() ? QStringLiteral("no answer (%1)").arg(socket.errorString())
                                      : QStringLiteral("not HTTP: %1").arg(QString::fromUtf8(data.left(80)));
        return answer;
    }
    answer.status = status[1].toInt();
    answer.body = data.mid(headEnd + 4);
    return answer;
}

GitFiles helloApp(const QByteArray &content, const QByteArray &extraDockerfileLines)
{
    GitFiles files;
    files.insert(QStringLiteral("Dockerfile"),
                 GitFile{"FROM pando/busybox:latest\nCOPY www /www\n" + extraDockerfileLines +
                         "EXPOSE 8080\n"
                         "CMD [\"/bin/httpd\", \"-f\", \"-p\", \"8080\", \"-h\", \"/www\"]\n"});
    files.insert(QStringLiteral("www/index.html"), GitFile{content});
    return files;
}

QString stepDetail(const core::DeployView &view, const QString &name)
{
    for (const auto &step : view.steps)
        if (step.name == name)
            return step.detail;
    return QStringLiteral("(no step %1)").arg(name);
}

QByteArray helloSpec(const QString &name, const QString &repoUrl, const QString &extra)
{
    return QStringLiteral("name: %1\nsource:\n  repo: %2\n  ref: main\nrun:\n  port: 8080\n"
                          "  resources: { memory: 64Mi }\nhealth:\n  path: /\n  timeout: 20s\n%3")
        .arg(name, repoUrl, extra)
        .toUtf8();
}

EngineFixture::EngineFixture()
    : m_installId(QStringLiteral("test-%1").arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0')))
{}

EngineFixture::~EngineFixture()
{
    stop();
    cleanDocker();
}

bool EngineFixture::start(const QString &dataDir, const std::function<void(core::EngineOptions &)> &tune)
{
    m_dataDir = dataDir.isEmpty() ? m_tmp.path() + QStringLiteral("/data") : dataDir;
    m_runtime = std::make_shared<adapters::docker::DockerRuntime>();
    m_router = std::make_shared<adapters::loopback::LoopbackRouter>();
    wiring::InstallOptions options;
    options.engine.dataDir = m_dataDir;
    options.engine.installId = m_installId;
    options.engine.reconcileIntervalMs = 0; // tests run passes themselves
    options.engine.healthTickMs = 0;        // no probes of the containers unless a test asks
    options.engine.retireGraceMs = 300;
    if (tune)
        tune(options.engine);
    options.runtime = m_runtime;
    if (makeRuntime)
        options.runtime = makeRuntime(m_runtime);
    options.router = m_router;
    // The tests that run pipelines install the runner with the options they need.
    options.installPipelines = [](core::Engine &) -> Status {
        return {};
    };
    m_install = std::make_unique<wiring::Install>(std::move(options));
    auto opened = m_install->open();
    if (!opened) {
        qWarning("engine did not start: %s", qPrintable(opened.error().text()));
        m_install.reset();
        return false;
    }
    // A tune that cleared the id lets the data directory choose it, as pandod's does.
    m_installId = m_install->installId();
    return true;
}

void EngineFixture::stop()
{
    // As when the process ends: the routes' ports close. Docker's objects stay.
    m_install.reset();
    m_router.reset();
}

adapters::Labels EngineFixture::installLabels(const QString &app, const QString &deploy) const
{
    adapters::Labels labels{{QLatin1String(adapters::LabelInstall), m_installId}};
    if (!app.isEmpty())
        labels.insert(QLatin1String(adapters::LabelApp), app);
    if (!deploy.isEmpty())
        labels.insert(QLatin1String(adapters::LabelDeploy), deploy);
    return labels;
}

core::DeployView EngineFixture::waitDeploy(const QString &id, int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    core::DeployView view;
    while (timer.elapsed() < timeoutMs) {
        auto v = engine().deployView(id);
        if (v) {
            view = *v;
            if (view.record.status != core::DeployStatus::Queued && view.record.status != core::DeployStatus::Running)
                return view;
        }
        QTest::qWait(50);
    }
    return view;
}

core::DeployView EngineFixture::waitRetired(const QString &id, int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    core::DeployView view = waitDeploy(id, timeoutMs);
    const auto retired = [&view] {
        return view.record.status != core::DeployStatus::Succeeded ||
               (!view.steps.isEmpty() && view.steps.last().name == QLatin1String("retire") &&
                view.steps.last().status != core::DeployStepStatus::Running);
    };
    while (!retired() && timer.elapsed() < timeoutMs) {
        QTest::qWait(50);
        if (auto v = engine().deployView(id))
            view = *v;
    }
    return view;
}

void EngineFixture::cleanDocker()
{
    if (!m_runtime)
        return;
    if (auto containers = m_runtime->containers(installLabels()))
        for (const auto &c : std::as_const(*containers))
            discardResult(m_runtime->remove(c.id), "clean-up between tests: a leftover shows in the next test");
    if (auto images = m_runtime->images(installLabels()))
        for (const auto &i : std::as_const(*images))
            discardResult(m_runtime->removeImage(i.id), "clean-up between tests: a leftover shows in the next test");
}

core::DeployView EngineFixture::deployRetired(const QString &app, int timeoutMs)
{
    auto deploy = engine().deploy(app, {}, core::Actor{});
    if (!deploy) {
        qWarning("deploy refused: %s", qPrintable(deploy.error().text()));
        return {};
    }
    return waitRetired(deploy->id, timeoutMs);
}

} // namespace pando::test
