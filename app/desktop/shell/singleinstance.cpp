#include "app/desktop/shell/singleinstance.h"

#include <QDir>
#include <QLocalSocket>
#include <QStandardPaths>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {
constexpr int AnswerMs = 2000;
const QByteArray RaiseMessage = QByteArrayLiteral("raise\n");
} // namespace

SingleInstance::SingleInstance(const QString &name, QObject *parent) : QObject(parent)
{
    QString dir = QStandardPaths::writableLocation(QStandardPaths::RuntimeLocation);
    if (dir.isEmpty())
        dir = QDir::tempPath();
    m_path = QDir(dir).filePath(name);
    connect(&m_server, &QLocalServer::newConnection, this, [this] {
        while (QLocalSocket *socket = m_server.nextPendingConnection()) {
            connect(socket, &QLocalSocket::readyRead, this, [this, socket] {
                if (socket->canReadLine() && socket->readLine() == RaiseMessage) {
                    socket->write("ok\n");
                    socket->flush();
                    Q_EMIT raiseRequested();
                }
            });
            connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
        }
    });
}

bool SingleInstance::askRunningInstance()
{
    // Runs before the event loop starts, so the waits block nothing that is on screen.
    QLocalSocket socket;
    socket.connectToServer(m_path);
    if (!socket.waitForConnected(AnswerMs))
        return false;
    socket.write(RaiseMessage);
    if (!socket.waitForBytesWritten(AnswerMs))
        return false;
    // The first instance answers once it has taken the request; a stale or hung one does not.
    while (!socket.canReadLine())
        if (!socket.waitForReadyRead(AnswerMs))
            return false;
    return socket.readLine() == "ok\n";
}

bool SingleInstance::listen(QString *why)
{
    m_server.setSocketOptions(QLocalServer::UserAccessOption);
    if (m_server.listen(m_path))
        return true;
    // A socket file left by a process that died: nobody answered askRunningInstance(), so remove it.
    QLocalServer::removeServer(m_path);
    if (m_server.listen(m_path))
        return true;
    if (why)
        *why = u"%1: %2"_s.arg(m_path, m_server.errorString());
    return false;
}

} // namespace pando::desktop
