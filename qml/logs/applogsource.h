#pragma once
// Package logs view (QML module Pando.Logs): the Logs tab. AppLogSource feeds a LogModel with an
// app's last lines and then its live ones (one Session::followLogs stream), and does
// what the QML must not: turning a line's colour spans and search hits into styled text for the
// light or dark palette, and putting copied rows on the clipboard.
//
// Threading: GUI-thread object; the session's callbacks and stream messages arrive there.

#include "app/desktop/logs/logmodel.h"
#include "app/desktop/session/session.h"

#include <QObject>
#include <QPointer>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>
#include <memory>

namespace pando::desktop {

class AppLogSource : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(QString app READ app WRITE setApp NOTIFY appChanged)
    Q_PROPERTY(pando::desktop::LogModel *model READ model CONSTANT)
    // How many lines the tail asks for before following.
    Q_PROPERTY(int tailLines READ tailLines WRITE setTailLines NOTIFY tailLinesChanged)
    // The live follow is open.
    Q_PROPERTY(bool live READ isLive NOTIFY stateChanged)
    // One line about the stream: why it ended or failed; empty while all is well.
    Q_PROPERTY(QString status READ status NOTIFY stateChanged)
    // Which palette styledText maps colours 0-15 to.
    Q_PROPERTY(bool dark READ isDark WRITE setDark NOTIFY darkChanged)

public:
    explicit AppLogSource(QObject *parent = nullptr);
    ~AppLogSource() override;

    void setSession(Session *session);
    QObject *sessionObject() const { return m_session; }
    void setSessionObject(QObject *session);
    QString app() const { return m_app; }
    void setApp(const QString &app);
    LogModel *model() const { return m_model; }
    int tailLines() const { return m_tailLines; }
    void setTailLines(int lines);
    bool isLive() const { return m_follow && m_follow->isActive(); }
    QString status() const { return m_status; }
    bool isDark() const { return m_dark; }
    void setDark(bool dark);

    // Starts again: clears the model, loads the tail, then follows.
    Q_INVOKABLE void restart();
    Q_INVOKABLE void stop();

    // The line as StyledText for a Text item: its spans' colours for the palette, and bold.
    Q_INVOKABLE QString styledText(const QString &text, const QVariantList &spans) const;
    // What is drawn behind a line's text: ANSI backgrounds and search hits, as
    // [{start, length, color}] in characters (the font is monospace).
    Q_INVOKABLE QVariantList highlights(const QVariantList &spans, const QVariantList &matchRanges) const;
    // Puts rows first..last (inclusive) on the clipboard; answers how many lines were copied.
    Q_INVOKABLE int copyRows(int first, int last) const;

    // ANSI palette colour 0-15 for the light or dark theme.
    static QString paletteColour(int index, bool dark);

Q_SIGNALS:
    void sessionChanged();
    void appChanged();
    void tailLinesChanged();
    void stateChanged();
    void darkChanged();

private:
    void appendLine(const QJsonObject &line);
    void onMessage(const QJsonObject &message);
    void setStatus(const QString &status);

    QPointer<Session> m_session;
    QString m_app;
    LogModel *m_model;
    std::unique_ptr<Subscription> m_follow;
    int m_tailLines = 1000;
    QString m_status;
    bool m_dark = false;
};

} // namespace pando::desktop
