// Registry connections: image references read as Docker reads them, which registry connection
// covers which image (never a repository, and no forge's connection an image), and the rules for
// a new one. The store and the forges' rules are tst_sourceconn's.
#include "adapters/api/repoaddress.h"
#include "core/sourceconn/sourceconn.h"

#include <QTest>
#include <functional>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;
using adapters::ForgeKind;
using adapters::ForgeScope;
using sourceconn::AuthKind;
using sourceconn::ConnectionInput;

namespace {

const QString KnownHosts =
    u"ghcr.io ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"_s;

} // namespace

class TestRegistryConnections : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Image references as Docker reads them: the first component is a registry only when it
    // looks like a host; the rest is Docker Hub's, whose one-part names are library/NAME.
    void imageAddresses_data()
    {
        QTest::addColumn<QString>("image");
        QTest::addColumn<QString>("host");
        QTest::addColumn<int>("port");
        QTest::addColumn<QString>("path");
        QTest::newRow("official") << u"nginx"_s << u"docker.io"_s << -1 << u"library/nginx"_s;
        QTest::newRow("official tagged") << u"nginx:1.27-alpine"_s << u"docker.io"_s << -1 << u"library/nginx"_s;
        QTest::newRow("hub user") << u"acme/api:2"_s << u"docker.io"_s << -1 << u"acme/api"_s;
        QTest::newRow("hub by name") << u"docker.io/acme/api"_s << u"docker.io"_s << -1 << u"acme/api"_s;
        QTest::newRow("hub index") << u"index.docker.io/library/redis:7"_s << u"docker.io"_s << -1
                                   << u"library/redis"_s;
        QTest::newRow("ghcr") << u"ghcr.io/acme/api:1.4"_s << u"ghcr.io"_s << -1 << u"acme/api"_s;
        QTest::newRow("gitlab nested") << u"registry.gitlab.com/group/sub/app:main"_s << u"registry.gitlab.com"_s << -1
                                       << u"group/sub/app"_s;
        QTest::newRow("port and digest")
            << u"127.0.0.1:5000/team/web@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"_s
            << u"127.0.0.1"_s << 5000 << u"team/web"_s;
        QTest::newRow("tag and digest") << u"reg.example.com:8443/app:1@sha256:abc"_s << u"reg.example.com"_s << 8443
                                        << u"app"_s;
        QTest::newRow("localhost") << u"localhost/app"_s << u"localhost"_s << -1 << u"app"_s;
        QTest::newRow("capital host") << u"GHCR.io/acme/api"_s << u"ghcr.io"_s << -1 << u"acme/api"_s;
    }
    void imageAddresses()
    {
        QFETCH(QString, image);
        QFETCH(QString, host);
        QFETCH(int, port);
        QFETCH(QString, path);
        auto address = adapters::parseImageAddress(image);
        QVERIFY2(address, qPrintable(address ? QString() : address.error().text()));
        QCOMPARE(address->host, host);
        QCOMPARE(address->port, port);
        QCOMPARE(address->path.join(u'/'), path);
        QCOMPARE(address->transport, adapters::RepoAddress::Transport::Registry);
    }

    // A registry connection covers its registry's images (and its owner's), nothing else; no
    // forge's connection covers an image.
    void registryCoverage()
    {
        const ForgeScope ghcr{ForgeKind::Registry, u"https://ghcr.io"_s, {}};
        const ForgeScope acme{ForgeKind::Registry, u"https://ghcr.io"_s, u"acme"_s};
        const ForgeScope local{ForgeKind::Registry, u"http://127.0.0.1:5000"_s, {}};
        const ForgeScope hub{ForgeKind::Registry, u"https://docker.io"_s, {}};
        const auto score = [](const ForgeScope &scope, const QString &image) {
            return adapters::coverage(scope, true, adapters::parseImageAddress(image).value());
        };
        QCOMPARE(score(ghcr, u"ghcr.io/acme/api:1"_s), 1);
        QCOMPARE(score(acme, u"ghcr.io/acme/api:1"_s), 2);
        QCOMPARE(score(acme, u"ghcr.io/other/api:1"_s), -1);
        QCOMPARE(score(ghcr, u"ghcr.io.evil.example/acme/api"_s), -1);
        QCOMPARE(score(local, u"127.0.0.1:5000/team/web:1"_s), 1);
        QCOMPARE(score(local, u"127.0.0.1/team/web:1"_s), -1);
        QCOMPARE(score(local, u"127.0.0.1:5001/team/web:1"_s), -1);
        QCOMPARE(score(hub, u"nginx"_s), 1);
        QCOMPARE(score(hub, u"acme/api"_s), 1);
        QCOMPARE(score(ghcr, u"nginx"_s), -1);
        QCOMPARE(adapters::coverage(ghcr, false, adapters::parseImageAddress(u"ghcr.io/a/b"_s).value()), -1);
        // The two never cross: a forge on the same host covers no image, a registry no repository.
        const ForgeScope github{ForgeKind::GitHub, u"https://ghcr.io"_s, {}};
        QCOMPARE(score(github, u"ghcr.io/acme/api"_s), -1);
        QCOMPARE(adapters::coverage(ghcr, true, adapters::parseRepoAddress(u"https://ghcr.io/acme/api"_s).value()), -1);
        QCOMPARE(adapters::registryServer(ghcr), u"ghcr.io"_s);
        QCOMPARE(adapters::registryServer(local), u"127.0.0.1:5000"_s);
        QCOMPARE(adapters::registryServer(hub), u"https://index.docker.io/v1/"_s);

        const auto connection = [](const QString &name, const ForgeScope &scope) {
            sourceconn::Connection c;
            c.name = name;
            c.scope = scope;
            return c;
        };
        const QList<sourceconn::Connection> all{connection(u"ghcr"_s, ghcr), connection(u"acme"_s, acme),
                                                connection(u"github"_s, github)};
        QCOMPARE(sourceconn::chooseForImage(all, u"ghcr.io/acme/api:1"_s).value()->name, u"acme"_s);
        QCOMPARE(sourceconn::chooseForImage(all, u"ghcr.io/other/api:1"_s).value()->name, u"ghcr"_s);
        QVERIFY(!sourceconn::chooseForImage(all, u"quay.io/acme/api:1"_s).value());
        QCOMPARE(sourceconn::choose(all, u"https://ghcr.io/acme/api"_s).value()->name, u"github"_s);
    }

    void registryRules()
    {
        ConnectionInput input;
        input.name = u"ghcr"_s;
        input.scope = ForgeScope{ForgeKind::Registry, u"https://ghcr.io"_s, {}};
        input.auth = AuthKind::Token;
        input.secret = "ghp_0123456789abcdefTOKEN";
        input.username = u"robot"_s;
        QVERIFY2(sourceconn::checkConnectionInput(input),
                 qPrintable(sourceconn::checkConnectionInput(input).error().text()));
        const auto refused = [&input](const std::function<void(ConnectionInput &)> &change, const QString &where,
                                      const QString &says) {
            ConnectionInput changed = input;
            change(changed);
            const Status checked = sourceconn::checkConnectionInput(changed);
            QVERIFY2(!checked, qPrintable(where));
            QCOMPARE(checked.error().where, where);
            QVERIFY2(checked.error().message.contains(says), qPrintable(checked.error().text()));
        };
        refused([](ConnectionInput &c) { c.username.clear(); }, u"username"_s, u"user name"_s);
        refused([](ConnectionInput &c) { c.scope.baseUrl = u"https://ghcr.io/acme"_s; }, u"url"_s, u"alone"_s);
        refused([](ConnectionInput &c) { c.scope.baseUrl = u"ssh://ghcr.io"_s; }, u"url"_s, u"alone"_s);
        refused([](ConnectionInput &c) { c.scope.baseUrl = u"http://registry.example.com"_s; }, u"url"_s,
                u"plain http"_s);
        refused(
            [](ConnectionInput &c) {
                c.auth = AuthKind::SshKey;
                c.knownHosts = KnownHosts;
            },
            u"auth"_s, u"docker login"_s);
        input.scope.baseUrl = u"http://127.0.0.1:5000"_s;
        QVERIFY(sourceconn::checkConnectionInput(input));
    }
};

QTEST_GUILESS_MAIN(TestRegistryConnections)
#include "tst_registryconnections.moc"
