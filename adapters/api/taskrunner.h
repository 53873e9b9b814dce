#pragma once
// The task runner interface (the pipeline side's venue): runs one step's command, in a
// container of a local image or on the host, against directories prepared for it, and streams
// its output. Pipelines' task, resource check/in/out and hook steps all run through it.
//
// Threading: run() blocks until the command ended, was cancelled, or timed out; it may be
// called from any thread, concurrently. The output callback is called on the calling thread.

#include "cancel.h"
#include "error.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <functional>

namespace pando::adapters {

struct Mount {
    QString hostPath; // an existing directory on this host
    QString path;     // where the command sees it: absolute in a container, relative to the
                      // work dir (or absolute) on the host
    bool readOnly = false;
};

struct TaskSpec {
    // Container tasks: the local image (tag or id). Empty: run on the host.
    QString image;
    // argv. A user's shell command is {"sh", "-c", "<command>"}, built by whoever parsed it;
    // nothing here ever joins argv into a string.
    QStringList argv;
    QMap<QString, QString> env;
    QString workDir; // container: absolute path inside; host: a directory on this host
    QList<Mount> mounts;
    QByteArray stdinData;          // written to the command's stdin, then closed
    int timeoutMs = 0;             // 0: none
    QString user;                  // container only; empty: the image's
    QMap<QString, QString> labels; // container only: Pando's ownership labels
    qint64 memoryBytes = 0;
    double cpus = 0;
    // Container only: every capability and device of the host (Docker's --privileged); whoever
    // decides it answers for the host (core/pipelines/pipeline/hostpolicy.h).
    bool privileged = false;
};

struct TaskResult {
    int exitCode = -1;
    bool timedOut = false; // the timeout ended it (then exitCode is -1)
    QString imageDigest;   // the image id the container ran ("" on the host)
    qint64 startedMs = 0;
    qint64 finishedMs = 0;
};

struct OutputChunk {
    bool stderrStream = false;
    QByteArray data; // raw bytes as they came; not split into lines
};

class TaskRunner {
public:
    virtual ~TaskRunner() = default;
    // "docker", "host"
    virtual QString kind() const = 0;
    // The digest a task on this image would run with (image id), for content addressing.
    // Host runners return a fixed "host" marker.
    virtual Result<QString> imageDigest(const QString &image) = 0;
    // Runs the task. A non-zero exit is a result, not an error; errors are infrastructure
    // failures (image missing: NotFound, engine down: Unavailable) or Cancelled. Nothing the
    // task created (its container, its processes) outlives the call.
    virtual Result<TaskResult> run(const TaskSpec &spec, const CancelToken &cancel,
                                   const std::function<void(const OutputChunk &)> &output) = 0;
    // The image a task runs in when it names an artifact (Concourse's task `image:`), made from
    // what a registry-image get left there: rootfs/ with the env and user of metadata.json, or the
    // image.tar of its oci format. Tagged repoTag, so that an artifact of the same content is made
    // into an image once (whoever names the tag names it by content). Returns what a TaskSpec's
    // image may name. Invalid when the artifact holds no image; runners without images refuse.
    virtual Result<QString> importArtifactImage(const QString &artifactDir, const QString &repoTag,
                                                const CancelToken &cancel)
    {
        Q_UNUSED(artifactDir)
        Q_UNUSED(repoTag)
        Q_UNUSED(cancel)
        return fail(ErrorCode::Invalid, QStringLiteral("%1 runs no images").arg(kind()));
    }
    // Removes what tasks of a process that died left behind: containers carrying every label in
    // `labels`. Returns how many went. Host runners have nothing they can find and return 0.
    virtual Result<int> removeLeftovers(const QMap<QString, QString> &labels) = 0;
    // Removes the images importArtifactImage made in `repository` ("pando/artifact-image") more
    // than olderThanMs ago that no container uses (one in use stays; the next task to name its
    // artifact makes it again). Returns how many went. Runners without images have none.
    virtual Result<int> removeStaleArtifactImages(const QString &repository, qint64 olderThanMs)
    {
        Q_UNUSED(repository)
        Q_UNUSED(olderThanMs)
        return 0;
    }
};

} // namespace pando::adapters
