#pragma once
// One command run in an app's container over a WebSocket (GET /api/v1/apps/{name}/exec,
// `pando apps exec`). The client's first message is a text one naming the command:
// {"command": ["sh"], "tty": true, "columns": 80, "rows": 24}; then binary messages are the
// process's standard input, {"resize": [columns, rows]} changes a tty's size and {"eof": true}
// ends its input. The server sends what the process prints as binary messages whose first byte
// says the stream (1 stdout, 2 stderr), then {"exit": code} and a normal close. A refusal closes
// the socket with the API's codes (4404 no such app, 4409 nothing runs, 1008 a bad message).
//
// The command never travels in the URL, so it is in no access log; the audit line names its
// first word only (core/engine/engineexec.cpp).
//
// Back-pressure: the process's output waits (and with it the process) while more than
// MaxBacklogBytes are on their way to a client that reads slowly.
//
// Threading: lives on the server's thread with its socket; the command runs on a thread of its
// own, cancelled and joined when the socket goes.

#include "adapters/api/runtime.h"
#include "core/audit/auditlog.h"

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QTimer>
#include <QWebSocketProtocol>
#include <memory>

class QThread;

namespace pando::core {
class Engine;
}

namespace pando::server::detail {

class WebSocketSession;

class AppExec : public QObject {
    Q_OBJECT
public:
    static constexpr qint64 MaxBacklogBytes = 4 * 1024 * 1024;
    static constexpr int CommandWaitMs = 10'000; // for the first message

    AppExec(core::Engine &engine, WebSocketSession &session, QString app, core::Actor actor);
    ~AppExec() override;

    struct Shared; // what the command's thread and this one share

private:
    void fromClientText(const QString &text);
    void fromClientBinary(const QByteArray &data);
    void start(const adapters::ExecRequest &request);
    void output(const QByteArray &message); // its stream's byte first
    void ended(int code, const Error &error, bool failed);
    void refuse(QWebSocketProtocol::CloseCode code, const QString &reason);
    void updateBacklog();

    core::Engine &m_engine;
    WebSocketSession &m_session;
    QString m_app;
    core::Actor m_actor;
    std::shared_ptr<Shared> m_shared;
    std::unique_ptr<QThread> m_worker;
    QTimer m_firstMessage;
    bool m_started = false;
    bool m_done = false;
};

} // namespace pando::server::detail
