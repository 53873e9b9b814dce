// registryprobe: the images a repository publishes of itself, read from its Compose file, its
// GitHub Actions workflows and its GitLab CI file, in the forms those tools' documentation shows
// (written here in Pando's own words), and what is passed over.
#include "core/detection/registryprobe.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando::core;

namespace {

void write(const QTemporaryDir &dir, const QString &relative, const QByteArray &content)
{
    const QString path = dir.filePath(relative);
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
        qFatal("cannot write %s", qPrintable(path));
}

// GitHub's publishing pattern: registry and name in the workflow's env, the name the repository's,
// metadata-action making the tags, build-push-action pushing them.
const QByteArray GhcrWorkflow = R"(name: Publish
on:
  push:
    branches: ['release']
env:
  REGISTRY: ghcr.io
  IMAGE_NAME: ${{ github.repository }}
jobs:
  image:
    runs-on: ubuntu-latest
    permissions:
      contents: read
      packages: write
    steps:
      - uses: actions/checkout@v4
      - uses: docker/login-action@v3
        with:
          registry: ${{ env.REGISTRY }}
          username: ${{ github.actor }}
          password: ${{ secrets.GITHUB_TOKEN }}
      - id: meta
        uses: docker/metadata-action@v5
        with:
          images: ${{ env.REGISTRY }}/${{ env.IMAGE_NAME }}
      - uses: docker/build-push-action@v6
        with:
          context: .
          push: true
          tags: ${{ steps.meta.outputs.tags }}
          labels: ${{ steps.meta.outputs.labels }}
)";

} // namespace

class TestRegistryProbe : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void githubContainerRegistry()
    {
        QTemporaryDir dir;
        write(dir, u".github/workflows/publish.yml"_s, GhcrWorkflow);
        const auto found = publishedImages(dir.path(), u"https://github.com/Acme/Web-Shop.git"_s);
        // ghcr names are lower case; metadata-action writes them so.
        QCOMPARE(found, QList<PublishedImage>({{u"ghcr.io/acme/web-shop"_s,
                                                u".github/workflows/publish.yml (docker/build-push-action)"_s}}));
        QCOMPARE(publishedImagesOffer(found),
                 u"this repository publishes ghcr.io/acme/web-shop (.github/workflows/publish.yml "
                 "(docker/build-push-action)); to deploy that image instead of building, set source.image: "
                 "ghcr.io/acme/web-shop:TAG"_s);
        // The same from an ssh address.
        QCOMPARE(publishedImages(dir.path(), u"git@github.com:acme/web-shop.git"_s).value(0).image,
                 u"ghcr.io/acme/web-shop"_s);
    }

    // Docker Hub with the tags written out, in a list and as a block; a job env over the workflow's.
    void dockerHubTagsWrittenOut()
    {
        QTemporaryDir dir;
        write(dir, u".github/workflows/hub.yaml"_s, R"(on: [push]
env:
  NAMESPACE: wrong
jobs:
  push:
    runs-on: ubuntu-latest
    env:
      NAMESPACE: acmecorp
    steps:
      - uses: docker/build-push-action@v5
        with:
          push: ${{ github.event_name != 'pull_request' }}
          tags: |
            ${{ env.NAMESPACE }}/api:latest
            ${{ env.NAMESPACE }}/api:${{ github.sha }}
      - uses: docker/build-push-action@v5
        with:
          push: true
          tags:
            - quay.io/acmecorp/worker:1.0
            - quay.io/acmecorp/worker:stable
)");
        const auto found = publishedImages(dir.path(), u"https://github.com/acmecorp/api"_s);
        QCOMPARE(found.size(), 2);
        QCOMPARE(found.at(0).image, u"acmecorp/api"_s); // both tags name it once
        QCOMPARE(found.at(1).image, u"quay.io/acmecorp/worker"_s);
    }

    void composeServiceBuiltAsAnImage()
    {
        QTemporaryDir dir;
        write(dir, u"compose.yaml"_s, R"(services:
  web:
    build: .
    image: registry.example.com:5000/shop/web:2.0
    ports: ["8000:8000"]
  db:
    image: postgres:16
  worker:
    build:
      context: ./worker
)");
        QCOMPARE(publishedImages(dir.path(), u"https://git.example.com/shop/web.git"_s),
                 QList<PublishedImage>(
                     {{u"registry.example.com:5000/shop/web"_s, u"compose.yaml (service web: build and image)"_s}}));
    }

    void gitlabRegistry()
    {
        QTemporaryDir dir;
        write(dir, u".gitlab-ci.yml"_s,
              "build:\n  image: docker:27\n  services: [docker:27-dind]\n  script:\n"
              "    - docker build -t $CI_REGISTRY_IMAGE:$CI_COMMIT_SHORT_SHA .\n"
              "    - docker push $CI_REGISTRY_IMAGE:$CI_COMMIT_SHORT_SHA\n");
        QCOMPARE(publishedImages(dir.path(), u"https://gitlab.com/Group/Sub/Project.git"_s).value(0).image,
                 u"registry.gitlab.com/group/sub/project"_s);
        // A self-managed GitLab's registry host is not known from the repository's.
        QVERIFY(publishedImages(dir.path(), u"https://gitlab.example.com/group/project.git"_s).isEmpty());
    }

    // Built but not pushed, pushed under a name left to an expression Pando cannot fill, a
    // Compose service that only pulls, a file that does not parse or leads out of the checkout.
    void passedOver()
    {
        QTemporaryDir dir;
        write(dir, u".github/workflows/ci.yml"_s, R"(on: [pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: docker/build-push-action@v6
        with:
          push: false
          tags: acme/test:ci
      - uses: docker/build-push-action@v6
        with:
          push: true
          tags: ${{ vars.IMAGE }}:latest
)");
        write(dir, u".github/workflows/broken.yml"_s, "jobs: [unclosed\n");
        write(dir, u"docker-compose.yml"_s, "services:\n  cache:\n    image: redis:7\n");
        QTemporaryDir outside;
        write(outside, u"compose.yaml"_s, "services:\n  web:\n    build: .\n    image: evil/outside:1\n");
        QVERIFY(QFile::link(outside.filePath(u"compose.yaml"_s), dir.filePath(u"compose.yaml"_s)));
        QVERIFY(publishedImages(dir.path(), u"https://github.com/acme/test"_s).isEmpty());
        QCOMPARE(publishedImagesOffer({}), QString());
    }
};

QTEST_GUILESS_MAIN(TestRegistryProbe)
#include "tst_registryprobe.moc"
