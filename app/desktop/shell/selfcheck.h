#pragma once
// pando-desktop --check: opens every dialog, popup and file dialog the window holds, once, and
// closes it again, and says what failed. A QML module missing from an install (a dialog Qt loads
// only when it first opens) shows up here, at install time, instead of as a crash in a user's
// hands; tests/installers/deb runs it in a clean Debian root. It also checks that a built-in
// translation is loaded (plural forms are one, English included).
//
// Threading: GUI thread.

#include <QTextStream>

class QQuickWindow;

namespace pando::desktop {

// 0 when every dialog opened and closed without a warning; otherwise 1, having written each
// failure to out.
int checkDialogs(QQuickWindow *window, QTextStream &out);

} // namespace pando::desktop
