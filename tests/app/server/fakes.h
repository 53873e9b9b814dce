#pragma once
// Small in-memory adapters and a running install (engine + API server on a temporary SQLite data
// directory) for the API and CLI tests. The engine is real; only the outside world is faked.

#include "adapters/api/routing.h"
#include "adapters/api/runtime.h"
#include "adapters/api/source.h"
#include "app/server/apiserver.h"
#include "app/wiring/accountwiring.h"
#include "core/accounts/accountservice.h"
#include "core/engine/engine.h"
#include "tests/app/server/pipelinefakes.h"

#include <QDir>
#include <QFile>
#include <QHash>
#include <QMutex>
#include <QSet>
#include <QTemporaryDir>
#include <memory>

namespace pando::test {

class FakeRuntime : public adapters::Runtime {
public:
    adapters::RuntimeCapabilities capabilities() override { return {QStringLiteral("fake"), true, 0, 0}; }
    Status ping() override { return {}; }
    // Apps named "buildfails" fail to build, so that failed deploys can be watched.
    Result<QString> build(const adapters::BuildRequest &request, const CancelToken &,
                          const std::function<void(const QString &)> &progress) override
    {
        if (request.tag.contains(QLatin1String("buildfails")))
            return fail(ErrorCode::Failed, QStringLiteral("the Dockerfile's RUN step exited with 1"));
        if (progress)
            progress(QStringLiteral("built"));
        return QStringLiteral("sha256:fakeimage");
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
        return info.id;
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
    Status start(const QString &) override { return {}; }
    Status stop(const QString &, int) override { return {}; }
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

private:
    QMutex m_mutex;
    int m_next = 0;
    QHash<QString, adapters::ContainerInfo> m_containers;
};

class FakeRouter : public adapters::Router {
public:
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

private:
    QMutex m_mutex;
    QHash<QString, adapters::Route> m_routes;
    QSet<int> m_taken;
};

class FakeSource : public adapters::SourceProvider {
public:
    Status checkUrl(const QString &url) override
    {
        if (url.startsWith(QLatin1String("ext::")) || url.startsWith(QLatin1Char('-')))
            return fail(ErrorCode::Invalid, QStringLiteral("refused URL"), QStringLiteral("source.repo"));
        return {};
    }
    Result<QString> resolve(const QString &, const QString &ref, const CancelToken &,
                            const std::function<void(const QString &)> &) override
    {
        if (ref == QLatin1String("missing"))
            return fail(ErrorCode::NotFound, QStringLiteral("no ref %1").arg(ref));
        return QStringLiteral("0123456789abcdef0123456789abcdef01234567");
    }
    Result<adapters::SourceCheckout> checkout(const QString &, const QString &ref, const QString &workRoot,
                                              const CancelToken &,
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

// An engine with fake adapters, accounts, and an API server on a free loopback port. start()
// bootstraps the administrator "admin" and makes one user and API token per role: token is the
// administrator's (scope admin), tokens["operator"], ["member"], ["viewer"] the others' (every
// scope but admin); members["member"] is user "member", and "member2" is a second member.
struct TestInstall {
    QTemporaryDir dir;
    std::unique_ptr<core::Engine> engine;
    std::unique_ptr<server::ApiServer> server;
    QString token;
    QString initialToken;           // spent by the bootstrap
    QHash<QString, QString> tokens; // username → API token secret
    static constexpr auto Password = "correct horse battery";
    quint16 port = 0;
    QString error;
    bool withPipelines = false;               // set before start(): install a FakePipelineService
    bool bootstrapAccounts = true;            // false: no users yet, token is the initial token
    FakePipelineService *pipelines = nullptr; // owned by the engine
    core::policy::Policy approvalPolicy;      // set before start(): which deploys wait for sign-off

    bool start()
    {
        if (!dir.isValid()) {
            error = QStringLiteral("no temporary directory");
            return false;
        }
        core::EngineOptions options;
        options.dataDir = dir.path();
        options.database.sqlitePath = dir.path() + QStringLiteral("/pando.db");
        options.reconcileIntervalMs = 0;
        options.workers = 1;
        options.approvalPolicy = approvalPolicy;
        engine = std::make_unique<core::Engine>(options, std::make_shared<FakeRuntime>(),
                                                std::make_shared<FakeRouter>(), std::make_shared<FakeSource>());
        if (auto started = engine->start(); !started) {
            error = started.error().text();
            return false;
        }
        auto secret = engine->bootstrapAdminToken();
        if (!secret || !*secret) {
            error = secret ? QStringLiteral("no token was created") : secret.error().text();
            return false;
        }
        initialToken = **secret;
        if (auto accounts = wiring::installAccounts(*engine); !accounts) {
            error = accounts.error().text();
            return false;
        }
        if (bootstrapAccounts) {
            if (!makeAccounts())
                return false;
            token = tokens.value(QStringLiteral("admin"));
        } else {
            token = initialToken;
        }
        if (withPipelines) {
            auto service = std::make_unique<FakePipelineService>(*engine->events());
            pipelines = service.get();
            engine->setPipelines(std::move(service));
        }
        server = std::make_unique<server::ApiServer>(*engine);
        auto bound = server->listen(QHostAddress::LocalHost, 0);
        if (!bound) {
            error = bound.error().text();
            return false;
        }
        port = *bound;
        return true;
    }

    QString baseUrl() const { return QStringLiteral("http://127.0.0.1:%1").arg(port); }

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
        if (engine)
            engine->shutdown();
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
