// Apps deployed from an image (source.image) through the engine on the real Docker engine, with
// a real registry on loopback (Debian's docker-registry): pulled and served, a new push to the
// tag deployed by the next deploy, the engine's copy used for a pinned tag when the registry is
// gone, a missing image said of source.image, and nothing left behind. A second registry wants a
// login (htpasswd): its images are pulled through a registry connection, which tests say the
// truth of, and the password is in no log, error or audit line.
#include "adapters/kit/dockerapi/dockerpull.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/core/engine/enginepeople.h"
#include "tests/support/component.h"
#include "tests/support/registry.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

using namespace Qt::StringLiterals;
using namespace pando;
using pando::test::DockerHarness;
using pando::test::EngineFixture;
using pando::test::GitFixture;
using pando::test::httpGet;
using pando::test::ImageRegistry;

class TestImageSource : public QObject {
    Q_OBJECT

    std::unique_ptr<EngineFixture> m_fx;
    ImageRegistry m_registry;
    static constexpr QLatin1StringView Password{"s3cret-Registry-Pass-42"};
    ImageRegistry m_private{u"robot"_s, Password};
    QStringList m_localTags; // tags this test put on the engine, removed at the end
    test::EnginePeople m_people;

    QString image(const QString &tagged) const { return m_registry.host() + u"/team/"_s + tagged; }

    // Builds an image serving body on 8080 and pushes it to the registry as reference, then
    // leaves the engine without that tag (as on a machine that never pulled it).
    bool publish(const QString &reference, const QByteArray &body, const adapters::RegistryCredential &login = {})
    {
        QTemporaryDir dir;
        QFile dockerfile(dir.filePath(u"Dockerfile"_s));
        const QByteArray text = "FROM pando/busybox:latest\nRUN echo '" + body +
                                "' > /www/index.html\nEXPOSE 8080\n"
                                "CMD [\"/bin/httpd\", \"-f\", \"-p\", \"8080\", \"-h\", \"/www\"]\n";
        if (!dockerfile.open(QIODevice::WriteOnly) || dockerfile.write(text) != text.size())
            return false;
        dockerfile.close();
        adapters::BuildRequest request;
        request.contextDir = dir.path();
        request.tag = reference;
        request.labels = {{u"dev.pando.test"_s, u"imagesource"_s}};
        auto built = m_fx->docker().build(request, CancelToken(), {});
        if (!built) {
            qWarning("%s", qPrintable(built.error().text()));
            return false;
        }
        adapters::dockerapi::Request push;
        push.method = "POST";
        push.path = u"/images/"_s + reference.section(u':', 0, -2) + u"/push"_s;
        push.addQuery(u"tag"_s, reference.section(u':', -1));
        push.headers.append({"X-Registry-Auth", login.username.isEmpty()
                                                    ? QByteArray("{}").toBase64()
                                                    : adapters::dockerapi::registryAuthHeader(login)});
        push.timeoutMs = 60000;
        auto pushed = m_fx->docker().client().call(push);
        if (!pushed || pushed->body.contains("\"error\"")) {
            qWarning("push: %s", pushed ? pushed->body.constData() : qPrintable(pushed.error().text()));
            return false;
        }
        return bool(m_fx->docker().removeImage(reference));
    }

    core::DeployView deploy(const QString &app) { return m_fx->deployRetired(app, 120000); }

    // The deploy's output, one line after another (empty when it cannot be read).
    QString logOf(const core::DeployView &view)
    {
        auto log = m_fx->engine().deployLog(view.record.id, -1, 0, 5000);
        QStringList lines;
        if (log)
            for (const core::StepLogLine &line : std::as_const(*log))
                lines << line.text;
        return lines.join(u'\n');
    }

    QByteArray served(const QString &app)
    {
        auto view = m_fx->engine().app(app);
        return view ? httpGet(QUrl(view->url), 5000).body.trimmed() : QByteArray();
    }

    static QByteArray spec(const QString &app, const QString &image, const QString &extra = {})
    {
        return u"name: %1\nsource:\n  image: %2\n%3run:\n  resources: { memory: 64Mi }\nhealth:\n  timeout: 20s\n"_s
            .arg(app, image, extra)
            .toUtf8();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), u"Docker Engine: "_s + why);
        PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), u"git"_s);
        PANDO_REQUIRE_COMPONENT(ImageRegistry::available(&why), why);
        auto base = DockerHarness::ensureBaseImage();
        QVERIFY2(base, qPrintable(base ? QString() : base.error().text()));
        QVERIFY2(m_registry.start(), qPrintable(m_registry.error()));
        m_fx = std::make_unique<EngineFixture>();
        QVERIFY(m_fx->start());
        QVERIFY(publish(image(u"web:latest"_s), "v1"));
        QVERIFY(publish(image(u"web:1"_s), "pinned one"));
        QVERIFY2(m_private.start(), qPrintable(m_private.error()));
        QVERIFY(publish(privateImage(), "private one", {m_private.host(), u"robot"_s, Password.toString().toUtf8()}));
    }

    QString privateImage() const { return m_private.host() + u"/acme/secret:1"_s; }

    core::sourceconn::ConnectionInput registryConnection(const QString &name, const QString &owner,
                                                         const QByteArray &password) const
    {
        core::sourceconn::ConnectionInput input;
        input.name = name;
        input.scope = adapters::ForgeScope{adapters::ForgeKind::Registry, u"http://"_s + m_private.host(), owner};
        input.username = u"robot"_s;
        input.secret = password;
        return input;
    }

    void cleanupTestCase()
    {
        if (!m_fx)
            return;
        for (const QString &app : {u"web"_s, u"pinned"_s, u"absent"_s, u"secret"_s, u"based"_s})
            if (m_fx->engine().app(app))
                QVERIFY2(m_fx->engine().removeApp(app, core::Actor{}), qPrintable(app));
        for (const QString &app : {u"web"_s, u"pinned"_s, u"absent"_s, u"secret"_s, u"based"_s})
            QTRY_VERIFY_WITH_TIMEOUT(!m_fx->engine().app(app), 60000);
        for (const QString &tag : std::as_const(m_localTags))
            QVERIFY2(m_fx->docker().removeImage(tag), qPrintable(tag));
        m_fx->cleanDocker();
        m_fx.reset();
    }

    // A tag of latest is asked of the registry at every deploy: what was pushed last serves.
    void latestIsPulledAtEveryDeploy()
    {
        auto created = m_fx->engine().createApp(spec(u"web"_s, image(u"web:latest"_s)), core::Actor{});
        QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
        const core::DeployView first = deploy(u"web"_s);
        QVERIFY2(first.record.status == core::DeployStatus::Succeeded,
                 qPrintable(first.record.failedStep + u": "_s + first.record.error));
        QCOMPARE(served(u"web"_s), QByteArray("v1"));
        QCOMPARE(first.record.port, 8080); // the image's EXPOSE
        QCOMPARE(test::stepDetail(first, u"fetch"_s),
                 u"image %1, asked of its registry at the build"_s.arg(image(u"web:latest"_s)));
        QCOMPARE(test::stepDetail(first, u"detect"_s), u"(no step detect)"_s); // nothing to detect in an image
        QVERIFY2(test::stepDetail(first, u"build"_s).startsWith(image(u"web:latest"_s) + u" as sha256:"_s),
                 qPrintable(test::stepDetail(first, u"build"_s)));
        QCOMPARE(first.record.commit, first.record.imageId);
        QCOMPARE(first.record.ref, image(u"web:latest"_s));
        // A ref is a repository's: refused, saying what to do instead.
        auto withRef = m_fx->engine().deploy(u"web"_s, u"v2"_s, core::Actor{});
        QVERIFY(!withRef);
        QCOMPARE(withRef.error().where, u"ref"_s);
        QVERIFY2(withRef.error().message.contains("which has no ref"_L1), qPrintable(withRef.error().text()));
        // The deployed image is the install's, with its labels: removed with the app.
        auto images = m_fx->docker().images(m_fx->installLabels());
        QVERIFY(images);
        QVERIFY(std::any_of(images->cbegin(), images->cend(),
                            [&first](const adapters::ImageInfo &i) { return i.id == first.record.imageId; }));

        QVERIFY(publish(image(u"web:latest"_s), "v2"));
        const core::DeployView second = deploy(u"web"_s);
        QVERIFY2(second.record.status == core::DeployStatus::Succeeded, qPrintable(second.record.error));
        QCOMPARE(served(u"web"_s), QByteArray("v2"));
        QVERIFY(second.record.imageId != first.record.imageId);
    }

    // Any other tag is the engine's copy when it has one: with the registry gone, it deploys;
    // asked to pull always, it fails and says how to use that copy.
    void pinnedTagUsesTheEnginesCopy()
    {
        auto created = m_fx->engine().createApp(spec(u"pinned"_s, image(u"web:1"_s)), core::Actor{});
        QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
        QVERIFY(deploy(u"pinned"_s).record.status == core::DeployStatus::Succeeded);
        QCOMPARE(served(u"pinned"_s), QByteArray("pinned one"));

        // The engine has it as `docker pull` leaves it; the registry stops answering.
        adapters::dockerapi::Request pull;
        pull.method = "POST";
        pull.path = u"/images/create"_s;
        pull.addQuery(u"fromImage"_s, image(u"web"_s)).addQuery(u"tag"_s, u"1"_s);
        pull.timeoutMs = 60000;
        QVERIFY(m_fx->docker().client().call(pull));
        m_localTags << image(u"web:1"_s);
        m_registry.stop();
        const auto restart = qScopeGuard([this] { QVERIFY2(m_registry.start(), qPrintable(m_registry.error())); });

        const core::DeployView offline = deploy(u"pinned"_s);
        QVERIFY2(offline.record.status == core::DeployStatus::Succeeded,
                 qPrintable(offline.record.failedStep + u": "_s + offline.record.error));
        QCOMPARE(test::stepDetail(offline, u"fetch"_s),
                 u"image %1, the engine's copy when it has one"_s.arg(image(u"web:1"_s)));
        QCOMPARE(served(u"pinned"_s), QByteArray("pinned one"));

        auto always = m_fx->engine().updateApp(u"pinned"_s, spec(u"pinned"_s, image(u"web:1"_s), u"  pull: always\n"_s),
                                               core::Actor{});
        QVERIFY2(always, qPrintable(always ? QString() : always.error().text()));
        const core::DeployView refused = deploy(u"pinned"_s);
        QCOMPARE(refused.record.status, core::DeployStatus::Failed);
        QCOMPARE(refused.record.failedStep, u"build"_s);
        QVERIFY2(refused.record.error.startsWith(u"source.image: the image %1"_s.arg(image(u"web:1"_s))),
                 qPrintable(refused.record.error));
        QVERIFY2(refused.record.error.contains("source.pull: missing"_L1), qPrintable(refused.record.error));
        QCOMPARE(served(u"pinned"_s), QByteArray("pinned one")); // the serving version stays
    }

    void missingImageIsSaidOfTheSpec()
    {
        auto created = m_fx->engine().createApp(spec(u"absent"_s, image(u"nothing-here:3"_s)), core::Actor{});
        QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
        const core::DeployView view = deploy(u"absent"_s);
        QCOMPARE(view.record.status, core::DeployStatus::Failed);
        QCOMPARE(view.record.failedStep, u"build"_s);
        QVERIFY2(view.record.error.startsWith(
                     u"source.image: the image %1 is not on the Docker engine"_s.arg(image(u"nothing-here:3"_s))),
                 qPrintable(view.record.error));
        QVERIFY2(view.record.error.contains(u"docker pull %1"_s.arg(image(u"nothing-here:3"_s))),
                 qPrintable(view.record.error));
    }

    // An image on a registry that wants a login: refused without one, told why; through a
    // registry connection with the wrong password, refused naming the connection and how to
    // test it; with the right one (the closest connection, chosen by its owner) pulled and
    // served. The password shows nowhere.
    void privateImageIsPulledThroughARegistryConnection()
    {
        core::Engine &engine = m_fx->engine();
        auto created = engine.createApp(spec(u"secret"_s, privateImage()), core::Actor{});
        QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
        const core::DeployView anonymous = deploy(u"secret"_s);
        QCOMPARE(anonymous.record.status, core::DeployStatus::Failed);
        QCOMPARE(anonymous.record.failedStep, u"build"_s);
        QVERIFY2(anonymous.record.error.contains(u"wants a login"_s), qPrintable(anonymous.record.error));
        QVERIFY2(anonymous.record.error.contains(u"--kind registry --url http://"_s + m_private.host()),
                 qPrintable(anonymous.record.error));

        // Wrong password: its tests say so, and so does a deploy through it.
        QVERIFY(engine.addConnection(registryConnection(u"wrong"_s, {}, "not-the-password"), core::Actor{}));
        auto login = engine.testRegistryConnection(u"wrong"_s, {}, core::Actor{});
        QVERIFY(!login);
        QCOMPARE(login.error().code, ErrorCode::Failed);
        QVERIFY2(login.error().message.contains(u"refused the login"_s), qPrintable(login.error().text()));
        auto read = engine.testRegistryConnection(u"wrong"_s, privateImage(), core::Actor{});
        QVERIFY(!read);
        QVERIFY2(read.error().message.contains(u"refused the credential for "_s + privateImage()),
                 qPrintable(read.error().text()));
        QVERIFY(engine.connection(u"wrong"_s, core::Actor{})->checkResult.startsWith(u"failed: "_s));
        QVERIFY(engine.updateApp(u"secret"_s, spec(u"secret"_s, privateImage()), core::Actor{}));
        QCOMPARE(engine.app(u"secret"_s)->record.sourceConnection, u"wrong"_s);
        const core::DeployView refused = deploy(u"secret"_s);
        QCOMPARE(refused.record.status, core::DeployStatus::Failed);
        QVERIFY2(refused.record.error.contains(u"pando connections test wrong "_s + privateImage()),
                 qPrintable(refused.record.error));

        // The right password, on a connection narrowed to the owner: it is the closer, and chosen.
        QVERIFY(engine.addConnection(registryConnection(u"acme"_s, u"acme"_s, Password.toString().toUtf8()),
                                     core::Actor{}));
        QVERIFY(engine.testRegistryConnection(u"acme"_s, {}, core::Actor{}));
        auto digest = engine.testRegistryConnection(u"acme"_s, privateImage(), core::Actor{});
        QVERIFY2(digest, qPrintable(digest ? QString() : digest.error().text()));
        QVERIFY2(digest->startsWith(u"sha256:"_s), qPrintable(*digest));
        QVERIFY(engine.updateApp(u"secret"_s, spec(u"secret"_s, privateImage()), core::Actor{}));
        QCOMPARE(engine.app(u"secret"_s)->record.sourceConnection, u"acme"_s);
        const core::DeployView pulled = deploy(u"secret"_s);
        QVERIFY2(pulled.record.status == core::DeployStatus::Succeeded,
                 qPrintable(pulled.record.failedStep + u": "_s + pulled.record.error));
        QCOMPARE(served(u"secret"_s), QByteArray("private one"));
        const QString pulledLog = logOf(pulled);
        QVERIFY2(pulledLog.contains(u"pulling %1 from %2 as robot"_s.arg(privateImage(), m_private.host())),
                 qPrintable(pulledLog));
        for (const QString &text : {pulledLog, refused.record.error, read.error().text()})
            QVERIFY(!text.contains(Password) && !text.contains("not-the-password"_L1));
        m_localTags << privateImage();

        // A registry connection reads no repository, and a forge's connection pulls no image.
        auto asRepo = engine.testConnection(u"acme"_s, u"https://example.com/acme/api.git"_s, {}, core::Actor{});
        QVERIFY(!asRepo);
        QVERIFY2(asRepo.error().hint.contains(u"IMAGE"_s), qPrintable(asRepo.error().text()));
        auto repoThroughRegistry = engine.createApp(
            u"name: misread\nsource:\n  repo: https://example.com/acme/api.git\n  connection: acme\n"_s.toUtf8(),
            core::Actor{});
        QVERIFY(!repoThroughRegistry);
        QCOMPARE(repoThroughRegistry.error().where, u"source.connection"_s);
        QVERIFY2(repoThroughRegistry.error().message.contains(u"image registry"_s),
                 qPrintable(repoThroughRegistry.error().text()));
    }

    // A repository whose Dockerfile builds FROM the private image (named through a global ARG):
    // pulled through a registry connection its spec's writer may use at the time of the build.
    // A member without one is told how to get one; granted acme, her build pulls through it;
    // given only the connection with the wrong password, the build names it and how to test it.
    void privateBaseImageIsPulledThroughTheWritersConnection()
    {
        core::Engine &engine = m_fx->engine();
        const QString made =
            m_people.create(engine, {{"ada", core::accounts::Role::Admin}, {"alice", core::accounts::Role::Member}});
        QVERIFY2(made.isEmpty(), qPrintable(made));
        const core::Actor ada = m_people.actor(u"ada"_s);
        const core::Actor alice = m_people.actor(u"alice"_s);
        auto access = engine.appAccess();
        QVERIFY(access);
        access->localRepositories = true; // the repository is a file:// one here
        QVERIFY(engine.setAppAccess(*access, ada));

        const auto forgetPrivateImage = [this] {
            if (m_localTags.removeAll(privateImage()) > 0)
                QVERIFY2(m_fx->docker().removeImage(privateImage()), qPrintable(privateImage()));
        };
        forgetPrivateImage();
        const QString repo = m_fx->git().createRepository(u"based"_s);
        const auto commit = [this](const QByteArray &body) {
            const QByteArray dockerfile = "# syntax=docker/dockerfile:1\nARG BASE=" + privateImage().toUtf8() +
                                          "\nFROM ${BASE}\nRUN echo '" + body + "' > /www/index.html\n";
            return !m_fx->git().commit(u"based"_s, u"main"_s, {{u"Dockerfile"_s, {dockerfile}}}).isEmpty();
        };
        QVERIFY(commit("built on a private base"));
        auto created = engine.createApp(
            u"name: based\nsource:\n  repo: %1\nrun:\n  resources: { memory: 64Mi }\nhealth:\n  timeout: 20s\n"_s
                .arg(repo)
                .toUtf8(),
            alice);
        QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
        QCOMPARE(created->record.specWriter, m_people.user(u"alice"_s).id);
        QCOMPARE(created->record.sourceTrusted, false);

        const core::DeployView without = deploy(u"based"_s);
        QCOMPARE(without.record.status, core::DeployStatus::Failed);
        QCOMPARE(without.record.failedStep, u"build"_s);
        QVERIFY2(without.record.error.contains(u"the base image %1"_s.arg(privateImage())) &&
                     without.record.error.contains(u"wants a login"_s),
                 qPrintable(without.record.error));
        QVERIFY2(without.record.error.contains(u"spec writer may use"_s) &&
                     without.record.error.contains(u"--kind registry --url http://"_s + m_private.host()),
                 qPrintable(without.record.error));

        QVERIFY(engine.addGrant(core::authz::ObjectKind::Connection, u"acme"_s, u"alice"_s, u"user"_s, ada));
        const core::DeployView pulled = deploy(u"based"_s);
        QVERIFY2(pulled.record.status == core::DeployStatus::Succeeded,
                 qPrintable(pulled.record.failedStep + u": "_s + pulled.record.error));
        m_localTags << privateImage();
        QCOMPARE(served(u"based"_s), QByteArray("built on a private base"));
        const QString text = logOf(pulled);
        QVERIFY2(text.contains(u"%1 is pulled through connection acme"_s.arg(privateImage())), qPrintable(text));
        QVERIFY2(text.contains(u"pulling %1 from %2 as robot"_s.arg(privateImage(), m_private.host())),
                 qPrintable(text));

        // Only the connection with the wrong password left to her: the build names it.
        QVERIFY(engine.removeGrant(core::authz::ObjectKind::Connection, u"acme"_s, u"alice"_s, u"user"_s, ada));
        QVERIFY(engine.addGrant(core::authz::ObjectKind::Connection, u"wrong"_s, u"alice"_s, u"user"_s, ada));
        forgetPrivateImage();
        QVERIFY(commit("a second version")); // a new commit: the first one's image is not reused
        const core::DeployView refused = deploy(u"based"_s);
        QCOMPARE(refused.record.status, core::DeployStatus::Failed);
        QVERIFY2(refused.record.error.startsWith(
                     u"Dockerfile (FROM %1): the registry refused the credential"_s.arg(privateImage())),
                 qPrintable(refused.record.error));
        QVERIFY2(refused.record.error.contains(u"pando connections test wrong "_s + privateImage()),
                 qPrintable(refused.record.error));
        QCOMPARE(served(u"based"_s), QByteArray("built on a private base")); // the serving version stays

        // Two that cover the image equally: which one is not guessed.
        QVERIFY(engine.addConnection(registryConnection(u"twin"_s, {}, "not-the-password"), ada));
        QVERIFY(engine.addGrant(core::authz::ObjectKind::Connection, u"twin"_s, u"alice"_s, u"user"_s, ada));
        const core::DeployView twins = deploy(u"based"_s);
        QCOMPARE(twins.record.status, core::DeployStatus::Failed);
        QVERIFY2(twins.record.error.startsWith(u"build.dockerfile: connections "_s) &&
                     twins.record.error.contains(u"cover %1 equally"_s.arg(privateImage())),
                 qPrintable(twins.record.error));
        QVERIFY(engine.removeConnection(u"twin"_s, ada));

        // Written again by an administrator: every connection is theirs, and the closest pulls.
        QVERIFY(engine.updateApp(u"based"_s, created->record.specYaml.toUtf8(), ada));
        QCOMPARE(engine.app(u"based"_s)->record.specWriter, m_people.user(u"ada"_s).id);
        const core::DeployView admins = deploy(u"based"_s);
        QVERIFY2(admins.record.status == core::DeployStatus::Succeeded,
                 qPrintable(admins.record.failedStep + u": "_s + admins.record.error));
        m_localTags << privateImage();
        QCOMPARE(served(u"based"_s), QByteArray("a second version"));
        for (const QString &shown : {text, without.record.error, refused.record.error, twins.record.error})
            QVERIFY(!shown.contains(Password) && !shown.contains("not-the-password"_L1));
        QVERIFY(engine.removeApp(u"based"_s, ada));
    }
};

QTEST_GUILESS_MAIN(TestImageSource)
#include "tst_imagesource.moc"
