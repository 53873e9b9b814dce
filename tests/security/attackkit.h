// The attack catalogue's kit: a pandod of its own, raw HTTP over loopback, the catalogue's
// files and the placeholders its entries use (see README.md).

#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>

class QTcpServer;
class QTcpSocket;

namespace pando::test::attacks {

// The password of every user the catalogue makes.
inline const QString Password = QStringLiteral("catalogue-password-1");

// A pandod of its own data directory, on a free loopback port.
struct Daemon {
    QTemporaryDir dir;
    QProcess process;
    int port = 0;
    QByteArray token;                     // the administrator's session
    QMap<QString, QByteArray> principals; // "member", "member/2", … → a session token
    QMap<QString, QByteArray> saved;      // values steps saved, for {saved:name}

    ~Daemon();
    qint64 rssKiB() const;
};

struct Answer {
    int status = 0; // 0: none came
    QJsonObject json;
    QByteArray raw;
};

// One HTTP answer off the socket: the status line, headers and a Content-Length body.
Answer readAnswer(QTcpSocket &socket, QByteArray &buffer, int timeoutMs);

// Whether the server ends the connection within timeoutMs (what it still sends is dropped).
bool closesWithin(QTcpSocket &socket, int timeoutMs);

// Within a second: connections an entry held are gone from pandod's count a moment after they close.
bool healthy(int port);

// One request over a new connection, answered within 5 s.
Answer call(int port, const QByteArray &method, const QByteArray &path, const QByteArray &token,
            const QJsonObject &body = {});

// A request as bytes: the request line ("GET /path"), a bearer token when given, and the body
// with its type when given.
QByteArray httpRequest(const QByteArray &line, const QByteArray &token, const QByteArray &type = {},
                       const QByteArray &body = {});

// A session of the user `name` (created with `role` by the administrator when it is new).
QByteArray sessionOf(int port, const QByteArray &adminToken, const QString &name, const QString &role);

// The token of a principal: "admin", "anonymous" (none), or a role with an optional "/n" for
// another user of it ("member", "member/2"), created the first time it is named.
QByteArray tokenOf(Daemon &daemon, const QString &principal);

// The catalogue's entries, read from its files and checked for what every entry needs.
class Catalogue {
public:
    // Every *.json file in the directory, in name order; ids are unique across them.
    bool loadDirectory(const QString &path, QString *error);
    static QStringList knownKinds();
    const QStringList &ids() const { return m_order; }
    QJsonObject entry(const QString &id) const { return m_entries.value(id); }

private:
    bool load(const QString &path, QString *error);

    QStringList m_order;
    QMap<QString, QJsonObject> m_entries;
};

// A listener that accepts connections (the kernel does, from its backlog) and never answers:
// a git host that hangs.
QTcpServer &blackhole();

// A git repository with one commit on main, for entries that create apps: its file:// URL, or
// empty when git is missing (the entry then fails on the refused create).
QByteArray gitRepo();

// Placeholders in strings: {token} the administrator's token, {token:P} principal P's (see
// tokenOf), {saved:name} what a step saved, {port} pandod's port, {blackhole} the port of a
// listener that never answers, {gitrepo} a file:// git repository with a commit on main, {n}
// the connection's number (kind parallel).
QByteArray expand(const QString &text, Daemon &daemon, int n = 0);

// One write: a string, or a list of pieces: strings, {"repeat": write, "times": n},
// {"fill": n, "byte": "x"} and {"hex": "81ff"} (bytes a JSON string cannot hold as themselves).
QByteArray writeBytes(const QJsonValue &write, Daemon &daemon);

} // namespace pando::test::attacks
