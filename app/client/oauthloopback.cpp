#include "oauthloopback.h"

#include <QHostAddress>
#include <QTcpServer>
#include <QTcpSocket>
#include <QUrl>
#include <QUrlQuery>

using namespace Qt::StringLiterals;

namespace pando::client {

OAuthLoopback::OAuthLoopback(QObject *parent) : QObject(parent), m_server(new QTcpServer(this))
{
    connect(m_server, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *socket = m_server->nextPendingConnection()) {
            connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
            connect(socket, &QTcpSocket::readyRead, this, [this, socket] { read(socket); });
        }
    });
}

OAuthLoopback::~OAuthLoopback() = default;

Status OAuthLoopback::listen(quint16 port)
{
    if (!m_server->listen(QHostAddress::LocalHost, port))
        return fail(
            ErrorCode::Conflict,
            u"cannot listen on 127.0.0.1:%1 for the forge's answer: %2"_s.arg(port).arg(m_server->errorString()),
            u"callback port"_s, u"give another port, or none for any free one"_s);
    return {};
}

QString OAuthLoopback::redirectUri() const
{
    return u"http://127.0.0.1:%1/callback"_s.arg(m_server->serverPort());
}

void OAuthLoopback::answer(QTcpSocket *socket, int status, const QString &text)
{
    const QByteArray body =
        "<!doctype html><meta charset=\"utf-8\"><title>Pando</title><p>" + text.toHtmlEscaped().toUtf8() + "</p>\n";
    const QByteArray reason = status == 200 ? "OK" : status == 404 ? "Not Found" : "Bad Request";
    socket->write("HTTP/1.1 " + QByteArray::number(status) + ' ' + reason +
                  "\r\nContent-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\nConnection: close\r\n"
                  "Content-Length: " +
                  QByteArray::number(body.size()) + "\r\n\r\n" + body);
    socket->disconnectFromHost();
}

void OAuthLoopback::read(QTcpSocket *socket)
{
    if (socket->bytesAvailable() + socket->pos() > MaxRequestBytes) {
        socket->abort();
        return;
    }
    if (!socket->canReadLine())
        return;
    const QList<QByteArray> line = socket->readLine().trimmed().split(' ');
    socket->readAll();
    const QUrl target(QString::fromLatin1(line.value(1)));
    if (line.value(0) != "GET" || target.path() != u"/callback"_s)
        return answer(socket, 404, u"Nothing here."_s);
    const QUrlQuery query(target);
    const QString state = query.queryItemValue(u"state"_s, QUrl::FullyDecoded);
    if (m_done || m_state.isEmpty() || state != m_state)
        return answer(socket, 400, u"This is not the authorization Pando is waiting for. Start it again from Pando."_s);
    m_done = true;
    const QString error = query.queryItemValue(u"error"_s, QUrl::FullyDecoded);
    const QString code = query.queryItemValue(u"code"_s, QUrl::FullyDecoded);
    if (!error.isEmpty() || code.isEmpty()) {
        answer(socket, 200, u"The forge did not authorize Pando. You can close this tab."_s);
        const QString said = query.queryItemValue(u"error_description"_s, QUrl::FullyDecoded).left(300);
        Q_EMIT refused(Error{ErrorCode::Failed,
                             error == u"access_denied"_s
                                 ? u"the authorization was refused on the forge's page"_s
                                 : u"the forge answered %1%2"_s.arg(error.isEmpty() ? u"no code"_s : error.left(100),
                                                                    said.isEmpty() ? QString() : u": "_s + said),
                             u"authorization"_s, u"run it again and choose Authorize on the forge's page"_s});
        return;
    }
    answer(socket, 200, u"Pando is authorized. You can close this tab and go back to Pando."_s);
    Q_EMIT authorized(code);
}

} // namespace pando::client
