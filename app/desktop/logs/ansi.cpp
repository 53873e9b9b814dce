#include "app/desktop/logs/ansi.h"

#include <QStringDecoder>
#include <cstring>

namespace pando::desktop::ansi {

namespace {

constexpr char Esc = '\x1b';

bool isPlainByte(unsigned char c)
{
    return c >= 0x20 ? c != 0x7f : c == '\t';
}

// SGR parameters: groups split by ';', sub-parameters of a group by ':' (38:2::r:g:b).
struct SgrParams {
    static constexpr int Max = 32;
    int value[Max];
    bool colon[Max]; // this parameter was introduced by ':' (a sub-parameter of the previous one)
    int count = 0;
};

SgrParams parseParams(QByteArrayView p)
{
    SgrParams out;
    int current = 0;
    bool colon = false;
    for (qsizetype i = 0; i <= p.size(); ++i) {
        const char c = i < p.size() ? p[i] : ';';
        if (c == ';' || c == ':') {
            if (out.count < SgrParams::Max) {
                out.value[out.count] = current;
                out.colon[out.count] = colon;
                ++out.count;
            }
            current = 0;
            colon = c == ':';
        } else if (c >= '0' && c <= '9') {
            // Clamp instead of overflowing on absurd input; every meaningful value is < 256.
            current = current > 100000 ? current : current * 10 + (c - '0');
        }
    }
    return out;
}

// Reads an extended colour (after 38 or 48) starting at params[i]; returns the index after it,
// or -1 when the sequence is incomplete or invalid (then the rest of the sequence is ignored).
int extendedColour(const SgrParams &p, int i, Colour *colour)
{
    if (i >= p.count)
        return -1;
    const bool sub = p.colon[i];
    const int mode = p.value[i];
    if (mode == 5) {
        if (i + 1 >= p.count || p.value[i + 1] > 255)
            return -1;
        *colour = paletteColour(p.value[i + 1]);
        return i + 2;
    }
    if (mode == 2) {
        int first = i + 1;
        // The ITU form 38:2:<colour space>:r:g:b carries one more sub-parameter.
        if (sub) {
            int subs = 0;
            while (first + subs < p.count && p.colon[first + subs])
                ++subs;
            if (subs == 4)
                ++first;
        }
        if (first + 2 >= p.count)
            return -1;
        const int r = p.value[first], g = p.value[first + 1], b = p.value[first + 2];
        if (r > 255 || g > 255 || b > 255)
            return -1;
        *colour = rgbColour(r, g, b);
        return first + 3;
    }
    return -1;
}

void applySgr(QByteArrayView params, Style &style)
{
    const SgrParams p = parseParams(params);
    for (int i = 0; i < p.count;) {
        const int v = p.value[i];
        if (v == 0) {
            style = Style{};
        } else if (v == 1) {
            style.bold = true;
        } else if (v == 22) {
            style.bold = false;
        } else if (v >= 30 && v <= 37) {
            style.fg = paletteColour(v - 30);
        } else if (v == 39) {
            style.fg = DefaultColour;
        } else if (v >= 40 && v <= 47) {
            style.bg = paletteColour(v - 40);
        } else if (v == 49) {
            style.bg = DefaultColour;
        } else if (v >= 90 && v <= 97) {
            style.fg = paletteColour(v - 90 + 8);
        } else if (v >= 100 && v <= 107) {
            style.bg = paletteColour(v - 100 + 8);
        } else if (v == 38 || v == 48) {
            Colour c = DefaultColour;
            const int next = extendedColour(p, i + 1, &c);
            if (next < 0)
                return;
            (v == 38 ? style.fg : style.bg) = c;
            i = next;
            continue;
        }
        ++i;
        // Sub-parameters of an attribute we do not know (4:3 curly underline) belong to it.
        while (i < p.count && p.colon[i])
            ++i;
    }
}

// Walks one line: sink.text(bytes, style) for each visible run, sink.restart() when a carriage
// return takes effect. Returns the style at the end of the line.
template<typename Sink> Style walk(QByteArrayView raw, Style style, Sink &sink)
{
    const char *data = raw.data();
    const qsizetype n = raw.size();
    qsizetype i = 0;
    bool pendingReturn = false;
    while (i < n) {
        qsizetype start = i;
        while (i < n && isPlainByte(static_cast<unsigned char>(data[i])))
            ++i;
        if (i > start) {
            if (pendingReturn) {
                sink.restart();
                pendingReturn = false;
            }
            sink.text(QByteArrayView(data + start, i - start), style);
        }
        if (i >= n)
            break;
        const char c = data[i];
        if (c == '\r') {
            pendingReturn = true;
            ++i;
            continue;
        }
        if (c != Esc) {
            ++i; // another control byte: dropped
            continue;
        }
        if (i + 1 >= n)
            break; // a lone ESC at the end: cut off
        const auto kind = static_cast<unsigned char>(data[i + 1]);
        if (kind == '[') {
            qsizetype j = i + 2;
            while (j < n && static_cast<unsigned char>(data[j]) >= 0x30 && static_cast<unsigned char>(data[j]) <= 0x3f)
                ++j;
            const qsizetype paramsEnd = j;
            while (j < n && static_cast<unsigned char>(data[j]) >= 0x20 && static_cast<unsigned char>(data[j]) <= 0x2f)
                ++j;
            if (j >= n)
                break; // cut off
            const auto final = static_cast<unsigned char>(data[j]);
            if (final >= 0x40 && final <= 0x7e) {
                const QByteArrayView params(data + i + 2, paramsEnd - (i + 2));
                // Private SGR forms (ESC [ ? ... m, ESC [ > ... m) are not colours.
                const bool isPrivate = !params.isEmpty() && static_cast<unsigned char>(params[0]) >= 0x3c;
                if (final == 'm' && paramsEnd == j && !isPrivate)
                    applySgr(params, style);
                i = j + 1;
            } else {
                i = j; // malformed: drop what was read, show what follows
            }
        } else if (kind == ']' || kind == 'P' || kind == 'X' || kind == '^' || kind == '_') {
            // A string ended by BEL or ST (ESC \).
            qsizetype j = i + 2;
            while (j < n && data[j] != '\a' && !(data[j] == Esc && j + 1 < n && data[j + 1] == '\\'))
                ++j;
            if (j >= n)
                break;
            i = data[j] == '\a' ? j + 1 : j + 2;
        } else if (kind >= 0x20 && kind <= 0x2f) {
            qsizetype j = i + 1;
            while (j < n && static_cast<unsigned char>(data[j]) >= 0x20 && static_cast<unsigned char>(data[j]) <= 0x2f)
                ++j;
            i = j < n ? j + 1 : n;
        } else if (kind >= 0x30 && kind <= 0x7e) {
            i += 2;
        } else {
            ++i; // ESC followed by a control or non-ASCII byte: drop the ESC alone
        }
    }
    return style;
}

struct StripSink {
    QByteArray out;
    void restart() { out.clear(); }
    void text(QByteArrayView bytes, const Style &) { out.append(bytes); }
};

struct StyleSink {
    void restart() {}
    void text(QByteArrayView, const Style &) {}
};

struct RenderSink {
    // The visible bytes are decoded as one text, as strip() returns them: a UTF-8 sequence an
    // escape cut in two is one character here too, so what search finds is what the view shows.
    RenderedLine line;
    QByteArray bytes;
    QStringDecoder decoder{QStringDecoder::Utf8};
    void restart()
    {
        line.text.clear();
        line.spans.clear();
        bytes.clear();
        decoder.resetState();
    }
    void text(QByteArrayView piece, const Style &style)
    {
        bytes.append(piece);
        const qsizetype start = line.text.size();
        line.text.append(decoder(piece));
        const qsizetype length = line.text.size() - start;
        if (style.isDefault() || length == 0)
            return;
        if (!line.spans.isEmpty()) {
            Span &last = line.spans.last();
            if (last.style == style && last.start + last.length == start) {
                last.length += length;
                return;
            }
        }
        line.spans.append(Span{start, length, style});
    }
    // A sequence cut off by the line's end is one replacement character, as in strip()'s text.
    RenderedLine finish() &&
    {
        const QString whole = QString::fromUtf8(bytes);
        if (!line.spans.isEmpty() && line.spans.last().start + line.spans.last().length == line.text.size())
            line.spans.last().length += whole.size() - line.text.size();
        line.text = whole;
        return std::move(line);
    }
};

// xterm's fixed colours 16-255: a 6x6x6 cube, then 24 greys.
QString xtermHex(int index)
{
    int r, g, b;
    if (index < 232) {
        static constexpr int Levels[6] = {0, 95, 135, 175, 215, 255};
        const int i = index - 16;
        r = Levels[i / 36];
        g = Levels[(i / 6) % 6];
        b = Levels[i % 6];
    } else {
        r = g = b = 8 + 10 * (index - 232);
    }
    return QString::asprintf("#%02x%02x%02x", r, g, b);
}

} // namespace

bool needsProcessing(QByteArrayView raw)
{
    for (const char c : raw) {
        if (!isPlainByte(static_cast<unsigned char>(c)))
            return true;
    }
    return false;
}

RenderedLine render(QByteArrayView raw, Style start)
{
    if (!needsProcessing(raw)) {
        RenderedLine line{QString::fromUtf8(raw), {}};
        if (!start.isDefault() && !line.text.isEmpty())
            line.spans.append(Span{0, line.text.size(), start});
        return line;
    }
    RenderSink sink;
    walk(raw, start, sink);
    return std::move(sink).finish();
}

QByteArray strip(QByteArrayView raw)
{
    if (!needsProcessing(raw))
        return raw.toByteArray();
    StripSink sink;
    sink.out.reserve(raw.size());
    walk(raw, Style{}, sink);
    return std::move(sink.out);
}

Style styleAfter(QByteArrayView raw, Style start)
{
    if (raw.isEmpty() || std::memchr(raw.data(), Esc, size_t(raw.size())) == nullptr)
        return start;
    StyleSink sink;
    return walk(raw, start, sink);
}

QVariant colourValue(Colour colour)
{
    const Colour kind = colour >> 24;
    const int value = int(colour & 0xffffff);
    if (kind == 1)
        return value < 16 ? QVariant(value) : QVariant(xtermHex(value));
    if (kind == 2)
        return {QString::asprintf("#%06x", value)};
    return {};
}

} // namespace pando::desktop::ansi
