#pragma once
// Small in-memory adapters and a running install (engine + API server on a temporary SQLite data
// directory) for the API and CLI tests. The engine is real; only the outside world is faked.

#include "adapters/api/routing.h"
#include "adapters/api/runtime.h"
#include "adapters/api/services.h"
#include "adapters/api/source.h"
#include "app/server/apiserver.h"
#include "app/wiring/install.h"
#include "core/accounts/accountservice.h"
#include "core/engine/engine.h"
#include "tests/app/server/pipelinefakes.h"

#include <QDir>
#include <QFile>
#include <QHash>
#include <QMutex>
#include <QSemaphore>
#include <QSet>
#include <QTemporaryDir>
#include <QWaitCondition>
#include <atomic>
#include <memory>

namespace pando::test {

class FakeRuntime : public adapters::Runtime {
public:
    adapters::RuntimeCapabilities capabilities() override
    {
        adapters::RuntimeCapabilities caps{QStringLiteral("fake"), true, 0, 0};
        caps.canMountVolumes = true;
        return caps;
    }
    Status ping() override { return {}; }
    // Apps named "buildfails" fail to build, so that failed deploys can be watched. Apps named
    // "slowbuild" print a line, then wait (10 s at most) until releaseBuild() before the next.
    Result<QString> build(const adapters::BuildRequest &request, const CancelToken &,
                          const std::function<void(const QString &)> &progress) override
    {
        if (request.tag.contains(QLatin1String("slowbuild"))) {
            if (progress)
                progress(QStringLiteral("Step 1/2 : FROM pando/busybox:latest"));
            m_buildGate.tryAcquire(1, 10000);
            if (progress)
                progress(QStringLiteral("Step 2/2 : COPY . /srv"));
            return QStringLiteral("sha256:fakeimage");
        }
        if (request.tag.contains(QLatin1String("buildfails"))) {
            // What Docker prints before it gives up, line by line.
            if (progress) {
                progress(QStringLiteral("Step 1/2 : FROM pando/busybox:latest"));
                progress(QStringLiteral("Step 2/2 : RUN make"));
                progress(QStringLiteral("make: *** No rule to make target 'all'.  Stop."));
            }
            return fail(ErrorCode::Failed, QStringLiteral("the Dockerfile's RUN step exited with 1"));
        }
        if (progress)
            progress(QStringLiteral("built"));
        return QStringLiteral("sha256:fakeimage");
    }
    void releaseBuild() { m_buildGate.release(); }
    // A registry that lets robot in with the password "right" and holds every image.
    Result<QString> checkRegistry(const QString &image, const adapters::RegistryCredential &credential,
                                  const CancelToken &) override
    {
        if (credential.username != QLatin1String("robot") || credential.secret != "right")
            return fail(ErrorCode::Unauthorized,
                        QStringLiteral("the registry %1 refused the login: unauthorized").arg(credential.server),
                        credential.server);
        return image.isEmpty() ? QStringLiteral("login accepted")
                               : QStringLiteral("sha256:") + QString(64, QLatin1Char('f'));
    }
    // Commands run in a container: `cat` copies its input to its output until the input ends;
    // `exit N` exits with N; anything else prints "ran: WORDS" (and "warned" on stderr for a
    // word "warn") and exits 0.
    Result<int> exec(const QString &id, const adapters::ExecRequest &request, const CancelToken &cancel,
                     const std::function<void(std::shared_ptr<adapters::ExecInput>)> &opened,
                     const std::function<void(int, QByteArrayView)> &onOutput) override
    {
        if (auto found = inspect(id); !found)
            return std::unexpected(found.error());
        else if (found->state != QLatin1String("running"))
            return fail(ErrorCode::Conflict, QStringLiteral("container %1 is not running").arg(id));
        struct Input final : adapters::ExecInput {
            QMutex mutex;
            QWaitCondition changed;
            QByteArray data;
            bool closed = false;
            void write(const QByteArray &bytes) override
            {
                QMutexLocker lock(&mutex);
                data += bytes;
                changed.wakeAll();
            }
            void closeInput() override
            {
                QMutexLocker lock(&mutex);
                closed = true;
                changed.wakeAll();
            }
            void resize(int, int) override {}
        };
        auto input = std::make_shared<Input>();
        if (opened)
            opened(input);
        const QStringList &command = request.command;
        if (command.value(0) == QLatin1String("exit"))
            return command.value(1).toInt();
        if (command.value(0) != QLatin1String("cat")) {
            onOutput(1, QByteArray("ran: " + command.join(u' ').toUtf8() + "\n"));
            if (command.contains(QStringLiteral("warn")))
                onOutput(2, "warned\n");
            return 0;
        }
        for (;;) {
            QMutexLocker lock(&input->mutex);
            if (!input->data.isEmpty()) {
                const QByteArray chunk = std::exchange(input->data, {});
                lock.unlock();
                onOutput(1, chunk);
                continue;
            }
            if (input->closed)
                return 0;
            if (cancel.isCancelled())
                return fail(ErrorCode::Cancelled, QStringLiteral("cancelled"));
            input->changed.wait(&input->mutex, 50);
        }
    }
    Result<QString> run(const adapters::ContainerSpec &spec) override
    {
        QMutexLocker locker(&m_mutex);
        adapters::ContainerInfo info;
        info.id = QStringLiteral("c%1").arg(++m_next);
        info.name = spec.name;
        info.image = spec.image;
        info.labels = spec.labels;
        info.state = QStringLiteral("running");
        info.address = QStringLiteral("127.0.0.1"); // health probes reach whatever listens on run.port here
        m_containers.insert(info.id, info);
        m_env.insert(spec.name, spec.env);
        for (const adapters::VolumeMount &mount : spec.volumes) {
            adapters::VolumeInfo volume;
            volume.name = mount.name;
            volume.id = QStringLiteral("v-%1-%2").arg(spec.labels.value(QLatin1String(adapters::LabelApp)), mount.name);
            volume.labels = spec.labels;
            volume.labels.remove(QLatin1String(adapters::LabelDeploy));
            volume.labels.insert(QLatin1String(adapters::LabelVolume), mount.name);
            m_volumes.insert(volume.id, volume);
        }
        return info.id;
    }
    Result<QList<adapters::VolumeInfo>> volumes(const adapters::Labels &filter) override
    {
        QMutexLocker locker(&m_mutex);
        QList<adapters::VolumeInfo> out;
        for (const adapters::VolumeInfo &v : std::as_const(m_volumes)) {
            bool all = true;
            for (auto it = filter.begin(); it != filter.end(); ++it)
                all = all && v.labels.value(it.key()) == it.value();
            if (all)
                out << v;
        }
        return out;
    }
    Status removeVolume(const QString &id) override
    {
        QMutexLocker locker(&m_mutex);
        m_volumes.remove(id);
        return {};
    }
    // An archive that says what it was made of.
    Result<qint64> exportVolume(const adapters::VolumeExport &what, QIODevice &out, const CancelToken &) override
    {
        {
            QMutexLocker locker(&m_mutex);
            if (!m_volumes.contains(what.volumeId))
                return fail(ErrorCode::NotFound, QStringLiteral("no such volume"), what.volumeId);
        }
        const QByteArray archive = exportedVolume(what);
        return out.write(archive);
    }
    static QByteArray exportedVolume(const adapters::VolumeExport &what)
    {
        return "archive of " + what.volumeId.toUtf8() + " through " + what.containerId.toUtf8() + " at " +
               what.path.toUtf8() + '\n';
    }
    // The fake's archives are those exportVolume writes: the file restored is kept as it came.
    Status checkVolumeArchive(const adapters::VolumeImport &what) override
    {
        QFile file(what.archivePath);
        if (!file.open(QIODevice::ReadOnly) || !file.read(11).startsWith("archive of "))
            return fail(ErrorCode::Invalid, QStringLiteral("the file is not a tar archive"), what.archivePath);
        return {};
    }
    Status importVolume(const adapters::VolumeImport &what, const CancelToken &) override
    {
        QFile file(what.archivePath);
        if (!file.open(QIODevice::ReadOnly))
            return fail(ErrorCode::Invalid, file.errorString(), what.archivePath);
        QMutexLocker locker(&m_mutex);
        if (!m_volumes.contains(what.volumeId))
            return fail(ErrorCode::NotFound, QStringLiteral("no such volume"), what.volumeId);
        m_imported.insert(what.volumeId, file.readAll());
        return {};
    }
    QByteArray importedVolume(const QString &id)
    {
        QMutexLocker locker(&m_mutex);
        return m_imported.value(id);
    }
    Result<adapters::ContainerInfo> inspect(const QString &id) override
    {
        QMutexLocker locker(&m_mutex);
        if (!m_containers.contains(id))
            return fail(ErrorCode::NotFound, QStringLiteral("no container %1").arg(id));
        return m_containers.value(id);
    }
    Result<QList<adapters::ContainerInfo>> containers(const adapters::Labels &filter) override
    {
        QMutexLocker locker(&m_mutex);
        QList<adapters::ContainerInfo> list;
        for (const adapters::ContainerInfo &info : std::as_const(m_containers)) {
            bool all = true;
            for (auto it = filter.cbegin(); it != filter.cend(); ++it)
                all = all && info.labels.value(it.key()) == it.value();
            if (all)
                list << info;
        }
        return list;
    }
    // Containers of apps named "wontstart" exit as soon as they are started again.
    Status start(const QString &id) override
    {
        QMutexLocker locker(&m_mutex);
        auto it = m_containers.find(id);
        if (it == m_containers.end())
            return fail(ErrorCode::NotFound, QStringLiteral("no container %1").arg(id));
        const bool exits = it->name.contains(QLatin1String("wontstart"));
        it->state = exits ? QStringLiteral("exited") : QStringLiteral("running");
        it->exitCode = exits ? 3 : 0;
        return {};
    }
    Status stop(const QString &id, int) override
    {
        QMutexLocker locker(&m_mutex);
        if (auto it = m_containers.find(id); it != m_containers.end())
            it->state = QStringLiteral("exited");
        return {};
    }
    Status remove(const QString &id) override
    {
        QMutexLocker locker(&m_mutex);
        m_containers.remove(id);
        return {};
    }
    Result<QList<adapters::ImageInfo>> images(const adapters::Labels &) override
    {
        return QList<adapters::ImageInfo>{};
    }
    Status removeImage(const QString &) override { return {}; }
    // A container that wrote one line before anyone looked, and one more while it is followed.
    Status logs(const QString &, int tail, bool follow, const CancelToken &,
                const std::function<void(const adapters::LogLine &)> &sink) override
    {
        if (tail != 0)
            sink(adapters::LogLine{1'700'000'000'000, false, QStringLiteral("hello from the fake")});
        if (follow)
            sink(adapters::LogLine{1'700'000'000'500, true, QStringLiteral("hello again from the fake")});
        return {};
    }

    // The environment the last container of that name was started with.
    QMap<QString, QString> env(const QString &containerName)
    {
        QMutexLocker locker(&m_mutex);
        return m_env.value(containerName);
    }
    QStringList containerNames()
    {
        QMutexLocker locker(&m_mutex);
        return m_env.keys();
    }

private:
    QSemaphore m_buildGate;
    QMutex m_mutex;
    int m_next = 0;
    QHash<QString, adapters::ContainerInfo> m_containers;
    QHash<QString, QMap<QString, QString>> m_env;
    QHash<QString, adapters::VolumeInfo> m_volumes;
    QHash<QString, QByteArray> m_imported; // volume id → the archive last restored into it
};

class FakeRouter : public adapters::Router {
public:
    // servesAddresses: it keeps the addresses it is given and whether the app wants people signed
    // in (as the Caddy edge serves them), else it refuses both as a loopback-only edge does.
    explicit FakeRouter(bool servesAddresses = false) : m_servesAddresses(servesAddresses) {}

    bool servesAddresses() const override { return m_servesAddresses; }
    bool assertsIdentity() const override { return m_servesAddresses; }
    Status setAddresses(const QString &app, const adapters::AddressChange &change) override
    {
        if (!m_servesAddresses)
            return Router::setAddresses(app, change);
        QMutexLocker locker(&m_mutex);
        if (!m_routes.contains(app))
            return fail(ErrorCode::NotFound, QStringLiteral("app %1 has no route").arg(app));
        adapters::Route &route = m_routes[app];
        // As the edge does: a dropped address redirects to the first new one, when asked to.
        route.moved.removeIf([&](const adapters::MovedAddress &m) { return change.addresses.contains(m.from); });
        if (change.redirectMoved && !change.addresses.isEmpty())
            for (const adapters::Address &was : std::as_const(route.addresses))
                if (!change.addresses.contains(was))
                    route.moved.append({was, change.addresses.first().url()});
        route.addresses = change.addresses;
        route.signIn = change.signIn;
        ++addressChanges;
        return {};
    }
    std::atomic_int addressChanges = 0;

    // The certificates it says it holds (none until a test sets them), as Caddy reports them.
    void setCertificateStates(const QList<adapters::CertificateState> &certificates)
    {
        QMutexLocker locker(&m_mutex);
        m_certificates = certificates;
    }
    QList<adapters::CertificateState> certificates() override
    {
        QMutexLocker locker(&m_mutex);
        return m_certificates;
    }
    // The install CA's root it says it made (none until a test sets one).
    void setInstallCa(const QByteArray &pem)
    {
        QMutexLocker locker(&m_mutex);
        m_installCa = pem;
    }
    QByteArray installCa() override
    {
        QMutexLocker locker(&m_mutex);
        return m_installCa;
    }

    Result<adapters::Route> ensure(const QString &app, int requestedPort) override
    {
        QMutexLocker locker(&m_mutex);
        if (m_routes.contains(app))
            return m_routes.value(app);
        if (requestedPort != 0 && m_taken.contains(requestedPort))
            return fail(ErrorCode::Conflict, QStringLiteral("port %1 is taken").arg(requestedPort));
        adapters::Route route;
        route.app = app;
        route.port = requestedPort != 0 ? requestedPort : 41000 + int(m_routes.size());
        route.url = QUrl(QStringLiteral("http://127.0.0.1:%1").arg(route.port));
        m_taken.insert(route.port);
        m_routes.insert(app, route);
        return route;
    }
    Status setBackend(const QString &app, const QString &host, int port) override
    {
        QMutexLocker locker(&m_mutex);
        m_routes[app].backendHost = host;
        m_routes[app].backendPort = port;
        return {};
    }
    Status remove(const QString &app) override
    {
        QMutexLocker locker(&m_mutex);
        m_taken.remove(m_routes.value(app).port);
        m_routes.remove(app);
        return {};
    }
    std::optional<adapters::Route> route(const QString &app) override
    {
        QMutexLocker locker(&m_mutex);
        if (!m_routes.contains(app))
            return std::nullopt;
        return m_routes.value(app);
    }
    adapters::RouterStatus status() override { return {.kind = QStringLiteral("fake")}; }

private:
    const bool m_servesAddresses;
    QMutex m_mutex;
    QHash<QString, adapters::Route> m_routes;
    QSet<int> m_taken;
    QList<adapters::CertificateState> m_certificates;
    QByteArray m_installCa;
};

class FakeSource : public adapters::SourceProvider {
public:
    Status checkUrl(const QString &url) override
    {
        if (url.startsWith(QLatin1String("ext::")) || url.startsWith(QLatin1Char('-')))
            return fail(ErrorCode::Invalid, QStringLiteral("refused URL"), QStringLiteral("source.repo"));
        return {};
    }
    Result<QString> resolve(const QString &, const QString &ref, const adapters::SourceAccess &, const CancelToken &,
                            const std::function<void(const QString &)> &) override
    {
        if (ref == QLatin1String("missing"))
            return fail(ErrorCode::NotFound, QStringLiteral("no ref %1").arg(ref));
        return QStringLiteral("0123456789abcdef0123456789abcdef01234567");
    }
    Result<adapters::SourceCheckout> checkout(const QString &, const QString &ref, const QString &workRoot,
                                              const adapters::SourceAccess &, const CancelToken &,
                                              const std::function<void(const QString &)> &) override
    {
        if (ref == QLatin1String("missing"))
            return fail(ErrorCode::NotFound, QStringLiteral("no ref %1").arg(ref));
        const QString dir = workRoot + QStringLiteral("/checkout-") + QString::number(++m_next);
        QDir().mkpath(dir);
        QFile dockerfile(dir + QStringLiteral("/Dockerfile"));
        if (dockerfile.open(QIODevice::WriteOnly))
            dockerfile.write("FROM scratch\n");
        return adapters::SourceCheckout{QStringLiteral("0123456789abcdef0123456789abcdef01234567"), dir};
    }

private:
    std::atomic_int m_next = 0;
};

// Services kept in memory: provision() makes a running "container" and a volume per slot, a
// backup writes FakeServiceProvisioner::dump() (large enough to take many chunks). It runs on
// the fake runtime ("fake"), so specs with services plan and deploy against FakeRuntime.
class FakeServiceProvisioner : public adapters::ServiceProvisioner {
public:
    static QByteArray dump(const QString &app, const QString &slot, qint64 size)
    {
        QByteArray out;
        out.reserve(size);
        const QByteArray line = QStringLiteral("-- fake dump of %1/%2\n").arg(app, slot).toUtf8();
        while (out.size() < size)
            out += line;
        out.truncate(size);
        return out;
    }

    QString runtimeKind() const override { return QStringLiteral("fake"); }
    QString defaultImage(const QString &kind, const QString &version) const override
    {
        return QStringLiteral("fake/%1:%2").arg(kind, version);
    }
    Result<adapters::ServiceEndpoint> provision(const adapters::ServiceRequest &r, const CancelToken &,
                                                const std::function<void(const QString &)> &) override
    {
        QMutexLocker locker(&m_mutex);
        const bool fresh = !m_services.contains(key(r.installId, r.app, r.slot));
        adapters::ServiceInfo &info = m_services[key(r.installId, r.app, r.slot)];
        info.app = r.app;
        info.slot = r.slot;
        info.kind = r.kind;
        info.image = defaultImage(r.kind, r.version);
        info.containerId = QStringLiteral("svc-%1-%2").arg(r.app, r.slot);
        info.state = QStringLiteral("running");
        info.volume = QStringLiteral("pando-%1-%2-data").arg(r.app, r.slot);
        m_installs[key(r.installId, r.app, r.slot)] = r.installId;
        return adapters::ServiceEndpoint{
            r.slot,     5432, QStringLiteral("pando-%1-services").arg(r.app), info.containerId, info.volume,
            info.image, fresh};
    }
    // Records what it was given (seeds: "app/slot" → the file); seedError set: fails saying it.
    Status seed(const adapters::ServiceRequest &r, const QByteArray &data, const CancelToken &) override
    {
        QMutexLocker locker(&m_mutex);
        if (!seedError.isEmpty())
            return fail(ErrorCode::Failed, seedError);
        seeds.append({r.app + u'/' + r.slot, data});
        return {};
    }
    Result<QList<adapters::ServiceInfo>> list(const QString &installId, const QString &app) override
    {
        QMutexLocker locker(&m_mutex);
        QList<adapters::ServiceInfo> out;
        for (auto it = m_services.cbegin(); it != m_services.cend(); ++it)
            if (m_installs.value(it.key()) == installId && (app.isEmpty() || it->app == app))
                out << *it;
        return out;
    }
    Result<qint64> backup(const adapters::ServiceRequest &r, QIODevice &out, const CancelToken &,
                          const std::function<void(const adapters::BackupProgress &)> &progress) override
    {
        QMutexLocker locker(&m_mutex);
        const adapters::ServiceInfo info = m_services.value(key(r.installId, r.app, r.slot));
        if (info.state != QLatin1String("running"))
            return fail(ErrorCode::Conflict, QStringLiteral("the service in slot %1 is not running").arg(r.slot));
        const QByteArray data = dump(r.app, r.slot, dumpSize);
        qint64 written = 0;
        for (qsizetype at = 0; at < data.size(); at += 65536) {
            const QByteArray chunk = data.mid(at, 65536);
            if (out.write(chunk) != chunk.size())
                return fail(ErrorCode::Failed, QStringLiteral("cannot write the dump: %1").arg(out.errorString()));
            written += chunk.size();
            if (progress)
                progress(adapters::BackupProgress{written});
            if (failAfter >= 0 && written >= failAfter)
                return fail(ErrorCode::Failed, QStringLiteral("the dump of slot %1 broke off").arg(r.slot));
        }
        ++backups;
        return written;
    }
    Status remove(const QString &installId, const QString &app, const QString &slot, bool deleteData) override
    {
        QMutexLocker locker(&m_mutex);
        const QString k = key(installId, app, slot);
        if (!m_services.contains(k))
            return {};
        if (deleteData) {
            m_services.remove(k);
            m_installs.remove(k);
            return {};
        }
        m_services[k].containerId.clear();
        m_services[k].state = QStringLiteral("absent");
        return {};
    }
    // Stops a slot's container, as if it had exited.
    void stop(const QString &app, const QString &slot)
    {
        QMutexLocker locker(&m_mutex);
        for (auto it = m_services.begin(); it != m_services.end(); ++it)
            if (it->app == app && it->slot == slot)
                it->state = QStringLiteral("exited");
    }

    std::atomic<qint64> dumpSize = 3 * 1024 * 1024 + 17; // several chunks, not a round number
    std::atomic_int backups = 0;
    std::atomic<qint64> failAfter = -1; // >= 0: a backup fails once it wrote this many bytes
    // Read and set while no deploy runs.
    QList<QPair<QString, QByteArray>> seeds;
    QString seedError;

private:
    static QString key(const QString &installId, const QString &app, const QString &slot)
    {
        return installId + QLatin1Char('/') + app + QLatin1Char('/') + slot;
    }
    QMutex m_mutex;
    QHash<QString, adapters::ServiceInfo> m_services;
    QHash<QString, QString> m_installs;
};

// An engine with fake adapters, accounts, and an API server on a free loopback port. start()
// bootstraps the administrator "admin" and makes one user and API token per role: token is the
// administrator's (scope admin), tokens["operator"], ["member"], ["viewer"] the others' (every
// scope but admin); members["member"] is user "member", and "member2" is a second member.
struct TestInstall {
    QTemporaryDir dir;
    std::unique_ptr<wiring::Install> install; // the composition root pandod uses, over the fakes
    core::Engine *engine = nullptr;           // install's, once started
    std::unique_ptr<server::ApiServer> server;
    QString token;
    QString initialToken;           // spent by the bootstrap
    QHash<QString, QString> tokens; // username → API token secret
    static constexpr auto Password = "correct horse battery";
    quint16 port = 0;
    QString error;
    bool withPipelines = false;               // set before start(): install a FakePipelineService
    bool realPipelines = false;               // set before start(): the real runner, as pandod wires it
    bool bootstrapAccounts = true;            // false: no users yet, token is the initial token
    FakePipelineService *pipelines = nullptr; // owned by the engine
    std::shared_ptr<FakeServiceProvisioner> services = std::make_shared<FakeServiceProvisioner>();
    std::shared_ptr<FakeRuntime> runtime = std::make_shared<FakeRuntime>();
    std::shared_ptr<FakeRouter> router = std::make_shared<FakeRouter>(); // replace before start()
    core::policy::Policy approvalPolicy; // set before start(): which deploys wait for sign-off
    // Set before start(): how often the health monitor looks; 0 (the default) probes nothing, as
    // the fake's containers answer only where a test listens.
    int healthTickMs = 0;
    // Set before start(): the forge APIs of source connections (a test points them at the
    // stand-in, tests/adapters/forge/forgestandin.h); empty: the install's own, which reach out.
    std::function<std::unique_ptr<adapters::ForgeApi>(const adapters::ForgeAccount &)> forgeApis;
    // Set before start(): the forges' OAuth endpoints; null: the install's own, which reach out.
    std::shared_ptr<const adapters::ForgeOAuth> forgeOAuth;
    // Set before start(): the engine's clock (tests that pass days); null: the real one.
    core::Clock *clock = nullptr;

    bool start()
    {
        if (!dir.isValid()) {
            error = QStringLiteral("no temporary directory");
            return false;
        }
        wiring::InstallOptions options;
        options.engine.dataDir = dir.path();
        options.engine.reconcileIntervalMs = 0;
        options.engine.workers = 1;
        options.engine.approvalPolicy = approvalPolicy;
        options.engine.healthTickMs = healthTickMs;
        options.engine.forgeApis = forgeApis;
        options.engine.forgeOAuth = forgeOAuth;
        if (clock)
            options.clock = clock;
        options.runtime = runtime;
        options.router = router;
        options.source = std::make_shared<FakeSource>();
        options.services = services;
        if (!realPipelines)
            options.installPipelines = [this](core::Engine &engine) -> Status {
                if (withPipelines) {
                    auto service = std::make_unique<FakePipelineService>(*engine.events());
                    pipelines = service.get();
                    engine.setPipelines(std::move(service));
                }
                return {};
            };
        install = std::make_unique<wiring::Install>(std::move(options));
        if (auto opened = install->open(); !opened) {
            error = opened.error().text();
            return false;
        }
        engine = &install->engine();
        auto secret = engine->bootstrapAdminToken();
        if (!secret || !*secret) {
            error = secret ? QStringLiteral("no token was created") : secret.error().text();
            return false;
        }
        initialToken = **secret;
        if (bootstrapAccounts) {
            if (!makeAccounts())
                return false;
            token = tokens.value(QStringLiteral("admin"));
        } else {
            token = initialToken;
        }
        server = std::make_unique<server::ApiServer>(*engine);
        server->setAuthzOptions(install->authzOptions());
        auto bound = server->listen(QHostAddress::LocalHost, 0);
        if (!bound) {
            error = bound.error().text();
            return false;
        }
        port = *bound;
        return true;
    }

    QString baseUrl() const { return QStringLiteral("http://127.0.0.1:%1").arg(port); }

    // Lets the pipeline's tasks run on the host (the install's setting and the pipeline's mark),
    // as an administrator would; tests whose plans use host tasks say so with this.
    bool allowHostExecution(const QString &pipeline)
    {
        auto *service = engine ? engine->pipelines() : nullptr;
        if (!service)
            return false;
        return service->setHostExecution(true, core::Actor{}) &&
               service->setPipelineHostExecution(pipeline, true, core::Actor{});
    }

    bool makeAccounts()
    {
        using namespace core::accounts;
        AccountService &accounts = *engine->accounts();
        const core::Actor actor = core::Actor::system(QStringLiteral("test"));
        const QString password = QString::fromLatin1(Password);
        if (auto admin = accounts.createFirstAdmin(initialToken, QStringLiteral("admin"), password, actor); !admin) {
            error = admin.error().text();
            return false;
        }
        const std::pair<const char *, Role> others[] = {{"operator", Role::Operator},
                                                        {"member", Role::Member},
                                                        {"member2", Role::Member},
                                                        {"viewer", Role::Viewer}};
        for (const auto &[name, role] : others) {
            if (auto user = accounts.createUser(NewUser{QString::fromLatin1(name), {}, role, password}, actor); !user) {
                error = user.error().text();
                return false;
            }
        }
        QStringList userScopes = knownScopes();
        userScopes.removeAll(QStringLiteral("admin"));
        for (const char *name : {"admin", "operator", "member", "member2", "viewer"}) {
            const QString username = QString::fromLatin1(name);
            const QStringList scopes =
                username == QLatin1String("admin") ? QStringList{QStringLiteral("admin")} : userScopes;
            auto issued = accounts.createToken(username, QStringLiteral("test"), scopes, 0, actor);
            if (!issued) {
                error = issued.error().text();
                return false;
            }
            tokens.insert(username, issued->secret);
        }
        return true;
    }

    ~TestInstall()
    {
        server.reset();
        engine = nullptr;
        install.reset();
    }
};

inline QByteArray helloSpec(const QString &name = QStringLiteral("hello"))
{
    return QStringLiteral("name: %1\n"
                          "source:\n"
                          "  repo: https://git.example/hello.git\n"
                          "  ref: main\n"
                          "run:\n"
                          "  port: 8080\n")
        .arg(name)
        .toUtf8();
}

} // namespace pando::test
