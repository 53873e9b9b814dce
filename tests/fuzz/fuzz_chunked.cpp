// The request guard's chunked-body decoder, differentially: the same bytes fed whole and fed in
// pieces cut where the input's first bytes say must frame the body the same way (the outcome,
// how much is the body's, its decoded size). A guard that depends on read boundaries can be
// desynced from the server behind it by whoever chooses the packet sizes.
#include "app/server/requestguard.h"

#include <cstdint>
#include <cstdlib>

using pando::server::detail::ChunkedReader;

namespace {

struct Framing {
    ChunkedReader::Outcome outcome = ChunkedReader::Outcome::More;
    qsizetype consumed = 0;
    qint64 decoded = 0;
    bool operator==(const Framing &) const = default;
};

Framing feedInPieces(QByteArrayView body, QByteArrayView cuts)
{
    ChunkedReader reader;
    Framing framing;
    qsizetype at = 0;
    for (qsizetype i = 0; at < body.size(); ++i) {
        // A piece of 1..16 bytes per cut byte, the rest in one piece once the cuts run out.
        const qsizetype length = i < cuts.size() ? 1 + (std::uint8_t(cuts[i]) & 0x0f) : body.size() - at;
        const auto step = reader.feed(body.sliced(at, qMin(length, body.size() - at)));
        framing.consumed += step.consumed;
        at += qMin(length, body.size() - at);
        framing.outcome = step.outcome;
        if (step.outcome != ChunkedReader::Outcome::More)
            break;
    }
    framing.decoded = reader.decodedBytes();
    return framing;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    if (size < 1)
        return 0;
    const QByteArrayView input(reinterpret_cast<const char *>(data), qsizetype(size));
    const qsizetype cutCount = qMin<qsizetype>(std::uint8_t(input[0]) & 0x3f, input.size() - 1);
    const QByteArrayView cuts = input.sliced(1, cutCount);
    const QByteArrayView body = input.sliced(1 + cutCount);
    const Framing whole = feedInPieces(body, {});
    const Framing pieces = feedInPieces(body, cuts);
    if (whole.outcome == ChunkedReader::Outcome::Malformed && pieces.outcome == ChunkedReader::Outcome::Malformed)
        return 0; // where a malformed body is noticed may differ; that it is refused may not
    if (!(whole == pieces))
        std::abort();
    if (whole.consumed > body.size())
        std::abort();
    // A chunk counts in full at its size line (so the body limit holds before its data comes);
    // once the body is whole, its data cannot be more than the bytes it took.
    if (whole.outcome == ChunkedReader::Outcome::Done && whole.decoded > whole.consumed)
        std::abort();
    return 0;
}
