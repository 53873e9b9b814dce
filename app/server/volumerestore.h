#pragma once
// A volume restored from an archive the client sends over a WebSocket (GET
// /api/v1/apps/{name}/volumes/{volume}/restore, `pando volumes restore`): an archive may be
// far larger than a request body may be. The client's first message is a text one saying its
// size, {"bytes": N}; the server answers {"ready": true} when it would restore that volume and
// has room for it; then binary messages carry the archive, N bytes in all, which go to a
// private file of the data directory. Once all came the server says {"received": N}, restores
// (core: Engine::restoreVolumeFromFile) and answers {"app": {...}} (the app as GET
// /api/v1/apps/{name} shows it) and a normal close; or {"error": {...}} (the API's error body)
// and a close with the API's codes (4404, 4409, 1002 for a wrong archive or message, 1009 for
// more bytes than said or than the disk holds).
//
// Threading: lives on the server's thread with its socket; the restore runs on a thread of its
// own, cancelled and joined when the socket goes.

#include "adapters/api/cancel.h"
#include "core/audit/auditlog.h"

#include <QObject>
#include <QString>
#include <QTemporaryFile>
#include <QTimer>
#include <QWebSocketProtocol>
#include <memory>

class QThread;

namespace pando::core {
class Engine;
}

namespace pando::server::detail {

class WebSocketSession;

class VolumeRestore : public QObject {
    Q_OBJECT
public:
    static constexpr int FirstMessageWaitMs = 10'000;
    // Between two of the archive's messages: a client that stalls does not hold the file.
    static constexpr int ArchiveIdleMs = 120'000;

    VolumeRestore(core::Engine &engine, WebSocketSession &session, QString app, QString volume, core::Actor actor);
    ~VolumeRestore() override;

private:
    void fromClientText(const QString &text);
    void fromClientBinary(const QByteArray &data);
    void restore();
    void ended(const Result<QJsonObject> &app);
    void refuse(const Error &error, QWebSocketProtocol::CloseCode code);

    core::Engine &m_engine;
    WebSocketSession &m_session;
    QString m_app;
    QString m_volume;
    core::Actor m_actor;
    std::unique_ptr<QTemporaryFile> m_file;
    qint64 m_expected = -1;
    qint64 m_received = 0;
    QTimer m_idle;
    std::unique_ptr<QThread> m_worker;
    std::shared_ptr<CancelToken> m_cancel;
    bool m_done = false;
};

} // namespace pando::server::detail
