#include "appexec.h"

#include "websocketsession.h"

#include "core/engine/engine.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMutex>
#include <QThread>
#include <QWebSocket>

namespace pando::server::detail {

struct AppExec::Shared {
    QMutex mutex;
    std::shared_ptr<adapters::ExecInput> input; // once the command runs
    QByteArray early;                           // input sent before it ran
    bool eof = false;
    std::pair<int, int> size{0, 0}; // a resize asked for before it ran
    CancelToken cancel;
    std::atomic<qint64> backlog = 0;       // output posted to the server's thread, not yet sent
    std::atomic<qint64> socketPending = 0; // sent, waiting in the socket toward the client
};

namespace {

// {"command": [...], "tty": bool, "columns": n, "rows": n}, each field checked by name.
Result<adapters::ExecRequest> parseCommand(const QString &text)
{
    const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8());
    const QString example = QStringLiteral("{\"command\": [\"sh\"], \"tty\": true, \"columns\": 80, \"rows\": 24}");
    if (!doc.isObject())
        return fail(ErrorCode::Invalid, QStringLiteral("the first message must be a JSON object"),
                    QStringLiteral("message"), QStringLiteral("send ") + example);
    const QJsonObject o = doc.object();
    for (auto it = o.constBegin(); it != o.constEnd(); ++it)
        if (!QStringList{QStringLiteral("command"), QStringLiteral("tty"), QStringLiteral("columns"),
                         QStringLiteral("rows")}
                 .contains(it.key()))
            return fail(ErrorCode::Invalid, QStringLiteral("unknown field"), it.key(),
                        QStringLiteral("send ") + example);
    adapters::ExecRequest request;
    const QJsonArray command = o.value(QStringLiteral("command")).toArray();
    for (qsizetype i = 0; i < command.size(); ++i) {
        if (!command.at(i).isString())
            return fail(ErrorCode::Invalid, QStringLiteral("must be a string"), QStringLiteral("command.%1").arg(i));
        request.command << command.at(i).toString();
    }
    if (request.command.isEmpty())
        return fail(ErrorCode::Invalid, QStringLiteral("must be a list of one or more words"),
                    QStringLiteral("command"), QStringLiteral("send ") + example);
    request.tty = o.value(QStringLiteral("tty")).toBool();
    request.columns = o.value(QStringLiteral("columns")).toInt();
    request.rows = o.value(QStringLiteral("rows")).toInt();
    return request;
}

} // namespace

AppExec::AppExec(core::Engine &engine, WebSocketSession &session, QString app, core::Actor actor)
    : QObject(&session), m_engine(engine), m_session(session), m_app(std::move(app)), m_actor(std::move(actor)),
      m_shared(std::make_shared<Shared>())
{
    QWebSocket *socket = session.socket();
    connect(socket, &QWebSocket::textMessageReceived, this, &AppExec::fromClientText);
    connect(socket, &QWebSocket::binaryMessageReceived, this, &AppExec::fromClientBinary);
    connect(socket, &QWebSocket::bytesWritten, this, &AppExec::updateBacklog);
    m_firstMessage.setSingleShot(true);
    connect(&m_firstMessage, &QTimer::timeout, this, [this] {
        refuse(QWebSocketProtocol::CloseCodePolicyViolated,
               QStringLiteral("no command came within %1 s").arg(CommandWaitMs / 1000));
    });
    m_firstMessage.start(CommandWaitMs);
}

AppExec::~AppExec()
{
    // The command may go on in the container; this side stops waiting for it.
    m_shared->cancel.cancel();
    if (m_worker)
        m_worker->wait();
}

void AppExec::refuse(QWebSocketProtocol::CloseCode code, const QString &reason)
{
    m_done = true;
    m_firstMessage.stop();
    m_session.close(code, reason);
}

void AppExec::fromClientText(const QString &text)
{
    if (m_done)
        return;
    if (!m_started) {
        auto request = parseCommand(text);
        if (!request)
            return refuse(QWebSocketProtocol::CloseCodePolicyViolated, request.error().text());
        return start(*request);
    }
    const QJsonObject o = QJsonDocument::fromJson(text.toUtf8()).object();
    QMutexLocker lock(&m_shared->mutex);
    if (o.value(QStringLiteral("eof")).toBool()) {
        if (m_shared->input)
            m_shared->input->closeInput();
        else
            m_shared->eof = true;
    } else if (o.contains(QStringLiteral("resize"))) {
        const QJsonArray size = o.value(QStringLiteral("resize")).toArray();
        const int columns = size.at(0).toInt(), rows = size.at(1).toInt();
        if (columns < 1 || rows < 1 || columns > 10000 || rows > 10000)
            return;
        if (m_shared->input)
            m_shared->input->resize(columns, rows);
        else
            m_shared->size = {columns, rows};
    }
}

void AppExec::fromClientBinary(const QByteArray &data)
{
    if (m_done || !m_started)
        return;
    QMutexLocker lock(&m_shared->mutex);
    if (m_shared->input) {
        m_shared->input->write(data);
        return;
    }
    if (m_shared->early.size() + data.size() > MaxBacklogBytes) {
        lock.unlock();
        return refuse(QWebSocketProtocol::CloseCodeTooMuchData,
                      QStringLiteral("more than %1 bytes of input before the command ran").arg(MaxBacklogBytes));
    }
    m_shared->early += data;
}

void AppExec::start(const adapters::ExecRequest &request)
{
    m_started = true;
    m_firstMessage.stop();
    core::Engine *engine = &m_engine;
    const QString app = m_app;
    const core::Actor actor = m_actor;
    std::shared_ptr<Shared> shared = m_shared;
    // The destructor cancels and joins this thread: `this` outlives it, and what it posts to a
    // follow that is going is dropped with it.
    AppExec *self = this;
    m_worker.reset(QThread::create([engine, app, actor, shared, request, self] {
        const auto opened = [shared](std::shared_ptr<adapters::ExecInput> input) {
            QMutexLocker lock(&shared->mutex);
            shared->input = std::move(input);
            if (!shared->early.isEmpty())
                shared->input->write(std::exchange(shared->early, {}));
            if (shared->size.first > 0)
                shared->input->resize(shared->size.first, shared->size.second);
            if (shared->eof)
                shared->input->closeInput();
        };
        const auto onOutput = [shared, self](int stream, QByteArrayView data) {
            // The process waits while the client is behind.
            while (shared->backlog.load() + shared->socketPending.load() > MaxBacklogBytes &&
                   !shared->cancel.isCancelled())
                QThread::msleep(10);
            QByteArray message;
            message.reserve(data.size() + 1);
            message.append(char(stream == 2 ? 2 : 1)).append(data);
            shared->backlog += message.size();
            QMetaObject::invokeMethod(
                self, [self, message] { self->output(message); }, Qt::QueuedConnection);
        };
        const Result<int> code = engine->exec(app, request, actor, shared->cancel, opened, onOutput);
        {
            QMutexLocker lock(&shared->mutex);
            shared->input.reset();
        }
        const int exitCode = code ? *code : -1;
        const Error error = code ? Error{} : code.error();
        QMetaObject::invokeMethod(
            self, [self, exitCode, error, failed = !code] { self->ended(exitCode, error, failed); },
            Qt::QueuedConnection);
    }));
    m_worker->start();
}

void AppExec::output(const QByteArray &message)
{
    m_shared->backlog -= message.size();
    if (m_done)
        return;
    m_session.sendBinary(message);
    updateBacklog();
}

void AppExec::updateBacklog()
{
    m_shared->socketPending = m_session.pendingBytes();
}

void AppExec::ended(int code, const Error &error, bool failed)
{
    if (m_done)
        return;
    m_done = true;
    if (failed) {
        m_session.close(closeCodeFor(error.code), error.text());
        return;
    }
    m_session.send(QJsonObject{{QStringLiteral("exit"), code}});
    m_session.close(QWebSocketProtocol::CloseCodeNormal, QStringLiteral("the command exited with %1").arg(code));
}

} // namespace pando::server::detail
