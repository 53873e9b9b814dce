#pragma once
// Package incus runs each of Pando's apps in its own Incus system container, through the Incus
// REST API (adapters/kit/incusapi) on the local unix socket or over HTTPS with a client
// certificate: never through the incus CLI.
//
// Images: Incus 6.0 has no OCI image support, so build() builds with the Docker engine's builder
// and converts the result into an Incus image (imageconvert.h) carrying Pando's small init. The
// Docker image stays, with the same tag: a build of an unchanged tree comes from Docker's cache
// as the same image, whose Incus image is then tagged again instead of made anew. Incus images
// have no tags, so Pando keeps them in the image's dev.pando.tags property; removeImage(tag)
// takes a tag off, and the image goes with its last one. An instance runs that init (raw.lxc
// lxc.init.cmd), which brings eth0 up through the bridge's DHCP, then the app; the instance's
// config holds the app's environment (environment.*), labels (user.*) and limits
// (limits.memory, limits.cpu.allowance). run() returns once the instance has an IPv4 address or
// has stopped. An instance is named by ContainerSpec::name, which Incus must accept (see
// incusapi::checkInstanceName), and that name is its id.
//
// Logs: what the app writes goes to the instance's console. Incus hands the console's ring
// buffer out once (a read drains it), so the runtime keeps each instance's last 5000 lines and
// every logs() call reads through that, follows polling every 200 ms.
//
// Volumes: an app's run.volumes are custom storage volumes (incusvolumes.cpp), kept across
// instances until removeVolume().
//
// Not kept: egress isolation (capabilities().canIsolateEgress is false, so a spec asking for
// network.egress none is refused at plan time); restart counts (always 0).
//
// Threading: as adapters::Runtime; the log tap has its own lock.

#include "adapters/api/runtime.h"
#include "adapters/kit/dockerapi/dockerclient.h"
#include "adapters/kit/incusapi/incusclient.h"

#include <QHash>
#include <QMutex>
#include <memory>
#include <optional>

namespace pando::adapters::incus {

struct IncusOptions {
    incusapi::Connection connection;
    // The Docker engine that builds images (empty: the default socket); builds fail without one.
    std::optional<QString> dockerSocket = QString();
    QString busybox = QStringLiteral("/bin/busybox"); // statically linked (Debian's busybox-static)
    // Create + start + an address. The first instance of an image unpacks it into the pool,
    // which took over 30 s on a busy two-core machine: a deploy must not fail for that.
    int startTimeoutMs = 120'000;
};

// Whether labels (an instance's, an image's properties, a volume's) hold every one of filter.
bool carriesLabels(const Labels &labels, const Labels &filter);

class IncusRuntime : public Runtime {
public:
    explicit IncusRuntime(IncusOptions options = {});
    ~IncusRuntime() override;

    RuntimeCapabilities capabilities() override;
    Status ping() override;
    // incusroom.cpp: /1.0/resources, the default profile's root pool and its resources,
    // and the instance state's disk usage where the pool reports one.
    Result<QList<RuntimeRoom>> rooms() override;
    Result<qint64> diskUsage(const QString &id) override;
    Result<QString> build(const BuildRequest &request, const CancelToken &cancel,
                          const std::function<void(const QString &line)> &progress) override;
    // The Docker engine that builds for Incus: its builder's cache.
    Result<BuilderCache> builderCache() override;
    // The Docker engine that builds for Incus pulls, so it answers.
    Result<QString> checkRegistry(const QString &image, const RegistryCredential &credential,
                                  const CancelToken &cancel) override;
    Result<QString> run(const ContainerSpec &spec) override;
    // incusvolumes.cpp: app volumes as custom storage volumes in the default profile's root
    // pool, labelled in their user.* config and attached to an instance as disk devices.
    Result<QList<VolumeInfo>> volumes(const Labels &filter) override;
    Status removeVolume(const QString &id) override;
    // The volume's backup tarball (POST …/backups, then its export), made and removed again.
    Result<qint64> exportVolume(const VolumeExport &what, QIODevice &out, const CancelToken &cancel) override;
    // Its backup tarball imported as the volume anew (POST …/volumes/custom), its labels kept.
    Status checkVolumeArchive(const VolumeImport &what) override;
    Status importVolume(const VolumeImport &what, const CancelToken &cancel) override;
    Result<ContainerInfo> inspect(const QString &id) override;
    Result<QList<ContainerInfo>> containers(const Labels &filter) override;
    Status start(const QString &id) override;
    Status stop(const QString &id, int timeoutSeconds) override;
    Status remove(const QString &id) override;
    Result<QList<ImageInfo>> images(const Labels &filter) override;
    Status removeImage(const QString &idOrTag) override;
    // As removeImage(), for the images carrying owner's labels only: in Incus one tag may be on
    // several installs' images.
    Result<bool> removeOwnImage(const QString &idOrTag, const Labels &owner) override;
    Status tagImage(const QString &id, const QString &tag) override;
    Status logs(const QString &id, int tail, bool follow, const CancelToken &cancel,
                const std::function<void(const LogLine &)> &sink) override;
    // incusexec.cpp: over the exec API's WebSockets (a local Incus only).
    Result<int> exec(const QString &id, const ExecRequest &request, const CancelToken &cancel,
                     const std::function<void(std::shared_ptr<ExecInput> input)> &opened,
                     const std::function<void(int stream, QByteArrayView data)> &onOutput) override;

    // Imports a Docker image (id or tag) as an Incus image with these properties; returns its
    // fingerprint. build() does this after building; tests and base images use it directly.
    Result<QString> importFromDocker(const QString &dockerImage, const Labels &properties, const QString &description,
                                     const CancelToken &cancel);

    const incusapi::IncusClient &client() const { return m_client; }

private:
    struct Tap;
    // The storage pool new instances get their root disk from (the default profile's).
    Result<QString> rootPool();
    // The disk devices that mount spec's volumes, each made first when Incus does not have it.
    Result<QMap<QString, incusapi::StringMap>> volumeDevices(const ContainerSpec &spec);
    // Reads what the console has that nobody read yet into the instance's tap.
    // Removes idOrTag from the images it names that carry owner's labels; how many it changed.
    Result<int> removeImageWhere(const QString &idOrTag, const Labels &owner);
    Status drainConsole(const QString &name);
    // The instance's state, asked again for a few seconds while Incus cannot read it.
    Result<incusapi::InstanceState> readState(const QString &name);
    // Adds tag to the image's tags.
    Status addTag(const incusapi::Image &image, const QString &tag);
    // Polls the instance until it has an IPv4 address or has stopped.
    Status awaitAddress(const QString &name, int timeoutMs);
    ContainerInfo toInfo(const incusapi::Instance &instance, const std::optional<incusapi::InstanceState> &state);
    void forgetTap(const QString &name);

    IncusOptions m_options;
    incusapi::IncusClient m_client;
    std::unique_ptr<dockerapi::DockerClient> m_builder; // the Docker engine that builds; null: no builds
    QMutex m_tapsLock;
    QHash<QString, std::shared_ptr<Tap>> m_taps;
};

} // namespace pando::adapters::incus
