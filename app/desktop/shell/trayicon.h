#pragma once
// The tray icon: the overall state as a shape and colour (all healthy, something failing, an
// approval waiting, in progress, offline), its word as the tooltip, and a menu with Open, the
// recent apps and Quit. Closing the window leaves the app here.

#include <QMenu>
#include <QObject>
#include <QSystemTrayIcon>

namespace pando::desktop {

class DesktopState;

class TrayIcon : public QObject {
    Q_OBJECT
public:
    explicit TrayIcon(DesktopState *state, QObject *parent = nullptr);

    static bool isAvailable() { return QSystemTrayIcon::isSystemTrayAvailable(); }
    void show() { m_icon.show(); }
    // The apps the menu lists, most recently deployed first (at most this many).
    static constexpr int RecentApps = 8;
    QStringList recentApps() const;

Q_SIGNALS:
    void openRequested();
    void quitRequested();
    void appRequested(const QString &name);

private:
    void updateIcon();
    void rebuildMenu();

    DesktopState *m_state;
    QSystemTrayIcon m_icon;
    QMenu m_menu;
};

} // namespace pando::desktop
