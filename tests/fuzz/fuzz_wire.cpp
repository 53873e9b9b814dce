// The tree codec's unpacker on any byte stream, as a pipeline's blob store or a worker hands it
// one. What must hold whatever the bytes: nothing is written outside the destination (the two
// directories around it hold only the destination, or nothing when the stream was refused)
// and the limits hold.
#include "core/pipelines/wire/wire.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ftw.h>
#include <sys/stat.h>

using namespace pando;

namespace {

// Removes a tree whatever its modes and names (bytes that are no UTF-8 included), which
// QTemporaryDir cannot: directories are opened up before they are read, then all is unlinked.
void removeTree(const QString &root)
{
    const QByteArray path = QFile::encodeName(root);
    ::nftw(
        path.constData(),
        [](const char *p, const struct stat *, int type, struct FTW *) {
            if (type == FTW_D)
                ::chmod(p, 0700);
            return 0;
        },
        16, FTW_PHYS);
    ::nftw(
        path.constData(),
        [](const char *p, const struct stat *, int, struct FTW *) {
            ::remove(p); // what cannot go is found by the next input's check
            return 0;
        },
        16, FTW_PHYS | FTW_DEPTH);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    static QTemporaryDir sandboxes;
    QTemporaryDir sandbox(sandboxes.path() + QStringLiteral("/s-XXXXXX"));
    const QString dest = sandbox.path() + QStringLiteral("/dest");
    core::WireLimits limits;
    limits.maxTotalBytes = 1 << 20;
    limits.maxEntries = 512;
    limits.maxDepth = 32;
    qint64 offset = 0;
    const core::WireSource source = [&](char *buf, qint64 max) -> Result<qint64> {
        const qint64 n = qMin<qint64>(max, qint64(size) - offset);
        std::memcpy(buf, data + offset, size_t(n));
        offset += n;
        return n;
    };
    auto unpacked = core::unpackTree(source, dest, limits);
    constexpr auto all = QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot;
    const QStringList beside = QDir(sandbox.path()).entryList(all);
    if (unpacked ? beside != QStringList{QStringLiteral("dest")} : !beside.isEmpty())
        std::abort(); // something was written beside the destination, or a refusal left a tree
    if (QDir(sandboxes.path()).entryList(all).size() != 1)
        std::abort(); // or further up
    if (unpacked && (unpacked->entries > limits.maxEntries || unpacked->bytes > limits.maxTotalBytes))
        std::abort();
    // A tree may hold directories without write permission: open them up so the sandbox goes
    // (else the next input would find it still there).
    removeTree(sandbox.path());
    return 0;
}
