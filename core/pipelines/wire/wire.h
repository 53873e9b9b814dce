#pragma once
// Package wire is the tree codec: a step's directory as a tar stream, packed and unpacked the
// way every transfer of one agrees on. Packing is deterministic (sorted paths, uid/gid 0,
// mtime 0, no owner names), symlinks are kept and never followed, and unpacking refuses
// anything that would write outside the destination: absolute names, `..`, paths through a
// symlink, hardlinks, devices, duplicates, and trees larger than the configured limits.
//
// Threading: every function blocks and may be called from any thread; nothing is shared.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"

#include <QByteArrayView>
#include <QString>
#include <functional>

class QIODevice;

namespace pando::core {

// Where packed bytes go. Returning an error stops the packing with that error.
using WireSink = std::function<Status(QByteArrayView data)>;
// Where unpacked bytes come from: fills up to max bytes of buf, returns how many; 0 is the end.
using WireSource = std::function<Result<qint64>(char *buf, qint64 max)>;

// Limits against tar bombs. The defaults are generous for build outputs.
struct WireLimits {
    qint64 maxTotalBytes = 64LL * 1024 * 1024 * 1024; // sum of the file sizes
    qint64 maxEntries = 2'000'000;
    qint64 maxPathBytes = 4096; // one entry's name
    int maxDepth = 256;         // path components of one entry
};

struct UnpackStats {
    qint64 entries = 0;
    qint64 files = 0;
    qint64 bytes = 0; // file content written
};

// Packs every entry below dir (not dir itself) as a pax tar stream. Regular files keep their
// permission bits (setuid/setgid/sticky dropped), directories are entries of their own,
// symlinks are stored as symlinks, hardlinked files are stored as separate files. A device,
// fifo or socket in the tree is an error naming its path.
Status packTree(const QString &dir, const WireSink &sink, const CancelToken &cancel = {});
Status packTree(const QString &dir, QIODevice *out, const CancelToken &cancel = {});

// Unpacks a tar stream into dest. dest must not exist or be an empty directory; its parent
// must exist. The stream is unpacked into a fresh directory next to dest which is renamed to
// dest only when every entry was accepted, so on any error nothing new is left behind: no
// half-written tree, nothing outside it. Errors name the offending entry in Error::where.
Result<UnpackStats> unpackTree(const WireSource &source, const QString &dest, const WireLimits &limits = {},
                               const CancelToken &cancel = {});
// in must be readable and blocking (a file, a decompressing device, a finished process).
Result<UnpackStats> unpackTree(QIODevice *in, const QString &dest, const WireLimits &limits = {},
                               const CancelToken &cancel = {});

// Adapters between the callback forms and QIODevice.
WireSink deviceSink(QIODevice *out);
WireSource deviceSource(QIODevice *in);

} // namespace pando::core
