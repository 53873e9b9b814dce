#include "volumerestore.h"

#include "httperror.h"
#include "websocketsession.h"

#include "core/engine/engine.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStorageInfo>
#include <QThread>
#include <QWebSocket>

using namespace Qt::StringLiterals;

namespace pando::server::detail {

VolumeRestore::VolumeRestore(core::Engine &engine, WebSocketSession &session, QString app, QString volume,
                             core::Actor actor)
    : QObject(&session), m_engine(engine), m_session(session), m_app(std::move(app)), m_volume(std::move(volume)),
      m_actor(std::move(actor)), m_cancel(std::make_shared<CancelToken>())
{
    QWebSocket *socket = session.socket();
    connect(socket, &QWebSocket::textMessageReceived, this, &VolumeRestore::fromClientText);
    connect(socket, &QWebSocket::binaryMessageReceived, this, &VolumeRestore::fromClientBinary);
    m_idle.setSingleShot(true);
    connect(&m_idle, &QTimer::timeout, this, [this] {
        refuse(Error{ErrorCode::Invalid,
                     m_expected < 0 ? u"no size came within %1 s"_s.arg(FirstMessageWaitMs / 1000)
                                    : u"no part of the archive came for %1 s"_s.arg(ArchiveIdleMs / 1000),
                     u"message"_s,
                     {}},
               QWebSocketProtocol::CloseCodePolicyViolated);
    });
    m_idle.start(FirstMessageWaitMs);
}

VolumeRestore::~VolumeRestore()
{
    // The restore finishes what it started in the runtime; this side stops waiting for it.
    m_cancel->cancel();
    if (m_worker)
        m_worker->wait();
}

void VolumeRestore::refuse(const Error &error, QWebSocketProtocol::CloseCode code)
{
    m_done = true;
    m_idle.stop();
    m_file.reset();
    m_session.send(errorBody(error)); // {"error": {...}}
    m_session.close(code, error.message.left(100));
}

void VolumeRestore::fromClientText(const QString &text)
{
    if (m_done)
        return;
    const QString example = u"send {\"bytes\": SIZE}, then the archive as binary messages"_s;
    if (m_expected >= 0)
        return refuse(
            Error{ErrorCode::Invalid, u"only the archive's bytes come after its size"_s, u"message"_s, example},
            QWebSocketProtocol::CloseCodeProtocolError);
    const QJsonObject o = QJsonDocument::fromJson(text.toUtf8()).object();
    const QJsonValue bytes = o.value(u"bytes"_s);
    if (o.size() != 1 || !bytes.isDouble() || bytes.toDouble() < 1 || bytes.toDouble() != double(bytes.toInteger()))
        return refuse(
            Error{ErrorCode::Invalid, u"the first message must say the archive's size in bytes"_s, u"bytes"_s, example},
            QWebSocketProtocol::CloseCodeProtocolError);
    // Refused before a byte of the archive comes, as the restore would refuse it.
    if (auto ready = m_engine.checkVolumeRestore(m_app, m_volume); !ready)
        return refuse(ready.error(), closeCodeFor(ready.error().code));
    auto file = m_engine.uploadFile();
    if (!file)
        return refuse(file.error(), closeCodeFor(file.error().code));
    // Twice the archive: the upload, and the volume's files kept for the time of the restore.
    const QStorageInfo disk(QFileInfo(file.value()->fileName()).absolutePath());
    const qint64 wanted = bytes.toInteger();
    if (disk.isValid() && disk.bytesAvailable() < 2 * wanted)
        return refuse(Error{ErrorCode::TooLarge,
                            u"the server's disk has %1 bytes free, and restoring %2 bytes takes about twice that"_s
                                .arg(disk.bytesAvailable())
                                .arg(wanted),
                            u"bytes"_s, u"free disk space on the server"_s},
                      QWebSocketProtocol::CloseCodeTooMuchData);
    m_file = std::move(*file);
    m_expected = wanted;
    m_idle.start(ArchiveIdleMs);
    m_session.send(QJsonObject{{u"ready"_s, true}});
}

void VolumeRestore::fromClientBinary(const QByteArray &data)
{
    if (m_done)
        return;
    if (m_expected < 0)
        return refuse(Error{ErrorCode::Invalid, u"the archive's size comes first"_s, u"message"_s,
                            u"send {\"bytes\": SIZE} first"_s},
                      QWebSocketProtocol::CloseCodeProtocolError);
    if (m_received + data.size() > m_expected)
        return refuse(Error{ErrorCode::TooLarge, u"more than the %1 bytes said"_s.arg(m_expected), u"bytes"_s, {}},
                      QWebSocketProtocol::CloseCodeTooMuchData);
    if (m_file->write(data) != data.size())
        return refuse(Error{ErrorCode::Internal, u"cannot keep the archive: %1"_s.arg(m_file->errorString()), {}, {}},
                      QWebSocketProtocol::CloseCodeBadOperation);
    m_received += data.size();
    if (m_received < m_expected) {
        m_idle.start(ArchiveIdleMs);
        return;
    }
    m_idle.stop();
    if (!m_file->flush())
        return refuse(Error{ErrorCode::Internal, u"cannot keep the archive: %1"_s.arg(m_file->errorString()), {}, {}},
                      QWebSocketProtocol::CloseCodeBadOperation);
    m_session.send(QJsonObject{{u"received"_s, double(m_received)}});
    restore();
}

void VolumeRestore::restore()
{
    core::Engine *engine = &m_engine;
    const QString app = m_app, volume = m_volume, path = m_file->fileName();
    const core::Actor actor = m_actor;
    std::shared_ptr<CancelToken> cancel = m_cancel;
    // The destructor cancels and joins this thread: `this` outlives it.
    VolumeRestore *self = this;
    m_worker.reset(QThread::create([engine, app, volume, path, actor, cancel, self] {
        auto restored = engine->restoreVolumeFromFile(app, volume, path, *cancel, actor);
        const Result<QJsonObject> answer =
            restored ? Result<QJsonObject>(restored->toJson()) : Result<QJsonObject>(std::unexpected(restored.error()));
        QMetaObject::invokeMethod(
            self, [self, answer] { self->ended(answer); }, Qt::QueuedConnection);
    }));
    m_worker->start();
}

void VolumeRestore::ended(const Result<QJsonObject> &app)
{
    if (m_done)
        return;
    if (!app)
        return refuse(app.error(), closeCodeFor(app.error().code));
    m_done = true;
    m_file.reset();
    m_session.send(QJsonObject{{u"app"_s, *app}});
    m_session.close(QWebSocketProtocol::CloseCodeNormal, u"restored"_s);
}

} // namespace pando::server::detail
