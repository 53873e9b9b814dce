#pragma once
// SessionListModel as QML tooling sees it: the base of every view model lives in
// app/desktop/session, which has no QML module, so it is declared here, in the module every view
// imports (anonymous: QML never names it), for qmllint to know a DeploysModel or a RunsModel is a
// list model.

#include "app/desktop/session/sessionlistmodel.h"

#include <QtQml/qqml.h>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

struct SessionListModelForeign {
    Q_GADGET
    QML_FOREIGN(pando::desktop::SessionListModel)
    QML_ANONYMOUS
};

} // namespace pando::desktop
