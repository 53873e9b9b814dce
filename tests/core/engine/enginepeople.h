#pragma once
// The users of an engine test over fakes, made through the engine's accounts as an API call
// would make them, and the principal and actor each one calls with; and the options of an
// install that does nothing on its own (no reconciling, health probes or disk checks, one
// worker) for such tests to fill in.

#include "app/wiring/install.h"
#include "core/accounts/accounts.h"

#include <QHash>
#include <QTcpServer>
#include <QTcpSocket>
#include <initializer_list>
#include <utility>

namespace pando::test {

class EnginePeople {
public:
    // Makes each user in order (an install's first user must be its administrator); the error
    // of the first that could not be made, or an empty string.
    QString create(core::Engine &engine, std::initializer_list<std::pair<const char *, core::accounts::Role>> people);

    core::accounts::User user(const QString &username) const { return m_users.value(username); }
    // The username of the user with this id; empty when it is none of these.
    QString nameOf(const QString &userId) const;
    core::accounts::Principal principal(const QString &username,
                                        core::accounts::Principal::Kind kind = core::accounts::Principal::Kind::Session,
                                        const QStringList &scopes = {}) const;
    // The user's session, calling from loopback.
    core::Actor actor(const QString &username) const;

private:
    QHash<QString, core::accounts::User> m_users;
};

wiring::InstallOptions quietInstallOptions(const QString &dataDir);

// Waits (QTRY, 20 s) until the deploy is neither queued nor running, or the app is gone; a
// timeout fails the calling test.
void waitSettled(core::Engine &engine, const QString &deployId);
void waitGone(core::Engine &engine, const QString &app);

// What the fake runtime's containers answer their health checks with (they are reached at
// 127.0.0.1:<run.port>): 200 "ok" to every request.
class HealthResponder : public QTcpServer {
public:
    HealthResponder()
    {
        connect(this, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = nextPendingConnection()) {
                connect(socket, &QTcpSocket::readyRead, socket, [socket] {
                    socket->readAll();
                    socket->write("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
                    socket->disconnectFromHost();
                });
                connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
            }
        });
    }
};

} // namespace pando::test
