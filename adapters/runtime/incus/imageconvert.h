#pragma once
// Turns an image the Docker engine built into an Incus image: Incus 6.0 (Debian's backport) has
// no OCI image support, so the Incus runtime builds with Docker's builder, exports the image's
// file system through a created (never started) container, and imports it into Incus as a
// unified image tarball (metadata.yaml + rootfs/).
//
// The tarball's rootfs carries, besides the image's files, Pando's own small init under
// /.pando: a static busybox, the init script (network up through DHCP, the image's environment
// and working directory, the app's argv, signals passed on, the exit code kept in
// /.pando/exit), so an app image without a shell or an init still runs in a system container.
//
// The export's container is removed when the export ends; one a killed process left behind is
// removed by a later conversion of the same install (dev.pando.install) once it is ten minutes
// old. Another install's export containers are never touched: one may be in progress.
//
// Safety: entries whose names are absolute or climb out with "..", and devices, FIFOs and
// sockets, are dropped; everything else is stored below rootfs/.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "adapters/api/runtime.h"
#include "adapters/kit/dockerapi/dockerclient.h"

#include <QStringList>
#include <QTemporaryFile>
#include <memory>

namespace pando::adapters::incus {

// What the Docker image says about how it runs.
struct ImageConfig {
    QStringList entrypoint;
    QStringList cmd;
    QStringList env; // "KEY=value"
    QString workingDir;
    static ImageConfig fromDockerInspect(const QJsonObject &inspected);
};

struct ConvertRequest {
    QString dockerImage; // id or tag
    QString busybox;     // a statically linked busybox on this host
    QString description;
    // Written to metadata.yaml: labels the Incus image carries. Its dev.pando.install also labels
    // the export's container, so that only this install's leftovers are cleaned up.
    Labels properties;
    qint64 staleExportSeconds = 600; // an export container this old is a leftover (tests: 0)
};

// The unified tarball, rewound, ready to upload.
Result<std::unique_ptr<QTemporaryFile>> convertDockerImage(const dockerapi::DockerClient &docker,
                                                           const ConvertRequest &request, const CancelToken &cancel);

// The init script for an image config (exposed for tests).
QByteArray initScript(const ImageConfig &config);

// argv quoted for a POSIX shell, each word in single quotes: the init runs
// `eval "set -- $PANDO_ARGV"`, so no word is ever split or expanded.
QString shellQuote(const QStringList &argv);

// Checks that the bytes read from path are a statically linked executable (a dynamic one cannot
// run in an image without its libraries): an error naming the file and the package otherwise.
Status checkStaticBusybox(const QByteArray &bytes, const QString &path);

} // namespace pando::adapters::incus
