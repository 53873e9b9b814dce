#pragma once
// registryprobe: whether a repository already publishes an image of itself, so that the app can
// deploy that image (source.image) instead of building it. Read from the files that publish one:
//
// - a Compose file at the top (compose.yaml, docker-compose.yml, …): a service with both `build`
//   and `image` is built as that image (`docker compose build`, then `push`);
// - a GitHub Actions workflow: docker/build-push-action with push on, its tags, or the images
//   docker/metadata-action makes them from; `${{ env.X }}` (workflow and job env) and
//   `${{ github.repository }}`/`repository_owner` are filled in from the app's repository address;
// - a GitLab CI file on gitlab.com that pushes $CI_REGISTRY_IMAGE: registry.gitlab.com/<path>.
//
// Nothing is fetched and no registry is asked: what a file names is offered, not checked. A file
// is read only inside the checkout, at most 256 KiB, and one that does not parse is passed over.

#include <QList>
#include <QString>

namespace pando::core {

struct PublishedImage {
    QString image;   // the repository part ("ghcr.io/acme/web"), without a tag
    QString foundIn; // ".github/workflows/publish.yml (docker/build-push-action)"
    bool operator==(const PublishedImage &) const = default;
};

// The images checkoutDir's files publish, each once, in the order found. repoAddress is the app's
// source.repo, for what the files name through the forge's variables.
QList<PublishedImage> publishedImages(const QString &checkoutDir, const QString &repoAddress);

// What the detect step says of them: "this repository publishes …; to deploy that image instead
// of building, set source.image: …:TAG". Empty for none.
QString publishedImagesOffer(const QList<PublishedImage> &images);

} // namespace pando::core
