#pragma once
// Where a forge sends the browser back after the user authorized an OAuth application (RFC 8252's
// loopback redirect): a listener on 127.0.0.1 that takes one GET of /callback with the code and
// the state, answers the browser a short page saying whether to go back to the CLI or the desktop,
// and hands the code on. The CLI's `connections add --oauth-client` and `connections authorize`
// and the desktop's Sources page use it; the code goes to the Pando server, which holds the PKCE
// verifier and the client secret, and exchanges it there.
//
// A request whose state is not the one expected is answered 400 and ignored (another page cannot
// end the wait); anything but /callback is a 404.
//
// Threading: lives on the thread that made it; its signals come on that thread.

#include "adapters/api/error.h"

#include <QObject>
#include <QString>

class QTcpServer;
class QTcpSocket;

namespace pando::client {

class OAuthLoopback : public QObject {
    Q_OBJECT
public:
    static constexpr qint64 MaxRequestBytes = 16 * 1024;

    explicit OAuthLoopback(QObject *parent = nullptr);
    ~OAuthLoopback() override;

    // Listens on 127.0.0.1:port (0: a free one); Conflict naming the port when it is taken.
    Status listen(quint16 port);
    // "http://127.0.0.1:PORT/callback" once listening.
    QString redirectUri() const;
    // The state the forge must send back (the server's answer to beginning the authorization).
    void expectState(const QString &state) { m_state = state; }

Q_SIGNALS:
    // The forge sent the code: the user authorized the application.
    void authorized(const QString &code);
    // The forge sent an error instead (the user refused: "access_denied"), said as an Error.
    void refused(const pando::Error &error);

private:
    void read(QTcpSocket *socket);
    void answer(QTcpSocket *socket, int status, const QString &text);

    QTcpServer *m_server = nullptr;
    QString m_state;
    bool m_done = false;
};

} // namespace pando::client
