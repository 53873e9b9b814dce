#include "app/desktop/shell/windowplace.h"

#include <algorithm>

namespace pando::desktop {

QRect fitIntoScreen(const QRect &saved, const QRect &available)
{
    if (!saved.isValid() || !available.isValid())
        return {};
    QRect fitted(saved.topLeft(), saved.size().boundedTo(available.size()));
    fitted.moveLeft(std::clamp(fitted.left(), available.left(), available.right() - fitted.width() + 1));
    fitted.moveTop(std::clamp(fitted.top(), available.top(), available.bottom() - fitted.height() + 1));
    return fitted;
}

} // namespace pando::desktop
