#pragma once
// Whether the install's runtimes (Docker, Incus) and its edge answer, for the status line
// (DESKTOP.md): asked of GET /api/v1/capacity and /api/v1/edge when the session connects, on a
// refresh, and every 30 s while it stays connected, since nothing announces one going away. With
// the edge, the keys apps verify its identity assertions with (they rotate), for Settings.
//
// Threading: GUI thread, with its Session.

#include "app/desktop/session/session.h"
#include "qml/states/displaystate.h"

#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

class RuntimesStatus : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Desktop.runtimes is the one")
    // "Docker reachable · Edge serving", "Docker reachable · Incus unreachable · Edge down"; empty
    // until an answer came.
    Q_PROPERTY(QString text READ text NOTIFY changed)
    // Why a runtime did not answer, one line each (the status line's tooltip).
    Q_PROPERTY(QString detail READ detail NOTIFY changed)
    // Healthy when every runtime and the edge answered, Failed when one did not, Neutral while
    // unknown.
    Q_PROPERTY(pando::desktop::DisplayState::Value state READ state NOTIFY changed)
    // The keys apps verify identity assertions with (GET /.well-known/jwks.json), in words for
    // the Settings view: how many, newest first by kid; empty until an answer came.
    Q_PROPERTY(QString assertionKeysText READ assertionKeysText NOTIFY assertionKeysChanged)

public:
    explicit RuntimesStatus(QObject *parent = nullptr);

    void setSession(Session *session);
    void refresh();
    // What an answer of GET /api/v1/capacity (or its failure) shows.
    void apply(const Result<QJsonObject> &capacity);
    // What an answer of GET /api/v1/edge (or its failure) adds.
    void applyEdge(const Result<QJsonObject> &edge);
    // What an answer of GET /.well-known/jwks.json (or its failure) says.
    void applyAssertionKeys(const Result<QJsonObject> &jwks);
    QString assertionKeysText() const { return m_assertionKeysText; }

    QString text() const { return m_text; }
    QString detail() const { return m_detail; }
    DisplayState::Value state() const { return m_state; }

    static constexpr int PollMs = 30'000;

Q_SIGNALS:
    void changed();
    void assertionKeysChanged();

private:
    struct Part {
        QString text;
        QString detail;
        DisplayState::Value state = DisplayState::Neutral;
    };
    void show();

    QPointer<Session> m_session;
    quint64 m_generation = 0;
    QTimer m_poll;
    Part m_runtimes;
    Part m_edge;
    QString m_text;
    QString m_detail;
    DisplayState::Value m_state = DisplayState::Neutral;
    QString m_assertionKeysText;
};

} // namespace pando::desktop
