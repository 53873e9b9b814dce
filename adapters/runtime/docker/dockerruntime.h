#pragma once
// Package docker runs Pando's apps on a Docker Engine: it builds images from a context
// directory, creates and starts labelled containers, reads their logs and cleans them up, all
// through the engine's REST API (adapters/kit/dockerapi) on its unix socket.
//
// Threading: as adapters::Runtime: every call blocks and may be made from any thread,
// concurrently. The object holds the socket path and a lock that orders the creation and removal
// of the egress-free network against the containers that use it.
//
// Containers are reached at their bridge-network IP (ContainerInfo::address), so no host
// ports are published. A container with ContainerSpec::egress false joins only an internal
// bridge network of its install ("pando-<install>-noegress", labelled with the install):
// Docker drops what it forwards off that network, so the container reaches neither other
// containers nor anything beyond the host, while the host still reaches it. The network is
// created on first use and removed with the last container (running or stopped) on it. logs() ends a follow within ~50
// ms of cancel and returns success then: cancelling is how a follow is meant to end. A cancelled build fails with
// Cancelled.

#include "adapters/api/runtime.h"
#include "adapters/kit/dockerapi/dockerbuild.h"
#include "adapters/kit/dockerapi/dockerclient.h"

#include <QJsonArray>
#include <QMutex>
#include <atomic>

namespace pando::adapters::docker {

class DockerRuntime : public Runtime {
public:
    // socketPath empty: $DOCKER_HOST (unix://...) or /var/run/docker.sock.
    explicit DockerRuntime(QString socketPath = {});

    RuntimeCapabilities capabilities() override;
    Status ping() override;
    // dockerroom.cpp: GET /info, statvfs of DockerRootDir when it is on this host, and SizeRw.
    Result<QList<RuntimeRoom>> rooms() override;
    Result<qint64> diskUsage(const QString &id) override;
    Result<QList<VolumeInfo>> volumes(const Labels &filter) override;
    Status removeVolume(const QString &id) override;
    Result<qint64> exportVolume(const VolumeExport &what, QIODevice &out, const CancelToken &cancel) override;
    Status checkVolumeArchive(const VolumeImport &what) override;
    Status importVolume(const VolumeImport &what, const CancelToken &cancel) override;
    Result<QString> build(const BuildRequest &request, const CancelToken &cancel,
                          const std::function<void(const QString &line)> &progress) override;
    Result<QString> run(const ContainerSpec &spec) override;
    Result<ContainerInfo> inspect(const QString &id) override;
    Result<QList<ContainerInfo>> containers(const Labels &filter) override;
    Status start(const QString &id) override;
    Status stop(const QString &id, int timeoutSeconds) override;
    Status remove(const QString &id) override;
    Result<QList<ImageInfo>> images(const Labels &filter) override;
    Status removeImage(const QString &idOrTag) override;
    // Inspects the image idOrTag names and removes it only when its labels hold owner's. Between
    // the two calls the tag could move; the tags Pando makes name one deploy of one app.
    Result<bool> removeOwnImage(const QString &idOrTag, const Labels &owner) override;
    Status tagImage(const QString &id, const QString &tag) override;
    Result<QList<int>> exposedPorts(const QString &imageId) override;
    Result<BuilderCache> builderCache() override;
    // Through the engine (dockerpull.h), as its pulls ask.
    Result<QString> checkRegistry(const QString &image, const RegistryCredential &credential,
                                  const CancelToken &cancel) override;
    Status logs(const QString &id, int tail, bool follow, const CancelToken &cancel,
                const std::function<void(const LogLine &)> &sink) override;
    // Through the Engine API's exec: created, then started on a connection of its own that the
    // engine upgrades to a raw stream (dockerexec.cpp); cancel is checked every 50 ms.
    Result<int> exec(const QString &id, const ExecRequest &request, const CancelToken &cancel,
                     const std::function<void(std::shared_ptr<ExecInput> input)> &opened,
                     const std::function<void(int stream, QByteArrayView data)> &onOutput) override;

    // Imports the directory rootfsDir as the single layer of a new image tagged repoTag
    // ("pando/busybox:latest") and returns its id: base images without a registry.
    Result<QString> importImage(const QString &rootfsDir, const QString &repoTag);
    // The id of an image (by id or tag); NotFound when there is none.
    Result<QString> imageId(const QString &idOrTag);

    const dockerapi::DockerClient &client() const { return m_client; }
    // How build() builds: dockerapi::builderFromEnvironment() unless set; a build already running
    // goes on as it began.
    void setBuilder(dockerapi::Builder builder) { m_builder.store(builder); }

    // The name of the internal network an install's egress-free containers share.
    static QString noEgressNetworkName(const QString &installId);
    // The Docker volume an app's volume is: "pando-APP-NAME-" and a digest of the install id.
    static QString volumeName(const QString &installId, const QString &app, const QString &name);

private:
    // POST /exec/{id}/resize: a tty exec's new size.
    void resizeExec(const QString &execId, int columns, int rows);
    // The Mounts of spec's volumes, each made first when Docker does not have it (dockervolumes.cpp).
    Result<QJsonArray> volumeMounts(const ContainerSpec &spec);
    // Finds or creates the install's internal network; returns its id. Call with m_networkLock.
    Result<QString> ensureNoEgressNetwork(const QString &installId);
    // Removes the install's internal network(s) no container refers to. Call with m_networkLock.
    Status releaseNoEgressNetwork(const QString &installId);
    // The install's networks by that name, oldest first, so concurrent creators agree on one.
    Result<QStringList> noEgressNetworks(const QString &installId);

    dockerapi::DockerClient m_client;
    std::atomic<dockerapi::Builder> m_builder{dockerapi::builderFromEnvironment()};
    QMutex m_networkLock;
};

} // namespace pando::adapters::docker
