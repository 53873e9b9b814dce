#pragma once
// The names a Pando API answers to, against DNS rebinding: a web page on evil.example whose name
// is made to resolve to 127.0.0.1 reaches the local API with "Host: evil.example", and a check of
// the WebSocket Origin against that Host passes, since the page's origin is that very name. Only
// requests whose Host is a loopback name or address, an address or name the server listens on,
// a name its certificate carries, or one the operator added are served (421 otherwise); a
// browser's Origin must name one of those too.
//
// Threading: filled on the server's thread before and while listening, read there.

#include <QHostAddress>
#include <QSet>
#include <QSslCertificate>
#include <QString>

namespace pando::server::detail {

class HostAllowList {
public:
    void addName(const QString &name);
    // A wildcard address adds every address of this machine's interfaces and its host name.
    void addListenAddress(const QHostAddress &address);
    void addCertificate(const QSslCertificate &certificate);

    // The Host header's value ("name", "name:port", "[v6]:port"). An absent Host (clients that
    // are not browsers, HTTP/1.0) is allowed: a rebinding page always sends one.
    bool allowsHost(const QByteArray &host) const;
    // An Origin ("https://name:port"): http or https, an allowed name and the port the request
    // came in on (a page served from another port of this machine, an app's, is another
    // origin). "null" and other schemes are not an origin of this install.
    bool allowsOrigin(const QString &origin, quint16 port) const;

    // The name part of a Host value, lowercased, without brackets, port or trailing dot.
    static QString hostName(const QByteArray &host);

private:
    bool allowsName(const QString &name) const;
    QSet<QString> m_names;
};

} // namespace pando::server::detail
