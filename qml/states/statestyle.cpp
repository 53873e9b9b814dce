#include "qml/states/statestyle.h"

using namespace Qt::StringLiterals;

namespace pando::desktop {

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
