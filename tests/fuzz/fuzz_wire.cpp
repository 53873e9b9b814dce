// The tree codec's unpacker on any byte stream, as a pipeline's blob store or a worker hands it
// one. What must hold whatever the bytes: nothing is written outside the destination (the two
// directories around it hold only the destination, or nothing when the stream was refused)
// and the limits hold.
#include "core/pipelines/wire/wire.h"

#include <QDir>
#include <QTemporaryDir>
#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace pando;

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
    return 0;
}
