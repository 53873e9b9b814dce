// Install, the composition root, over fake adapters: each data directory keeps its own install
// id (made on a fresh one, "default" adopted by one made before ids were kept, an explicit one
// winning), one engine at a time holds a data directory, the Traefik edge is wired with its
// directory and its state in the data directory, and the Caddy edge with Pando getting its
// certificates keeps them in the data directory.

#include "adapters/routing/caddy/caddyedge.h"
#include "app/wiring/install.h"
#include "tests/app/server/fakes.h"
#include "tests/support/component.h"
#include "tests/support/httpbackend.h"

#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;

#define VERIFY_OK(r) QVERIFY2(r, qPrintable(r ? QString() : r.error().text()))

namespace {

wiring::InstallOptions fakeOptions(const QString &dataDir)
{
    wiring::InstallOptions options;
    options.engine.dataDir = dataDir;
    options.engine.reconcileIntervalMs = 0;
    options.engine.healthTickMs = 0; // no probes of the containers unless a test asks
    options.engine.workers = 1;
    options.runtime = std::make_shared<test::FakeRuntime>();
    options.router = std::make_shared<test::FakeRouter>();
    options.source = std::make_shared<test::FakeSource>();
    options.services = std::make_shared<test::FakeServiceProvisioner>();
    options.installPipelines = [](core::Engine &) -> Status {
        return {};
    };
    return options;
}

QString fileText(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()).trimmed() : QString();
}

} // namespace

class TestInstall : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void freshDataDirectoryMakesItsOwnId();
    void dataDirectoryFromBeforeIdsKeepsDefault();
    void explicitIdWinsAndIsNotWritten();
    void unreadableIdFileIsRefused();
    void secondInstallOnALockedDataDirectoryIsRefused();
    void ownLockIsPrivateAndWarnsNothing();
    void traefikEdgeWritesItsConfiguration();
    void cloudflareEdgeOpensWithoutTheApiAndSaysSo();
    void caddyEdgeWithPandosCertificates();
};

void TestInstall::freshDataDirectoryMakesItsOwnId()
{
    QTemporaryDir a;
    QTemporaryDir b;
    QString first;
    {
        wiring::Install install(fakeOptions(a.path()));
        VERIFY_OK(install.open());
        first = install.installId();
        QVERIFY(!first.isEmpty());
        QVERIFY(first != u"default"_s);
        QCOMPARE(install.engine().options().installId, first);
        const QString path = a.filePath(u"install-id"_s);
        QCOMPARE(fileText(path), first);
        QCOMPARE(QFile(path).permissions() &
                     (QFile::ReadGroup | QFile::ReadOther | QFile::WriteGroup | QFile::WriteOther),
                 QFile::Permissions());
    }
    // Opened again, the data directory answers with the same id.
    {
        wiring::Install install(fakeOptions(a.path()));
        VERIFY_OK(install.open());
        QCOMPARE(install.installId(), first);
    }
    // Another data directory is another install.
    wiring::Install other(fakeOptions(b.path()));
    VERIFY_OK(other.open());
    QVERIFY(other.installId() != first);
    QVERIFY(other.installId() != u"default"_s);
}

void TestInstall::dataDirectoryFromBeforeIdsKeepsDefault()
{
    // An install made before each data directory had its id: its state is there, the file not.
    QTemporaryDir dir;
    {
        wiring::InstallOptions options = fakeOptions(dir.path());
        options.engine.installId = u"default"_s;
        wiring::Install install(std::move(options));
        VERIFY_OK(install.open());
    }
    QVERIFY(QFile::exists(dir.filePath(u"pando.db"_s)));
    QVERIFY(!QFile::exists(dir.filePath(u"install-id"_s)));
    wiring::Install install(fakeOptions(dir.path()));
    VERIFY_OK(install.open());
    QCOMPARE(install.installId(), u"default"_s);
    QCOMPARE(fileText(dir.filePath(u"install-id"_s)), u"default"_s);
}

void TestInstall::explicitIdWinsAndIsNotWritten()
{
    QTemporaryDir dir;
    wiring::InstallOptions options = fakeOptions(dir.path());
    options.engine.installId = u"shared-1"_s;
    wiring::Install install(std::move(options));
    VERIFY_OK(install.open());
    QCOMPARE(install.installId(), u"shared-1"_s);
    QCOMPARE(install.engine().options().installId, u"shared-1"_s);
    QVERIFY(!QFile::exists(dir.filePath(u"install-id"_s)));
}

void TestInstall::unreadableIdFileIsRefused()
{
    QTemporaryDir dir;
    QFile file(dir.filePath(u"install-id"_s));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("../not an id\n");
    file.close();
    wiring::Install install(fakeOptions(dir.path()));
    auto opened = install.open();
    QVERIFY(!opened);
    QCOMPARE(opened.error().code, ErrorCode::Invalid);
    QCOMPARE(opened.error().where, file.fileName());
    QVERIFY(!install.isOpen());
    // Nothing half-opened: the lock went with the failure.
    auto lock = wiring::lockDataDirectory(dir.path());
    VERIFY_OK(lock);
}

void TestInstall::secondInstallOnALockedDataDirectoryIsRefused()
{
    QTemporaryDir dir;
    wiring::Install first(fakeOptions(dir.path()));
    VERIFY_OK(first.open());

    wiring::Install second(fakeOptions(dir.path()));
    auto refused = second.open();
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Conflict);
    QVERIFY2(refused.error().message.contains(u"uses this data directory"_s), qPrintable(refused.error().text()));
    QVERIFY2(refused.error().message.contains(QString::number(QCoreApplication::applicationPid())),
             qPrintable(refused.error().text()));
    QVERIFY(!refused.error().hint.isEmpty());
    QVERIFY(!second.isOpen());
    // pandod --rotate-secrets-key takes the same lock.
    QVERIFY(!wiring::lockDataDirectory(dir.path()));

    first.close();
    VERIFY_OK(second.open());
    QCOMPARE(second.installId(), fileText(dir.filePath(u"install-id"_s)));
}

void TestInstall::ownLockIsPrivateAndWarnsNothing()
{
    // The engine warns of files open to other users: Pando's own lock must not be one of them.
    QTemporaryDir dir;
    QTest::failOnWarning(QRegularExpression(u"open to other users"_s));
    wiring::Install install(fakeOptions(dir.path()));
    VERIFY_OK(install.open());
    const QFile::Permissions others =
        QFile::ReadGroup | QFile::WriteGroup | QFile::ExeGroup | QFile::ReadOther | QFile::WriteOther | QFile::ExeOther;
    QCOMPARE(QFile::permissions(dir.filePath(u"pandod.lock"_s)) & others, QFile::Permissions());
}

void TestInstall::traefikEdgeWritesItsConfiguration()
{
    QTemporaryDir dir;
    wiring::InstallOptions options = fakeOptions(dir.filePath(u"data"_s));
    options.router.reset();
    options.edge = wiring::EdgeChoice::Traefik;
    options.traefik.configDir = dir.filePath(u"traefik"_s);
    options.traefik.certResolver = u"letsencrypt"_s;
    {
        wiring::Install install(options);
        VERIFY_OK(install.open());
        const adapters::RouterStatus edge = install.engine().edge();
        QCOMPARE(edge.kind, u"traefik"_s);
        QVERIFY(edge.running);
        QVERIFY(edge.outlivesPando);
        QVERIFY(QFile::exists(dir.filePath(u"traefik/pando.yml"_s)));
        QVERIFY(QFile::exists(dir.filePath(u"data/traefik/routes.json"_s)));
        QVERIFY(QFile::exists(dir.filePath(u"data/traefik/entrypoints.yml"_s)));
        // The log says where the entry points are to be copied from.
        QVERIFY2(install.runtimeNotes().join(u'\n').contains(dir.filePath(u"data/traefik/entrypoints.yml"_s)),
                 qPrintable(install.runtimeNotes().join(u'\n')));
    }
    // Without the directory Traefik watches, nothing opens.
    options.traefik.configDir.clear();
    wiring::Install without(options);
    const Status opened = without.open();
    QVERIFY(!opened);
    QCOMPARE(opened.error().code, ErrorCode::Invalid);
    QVERIFY2(opened.error().message.contains(u"Traefik"_s), qPrintable(opened.error().text()));
    QVERIFY(!without.isOpen());
}

void TestInstall::cloudflareEdgeOpensWithoutTheApiAndSaysSo()
{
    QTemporaryDir dir;
    wiring::InstallOptions options = fakeOptions(dir.filePath(u"data"_s));
    options.router.reset();
    options.edge = wiring::EdgeChoice::Cloudflare;
    options.cloudflare.accountId = u"0123456789abcdef0123456789abcdef"_s;
    options.cloudflare.tunnelId = u"f70ff985-a4ef-4643-bbbc-4a0ed4fc8415"_s;
    options.cloudflare.zoneId = u"fedcba9876543210fedcba9876543210"_s;
    options.cloudflare.apiToken = u"cf-token-Wb7nQ2"_s;
    // Nothing listens there: the tunnel serves what it was last given, and the status says why
    // Pando cannot change it.
    options.cloudflare.apiBase = u"http://127.0.0.1:1/client/v4"_s;
    {
        wiring::Install install(options);
        VERIFY_OK(install.open());
        const adapters::RouterStatus edge = install.engine().edge();
        QCOMPARE(edge.kind, u"cloudflare"_s);
        QVERIFY(edge.outlivesPando);
        QVERIFY2(edge.problem.contains(u"did not answer"_s), qPrintable(edge.problem));
        QVERIFY(!edge.problem.contains(options.cloudflare.apiToken));
        QVERIFY2(install.runtimeNotes().join(u'\n').contains(u"Cloudflare Tunnel"_s),
                 qPrintable(install.runtimeNotes().join(u'\n')));
    }
    // Without a token, nothing opens.
    options.cloudflare.apiToken.clear();
    wiring::Install without(options);
    const Status opened = without.open();
    QVERIFY(!opened);
    QCOMPARE(opened.error().code, ErrorCode::Invalid);
    QVERIFY2(opened.error().message.contains(u"Cloudflare"_s), qPrintable(opened.error().text()));
    QVERIFY(!without.isOpen());
}

void TestInstall::caddyEdgeWithPandosCertificates()
{
    PANDO_REQUIRE_COMPONENT(!adapters::caddy::CaddyEdge::findCaddy().isEmpty(), u"caddy (Debian's caddy package)"_s);
    QTemporaryDir dir;
    wiring::InstallOptions options = fakeOptions(dir.filePath(u"data"_s));
    options.router.reset();
    options.edge = wiring::EdgeChoice::Caddy;
    options.edgeSite.listenHost = u"127.0.0.1"_s;
    options.edgeSite.httpPort = test::unusedPort();
    options.edgeSite.httpsPort = test::unusedPort();
    options.edgeSite.acmeDirectory = u"https://127.0.0.1:1/dir"_s; // no CA: nothing is ordered here
    options.edgeSite.certificates = adapters::caddy::CertificateSource::Pando;
    {
        wiring::Install install(options);
        VERIFY_OK(install.open());
        QCOMPARE(install.engine().edge().kind, u"caddy"_s);
        // Pando's store, private, and the log saying who gets the certificates from where.
        const QFileInfo store(dir.filePath(u"data/edge/certificates"_s));
        QVERIFY(store.isDir());
        QCOMPARE(store.permissions() & 0x0077, QFile::Permissions());
        QVERIFY2(install.runtimeNotes().join(u'\n').contains(u"Pando gets the certificates"_s),
                 qPrintable(install.runtimeNotes().join(u'\n')));
    }
    discardResult(adapters::caddy::CaddyEdge({.stateDir = dir.filePath(u"data/edge"_s)}).stop(),
                  "the Caddy this test started goes with it; a failure leaves a process in a removed directory");
}

QTEST_GUILESS_MAIN(TestInstall)
#include "tst_install.moc"
