#include "qml/states/statestyle.h"
#include "qml/states/statemarks.h"

#include <QEvent>
#include <QGuiApplication>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {
// 7:1, not 4.5: on a mid-tone selection only black or white reach 4.5:1, so a state's mark there
// would lose its hue; on a deep one its lighter shade reads.
constexpr double SelectionContrast = 7.0;
} // namespace

StateStyle::StateStyle(QObject *parent) : QObject(parent)
{
    if (QCoreApplication::instance())
        QCoreApplication::instance()->installEventFilter(this);
}

bool StateStyle::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == QCoreApplication::instance() && event->type() == QEvent::ApplicationPaletteChange)
        Q_EMIT paletteChanged();
    return QObject::eventFilter(watched, event);
}

QColor StateStyle::dangerOn(const QPalette &palette)
{
    const QColor red = colourOf(DisplayState::Failed);
    const QColor window = palette.color(QPalette::Window);
    const QColor base = palette.color(QPalette::Base);
    // Against the one it reads worse on; the other is then at least as far.
    const QColor worse = marks::contrast(red, window) <= marks::contrast(red, base) ? window : base;
    const QColor other = worse == window ? base : window;
    return marks::readable(marks::readable(red, worse), other);
}

QPalette StateStyle::withReadableSelection(QPalette palette)
{
    for (QPalette::ColorGroup group : {QPalette::Active, QPalette::Inactive}) {
        const QColor text = palette.color(group, QPalette::HighlightedText);
        palette.setColor(group, QPalette::Highlight,
                         marks::readable(palette.color(group, QPalette::Highlight), text, SelectionContrast));
    }
    return palette;
}

QColor StateStyle::danger() const
{
    return dangerOn(QGuiApplication::palette());
}

QColor StateStyle::on(int state, const QColor &background) const
{
    return marks::readable(colourOf(DisplayState::Value(state)), background);
}

QColor StateStyle::readable(const QColor &colour, const QColor &background) const
{
    return marks::readable(colour, background);
}

QColor StateStyle::selection(const QColor &highlight, const QColor &highlightedText) const
{
    return marks::readable(highlight, highlightedText, SelectionContrast);
}

double StateStyle::contrast(const QColor &a, const QColor &b) const
{
    return marks::contrast(a, b);
}

QColor StateStyle::colourOf(DisplayState::Value state)
{
    switch (state) {
    case DisplayState::Healthy:
        return {0x2e, 0x9d, 0x4f};
    case DisplayState::Progress:
        return {0x2f, 0x6f, 0xdb};
    case DisplayState::Waiting:
        return {0xd9, 0x9a, 0x00};
    case DisplayState::Failed:
        return {0xd2, 0x35, 0x2b};
    case DisplayState::Cached:
        return {0x8a, 0x8a, 0x8a};
    case DisplayState::Stopped:
        return {0x7a, 0x7a, 0x7a};
    case DisplayState::Neutral:
        break;
    }
    return {0x9a, 0x9a, 0x9a};
}

QString StateStyle::shapeOf(DisplayState::Value state)
{
    switch (state) {
    case DisplayState::Healthy:
        return u"disc"_s;
    case DisplayState::Progress:
        return u"ring"_s;
    case DisplayState::Waiting:
        return u"diamond"_s;
    case DisplayState::Failed:
        return u"noSign"_s;
    case DisplayState::Cached:
        return u"cached"_s;
    case DisplayState::Stopped:
        return u"hollow"_s;
    case DisplayState::Neutral:
        break;
    }
    return u"dash"_s;
}

QString StateStyle::wordOf(DisplayState::Value state)
{
    switch (state) {
    case DisplayState::Healthy:
        return tr("healthy");
    case DisplayState::Progress:
        return tr("in progress");
    case DisplayState::Waiting:
        return tr("waiting for approval");
    case DisplayState::Failed:
        return tr("failed");
    case DisplayState::Cached:
        return tr("unchanged");
    case DisplayState::Stopped:
        return tr("stopped");
    case DisplayState::Neutral:
        break;
    }
    return tr("not started");
}

} // namespace pando::desktop
