#pragma once
// Terminal escape handling for the log view: the SGR colour/bold state a line starts and ends
// with, the line's visible text with every escape sequence removed, and the styled spans the
// view paints. Everything here works on one line's raw UTF-8 bytes and is pure (no state kept):
// the log buffer stores raw lines and calls these only for the lines a view shows or a search
// scans, so nothing is computed or stored for the lines nobody looks at.
//
// What a line shows: printable text and tabs. CSI sequences (ESC [ ... final byte) are removed;
// those ending in 'm' (SGR) change the style. OSC/DCS/APC/PM/SOS strings (ESC ] ... BEL or ESC \,
// e.g. hyperlinks and window titles) and two- or three-byte escapes (ESC 7, ESC ( B) are
// removed. A sequence cut off by the end of the line is removed up to the end. Other control
// bytes are dropped. A carriage return starts the line over at its next visible character (the
// way a terminal shows a progress bar whose redraws do not get shorter); a trailing one is ignored.

#include <QByteArrayView>
#include <QList>
#include <QString>
#include <QVariant>
#include <cstdint>

namespace pando::desktop::ansi {

// A colour as SGR set it. 0 is the default; kind in the top byte, value below.
//   Palette (1 << 24) | index: 0-15 are the theme's 16 colours, 16-255 xterm's fixed cube/greys.
//   Rgb     (2 << 24) | 0xrrggbb: a truecolour value (38;2;r;g;b).
using Colour = std::uint32_t;
constexpr Colour DefaultColour = 0;
constexpr Colour paletteColour(int index)
{
    return (Colour(1) << 24) | Colour(index & 0xff);
}
constexpr Colour rgbColour(int r, int g, int b)
{
    return (Colour(2) << 24) | (Colour(r & 0xff) << 16) | (Colour(g & 0xff) << 8) | Colour(b & 0xff);
}

struct Style {
    Colour fg = DefaultColour;
    Colour bg = DefaultColour;
    bool bold = false;

    bool isDefault() const { return fg == DefaultColour && bg == DefaultColour && !bold; }
    friend bool operator==(const Style &, const Style &) = default;
};

// A run of the visible text with a non-default style; start and length in UTF-16 code units of
// RenderedLine::text (what QML's string indexes use). Unstyled text has no span.
struct Span {
    qsizetype start = 0;
    qsizetype length = 0;
    Style style;
};

struct RenderedLine {
    QString text;
    QList<Span> spans;
};

// True when the line has anything to remove or interpret (ESC, CR or another control byte);
// lines without are shown byte for byte and skip every function below.
bool needsProcessing(QByteArrayView raw);

// The line's visible text and styled spans, starting from the style `start` (the style the
// previous line of the same stream ended with).
RenderedLine render(QByteArrayView raw, Style start = {});

// The visible bytes (UTF-8) only: what search scans and copy returns.
QByteArray strip(QByteArrayView raw);

// The style in force after the line, starting from `start`.
Style styleAfter(QByteArrayView raw, Style start);

// A colour as the view receives it: an int 0-15 for the theme's palette colours (the view maps
// them to its light or dark palette), a "#rrggbb" string for xterm's fixed colours 16-255 and
// truecolour, and an invalid QVariant for the default colour.
QVariant colourValue(Colour colour);

} // namespace pando::desktop::ansi
