#pragma once
// The Docker task runner: runs a pipeline step in a fresh container of an image the local
// engine already has (it never pulls: no registry is assumed), streams the container's raw
// stdout and stderr, and removes the container afterwards whatever happened.
//
// One run is: inspect the image (its id is the digest reported and the exact image the
// container is created from, so a tag moved mid-run cannot change what ran), create, attach
// (a raw hijacked connection, which also carries stdin), start, read until the stream ends,
// wait for the exit code, remove. A timeout or cancel removes the container with force, which
// kills it.
//
// Threading: run() blocks the calling thread and may be called from any thread, concurrently;
// the object holds only the engine's socket path.

#include "adapters/api/taskrunner.h"
#include "adapters/kit/dockerapi/dockerclient.h"

namespace pando::adapters::docker {

class DockerTaskRunner final : public TaskRunner {
public:
    // socketPath empty: $DOCKER_HOST (unix://...) or /var/run/docker.sock.
    explicit DockerTaskRunner(QString socketPath = {});

    const dockerapi::DockerClient &client() const { return m_client; }

    QString kind() const override { return QStringLiteral("docker"); }
    // The image id (sha256:...) of a local image; NotFound with a hint when the engine lacks it.
    Result<QString> imageDigest(const QString &image) override;
    Result<int> removeLeftovers(const QMap<QString, QString> &labels) override;
    Result<int> removeStaleArtifactImages(const QString &repository, qint64 olderThanMs) override;
    // rootfs/ imported (its metadata.json's env and user as ENV and USER), or image.tar loaded.
    Result<QString> importArtifactImage(const QString &artifactDir, const QString &repoTag,
                                        const CancelToken &cancel) override;
    Result<TaskResult> run(const TaskSpec &spec, const CancelToken &cancel,
                           const std::function<void(const OutputChunk &)> &output) override;

private:
    dockerapi::DockerClient m_client;
};

} // namespace pando::adapters::docker
