#include "qml/logs/logsource.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QVariantMap>
#include <algorithm>
#include <vector>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

// The xterm-like 16 colours, tuned to stay readable on a light and on a dark background.
constexpr const char16_t *LightPalette[16] = {
    u"#000000", u"#c91b00", u"#00a600", u"#a68a00", u"#0037da", u"#a2269b", u"#00868b", u"#7f7f7f",
    u"#555555", u"#e74856", u"#16a34a", u"#b58900", u"#3b78ff", u"#c239b3", u"#0e9aa7", u"#404040",
};
constexpr const char16_t *DarkPalette[16] = {
    u"#3b3b3b", u"#f0524f", u"#5fc35f", u"#e5c07b", u"#5c9cf5", u"#c678dd", u"#56b6c2", u"#d0d0d0",
    u"#7f7f7f", u"#ff6e6e", u"#8ae28a", u"#ffd580", u"#8cb8ff", u"#e39bf5", u"#7fdde8", u"#ffffff",
};

QString colourOf(const QVariant &value, bool dark)
{
    if (!value.isValid() || value.isNull())
        return {};
    if (value.typeId() == QMetaType::QString)
        return value.toString();
    bool ok = false;
    const int index = value.toInt(&ok);
    return ok ? LogSource::paletteColour(index, dark) : QString();
}

struct Style {
    QString fg;
    bool bold = false;
    bool operator==(const Style &) const = default;
};

} // namespace

LogSource::LogSource(QObject *parent) : QObject(parent), m_model(new LogModel(this))
{}

LogSource::~LogSource() = default;

QString LogSource::paletteColour(int index, bool dark)
{
    if (index < 0 || index > 15)
        return {};
    return QString::fromUtf16(dark ? DarkPalette[index] : LightPalette[index]);
}

void LogSource::setDark(bool dark)
{
    if (dark == m_dark)
        return;
    m_dark = dark;
    Q_EMIT darkChanged();
}

void LogSource::setStatus(const QString &status)
{
    m_status = status;
    Q_EMIT stateChanged();
}

QString LogSource::styledText(const QString &text, const QVariantList &spans) const
{
    // Qt Quick's StyledText (font colour and bold): laid out far faster than RichText, which a
    // view scrolling 100,000 lines a second needs. Backgrounds are drawn beside it (highlights()).
    const qsizetype n = text.size();
    std::vector<Style> styles(static_cast<size_t>(n));
    for (const QVariant &v : spans) {
        const QVariantMap span = v.toMap();
        const qsizetype start = std::clamp<qsizetype>(span.value(u"start"_s).toLongLong(), 0, n);
        const qsizetype end = std::clamp<qsizetype>(start + span.value(u"length"_s).toLongLong(), start, n);
        const QString fg = colourOf(span.value(u"fg"_s), m_dark);
        const bool bold = span.value(u"bold"_s).toBool();
        for (qsizetype i = start; i < end; ++i) {
            styles[size_t(i)].fg = fg;
            styles[size_t(i)].bold = bold;
        }
    }
    QString markup;
    markup.reserve(n + 64);
    qsizetype i = 0;
    while (i < n) {
        qsizetype j = i + 1;
        while (j < n && styles[size_t(j)] == styles[size_t(i)])
            ++j;
        const Style &s = styles[size_t(i)];
        // Spaces kept as they are: logs align columns with them.
        QString chunk = text.mid(i, j - i).toHtmlEscaped();
        chunk.replace(u' ', u"&nbsp;"_s);
        if (s.bold)
            chunk = u"<b>"_s + chunk + u"</b>"_s;
        if (!s.fg.isEmpty())
            chunk = u"<font color=\""_s + s.fg + u"\">"_s + chunk + u"</font>"_s;
        markup += chunk;
        i = j;
    }
    return markup;
}

QVariantList LogSource::highlights(const QVariantList &spans, const QVariantList &matchRanges) const
{
    // Search hits over ANSI backgrounds: both as ranges of characters with a colour, which the
    // view draws behind the monospace text.
    QVariantList out;
    for (const QVariant &v : spans) {
        const QVariantMap span = v.toMap();
        if (const QString bg = colourOf(span.value(u"bg"_s), m_dark); !bg.isEmpty())
            out.append(QVariantMap{
                {u"start"_s, span.value(u"start"_s)}, {u"length"_s, span.value(u"length"_s)}, {u"color"_s, bg}});
    }
    for (const QVariant &v : matchRanges) {
        const QVariantMap range = v.toMap();
        out.append(QVariantMap{{u"start"_s, range.value(u"start"_s)},
                               {u"length"_s, range.value(u"length"_s)},
                               {u"color"_s, u"#ffd54f"_s}}); // amber, readable in both palettes
    }
    return out;
}

int LogSource::copyRows(int first, int last) const
{
    if (m_model->rowCount() == 0)
        return 0;
    const QString text = m_model->copyRows(first, last);
    // Without a GUI application (a Core-only test) there is no clipboard to put it on.
    if (qobject_cast<QGuiApplication *>(QCoreApplication::instance()))
        QGuiApplication::clipboard()->setText(text);
    const int from = std::clamp(std::min(first, last), 0, m_model->rowCount() - 1);
    const int to = std::clamp(std::max(first, last), 0, m_model->rowCount() - 1);
    return to - from + 1;
}

} // namespace pando::desktop
