#pragma once
// The link to an app in the Apps view: where this computer's browser opens it. With this
// computer's own engine that is the app's own URL. With an install on another machine (a remote
// pandod, or a teammate's desktop paired with) the app's URL names that machine's loopback, so
// Open starts a port-forward through the server (Session::appLink: the tunnel route, over the
// session's TLS and pinned certificate) on the first click, reuses it after, and opens
// http://127.0.0.1:LOCALPORT/ here; the link says "through <server>" so that it is never taken
// for the app's own address.
//
// Threading: GUI-thread object; the session's answers arrive there. An answer for another app or
// session than the current one is dropped.

#include "app/desktop/session/session.h"

#include <QObject>
#include <QPointer>
#include <QUrl>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

class AppLink : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(QString app READ app WRITE setApp NOTIFY appChanged)
    // The app's own URL, as the engine names it (AppsModel's url); empty before its first route.
    Q_PROPERTY(QString url READ url WRITE setUrl NOTIFY urlChanged)
    // The server links go through; empty when they lead straight to the app.
    Q_PROPERTY(QString through READ through NOTIFY sessionChanged)
    Q_PROPERTY(bool forwarded READ isForwarded NOTIFY sessionChanged)
    // What the link shows and its tooltip.
    Q_PROPERTY(QString text READ text NOTIFY textChanged)
    Q_PROPERTY(QString toolTip READ toolTip NOTIFY textChanged)
    Q_PROPERTY(bool opening READ isOpening NOTIFY openingChanged)
    // Why the last open failed (the server's words, with its hint); empty when it did not.
    Q_PROPERTY(QString error READ error NOTIFY openingChanged)
    // Where the last open went (the forward's local URL, or the app's own); empty before.
    Q_PROPERTY(QString openedUrl READ openedUrl NOTIFY textChanged)

public:
    explicit AppLink(QObject *parent = nullptr);

    QObject *sessionObject() const { return m_session; }
    void setSessionObject(QObject *session);
    void setSession(Session *session);
    QString app() const { return m_app; }
    void setApp(const QString &app);
    QString url() const { return m_url; }
    void setUrl(const QString &url);
    QString through() const;
    bool isForwarded() const { return !through().isEmpty(); }
    QString text() const;
    QString toolTip() const;
    bool isOpening() const { return m_opening; }
    QString error() const { return m_error; }
    QString openedUrl() const { return m_openedUrl; }

    // Opens the app in the browser (QDesktopServices), through a forward when the session's
    // install is elsewhere; opened() says where once it did.
    Q_INVOKABLE void open();

Q_SIGNALS:
    void sessionChanged();
    void appChanged();
    void urlChanged();
    void textChanged();
    void openingChanged();
    void opened(const QUrl &url);

private:
    void forget();

    QPointer<Session> m_session;
    QString m_app;
    QString m_url;
    QString m_openedUrl;
    QString m_error;
    bool m_opening = false;
    quint64 m_generation = 0; // which app and session an answer was asked for
};

} // namespace pando::desktop
