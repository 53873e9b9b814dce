// What a member's app may use of the install (issue 12, "Apps, data and accounts"): file://
// repositories, the daemon's ssh-agent and credentials, internal hosts and stable ports only as
// an administrator's settings allow; failed fetches that all look alike; the app limit counting
// the apps a member made; service data kept at removal that only its owners get back; the events
// and approvals a member sees. The engine is real (SQLite in a temporary directory) and reads
// real git repositories (the git fixture's bare repos, through the real GitSource); the runtime,
// router and services are fakes.

#include "adapters/source/generic/gitsource.h"
#include "app/wiring/install.h"
#include "core/accounts/accountservice.h"
#include "core/engine/enginewiring.h"
#include "core/engine/eventfilter.h"
#include "enginepeople.h"
#include "tests/app/server/fakes.h"
#include "tests/support/gitfixture.h"

#include <QElapsedTimer>
#include <QMutex>
#include <QTcpServer>
#include <QTest>

#include <arpa/inet.h>
#include <atomic>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace Qt::StringLiterals;
using namespace pando;
using core::authz::ObjectKind;

namespace {

// The real git source, noting whether each fetch was allowed the install's credentials.
class RecordingSource : public adapters::SourceProvider {
public:
    explicit RecordingSource(const QString &cache) : m_git(cache) {}
    Status checkUrl(const QString &url) override { return m_git.checkUrl(url); }
    Result<QString> resolve(const QString &repo, const QString &ref, const adapters::SourceAccess &access,
                            const CancelToken &cancel, const std::function<void(const QString &)> &progress) override
    {
        note(u"resolve"_s, access);
        return m_git.resolve(repo, ref, access, cancel, progress);
    }
    Result<adapters::SourceCheckout> checkout(const QString &repo, const QString &ref, const QString &workRoot,
                                              const adapters::SourceAccess &access, const CancelToken &cancel,
                                              const std::function<void(const QString &)> &progress) override
    {
        note(u"checkout"_s, access);
        return m_git.checkout(repo, ref, workRoot, access, cancel, progress);
    }
    QStringList take()
    {
        QMutexLocker locker(&m_mutex);
        return std::exchange(m_calls, {});
    }

private:
    void note(const QString &what, const adapters::SourceAccess &access)
    {
        QMutexLocker locker(&m_mutex);
        m_calls.append(what + (access.installCredentials ? u" with"_s : u" without"_s));
    }
    adapters::git::GitSource m_git;
    QMutex m_mutex;
    QStringList m_calls;
};

// A loopback listener on its own thread (the engine's calls block the test's): answers each
// connection with reply (empty: closes it at once).
class Listener {
public:
    explicit Listener(QByteArray reply) : m_reply(std::move(reply))
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (::bind(m_fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 || ::listen(m_fd, 16) != 0 ||
            ::getsockname(m_fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0)
            return;
        m_port = ntohs(addr.sin_port);
        m_thread = std::thread([this] { serve(); });
    }
    ~Listener()
    {
        m_stop = true;
        if (m_thread.joinable())
            m_thread.join();
        ::close(m_fd);
    }
    int port() const { return m_port; }

private:
    void serve()
    {
        while (!m_stop) {
            pollfd p{m_fd, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0)
                continue;
            const int client = ::accept(m_fd, nullptr, nullptr);
            if (client < 0)
                continue;
            if (!m_reply.isEmpty()) {
                char buffer[4096];
                pollfd c{client, POLLIN, 0};
                if (::poll(&c, 1, 1000) > 0)
                    (void)::read(client, buffer, sizeof buffer);
                (void)::write(client, m_reply.constData(), size_t(m_reply.size()));
            }
            ::close(client);
        }
    }
    QByteArray m_reply;
    int m_fd = -1;
    int m_port = 0;
    std::atomic_bool m_stop = false;
    std::thread m_thread;
};

int closedPort()
{
    QTcpServer probe;
    if (!probe.listen(QHostAddress::LocalHost, 0))
        return 0;
    const int port = probe.serverPort();
    probe.close();
    return port;
}

QByteArray spec(const QString &name, const QString &repo, const QString &extra = {})
{
    // Nothing answers the fake runtime's health probe: a deploy ends after a second.
    return u"name: %1\nsource:\n  repo: %2\n  ref: main\nrun:\n  port: 8080\nhealth:\n  timeout: 1s\n%3"_s
        .arg(name, repo, extra)
        .toUtf8();
}

QString text(const Error &e)
{
    return u"[%1] %2 (at %3; hint: %4)"_s.arg(errorCodeName(e.code), e.message, e.where, e.hint);
}

} // namespace

class TestEngineAccess : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void fileRepositoriesNeedTheSetting();
    void internalHostsAreRefused_data();
    void internalHostsAreRefused();
    void failedFetchesLookAlike();
    void theInstallsCredentialsNeedTheSetting();
    void memberPortsAreARange();
    void appLimitCountsTheAppsMade();
    void keptServiceDataStaysWithItsOwners();
    void eventsShowWhatIsGranted();
    void approvalsListFindsTheVisibleOnes();

private:
    void setAccess(const std::function<void(core::policy::AppAccess &)> &change);

    QTemporaryDir m_dir;
    test::GitFixture m_git;
    QString m_repo; // file:// URL of a real repository with a Dockerfile on main
    std::shared_ptr<RecordingSource> m_source;
    std::unique_ptr<wiring::Install> m_install;
    core::Engine *m_engine = nullptr;
    test::EnginePeople m_people;
};

void TestEngineAccess::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY2(m_git.isValid(), "git is needed (Debian's git)");
    m_repo = m_git.createRepository(u"web"_s);
    QVERIFY(!m_repo.isEmpty());
    QVERIFY(!m_git.commit(u"web"_s, u"main"_s, {{u"Dockerfile"_s, test::GitFile{"FROM scratch\n"}}}).isEmpty());

    wiring::InstallOptions options = test::quietInstallOptions(m_dir.path());
    options.runtime = std::make_shared<test::FakeRuntime>();
    options.router = std::make_shared<test::FakeRouter>();
    m_source = std::make_shared<RecordingSource>(m_dir.filePath(u"cache/git"_s));
    options.source = m_source;
    options.services = std::make_shared<test::FakeServiceProvisioner>();
    m_install = std::make_unique<wiring::Install>(std::move(options));
    auto opened = m_install->open();
    QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
    m_engine = &m_install->engine();
    // The first user of an install is its administrator.
    const QString made = m_people.create(*m_engine, {{"ada", core::accounts::Role::Admin},
                                                     {"alice", core::accounts::Role::Member},
                                                     {"bob", core::accounts::Role::Member}});
    QVERIFY2(made.isEmpty(), qPrintable(made));
}

void TestEngineAccess::cleanupTestCase()
{
    m_engine = nullptr;
    m_install.reset();
}

void TestEngineAccess::init()
{
    // Every test starts from a new install's settings.
    setAccess([](core::policy::AppAccess &access) { access = core::policy::AppAccess{}; });
    m_source->take();
}

void TestEngineAccess::setAccess(const std::function<void(core::policy::AppAccess &)> &change)
{
    auto access = m_engine->appAccess();
    QVERIFY(access);
    change(*access);
    auto set = m_engine->setAppAccess(*access, m_people.actor(u"ada"_s));
    QVERIFY2(set, qPrintable(set ? QString() : set.error().text()));
}

void TestEngineAccess::fileRepositoriesNeedTheSetting()
{
    // A member may not have the daemon read a repository on its own disk (another user's
    // private one, the data directory's mirrors)...
    auto refused = m_engine->createApp(spec(u"local-a"_s, m_repo), m_people.actor(u"alice"_s));
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Forbidden);
    QCOMPARE(refused.error().where, u"source.repo"_s);
    QVERIFY2(refused.error().hint.contains(u"local-repositories"_s), qPrintable(text(refused.error())));
    QVERIFY(m_source->take().isEmpty()); // refused before anything was fetched
    QCOMPARE(m_engine->app(u"local-a"_s).error().code, ErrorCode::NotFound);
    // ... nor through updating an app of theirs.
    auto mine = m_engine->createApp(spec(u"local-b"_s, m_repo), m_people.actor(u"ada"_s));
    QVERIFY2(mine, qPrintable(mine ? QString() : text(mine.error())));
    QVERIFY(m_engine->addGrant(ObjectKind::App, u"local-b"_s, u"alice"_s, u"owner"_s, m_people.actor(u"ada"_s)));
    auto moved =
        m_engine->updateApp(u"local-b"_s, spec(u"local-b"_s, m_repo + u"/../web.git"_s), m_people.actor(u"alice"_s));
    QVERIFY(!moved);
    QCOMPARE(moved.error().code, ErrorCode::Forbidden);
    // The deploy of an administrator's app reads it; once a member wrote its spec, it no longer does.
    auto deploy = m_engine->deploy(u"local-b"_s, {}, m_people.actor(u"alice"_s));
    QVERIFY2(deploy, qPrintable(deploy ? QString() : text(deploy.error())));
    test::waitSettled(*m_engine, deploy->id);

    // An administrator allows it: then members may.
    setAccess([](core::policy::AppAccess &access) { access.localRepositories = true; });
    auto allowed = m_engine->createApp(spec(u"local-a"_s, m_repo), m_people.actor(u"alice"_s));
    QVERIFY2(allowed, qPrintable(allowed ? QString() : text(allowed.error())));
    QVERIFY(m_engine->removeApp(u"local-a"_s, m_people.actor(u"alice"_s), core::Engine::ServiceData::Delete));
    test::waitGone(*m_engine, u"local-a"_s);
    QVERIFY(m_engine->removeApp(u"local-b"_s, m_people.actor(u"ada"_s), core::Engine::ServiceData::Delete));
    test::waitGone(*m_engine, u"local-b"_s);
}

void TestEngineAccess::internalHostsAreRefused_data()
{
    QTest::addColumn<QString>("repo");
    QTest::newRow("loopback") << u"http://127.0.0.1:%1/x.git"_s;
    QTest::newRow("loopback elsewhere in 127/8") << u"https://127.3.2.1:%1/x.git"_s;
    QTest::newRow("localhost") << u"http://localhost:%1/x.git"_s;
    QTest::newRow("ipv6 loopback") << u"http://[0:0:0:0:0:0:0:1]:%1/x.git"_s; // "::" is refused as git transport syntax
    QTest::newRow("ipv4-mapped loopback") << u"http://[0:0:0:0:0:ffff:7f00:1]:%1/x.git"_s;
    QTest::newRow("link-local metadata") << u"http://169.254.169.254:%1/latest"_s;
    QTest::newRow("unspecified") << u"http://0.0.0.0:%1/x.git"_s;
    QTest::newRow("ssh to loopback") << u"ssh://git@127.0.0.1:%1/x.git"_s;
    QTest::newRow("scp-like to loopback") << u"git@127.0.0.1:x.git"_s;
}

// A member's repository URL cannot make pandod connect to this machine or its link (the API's own
// port, databases on loopback, the cloud's metadata address).
void TestEngineAccess::internalHostsAreRefused()
{
    QFETCH(QString, repo);
    Listener api("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    QVERIFY(api.port() != 0);
    if (repo.contains(u"%1"_s))
        repo = repo.arg(api.port());
    auto refused = m_engine->createApp(spec(u"probe"_s, repo), m_people.actor(u"alice"_s));
    QVERIFY(!refused);
    QVERIFY2(refused.error().code == ErrorCode::Forbidden, qPrintable(text(refused.error())));
    QCOMPARE(refused.error().where, u"source.repo"_s);
    QVERIFY2(refused.error().hint.contains(u"internal-hosts"_s), qPrintable(text(refused.error())));
    QVERIFY(m_source->take().isEmpty());
    // An administrator's spec is not held to it (the fetch then fails on its own).
    auto admin = m_engine->createApp(spec(u"probe"_s, repo), m_people.actor(u"ada"_s));
    QVERIFY(!admin);
    QVERIFY2(admin.error().code != ErrorCode::Forbidden, qPrintable(text(admin.error())));
}

// With internal hosts allowed, a member's failed fetch still tells nothing of what answered: a
// closed port, a web server, a port that hangs up and a repository that is not there get one
// error, and none of them fails sooner than the floor.
void TestEngineAccess::failedFetchesLookAlike()
{
    setAccess([](core::policy::AppAccess &access) { access.internalHosts = true; });
    Listener web("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello");
    Listener hangUp({});
    const int closed = closedPort();
    QVERIFY(web.port() != 0 && hangUp.port() != 0 && closed != 0);
    const QStringList repos = {
        u"http://127.0.0.1:%1/x.git"_s.arg(closed), u"http://127.0.0.1:%1/x.git"_s.arg(web.port()),
        u"http://127.0.0.1:%1/x.git"_s.arg(hangUp.port()), u"https://127.0.0.1:%1/x.git"_s.arg(web.port())};
    QString first;
    for (const QString &repo : repos) {
        QElapsedTimer timer;
        timer.start();
        auto failed = m_engine->createApp(spec(u"probe"_s, repo), m_people.actor(u"alice"_s));
        const qint64 took = timer.elapsed();
        QVERIFY(!failed);
        QVERIFY2(took >= core::policy::UnreadableSourceFloorMs, qPrintable(u"%1 ms"_s.arg(took)));
        QVERIFY2(took < 10000, qPrintable(u"%1 ms"_s.arg(took)));
        Error e = failed.error();
        e.message.replace(repo, u"URL"_s);
        if (first.isEmpty())
            first = text(e);
        QCOMPARE(text(e), first);
    }
    QVERIFY2(first.contains(u"cannot read URL"_s), qPrintable(first));
    QVERIFY(!first.contains(u"refused"_s) && !first.contains(u"HTTP"_s));
    // An administrator is told what went wrong.
    auto admin = m_engine->createApp(spec(u"probe"_s, repos.first()), m_people.actor(u"ada"_s));
    QVERIFY(!admin);
    Error e = admin.error();
    e.message.replace(repos.first(), u"URL"_s);
    QVERIFY(text(e) != first);
}

// A member's app is fetched without the daemon's ssh-agent and credentials unless an
// administrator gives them; an administrator's app always with them.
void TestEngineAccess::theInstallsCredentialsNeedTheSetting()
{
    setAccess([](core::policy::AppAccess &access) { access.localRepositories = true; });
    QVERIFY(m_engine->createApp(spec(u"creds-a"_s, m_repo), m_people.actor(u"alice"_s)));
    QCOMPARE(m_source->take(), QStringList{u"resolve without"_s});
    auto deploy = m_engine->deploy(u"creds-a"_s, {}, m_people.actor(u"alice"_s));
    QVERIFY2(deploy, qPrintable(deploy ? QString() : text(deploy.error())));
    test::waitSettled(*m_engine, deploy->id);
    QCOMPARE(m_source->take(), (QStringList{u"resolve without"_s, u"checkout without"_s}));

    QVERIFY(m_engine->createApp(spec(u"creds-b"_s, m_repo), m_people.actor(u"ada"_s)));
    QCOMPARE(m_source->take(), QStringList{u"resolve with"_s});

    setAccess([](core::policy::AppAccess &access) { access.sshAgent = true; });
    deploy = m_engine->deploy(u"creds-a"_s, {}, m_people.actor(u"alice"_s));
    QVERIFY(deploy);
    test::waitSettled(*m_engine, deploy->id);
    QCOMPARE(m_source->take(), (QStringList{u"resolve with"_s, u"checkout with"_s}));
    for (const QString &app : {u"creds-a"_s, u"creds-b"_s}) {
        QVERIFY(m_engine->removeApp(app, m_people.actor(u"ada"_s), core::Engine::ServiceData::Delete));
        test::waitGone(*m_engine, app);
    }
}

// Members pick stable ports only from the range an administrator gives them (or none).
void TestEngineAccess::memberPortsAreARange()
{
    setAccess([](core::policy::AppAccess &access) { access.localRepositories = true; });
    auto squat = m_engine->createApp(spec(u"ports"_s, m_repo, u"route:\n  port: 8443\n"_s), m_people.actor(u"alice"_s));
    QVERIFY(!squat);
    QCOMPARE(squat.error().code, ErrorCode::Forbidden);
    QCOMPARE(squat.error().where, u"route.port"_s);
    QVERIFY2(squat.error().message.contains(u"20000-29999"_s), qPrintable(text(squat.error())));
    auto inRange =
        m_engine->createApp(spec(u"ports"_s, m_repo, u"route:\n  port: 20001\n"_s), m_people.actor(u"alice"_s));
    QVERIFY2(inRange, qPrintable(inRange ? QString() : text(inRange.error())));
    auto admin =
        m_engine->createApp(spec(u"ports-admin"_s, m_repo, u"route:\n  port: 8443\n"_s), m_people.actor(u"ada"_s));
    QVERIFY2(admin, qPrintable(admin ? QString() : text(admin.error())));

    setAccess([](core::policy::AppAccess &access) { access.memberPorts = core::policy::PortRange{}; });
    auto none =
        m_engine->createApp(spec(u"ports-b"_s, m_repo, u"route:\n  port: 20002\n"_s), m_people.actor(u"alice"_s));
    QVERIFY(!none);
    QVERIFY2(none.error().hint.contains(u"leave route.port out"_s), qPrintable(text(none.error())));
    auto picked = m_engine->createApp(spec(u"ports-b"_s, m_repo), m_people.actor(u"alice"_s));
    QVERIFY2(picked, qPrintable(picked ? QString() : text(picked.error())));
    QVERIFY(!core::policy::PortRange::parse(u"80-90"_s, u"member_ports"_s));
    QVERIFY(!core::policy::PortRange::parse(u"30000-20000"_s, u"member_ports"_s));
    for (const QString &app : {u"ports"_s, u"ports-admin"_s, u"ports-b"_s}) {
        QVERIFY(m_engine->removeApp(app, m_people.actor(u"ada"_s), core::Engine::ServiceData::Delete));
        test::waitGone(*m_engine, app);
    }
}

// The app limit counts the apps a member made: dropping one's own owner grant frees no place.
void TestEngineAccess::appLimitCountsTheAppsMade()
{
    setAccess([](core::policy::AppAccess &access) { access.localRepositories = true; });
    m_engine->setAuthzOptions(core::authz::AuthzOptions{1});
    const core::accounts::Principal principal = m_people.principal(u"bob"_s);
    const auto mayCreate = [&] {
        auto decision = m_engine->authorize(principal, "apps.write", core::authz::ObjectRef{}, m_people.actor(u"bob"_s),
                                            u"POST /api/v1/apps"_s);
        return decision && decision->allowed;
    };
    QVERIFY(mayCreate());
    QVERIFY(m_engine->createApp(spec(u"limited"_s, m_repo), m_people.actor(u"bob"_s)));
    QVERIFY(!mayCreate());
    QVERIFY(m_engine->removeGrant(ObjectKind::App, u"limited"_s, u"bob"_s, u"owner"_s, m_people.actor(u"bob"_s)));
    QVERIFY2(!mayCreate(), "dropping one's own owner grant must not free a place");
    QVERIFY(m_engine->removeApp(u"limited"_s, m_people.actor(u"ada"_s), core::Engine::ServiceData::Delete));
    test::waitGone(*m_engine, u"limited"_s);
    QVERIFY(mayCreate());
    m_engine->setAuthzOptions(core::authz::AuthzOptions{});
}

// Service data kept at an app's removal is its owners': another member cannot make an app of
// that name and be handed the data; the former owner and an administrator can.
void TestEngineAccess::keptServiceDataStaysWithItsOwners()
{
    setAccess([](core::policy::AppAccess &access) { access.localRepositories = true; });
    const QString withDb = u"services:\n  db: { kind: postgres, version: \"15\" }\n"_s;
    QVERIFY(m_engine->createApp(spec(u"shop"_s, m_repo, withDb), m_people.actor(u"alice"_s)));
    auto deploy = m_engine->deploy(u"shop"_s, {}, m_people.actor(u"alice"_s));
    QVERIFY(deploy);
    test::waitSettled(*m_engine, deploy->id);
    auto services = m_engine->services(u"shop"_s);
    QVERIFY2(services && services->size() == 1, "the deploy made the db slot");
    QVERIFY(m_engine->removeApp(u"shop"_s, m_people.actor(u"alice"_s), core::Engine::ServiceData::Keep));
    test::waitGone(*m_engine, u"shop"_s);

    auto taken = m_engine->createApp(spec(u"shop"_s, m_repo, withDb), m_people.actor(u"bob"_s));
    QVERIFY(!taken);
    QCOMPARE(taken.error().code, ErrorCode::Conflict);
    QCOMPARE(taken.error().where, u"name"_s);
    QVERIFY(m_engine->app(u"shop"_s).error().code == ErrorCode::NotFound);

    auto again = m_engine->createApp(spec(u"shop"_s, m_repo, withDb), m_people.actor(u"alice"_s));
    QVERIFY2(again, qPrintable(again ? QString() : text(again.error())));
    // Removed again, kept for its owners of now; an administrator may always take it.
    QVERIFY(m_engine->removeApp(u"shop"_s, m_people.actor(u"alice"_s), core::Engine::ServiceData::Keep));
    test::waitGone(*m_engine, u"shop"_s);
    QVERIFY(!m_engine->createApp(spec(u"shop"_s, m_repo, withDb), m_people.actor(u"bob"_s)));
    QVERIFY(m_engine->createApp(spec(u"shop"_s, m_repo, withDb), m_people.actor(u"ada"_s)));
    QVERIFY(m_engine->removeApp(u"shop"_s, m_people.actor(u"ada"_s), core::Engine::ServiceData::Delete));
    test::waitGone(*m_engine, u"shop"_s);
    // Deleted: the name is free for anyone.
    auto fresh = m_engine->createApp(spec(u"shop"_s, m_repo, withDb), m_people.actor(u"bob"_s));
    QVERIFY2(fresh, qPrintable(fresh ? QString() : text(fresh.error())));
}

// A watcher of the event stream sees the events of the apps it may read, a grant given or taken
// away shows without reopening the stream, and nobody sees which tokens were revoked.
void TestEngineAccess::eventsShowWhatIsGranted()
{
    setAccess([](core::policy::AppAccess &access) { access.localRepositories = true; });
    QVERIFY(m_engine->createApp(spec(u"watched"_s, m_repo), m_people.actor(u"bob"_s)));
    core::EventFilter ada(*m_engine, m_people.principal(u"ada"_s));
    core::EventFilter alice(*m_engine, m_people.principal(u"alice"_s));
    core::EventFilter bob(*m_engine, m_people.principal(u"bob"_s));
    const core::Event updated{core::EventType::AppUpdated, u"watched"_s};
    QVERIFY(ada.sees(updated));
    QVERIFY(bob.sees(updated));
    QVERIFY(!alice.sees(updated));

    QVERIFY(m_engine->addGrant(ObjectKind::App, u"watched"_s, u"alice"_s, u"deployer"_s, m_people.actor(u"bob"_s)));
    QTRY_VERIFY_WITH_TIMEOUT(alice.sees(updated), 3000);
    QVERIFY(m_engine->removeGrant(ObjectKind::App, u"watched"_s, u"alice"_s, u"deployer"_s, m_people.actor(u"bob"_s)));
    QTRY_VERIFY_WITH_TIMEOUT(!alice.sees(updated), 8000);

    const core::Event revoked{core::EventType::TokenRevoked, {}, {}, QJsonObject{{u"id"_s, 1}}};
    QVERIFY(!ada.sees(revoked));
    QVERIFY(!bob.sees(revoked));

    QVERIFY(m_engine->removeApp(u"watched"_s, m_people.actor(u"ada"_s), core::Engine::ServiceData::Delete));
    test::waitGone(*m_engine, u"watched"_s);
}

// A member's list of approvals holds the newest it may see, however many newer ones it may not
// see there are: the limit is of what the member is shown.
void TestEngineAccess::approvalsListFindsTheVisibleOnes()
{
    setAccess([](core::policy::AppAccess &access) { access.localRepositories = true; });
    QVERIFY(m_engine->createApp(spec(u"waiting"_s, m_repo), m_people.actor(u"bob"_s)));
    auto deploy = m_engine->deploy(u"waiting"_s, {}, m_people.actor(u"bob"_s));
    QVERIFY(deploy);
    test::waitSettled(*m_engine, deploy->id);
    const auto request = [&](const QString &object) {
        return m_engine->approvals().request(QString(core::approval::KindDeploy), object, m_people.actor(u"ada"_s),
                                             u"ship it"_s, u"{}"_s, 0);
    };
    auto bobs = request(u"deploy/"_s + deploy->id);
    QVERIFY(bobs);
    for (int i = 0; i < 250; ++i)
        QVERIFY(request(u"deploy/elsewhere-%1"_s.arg(i)));

    auto seen = m_engine->approvalsVisibleTo(m_people.principal(u"bob"_s), u"pending"_s, 10);
    QVERIFY2(seen, qPrintable(seen ? QString() : text(seen.error())));
    QCOMPARE(seen->size(), 1);
    QCOMPARE(seen->first().id, bobs->id);
    auto none = m_engine->approvalsVisibleTo(m_people.principal(u"alice"_s), u"pending"_s, 10);
    QVERIFY(none && none->isEmpty());
    auto all = m_engine->approvalsVisibleTo(m_people.principal(u"ada"_s), {}, 100);
    QVERIFY(all);
    QCOMPARE(all->size(), 100);
    auto unknown = m_engine->approvalsVisibleTo(m_people.principal(u"ada"_s), u"maybe"_s, 10);
    QVERIFY(!unknown);
    QCOMPARE(unknown.error().where, u"status"_s);

    QVERIFY(m_engine->removeApp(u"waiting"_s, m_people.actor(u"ada"_s), core::Engine::ServiceData::Delete));
    test::waitGone(*m_engine, u"waiting"_s);
}

QTEST_GUILESS_MAIN(TestEngineAccess)
#include "tst_engineaccess.moc"
