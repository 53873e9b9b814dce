// The log view's escape handling on any line a process can print: rendering must agree with
// stripping (what search scans is what the view shows), spans must lie inside the text in
// order, and no escape or control byte but a tab may reach the screen.
#include "app/desktop/logs/ansi.h"

#include <cstdint>
#include <cstdlib>

using namespace pando::desktop;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const QByteArrayView raw(reinterpret_cast<const char *>(data), qsizetype(size));
    const ansi::RenderedLine line = ansi::render(raw);
    const QByteArray stripped = ansi::strip(raw);
    if (line.text != QString::fromUtf8(stripped))
        std::abort();
    for (const char c : stripped)
        if ((std::uint8_t(c) < 0x20 && c != '\t') || c == 0x7f)
            std::abort();
    qsizetype end = 0;
    for (const ansi::Span &span : line.spans) {
        if (span.start < end || span.length <= 0 || span.start + span.length > line.text.size())
            std::abort();
        end = span.start + span.length;
    }
    if (!ansi::needsProcessing(raw) && stripped != raw)
        std::abort(); // a plain line is shown byte for byte
    return 0;
}
