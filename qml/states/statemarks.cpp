#include "qml/states/statemarks.h"
#include "qml/states/statestyle.h"

#include <QPainter>
#include <QPixmap>
#include <QSvgRenderer>
#include <cmath>

using namespace Qt::StringLiterals;

namespace pando::desktop::marks {

namespace {

double channel(double c)
{
    return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}

double luminance(const QColor &c)
{
    const QColor rgb = c.toRgb();
    return 0.2126 * channel(rgb.redF()) + 0.7152 * channel(rgb.greenF()) + 0.0722 * channel(rgb.blueF());
}

// The same hue and saturation at HSL lightness l (0..1), in the 8 bits a channel is drawn with
// (the ratio is reached by what is drawn, not by a colour between two drawable ones).
QColor withLightness(const QColor &c, double l)
{
    const QColor hsl = c.toHsl();
    return QColor::fromRgb(QColor::fromHslF(hsl.hslHueF(), hsl.hslSaturationF(), float(std::clamp(l, 0.0, 1.0))).rgb());
}

// The least change of lightness in one direction that reaches minimum, or nothing.
std::optional<QColor> towards(const QColor &colour, const QColor &background, double minimum, double step)
{
    const double start = colour.toHsl().lightnessF();
    for (double l = start; l >= 0.0 && l <= 1.0; l += step) {
        const QColor candidate = withLightness(colour, l);
        if (contrast(candidate, background) >= minimum)
            return candidate;
    }
    const QColor end = withLightness(colour, step < 0 ? 0.0 : 1.0);
    if (contrast(end, background) >= minimum)
        return end;
    return std::nullopt;
}

} // namespace

double contrast(const QColor &a, const QColor &b)
{
    const double la = luminance(a);
    const double lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QColor readable(const QColor &colour, const QColor &background, double minimum)
{
    if (contrast(colour, background) >= minimum)
        return colour;
    const auto darker = towards(colour, background, minimum, -0.01);
    const auto lighter = towards(colour, background, minimum, 0.01);
    if (darker && lighter) {
        const double l = colour.toHsl().lightnessF();
        return std::abs(darker->toHsl().lightnessF() - l) <= std::abs(lighter->toHsl().lightnessF() - l) ? *darker
                                                                                                         : *lighter;
    }
    if (darker)
        return *darker;
    if (lighter)
        return *lighter;
    // No colour reaches it (a mid-grey background and a high bar): the better of black and white.
    return contrast(Qt::black, background) >= contrast(Qt::white, background) ? QColor(Qt::black) : QColor(Qt::white);
}

QByteArray svg(const QString &shape, const QColor &colour, const QColor &inner)
{
    const QString c = colour.name();
    const QString i = inner.name();
    QString body;
    if (shape == "disc"_L1) // healthy: a filled circle with a check
        body = uR"s(<circle cx="32" cy="32" r="30" fill="%1"/>)s"
               uR"s(<path d="M18 33 L28 43 L46 22" fill="none" stroke="%2" stroke-width="8" )s"
               uR"s(stroke-linecap="round" stroke-linejoin="round"/>)s"_s.arg(c, i);
    else if (shape == "ring"_L1) // in progress: a ring with a gap and a dot at its centre
        body = uR"s(<path d="M32 6 A26 26 0 1 1 6 32" fill="none" stroke="%1" stroke-width="10" )s"
               uR"s(stroke-linecap="round"/><circle cx="32" cy="32" r="9" fill="%1"/>)s"_s.arg(c);
    else if (shape == "diamond"_L1) // waiting for approval: a diamond with a pause sign
        body = uR"s(<rect x="11" y="11" width="42" height="42" rx="5" fill="%1" transform="rotate(45 32 32)"/>)s"
               uR"s(<rect x="24" y="21" width="6" height="22" rx="1.5" fill="%2"/>)s"
               uR"s(<rect x="34" y="21" width="6" height="22" rx="1.5" fill="%2"/>)s"_s.arg(c, i);
    else if (shape == "noSign"_L1) // failed: a rounded square with a bar across
        body = uR"s(<rect x="3" y="3" width="58" height="58" rx="11" fill="%1"/>)s"
               uR"s(<rect x="15" y="27" width="34" height="10" rx="2" fill="%2"/>)s"_s.arg(c, i);
    else if (shape == "cached"_L1) // skipped as unchanged: a circle with two bars
        body = uR"s(<circle cx="32" cy="32" r="30" fill="%1"/>)s"
               uR"s(<rect x="16" y="21" width="32" height="8" rx="2" fill="%2"/>)s"
               uR"s(<rect x="16" y="35" width="32" height="8" rx="2" fill="%2"/>)s"_s.arg(c, i);
    else if (shape == "hollow"_L1) // stopped: a hollow circle
        body = uR"s(<circle cx="32" cy="32" r="26" fill="none" stroke="%1" stroke-width="9"/>)s"_s.arg(c);
    else // not started: a short dash
        body = uR"s(<rect x="6" y="26" width="52" height="12" rx="6" fill="%1"/>)s"_s.arg(c);
    return (uR"s(<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">)s"_s + body +
            u"</svg>"_s)
        .toUtf8();
}

QImage render(const QString &shape, const QColor &colour, const QColor &inner, int size)
{
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QSvgRenderer renderer(svg(shape, colour, inner));
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    renderer.render(&painter);
    return image;
}

QIcon trayIcon(DisplayState::Value overall)
{
    QIcon icon;
    const QString shape = StateStyle::shapeOf(overall);
    for (int size : {16, 22, 24, 32, 48, 64})
        icon.addPixmap(QPixmap::fromImage(render(shape, StateStyle::colourOf(overall), Qt::white, size)));
    return icon;
}

} // namespace pando::desktop::marks
