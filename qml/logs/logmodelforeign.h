#pragma once
// LogModel as QML sees it: registered from here so that app/desktop/logs stays Qt Core only.

#include "app/desktop/logs/logmodel.h"

#include <QtQml/qqml.h>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

struct LogModelForeign {
    Q_GADGET
    QML_FOREIGN(pando::desktop::LogModel)
    QML_NAMED_ELEMENT(LogModel)
    QML_UNCREATABLE("a LogModel comes from its source (AppLogSource.model)")
};

} // namespace pando::desktop
