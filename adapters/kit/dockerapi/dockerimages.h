#pragma once
// Image work on a Docker Engine that more than one adapter does: importing a root file system as
// an image, removing and finding images, and reading Docker's JSON-lines progress streams (builds:
// dockerbuild.h). The adapters hold a DockerClient; these take it.
//
// Threading: every call blocks and may be made from any thread, as DockerClient's.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "adapters/api/runtime.h"
#include "adapters/kit/dockerapi/dockerclient.h"

#include <QJsonObject>
#include <functional>

namespace pando::adapters::dockerapi {

QByteArray compactJson(const QJsonObject &object);
QJsonObject labelsJson(const Labels &labels);

// Docker's JSON-lines progress streams (build, import): complete objects go to onObject.
class JsonLines {
public:
    explicit JsonLines(std::function<void(const QJsonObject &)> onObject) : m_onObject(std::move(onObject)) {}
    void feed(QByteArrayView chunk);
    void finish();

private:
    void parse(QByteArrayView line);
    std::function<void(const QJsonObject &)> m_onObject;
    QByteArray m_buffer;
};

// The error a progress stream's object reports (errorDetail's message, else error), and
// whether it reports one.
QString streamError(const QJsonObject &o);
bool hasStreamError(const QJsonObject &o);

// Removes an image (DELETE /images/ID, its untagged parents with it when nothing else needs
// them); a missing image is not an error. force also takes it from stopped containers and other
// tags; an image with a child, or a running container's, is refused (Conflict) either way.
Status removeImage(const DockerClient &client, const QString &idOrTag, bool force = false);

// The id of an image (by id or tag); NotFound when there is none.
Result<QString> imageId(const DockerClient &client, const QString &idOrTag);

// The builder's cache on the engine (GET /system/df's BuildCache records, as `docker system df`
// counts them: a shared record once).
Result<BuilderCache> builderCache(const DockerClient &client);

// Imports the directory rootfsDir as the single layer of a new image tagged repoTag
// ("pando/busybox:latest") and returns its id: base images without a registry. changes are
// Dockerfile instructions applied to its config ("ENV A=b", "USER 1000", "LABEL k=v").
Result<QString> importImage(const DockerClient &client, const QString &rootfsDir, const QString &repoTag,
                            const QStringList &changes = {});

// Loads the image tarball at file (`docker save` format) and tags it repoTag; returns its id.
Result<QString> loadImage(const DockerClient &client, const QString &file, const QString &repoTag,
                          const CancelToken &cancel);

} // namespace pando::adapters::dockerapi
