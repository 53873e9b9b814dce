#pragma once
// An install on real parts for end-to-end tests, opened through app/wiring's Install as pandod
// opens one: a temporary data dir with SQLite, the real Docker runtime, the loopback router, the
// git source and Docker services, plus a git fixture to deploy from. No pipeline runner: the
// tests that run pipelines install one with the options they need.

#include "adapters/routing/loopback/loopbackrouter.h"
#include "adapters/runtime/docker/dockerruntime.h"
#include "app/wiring/install.h"
#include "core/engine/engine.h"
#include "tests/support/gitfixture.h"

#include <QTemporaryDir>
#include <functional>
#include <memory>

namespace pando::test {

struct HttpAnswer {
    int status = 0; // 0: no answer
    QByteArray body;
    QString error;
};

// One GET over a fresh connection (what a browser or curl does after a keep-alive ends).
HttpAnswer httpGet(const QUrl &url, int timeoutMs = 3000);

// The detail of a deploy's step by name, or "(no step NAME)" when the deploy has none.
QString stepDetail(const core::DeployView &view, const QString &name);

// The files of a small app: busybox httpd serving www/index.html = content.
GitFiles helloApp(const QByteArray &content, const QByteArray &extraDockerfileLines = {});
QByteArray helloSpec(const QString &name, const QString &repoUrl, const QString &extra = {});

class EngineFixture {
public:
    EngineFixture();
    ~EngineFixture();

    // Opens the engine on dataDir (a new one when empty), with options tune may change (the
    // install id is the fixture's own random one unless tune clears it, which leaves it to the
    // data directory). Fails the test when it cannot start.
    bool start(const QString &dataDir = {}, const std::function<void(core::EngineOptions &)> &tune = {});
    void stop();

    // The runtime the engine deploys to: the Docker runtime unless set before start() (an Incus
    // test gives a RuntimeSet of Docker and Incus).
    std::function<std::shared_ptr<adapters::Runtime>(const std::shared_ptr<adapters::docker::DockerRuntime> &docker)>
        makeRuntime;

    core::Engine &engine() { return m_install->engine(); }
    wiring::Install &install() { return *m_install; }
    adapters::docker::DockerRuntime &docker() { return *m_runtime; }
    adapters::loopback::LoopbackRouter &router() { return *m_router; }
    GitFixture &git() { return m_git; }
    QString installId() const { return m_installId; }
    QString dataDir() const { return m_dataDir; }
    adapters::Labels installLabels(const QString &app = {}, const QString &deploy = {}) const;

    // Waits until the deploy is no longer queued or running; returns its final view.
    core::DeployView waitDeploy(const QString &id, int timeoutMs = 120000);
    // waitDeploy, and then for a deploy that succeeded, until its last step, retiring the old
    // version, has ended too: the deploy succeeds at the switch and retires just after.
    core::DeployView waitRetired(const QString &id, int timeoutMs = 120000);
    // Deploys app (as nobody in particular) and waits as waitRetired(); an empty view, with a
    // warning saying why, when the deploy was refused.
    core::DeployView deployRetired(const QString &app, int timeoutMs = 120000);
    // Removes every container and image this fixture's install created.
    void cleanDocker();

private:
    QTemporaryDir m_tmp;
    QString m_dataDir;
    QString m_installId;
    GitFixture m_git;
    std::shared_ptr<adapters::docker::DockerRuntime> m_runtime;
    std::shared_ptr<adapters::loopback::LoopbackRouter> m_router;
    std::unique_ptr<wiring::Install> m_install;
};

} // namespace pando::test
