#pragma once
// One client following a pipeline run over a WebSocket: first the run's stored events after the
// seq it asked for (the backlog), then the ones the run publishes as "run.event" on the engine's
// bus, each sent once and in order; after the run's "run.finished" a last {"finished": status}
// message, then a normal close.
//
// Threading: lives on the server's thread with its socket. The store is read on the server's
// worker pool; live events that arrive meanwhile wait in a buffer.

#include "core/events/eventbus.h"

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

class QThreadPool;
class QWebSocket;

namespace pando::core {
class Engine;
}

namespace pando::server::detail {

class WebSocketSession;

class RunFollow : public QObject {
    Q_OBJECT
public:
    // The session is the parent: it outlives this follow.
    RunFollow(core::Engine &engine, WebSocketSession &session, QString runId, qint64 afterSeq, QThreadPool &pool);

    // Subscribes to the bus, then reads the backlog.
    void start();

private:
    struct Loaded;
    void load();
    void loaded(const Loaded &result);
    void onEvent(const core::Event &event);
    void process(const core::Event &event);
    void send(const QJsonObject &message);
    void finishWith(const QString &status);

    core::Engine &m_engine;
    WebSocketSession &m_session;
    QWebSocket *m_socket;
    QString m_runId;
    qint64 m_lastSeq = 0;
    QThreadPool &m_pool;
    bool m_loading = false;
    bool m_done = false;
    QList<core::Event> m_pending; // live events that came while the store was read
};

} // namespace pando::server::detail
