#include "tests/adapters/docker/dockerharness.h"

#include "adapters/runtime/docker/dockerruntime.h"

#include <QDir>
#include <QFile>
#include <QMutex>
#include <QTemporaryDir>
#include <sys/stat.h>

namespace pando::test {

using adapters::docker::DockerRuntime;

bool DockerHarness::available(QString *why)
{
    DockerRuntime runtime;
    auto status = runtime.ping();
    if (!status && why) {
        *why = QStringLiteral("Docker Engine at %1: %2").arg(runtime.client().socketPath(), status.error().text());
        if (!status.error().hint.isEmpty())
            *why += QStringLiteral(" (") + status.error().hint + u')';
    }
    return status.has_value();
}

Result<QString> DockerHarness::ensureBaseImage()
{
    // Several test functions of one executable may ask; import once per process at most.
    static QMutex mutex;
    QMutexLocker lock(&mutex);
    DockerRuntime runtime;
    if (auto id = runtime.imageId(baseImage()))
        return id;
    else if (id.error().code != ErrorCode::NotFound)
        return id;

    const QString busybox = QStringLiteral("/bin/busybox");
    if (!QFile::exists(busybox))
        return fail(ErrorCode::Unavailable, QStringLiteral("busybox is missing"), busybox,
                    QStringLiteral("install Debian's busybox-static"));
    QTemporaryDir root;
    if (!root.isValid())
        return fail(ErrorCode::Internal,
                    QStringLiteral("cannot create a temporary directory: %1").arg(root.errorString()));
    const QDir dir(root.path());
    for (const char *sub : {"bin", "www", "tmp", "etc"}) {
        if (!dir.mkpath(QString::fromLatin1(sub)))
            return fail(ErrorCode::Internal, QStringLiteral("cannot create the directory"),
                        dir.filePath(QString::fromLatin1(sub)));
    }
    // /tmp as on any system: world-writable and sticky (Qt's permission flags have no sticky bit).
    if (::chmod(QFile::encodeName(dir.filePath(QStringLiteral("tmp"))).constData(), 01777) != 0)
        return fail(ErrorCode::Internal, QStringLiteral("cannot chmod"), dir.filePath(QStringLiteral("tmp")));
    if (!QFile::copy(busybox, dir.filePath(QStringLiteral("bin/busybox"))))
        return fail(ErrorCode::Internal, QStringLiteral("cannot copy busybox"),
                    dir.filePath(QStringLiteral("bin/busybox")));
    const char *applets[] = {"sh",  "httpd",  "echo",  "cat",  "sleep", "ls", "wget",
                             "env", "printf", "mkdir", "true", "false", "rm", "id"};
    for (const char *applet : applets) {
        const QString link = dir.filePath(QStringLiteral("bin/") + QString::fromLatin1(applet));
        if (!QFile::link(QStringLiteral("busybox"), link))
            return fail(ErrorCode::Internal, QStringLiteral("cannot create the symlink"), link);
    }
    QFile index(dir.filePath(QStringLiteral("www/index.html")));
    if (!index.open(QIODevice::WriteOnly) || index.write("<h1>hello from pando/busybox</h1>\n") < 0)
        return fail(ErrorCode::Internal, QStringLiteral("cannot write: %1").arg(index.errorString()), index.fileName());
    index.close();
    QFile passwd(dir.filePath(QStringLiteral("etc/passwd")));
    if (!passwd.open(QIODevice::WriteOnly) || passwd.write("root:x:0:0:root:/:/bin/sh\n") < 0)
        return fail(ErrorCode::Internal, QStringLiteral("cannot write: %1").arg(passwd.errorString()),
                    passwd.fileName());
    passwd.close();
    return runtime.importImage(root.path(), baseImage());
}

} // namespace pando::test
