// The corpus (tests/corpus/apps): six apps laid out as public ones are, each deployed through the
// engine on the real Docker engine as it is, with a spec that names only its repository. What
// each needs beyond that is the figure this test keeps: which deploy unchanged (asserted, so
// that a change shows), and for the others that the failure says what to set and that the spec
// lines it names make them deploy. Their base images are stand-ins made on the engine for the
// run (tests/corpus/standins/README.md).
#include "tests/adapters/docker/dockerharness.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/support/component.h"

#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using pando::test::DockerHarness;
using pando::test::EngineFixture;
using pando::test::GitFile;
using pando::test::GitFiles;
using pando::test::GitFixture;
using pando::test::httpGet;

namespace {

const QString StandinLabel = u"dev.pando.corpus-standin"_s;

// An app's files as the corpus keeps them, for a commit.
GitFiles corpusApp(const QString &name)
{
    GitFiles files;
    const QString root = test::sourceDir() + u"/tests/corpus/apps/"_s + name;
    QDirIterator it(root, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        QFile f(it.next());
        if (f.open(QIODevice::ReadOnly))
            files.insert(QDir(root).relativeFilePath(f.fileName()), GitFile{f.readAll()});
    }
    return files;
}

} // namespace

class TestAppCorpus : public QObject {
    Q_OBJECT

    std::unique_ptr<EngineFixture> m_fx;
    QString m_run;
    QStringList m_madeTags;  // the stand-in tags this run made, removed at the end
    QStringList m_unusable;  // official tags the engine has for real: their apps are skipped
    QStringList m_unchanged; // the apps that deployed as they are
    QStringList m_report;

    adapters::Labels standinLabels() const { return {{u"dev.pando.test"_s, m_run}, {StandinLabel, u"1"_s}}; }

    // Builds a stand-in image from tests/corpus/standins; returns its id.
    Result<QString> buildStandin(const QString &dockerfile, const QString &tag, const QMap<QString, QString> &args = {})
    {
        adapters::BuildRequest request;
        request.contextDir = test::sourceDir() + u"/tests/corpus/standins"_s;
        request.dockerfile = dockerfile;
        request.tag = tag;
        request.labels = standinLabels();
        request.buildArgs = args;
        return m_fx->docker().build(request, CancelToken(), {});
    }

    // Tags id as an official image's name, unless the engine has that name as a real image.
    void tagAs(const QString &id, const QString &tag)
    {
        if (auto present = m_fx->docker().client().get(u"/images/"_s + tag + u"/json"_s)) {
            const QJsonObject labels =
                present->json().object().value("Config"_L1).toObject().value("Labels"_L1).toObject();
            if (!labels.contains(StandinLabel)) {
                m_unusable << tag;
                return;
            }
        }
        QVERIFY2(m_fx->docker().tagImage(id, tag), qPrintable(tag));
        m_madeTags << tag;
    }

    void skipUnlessStandins(const QStringList &tags)
    {
        for (const QString &tag : tags)
            if (m_unusable.contains(tag))
                QSKIP(qPrintable(u"the engine has a real %1; the corpus does not replace it"_s.arg(tag)));
    }

    QString createFromCorpus(const QString &app, const QString &extra = {})
    {
        const QString repo = m_fx->git().createRepository(app);
        if (repo.isEmpty() || m_fx->git().commit(app, u"main"_s, corpusApp(app)).isEmpty())
            return {};
        auto created = m_fx->engine().createApp(spec(app, repo, extra), core::Actor{});
        if (!created) {
            qWarning("%s", qPrintable(created.error().text()));
            return {};
        }
        return repo;
    }
    static QByteArray spec(const QString &app, const QString &repo, const QString &extra = {})
    {
        return u"name: %1\nsource:\n  repo: %2\n  ref: main\n%3"_s.arg(app, repo, extra).toUtf8();
    }

    core::DeployView deploy(const QString &app) { return m_fx->deployRetired(app, 180000); }

    // The app's spec with extra lines added; then a deploy of it.
    core::DeployView deployWith(const QString &app, const QString &repo, const QString &extra)
    {
        auto updated = m_fx->engine().updateApp(app, spec(app, repo, extra), core::Actor{});
        if (!updated) {
            qWarning("the spec was refused: %s", qPrintable(updated.error().text()));
            return {};
        }
        return deploy(app);
    }

    QByteArray page(const QString &app, const QString &path = u"/"_s, int *status = nullptr)
    {
        auto view = m_fx->engine().app(app);
        if (!view)
            return {};
        QUrl url(view->url);
        url.setPath(path);
        const test::HttpAnswer answer = httpGet(url, 5000);
        if (status)
            *status = answer.status;
        return answer.body.trimmed();
    }

    // The build step's output of a deploy.
    QStringList buildLog(const core::DeployView &view)
    {
        QStringList lines;
        for (const auto &step : view.steps)
            if (step.name == "build"_L1)
                if (auto log = m_fx->engine().deployLog(view.record.id, step.seq, 0, 5000))
                    for (const core::StepLogLine &line : std::as_const(*log))
                        lines << line.text;
        return lines;
    }

    void unchanged(const QString &app, const QString &note)
    {
        m_unchanged << app;
        m_report << u"%1: deployed unchanged%2"_s.arg(app, note.isEmpty() ? QString() : u"; "_s + note);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), u"Docker Engine: "_s + why);
        PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), u"git"_s);
        auto base = DockerHarness::ensureBaseImage();
        QVERIFY2(base, qPrintable(base ? QString() : base.error().text()));
        m_run = u"corpus%1"_s.arg(QRandomGenerator::global()->generate() % 1000000);
        m_fx = std::make_unique<EngineFixture>();
        QVERIFY(m_fx->git().isValid());
        QVERIFY(m_fx->start());

        auto toolbox = buildStandin(u"Dockerfile"_s, u"pando-test/corpus-toolbox:"_s + m_run);
        QVERIFY2(toolbox, qPrintable(toolbox ? QString() : toolbox.error().text()));
        auto nginx = buildStandin(u"nginx.Dockerfile"_s, u"pando-test/corpus-nginx:"_s + m_run,
                                  {{u"TOOLBOX"_s, u"pando-test/corpus-toolbox:"_s + m_run}});
        QVERIFY2(nginx, qPrintable(nginx ? QString() : nginx.error().text()));
        for (const QString &tag : {u"node:18-alpine"_s, u"golang:1.21"_s, u"alpine:latest"_s, u"python:3.11-slim"_s})
            tagAs(*toolbox, tag);
        tagAs(*nginx, u"nginx:alpine"_s);
    }

    void cleanupTestCase()
    {
        if (!m_fx)
            return;
        for (const QString &app : {u"todo-node"_s, u"go-docker-init"_s, u"flask-postgres"_s, u"monorepo"_s,
                                   u"static-nginx"_s, u"procfile-python"_s})
            if (m_fx->engine().app(app))
                QVERIFY2(m_fx->engine().removeApp(app, core::Actor{}, core::Engine::ServiceData::Delete),
                         qPrintable(app));
        for (const QString &app : {u"todo-node"_s, u"go-docker-init"_s, u"flask-postgres"_s, u"monorepo"_s,
                                   u"static-nginx"_s, u"procfile-python"_s})
            QTRY_VERIFY_WITH_TIMEOUT(!m_fx->engine().app(app), 60000);
        m_fx->cleanDocker();
        for (const QString &tag : std::as_const(m_madeTags))
            QVERIFY2(m_fx->docker().removeImage(tag), qPrintable(tag));
        for (const QString tag : {u"pando-test/corpus-nginx:"_s + m_run, u"pando-test/corpus-toolbox:"_s + m_run})
            QVERIFY2(m_fx->docker().removeImage(tag), qPrintable(tag));
        m_fx.reset();
        qInfo("%s", qPrintable(u"the corpus: %1 of 6 deployed unchanged\n  "_s.arg(m_unchanged.size()) +
                               m_report.join(u"\n  "_s)));
    }

    // Docker's getting-started to-do app: Node with a SQLite file under /etc/todos, EXPOSE 3000
    // after its CMD. It deploys as it is, and loses its to-dos on every redeploy until the spec
    // keeps that directory on a volume.
    void todoNode()
    {
        skipUnlessStandins({u"node:18-alpine"_s});
        const QString repo = createFromCorpus(u"todo-node"_s);
        QVERIFY(!repo.isEmpty());
        const core::DeployView first = deploy(u"todo-node"_s);
        QVERIFY2(first.record.status == core::DeployStatus::Succeeded, qPrintable(first.record.error));
        const QByteArray before = page(u"todo-node"_s);
        QVERIFY2(before.startsWith("corpus app: node src/index.js; data: stamp-"), before.constData());
        // Its port came from EXPOSE, and the app reads PORT nowhere: 3000 is what it listens on.
        QCOMPARE(first.record.port, 3000);
        unchanged(u"todo-node"_s, u"its SQLite file survives redeploys once the spec adds run.volumes"_s);

        // Redeployed as it is: a new container, a new database.
        QVERIFY(deploy(u"todo-node"_s).record.status == core::DeployStatus::Succeeded);
        QVERIFY2(page(u"todo-node"_s) != before, "the to-dos were expected to go with the old container");

        const core::DeployView withVolume =
            deployWith(u"todo-node"_s, repo, u"run:\n  volumes:\n    - name: todos\n      path: /etc/todos\n"_s);
        QVERIFY2(withVolume.record.status == core::DeployStatus::Succeeded, qPrintable(withVolume.record.error));
        const QByteArray kept = page(u"todo-node"_s);
        QVERIFY(kept.contains("data: stamp-"));
        QVERIFY(deploy(u"todo-node"_s).record.status == core::DeployStatus::Succeeded);
        QCOMPARE(page(u"todo-node"_s), kept);
    }

    // What `docker init` writes for Go: a syntax line, cache and bind mounts, a build stage and an
    // Alpine stage that adds a user.
    void goDockerInit()
    {
        skipUnlessStandins({u"golang:1.21"_s, u"alpine:latest"_s});
        QVERIFY(!createFromCorpus(u"go-docker-init"_s).isEmpty());
        const core::DeployView view = deploy(u"go-docker-init"_s);
        const QStringList log = buildLog(view);
        QVERIFY2(view.record.status == core::DeployStatus::Succeeded,
                 qPrintable(view.record.error + u'\n' + log.join(u'\n')));
        QCOMPARE(page(u"go-docker-init"_s), QByteArray("corpus app: go server"));
        QVERIFY2(log.value(0).contains("asks for the Dockerfile frontend docker/dockerfile:1"_L1),
                 qPrintable(log.join(u'\n')));
        unchanged(u"go-docker-init"_s, u"BuildKit builds its mounts; its # syntax line is built by the engine's own "
                                       "frontend"_s);
    }

    // A Flask app that hard-codes postgresql://postgres:postgres@db:5432/postgres, as compose
    // examples do. As it is it has no database: the deploy fails at health with the app's own
    // words. A service slot with those credentials makes it deploy.
    void flaskPostgres()
    {
        skipUnlessStandins({u"python:3.11-slim"_s});
        const QString repo = createFromCorpus(u"flask-postgres"_s);
        QVERIFY(!repo.isEmpty());
        const core::DeployView alone = deploy(u"flask-postgres"_s);
        QCOMPARE(alone.record.status, core::DeployStatus::Failed);
        QCOMPARE(alone.record.failedStep, u"health"_s);
        QVERIFY2(alone.record.error.contains("could not translate host name \"db\""_L1),
                 qPrintable(alone.record.error));

        const core::DeployView served =
            deployWith(u"flask-postgres"_s, repo,
                       u"services:\n  db:\n    kind: postgres\n    user: postgres\n    password: postgres\n"
                       "    database: postgres\n"_s);
        QVERIFY2(served.record.status == core::DeployStatus::Succeeded, qPrintable(served.record.error));
        QCOMPARE(page(u"flask-postgres"_s), QByteArray("corpus app: python app.py; database db:5432 reachable"));
        m_report << u"flask-postgres: needs its database named in the spec (services.db: kind postgres, user, "
                    "password and database postgres)"_s;
    }

    // A monorepo of web/ and api/, each with its Dockerfile: as it is, the deploy says which
    // build.context to set; with it, the API deploys.
    void monorepo()
    {
        skipUnlessStandins({u"python:3.11-slim"_s});
        const QString repo = createFromCorpus(u"monorepo"_s);
        QVERIFY(!repo.isEmpty());
        const core::DeployView alone = deploy(u"monorepo"_s);
        QCOMPARE(alone.record.status, core::DeployStatus::Failed);
        QCOMPARE(alone.record.failedStep, u"detect"_s);
        QVERIFY2(alone.record.error.contains("api/Dockerfile"_L1) && alone.record.error.contains("web/Dockerfile"_L1) &&
                     alone.record.error.contains("build.context: api"_L1),
                 qPrintable(alone.record.error));

        const core::DeployView served = deployWith(u"monorepo"_s, repo, u"build:\n  context: api\n"_s);
        QVERIFY2(served.record.status == core::DeployStatus::Succeeded, qPrintable(served.record.error));
        QCOMPARE(served.record.port, 8000);
        QCOMPARE(page(u"monorepo"_s), QByteArray("corpus app: python app/__main__.py"));
        m_report << u"monorepo: needs build.context (api), which the first deploy's error names"_s;
    }

    // A static site on nginx whose .dockerignore keeps its .env out; the port is the one the base
    // image exposes.
    void staticNginx()
    {
        skipUnlessStandins({u"nginx:alpine"_s});
        QVERIFY(!createFromCorpus(u"static-nginx"_s).isEmpty());
        const core::DeployView view = deploy(u"static-nginx"_s);
        QVERIFY2(view.record.status == core::DeployStatus::Succeeded, qPrintable(view.record.error));
        QCOMPARE(view.record.port, 80);
        // Its workflow publishes an image: the detect step offers it (registryprobe).
        QVERIFY2(test::stepDetail(view, u"detect"_s)
                     .endsWith(u"; publishes ghcr.io/portfolio-site/web (source.image can "
                               "deploy it)"_s),
                 qPrintable(test::stepDetail(view, u"detect"_s)));
        QVERIFY(page(u"static-nginx"_s).contains("<h1>Portfolio</h1>"));
        int status = 0;
        QVERIFY(page(u"static-nginx"_s, u"/css/site.css"_s, &status).contains("sans-serif"));
        QCOMPARE(status, 200);
        page(u"static-nginx"_s, u"/.env"_s, &status);
        QCOMPARE(status, 404);
        unchanged(u"static-nginx"_s, u"its .env stays out of the image; the image its workflow publishes is offered"_s);
    }

    // A Heroku-style Python app: a Procfile, no Dockerfile.
    void procfilePython()
    {
        skipUnlessStandins({u"python:3.11-slim"_s});
        QVERIFY(!createFromCorpus(u"procfile-python"_s).isEmpty());
        const core::DeployView view = deploy(u"procfile-python"_s);
        QVERIFY2(view.record.status == core::DeployStatus::Succeeded, qPrintable(view.record.error));
        QCOMPARE(page(u"procfile-python"_s), QByteArray("corpus app: gunicorn app:app"));
        unchanged(u"procfile-python"_s,
                  u"built with the Dockerfile detection writes (python:3.11-slim, its Procfile)"_s);
    }

    // The figure: which deployed as they are.
    void whichDeployUnchanged()
    {
        if (!m_unusable.isEmpty())
            QSKIP("some apps were skipped: the figure would not be the corpus's");
        QCOMPARE(m_unchanged,
                 QStringList({u"todo-node"_s, u"go-docker-init"_s, u"static-nginx"_s, u"procfile-python"_s}));
    }
};

QTEST_GUILESS_MAIN(TestAppCorpus)
#include "tst_appcorpus.moc"
