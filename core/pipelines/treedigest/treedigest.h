#pragma once
// Package treedigest lets a worker with no Pando code (busybox only) name a tree exactly as
// the orchestrator does, so outputs can stay where they were made: treeDigest() here and
// treedigest.sh next to this header compute the same SHA-256 over the same manifest (see
// docs/treedigest.md). The digest covers what the wire codec keeps: names, types, permission
// bits, file contents and symlink targets; not owners, not times.
//
// Threading: blocking, reentrant.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"

#include <QByteArray>
#include <QString>

namespace pando::core {

// The manifest the digest is the SHA-256 of: "treedigest v1\n", then one line per entry below
// dir in byte order of the path: "d <mode> - <path>", "f <mode> <sha256> <path>" or
// "l 777 <sha256 of the target> <path>", mode in octal (permission bits only). A newline in a
// name or symlink target, or a device/fifo/socket in the tree, is an error naming the path.
Result<QByteArray> treeManifest(const QString &dir, const CancelToken &cancel = {});

// The lowercase hex SHA-256 of treeManifest(dir).
Result<QString> treeDigest(const QString &dir, const CancelToken &cancel = {});

} // namespace pando::core
