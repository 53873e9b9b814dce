#pragma once
// The tray icon: the overall state as a shape and colour (all healthy, something failing, an
// approval waiting, in progress, offline), its word as the tooltip, and a menu with Open, the
// recent apps, the approvals that wait and Quit. Closing the window leaves the app here.
// Notifications: approval requested, deploy succeeded or failed, run failed — never for what the
// active window shows already.

#include <QJsonObject>
#include <QMenu>
#include <QObject>
#include <QPointer>
#include <QSystemTrayIcon>
#include <QWindow>

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
    // The window whose view decides what is worth a notification (none: every event is).
    void setWindow(QWindow *window) { m_window = window; }

    // What an event of the session's stream is worth telling; empty title: nothing.
    struct Notification {
        QString title;
        QString body;
        QString approval; // clicking it opens this approval
        QString app;      // or this app
        bool failure = false;
    };
    static Notification notificationFor(const QJsonObject &event);

Q_SIGNALS:
    void openRequested();
    void quitRequested();
    void appRequested(const QString &name);
    // Show this approval in the window (a notification or an "Approve…" entry was clicked).
    void approvalRequested(const QString &id);
    // A notification went out (also without a tray host, for tests and logs).
    void notified(const QString &title, const QString &body);

private:
    void updateIcon();
    void rebuildMenu();
    void onEvent(const QJsonObject &event);
    bool isShowing(const Notification &notification) const;

    DesktopState *m_state;
    QSystemTrayIcon m_icon;
    QMenu m_menu;
    QPointer<QWindow> m_window;
    Notification m_last; // what clicking the last message opens
};

} // namespace pando::desktop
