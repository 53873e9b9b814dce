#pragma once
// Package logs view (QML module Pando.Logs): the Logs tab and the log view every log of the
// desktop uses (LogLines.qml over a LogSource). AppLogSource feeds a LogModel with an app's last
// lines and then its live ones (one Session::followLogs stream).
//
// Threading: GUI-thread object; the session's callbacks and stream messages arrive there.

#include "app/desktop/session/session.h"
#include "qml/logs/logsource.h"

#include <QPointer>
#include <memory>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class AppLogSource : public pando::desktop::LogSource {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(QString app READ app WRITE setApp NOTIFY appChanged)
    // How many lines the tail asks for before following.
    Q_PROPERTY(int tailLines READ tailLines WRITE setTailLines NOTIFY tailLinesChanged)
    // The live follow is open.
    Q_PROPERTY(bool live READ isLive NOTIFY stateChanged)

public:
    explicit AppLogSource(QObject *parent = nullptr);
    ~AppLogSource() override;

    void setSession(Session *session);
    QObject *sessionObject() const { return m_session; }
    void setSessionObject(QObject *session);
    QString app() const { return m_app; }
    void setApp(const QString &app);
    int tailLines() const { return m_tailLines; }
    void setTailLines(int lines);
    bool isLive() const { return m_follow && m_follow->isActive(); }

    // Starts again: clears the model, loads the tail, then follows.
    Q_INVOKABLE void restart();
    Q_INVOKABLE void stop();

Q_SIGNALS:
    void sessionChanged();
    void appChanged();
    void tailLinesChanged();

private:
    void appendLine(const QJsonObject &line);
    void onMessage(const QJsonObject &message);

    QPointer<Session> m_session;
    QString m_app;
    std::unique_ptr<Subscription> m_follow;
    int m_tailLines = 1000;
};

} // namespace pando::desktop
