#pragma once
// The runtime adapter interface: where an app's image is built and its containers run
// (Docker now; Incus, Kubernetes and several Docker hosts later).
//
// Threading: every call blocks until the runtime answered and may be made from any thread,
// concurrently; implementations hold no per-thread state. Long calls (build, streamLogs) check
// the CancelToken between chunks of I/O. None may be called from a GUI thread.

#include "cancel.h"
#include "error.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <functional>

namespace pando::adapters {

using Labels = QMap<QString, QString>;

// Labels Pando puts on everything it creates, so that it can find what it owns.
inline constexpr const char *LabelManaged = "dev.pando.managed"; // value "true"
inline constexpr const char *LabelApp = "dev.pando.app";         // app name
inline constexpr const char *LabelDeploy = "dev.pando.deploy";   // deploy id
inline constexpr const char *LabelInstall = "dev.pando.install"; // install id: several installs may share an engine

struct RuntimeCapabilities {
    QString kind;              // "docker"
    bool canBuild = true;      // builds images from a Dockerfile context
    qint64 maxMemoryBytes = 0; // what the host has; 0 = unknown
    double maxCpus = 0;        // what the host has; 0 = unknown
    // Can run a container with ContainerSpec::egress = false. A runtime must claim this
    // explicitly: one that cannot keep the promise makes the plan fail instead.
    bool canIsolateEgress = false;
};

struct BuildRequest {
    QString contextDir; // a directory on this host; the whole tree is sent (minus .git)
    QString dockerfile; // relative to contextDir, already checked not to escape it
    QString tag;        // "pando/hello:d42"
    Labels labels;
    QMap<QString, QString> buildArgs;
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

class Runtime {
public:
    virtual ~Runtime() = default;

    virtual RuntimeCapabilities capabilities() = 0;
    virtual Status ping() = 0;

    // Builds and returns the image id. progress gets one line of build output at a time.
    virtual Result<QString> build(const BuildRequest &request, const CancelToken &cancel,
                                  const std::function<void(const QString &line)> &progress) = 0;
    // Creates and starts a container; returns its id. On failure nothing is left behind.
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
    // The last `tail` lines (tail < 0: all), then, if follow, new lines until the container
    // stops or cancel is set. Returns when the stream ends.
    virtual Status logs(const QString &id, int tail, bool follow, const CancelToken &cancel,
                        const std::function<void(const LogLine &)> &sink) = 0;
};

} // namespace pando::adapters
