#pragma once
// Tar streams of a directory tree for the Docker engine (what the Docker runtime and the Incus
// runtime, which builds with Docker, both send it): build contexts and root file systems
// to import. Symlinks are stored as symlinks and never followed; only directories, regular
// files and symlinks are taken, with their modes; owners are written as root.

#include "adapters/api/error.h"
#include "adapters/api/runtime.h"
#include "adapters/kit/dockerapi/dockerignore.h"

#include <QIODevice>
#include <QString>
#include <QTemporaryFile>
#include <memory>

namespace pando::adapters::dockerapi {

struct TarOptions {
    bool skipTopLevelGit = true; // a build context does not carry its .git
    DockerIgnore ignore;         // what a build context's .dockerignore leaves out
    // Files sent with this content in place of theirs, by path relative to the root (a Dockerfile
    // without its syntax directive); a path not in the tree is not added.
    QMap<QString, QByteArray> replace;
};

// Writes an uncompressed tar of everything below rootDir (paths relative to it) to out.
Status writeTar(const QString &rootDir, QIODevice *out, const TarOptions &options = {});

// The same into a temporary file, rewound, ready to send as a request body.
Result<std::unique_ptr<QTemporaryFile>> tarToTempFile(const QString &dir, const TarOptions &options);

// An uncompressed tar of files given in memory, keyed by absolute path (stored without the
// leading '/', with their mode and owner; no directory entries, so that extracting at "/"
// leaves existing directories as they are). The caller wipes the result when it holds secrets.
Result<QByteArray> tarOfFiles(const QMap<QString, ContainerFile> &files);

} // namespace pando::adapters::dockerapi
