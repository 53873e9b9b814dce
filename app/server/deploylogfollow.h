#pragma once
// One client following a deploy's output over a WebSocket: first what the store holds of each
// step, then each line as a step prints it (core/deploy/deploylogfeed.h), each sent once and in
// order, as the objects GET /api/v1/deploys/{id}/log answers. Each step's state comes in order
// with its lines as {"progress": step} (as GET /api/v1/deploys/{id} shows steps): when it starts,
// and when it ends, after its last line. Where a step printed more than the store keeps and the
// client joined late, one line says how many were left out. After the deploy ends and its last
// step with it, a last {"finished": status, "error": text} message, then a normal close.
//
// A backlog of five thousand lines a step would overrun the session's bound on bytes waiting for
// the client; lines wait here instead and go out as the client takes them. A client that lets
// MaxQueued lines pile up is dropped.
//
// Threading: lives on the server's thread with its socket. The store is read on the server's
// worker pool; the feed's lines arrive as queued calls from the deploy's thread.

#include "adapters/api/error.h"
#include "core/events/eventbus.h"
#include "core/state/records.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QTimer>
#include <deque>
#include <optional>

class QThreadPool;
class QWebSocket;

namespace pando::core {
class Engine;
}

namespace pando::server::detail {

class WebSocketSession;

class DeployLogFollow : public QObject {
    Q_OBJECT
public:
    static constexpr qsizetype MaxQueued = 50'000;

    // The session is the parent: it outlives this follow.
    DeployLogFollow(core::Engine &engine, WebSocketSession &session, QString deployId, QThreadPool &pool);
    ~DeployLogFollow() override;

    // Joins the feed, then reads the store.
    void start();

private:
    struct Loaded;
    void load();
    void loaded(const Loaded &result);
    void checkStatus();
    void onLines(const QList<core::StepLogLine> &lines);
    void onEvent(const core::Event &event);
    // Queues a line unless it was sent; a line from the feed after a jump follows a note.
    void take(const core::StepLogLine &line, bool fromFeed);
    void takeStep(const core::StepRecord &step);
    void queue(const QJsonObject &message);
    void pump();
    void finishOnceStepsEnded();
    void finishWith(const QString &status, const QString &error);
    void closeWith(const Error &error);

    core::Engine &m_engine;
    WebSocketSession &m_session;
    QWebSocket *m_socket;
    QString m_deployId;
    QThreadPool &m_pool;
    quint64 m_joinId = 0;
    bool m_loading = false;
    bool m_checking = false;
    bool m_done = false;
    // What came from the feed and the events while the store was read, in order.
    struct Pending {
        std::optional<core::StepRecord> step;
        QList<core::StepLogLine> lines;
    };
    QList<Pending> m_early;
    QHash<int, int> m_sent; // step seq → the last line number queued
    struct Ended {
        QString status;
        QString error;
    };
    std::optional<Ended> m_ended; // the deploy's end, once the store showed it
    QHash<int, std::optional<core::DeployStepStatus>> m_stepSent;
    std::deque<QJsonObject> m_out;
    QTimer m_safety; // looks at the deploy now and then, should its end not be announced
};

} // namespace pando::server::detail
