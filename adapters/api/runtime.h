#pragma once
// The runtime adapter interface: where an app's image is built and its containers run
// (Docker, Incus; Kubernetes and several Docker hosts later). An install with several runtimes
// sees them through one RuntimeSet (adapters/runtime/set), which routes by the ids it hands out.
//
// Threading: every call blocks until the runtime answered and may be made from any thread,
// concurrently; implementations hold no per-thread state. Long calls (build, streamLogs) check
// the CancelToken between chunks of I/O. None may be called from a GUI thread.

#include "cancel.h"
#include "error.h"

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <functional>
#include <memory>

class QIODevice;

namespace pando::adapters {

using Labels = QMap<QString, QString>;

// Labels Pando puts on everything it creates, so that it can find what it owns.
inline constexpr const char *LabelManaged = "dev.pando.managed"; // value "true"
inline constexpr const char *LabelApp = "dev.pando.app";         // app name
inline constexpr const char *LabelDeploy = "dev.pando.deploy";   // deploy id
inline constexpr const char *LabelInstall = "dev.pando.install"; // install id: several installs may share an engine
inline constexpr const char *LabelVolume = "dev.pando.volume";   // an app volume's name in its spec

struct RuntimeCapabilities {
    QString kind;              // "docker"
    bool canBuild = true;      // builds images from a Dockerfile context
    qint64 maxMemoryBytes = 0; // what the host has; 0 = unknown
    double maxCpus = 0;        // what the host has; 0 = unknown
    // Can run a container with ContainerSpec::egress = false. A runtime must claim this
    // explicitly: one that cannot keep the promise makes the plan fail instead.
    bool canIsolateEgress = false;
    int maxNameLength = 0;        // the longest container name the runtime takes; 0 = no limit that matters
    bool canMeasureDisk = false;  // diskUsage() answers, so per-app disk limits can be held to
    bool canMountVolumes = false; // run() mounts ContainerSpec::volumes; volumes() and removeVolume() work
};

// What a runtime has, as it reports it (GET /capacity). Totals of 0 and available figures of -1
// mean the runtime does not say.
struct RuntimeRoom {
    QString kind;
    double cpus = 0;
    qint64 memoryBytes = 0;
    qint64 memoryAvailableBytes = -1;
    qint64 diskBytes = 0;
    qint64 diskAvailableBytes = -1;
    QString disk;                // what the disk figures are of ("/var/lib/docker", "storage pool default (dir)")
    bool canMeasureDisk = false; // as RuntimeCapabilities::canMeasureDisk
    QString note;                // what the runtime could not tell, for people
    bool reachable = true;       // false: the runtime did not answer (note says why)
};

// A registry's credential, as docker login takes it. The caller wipes the secret.
struct RegistryCredential {
    QString server; // "ghcr.io", "127.0.0.1:5000", Docker Hub's "https://index.docker.io/v1/"
    QString username;
    QByteArray secret; // the password or token
    void wipe() { secret.fill('\0'); }
};

// An image a build pulls, with its registry's credential, before it builds: BuildKit without a
// client session cannot send credentials itself, so the builder then finds it on the engine.
struct CredentialedPull {
    QString image;
    RegistryCredential credential;
    bool always = true; // false: not when the engine has the image
};

// The builder's own cache on an engine (BuildKit's: layers, mounts of RUN --mount=type=cache,
// build contexts), shared by every build on it whoever started it; `docker builder prune` trims it.
struct BuilderCache {
    qint64 bytes = 0;            // what it holds on disk, its shared records counted once
    qint64 reclaimableBytes = 0; // of which no build is using now
    int records = 0;
};

struct BuildRequest {
    QString runtime;    // the runtime kind to build for ("docker", "incus"); empty: the default
    QString contextDir; // a directory on this host; sent minus .git and what its .dockerignore excludes
    QString dockerfile; // relative to contextDir, already checked not to escape it
    QString tag;        // "pando/hello:d42"
    Labels labels;
    QMap<QString, QString> buildArgs;
    bool pull = false; // ask the registry for FROM's images even when the engine has them
    // Pulled first, each with its credential (whatever pull says); the build then takes the
    // engine's copies of them and does not ask their registries again.
    QList<CredentialedPull> pullFirst;
    // Called, when set, once the build ended (made an image or not), for each image it made that
    // the built image does not keep: another stage's steps, and a failed build's finished steps.
    // The builder keeps them as its cache, and they are nobody's to remove: Docker's classic
    // builder leaves them untagged and without the build's labels. bytes is what the image adds
    // (its own layer).
    std::function<void(const QString &imageId, qint64 bytes)> leftover;
};

// A file run() puts into a container before its process starts (secrets an app asks for as files).
struct ContainerFile {
    QByteArray content;
    int mode = 0400;
    int uid = 0;
    int gid = 0;
};

// A named volume of an app mounted into its container (AppSpec run.volumes).
struct VolumeMount {
    QString name; // the app's name for it (its spec's); the runtime's name is made from it and the labels
    QString path; // absolute, in the container
};

// A volume as the runtime has it.
struct VolumeInfo {
    QString id;   // the runtime's name for it, for removeVolume()
    QString name; // the app's name for it (LabelVolume)
    Labels labels;
};

// What Runtime::exportVolume archives: the volume, and a container of its app that mounts it
// (running or not) at path, for a runtime that reads volumes through one.
struct VolumeExport {
    QString volumeId; // VolumeInfo::id
    QString containerId;
    QString path;
};

// What Runtime::importVolume puts back: the volume, the archive (a file exportVolume wrote on
// this runtime), and for a runtime that writes volumes through a container, the image a
// container that is never started is made from to do it.
struct VolumeImport {
    QString volumeId; // VolumeInfo::id
    QString archivePath;
    QString image;
    Labels labels; // VolumeInfo::labels: the volume is made again with them
};

struct ContainerSpec {
    QString name;        // unique container name
    QString image;       // image id or tag
    QStringList command; // empty: the image's own
    QMap<QString, QString> env;
    Labels labels;
    int port = 0;           // the port the app listens on inside the container
    qint64 memoryBytes = 0; // 0 = no limit
    double cpus = 0;        // 0 = no limit
    // A small init as PID 1 passes signals on and reaps zombies, so an app that never installed
    // a SIGTERM handler still stops at once. A command that cannot be executed then shows as a
    // container exiting with code 127 rather than as a failed start.
    bool init = true;
    // false: the container may not open connections to other containers or off this host
    // (AppSpec network.egress: none). This host must still reach it at ContainerInfo::address.
    bool egress = true;
    // Absolute path in the container → file, written before the process starts; missing parent
    // directories are made (owner root, mode 0755). Unlike env, they do not show in what the
    // runtime reports about the container. Keep no copy of the contents after run() returns.
    QMap<QString, ContainerFile> files;
    // Networks the container joins as well, before it starts: the network an app shares with its
    // services (adapters/api/services.h). The runtime's own network stays its first.
    QStringList networks;
    // Volumes mounted before the process starts. One the runtime does not have yet is made, with
    // the container's install and app labels and LabelVolume; an existing one keeps its files.
    QList<VolumeMount> volumes;
};

struct ContainerInfo {
    QString id;
    QString name;
    QString image; // image id the container runs
    Labels labels;
    QString state; // "created", "running", "exited", "dead", ...
    int exitCode = 0;
    int restartCount = 0;
    QString address;   // the address the container's port is reached at from this host
    QString startedAt; // RFC 3339 as the runtime reports it
};

struct ImageInfo {
    QString id;
    QStringList tags;
    Labels labels;
};

struct LogLine {
    qint64 timestampMs = 0; // 0 when the runtime does not say
    bool stderrStream = false;
    QString text; // one line without its newline
};

// A command run in a running container (`pando apps exec`), attached to its standard streams.
struct ExecRequest {
    QStringList command; // argv; the first word is looked up in the container's PATH
    bool tty = false;    // a pseudo-terminal: one output stream, keys as typed, a window size
    int columns = 0;     // the terminal's size with tty (0: the runtime's default)
    int rows = 0;
};

// What an exec's caller feeds it while it runs. Any thread; calls after the exec ended do nothing.
class ExecInput {
public:
    virtual ~ExecInput() = default;
    virtual void write(const QByteArray &data) = 0; // to the process's standard input
    virtual void closeInput() = 0;                  // its standard input ends (EOF)
    virtual void resize(int columns, int rows) = 0; // with tty: the terminal's new size
};

class Runtime {
public:
    virtual ~Runtime() = default;

    virtual RuntimeCapabilities capabilities() = 0;
    // The capabilities of the runtime of this kind (empty: the default one); NotFound when this
    // install has no such runtime. A single runtime answers for its own kind only.
    virtual Result<RuntimeCapabilities> capabilitiesOf(const QString &kind)
    {
        RuntimeCapabilities caps = capabilities();
        if (kind.isEmpty() || kind == caps.kind)
            return caps;
        return fail(ErrorCode::NotFound,
                    QStringLiteral("this install has no %1 runtime (it has %2)").arg(kind, caps.kind),
                    QStringLiteral("runtime"));
    }
    virtual Status ping() = 0;
    // The room of each runtime behind this one (one entry for a single runtime).
    virtual Result<QList<RuntimeRoom>> rooms()
    {
        const RuntimeCapabilities caps = capabilities();
        RuntimeRoom room;
        room.kind = caps.kind;
        room.cpus = caps.maxCpus;
        room.memoryBytes = caps.maxMemoryBytes;
        room.canMeasureDisk = caps.canMeasureDisk;
        return QList<RuntimeRoom>{room};
    }
    // The bytes a container has written on top of its image; Invalid when the runtime cannot say.
    virtual Result<qint64> diskUsage(const QString &id)
    {
        return fail(ErrorCode::Invalid, QStringLiteral("this runtime cannot measure a container's disk use"), id);
    }

    // Volumes carrying every label in filter; none from a runtime that cannot mount them.
    virtual Result<QList<VolumeInfo>> volumes(const Labels &filter)
    {
        Q_UNUSED(filter);
        return QList<VolumeInfo>{};
    }
    // Removes a volume (by VolumeInfo::id) and its files; a missing one is not an error, one a
    // container still mounts is Conflict.
    virtual Status removeVolume(const QString &id)
    {
        return fail(ErrorCode::Invalid, QStringLiteral("this runtime has no volumes"), id);
    }
    // Writes an archive of the volume's files to out (a backup) and returns the bytes written:
    // Docker a tar of the mount path read through the container, Incus its own volume backup
    // tarball (`incus storage volume import` restores it). NotFound without the volume;
    // Conflict when the runtime needs a container and what.containerId has none.
    virtual Result<qint64> exportVolume(const VolumeExport &what, QIODevice &out, const CancelToken &cancel)
    {
        Q_UNUSED(out);
        Q_UNUSED(cancel);
        return fail(ErrorCode::Invalid, QStringLiteral("this runtime has no volumes"), what.volumeId);
    }

    // Whether what.archivePath is an archive importVolume takes for the volume: one as
    // exportVolume writes them here, whose entries all stay inside its tree. Invalid naming the
    // entry and why. Reads the file only.
    virtual Status checkVolumeArchive(const VolumeImport &what)
    {
        return fail(ErrorCode::Invalid, QStringLiteral("this runtime has no volumes"), what.volumeId);
    }
    // Replaces the volume's files with the archive's: the volume is made again (also when it is
    // gone), with what.labels, and filled from it. Conflict while a container mounts it. Check
    // the archive first: an import that fails part way leaves the volume empty or part filled.
    virtual Status importVolume(const VolumeImport &what, const CancelToken &cancel)
    {
        Q_UNUSED(cancel);
        return fail(ErrorCode::Invalid, QStringLiteral("this runtime has no volumes"), what.volumeId);
    }

    // Builds and returns the image id. progress gets one line of build output at a time.
    virtual Result<QString> build(const BuildRequest &request, const CancelToken &cancel,
                                  const std::function<void(const QString &line)> &progress) = 0;
    // Creates and starts a container; returns its id. On failure nothing is left behind.
    // Whether credential reads image on its registry, asked as a pull would ask: the manifest's
    // digest ("sha256:…") without pulling; with no image, whether the registry takes the login
    // ("login accepted"). Unauthorized when the registry refuses it.
    virtual Result<QString> checkRegistry(const QString & /*image*/, const RegistryCredential & /*credential*/,
                                          const CancelToken & /*cancel*/)
    {
        return fail(ErrorCode::Unavailable, QStringLiteral("this runtime pulls no images"), QStringLiteral("runtime"));
    }
    // What the builder of the engine that builds this runtime's images keeps as its own cache.
    virtual Result<BuilderCache> builderCache()
    {
        return fail(ErrorCode::Unavailable, QStringLiteral("this runtime has no builder cache"),
                    QStringLiteral("runtime"));
    }
    virtual Result<QString> run(const ContainerSpec &spec) = 0;
    virtual Result<ContainerInfo> inspect(const QString &id) = 0;
    // Containers (running or not) carrying every label in filter.
    virtual Result<QList<ContainerInfo>> containers(const Labels &filter) = 0;
    virtual Status start(const QString &id) = 0;
    virtual Status stop(const QString &id, int timeoutSeconds) = 0;
    // Removes a container (forcefully); a missing container is not an error.
    virtual Status remove(const QString &id) = 0;
    virtual Result<QList<ImageInfo>> images(const Labels &filter) = 0;
    // Removes an image; a missing image is not an error.
    virtual Status removeImage(const QString &idOrTag) = 0;
    // Removes (or, when it has other tags, untags) the image idOrTag names only when it carries
    // every label in owner: an install passes its own (dev.pando.install among them), so an image
    // another install made, or one a tag now names that is not this install's, is left alone.
    // Returns whether it removed anything; a missing or foreign image is false, not an error.
    // This default lists owner's images and removes by idOrTag; a runtime where one tag may name
    // several images (Incus) or that can check one image at once (Docker) overrides it.
    virtual Result<bool> removeOwnImage(const QString &idOrTag, const Labels &owner)
    {
        auto listed = images(owner);
        if (!listed)
            return std::unexpected(listed.error());
        for (const ImageInfo &image : *listed) {
            if (image.id != idOrTag && !image.tags.contains(idOrTag))
                continue;
            if (auto removed = removeImage(idOrTag); !removed)
                return std::unexpected(removed.error());
            return true;
        }
        return false;
    }
    // The TCP ports an image's configuration exposes (its Dockerfile's EXPOSE lines and its base
    // images'), lowest first. A runtime that cannot tell says so, and the caller reads the
    // Dockerfile instead.
    virtual Result<QList<int>> exposedPorts(const QString &imageId)
    {
        return fail(ErrorCode::Unavailable, QStringLiteral("this runtime cannot read an image's exposed ports"),
                    imageId);
    }
    // Gives an image (by id) one more tag ("pando/hello:d42"), so it serves another deploy
    // without a build. A runtime that cannot says so and the caller builds instead.
    virtual Status tagImage(const QString & /*id*/, const QString &tag)
    {
        return fail(ErrorCode::Unavailable, QStringLiteral("this runtime cannot tag images"), tag);
    }
    // The last `tail` lines (tail < 0: all), then, if follow, new lines until the container
    // stops or cancel is set. Returns when the stream ends.
    virtual Status logs(const QString &id, int tail, bool follow, const CancelToken &cancel,
                        const std::function<void(const LogLine &)> &sink) = 0;
    // Runs request.command in the running container id until it exits or cancel is set (then
    // Cancelled; the process may go on). opened gets the process's input once it runs (what is
    // fed to it after exec returned goes nowhere); output goes to onOutput as it comes (stream 1 stdout, 2 stderr; with
    // a tty only 1), on the calling thread. Returns the command's exit code. Conflict when the
    // container does not run.
    virtual Result<int> exec(const QString &id, const ExecRequest &request, const CancelToken & /*cancel*/,
                             const std::function<void(std::shared_ptr<ExecInput> input)> & /*opened*/,
                             const std::function<void(int stream, QByteArrayView data)> & /*onOutput*/)
    {
        return fail(
            ErrorCode::Unavailable,
            QStringLiteral("this runtime cannot run a command in a container (%1)").arg(request.command.value(0)), id);
    }
};

} // namespace pando::adapters
