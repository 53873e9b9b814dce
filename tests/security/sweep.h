// The catalogue's kind "sweep" (README.md): secrets an entry plants through the API are looked
// for, in every form tools write them, in everything pandod shows or leaves behind: the answer of
// every GET route of the route table for every object the install holds, the live streams, the
// answers the entry's own requests got, the Docker containers, images and engine events pandod
// made, its data directory and its own output. What is found is reported as the place, the
// secret's name in the entry and the form; never the value.
//
// The route table (app/server/handlers.cpp) is read from the source tree, and a GET route the
// sweep does not read fails the entry: a route added later is swept or explicitly left out.

#pragma once

#include "attackkit.h"

#include <QByteArrayList>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QSet>
#include <QStringList>
#include <memory>

class QWebSocket;

namespace pando::test::attacks {

// One way a secret can be written out: what it is called in a report ("base64url, offset 2")
// and its bytes.
struct SecretForm {
    QString name;
    QByteArray bytes;
};

// The forms of one secret, each a different byte string (duplicates are dropped): raw;
// base64 and base64url at each of the three offsets the secret may have inside longer encoded
// data (only the characters whose six bits all come from the secret, so they are the same
// whatever surrounds it); percent-encoded with upper- and lower-case hex, with "+" for a space
// (forms) and encodeURI's lighter form that keeps the reserved characters; JSON-escaped with
// and without "\/".
QList<SecretForm> secretForms(const QByteArray &secret);

// Where each form of each secret first occurs in text: "secret \"NAME\" FORM at byte N: …context…",
// every secret in the context shown as «NAME»; empty when none does.
QStringList findSecrets(const QMap<QString, QList<SecretForm>> &secrets, const QByteArray &text);

// A WebSocket of pandod's API, opened with a bearer token, keeping every message it receives.
class StreamTap {
public:
    StreamTap(int port, const QByteArray &token, const QString &pathAndQuery);
    ~StreamTap();
    // Whether the socket opened within ms (it may have closed again since: a finished run's
    // follow sends its events and closes at once).
    bool waitConnected(int ms);
    // Lets messages arrive for ms, or until the server closes the socket.
    void listen(int ms);
    bool isClosed() const;
    // The server's close code and reason, when it closed other than normally.
    QString abnormalClose() const;
    QByteArray received() const { return m_received.join('\n'); }

private:
    std::unique_ptr<QWebSocket> m_socket;
    QByteArrayList m_received;
    bool m_opened = false;
};

class Sweep {
public:
    Sweep(const QJsonObject &entry, Daemon &daemon);
    ~Sweep();

    // The entry with "{secret:NAME}" in its strings replaced by that secret's value and
    // "{secret-url:NAME}" by its percent-encoded value, for the steps to send; the values are
    // also saved as {saved:secret-NAME} (so "as": "saved:secret-NAME" sends one as a token).
    QJsonObject entry() const { return m_entry; }
    // Before the steps: the base image the entry's repositories and tasks name, and the
    // install-wide event stream, opened now to hear every event that follows.
    bool start(QString *why);
    // Text pandod sent (a step's answer), searched at once; where says what it was.
    void look(const QString &where, const QByteArray &text);
    // Reads every place and searches it. Returns what was found (empty: nothing) and the places
    // that could not be read or held nothing to search where something was expected.
    QStringList finish();
    // The entry's "then": request lines sent as the administrator after the sweep, whatever came
    // of the steps, to remove what they made (a deployed app keeps running after pandod stops). A
    // DELETE is followed until a GET of its path answers 404. Returns what did not go as meant.
    QStringList cleanUp();

private:
    // GET path over a new connection as the administrator, searched; `route` is the route
    // table's template it reads. Its JSON, or an empty object after a failure (reported).
    // accepted: the statuses that are not a problem (a refusal's error text is searched too).
    QJsonObject get(const QString &route, const QString &path, const QList<int> &accepted = {200});
    // A WebSocket route, searched after listening for up to ms.
    void stream(const QString &route, const QString &path, int ms);
    void sweepApi();
    void sweepDocker();
    void sweepDataDirectory();
    void sweepDaemonOutput();
    void checkRouteCoverage();

    Daemon &m_daemon;
    QJsonObject m_entry;
    QMap<QString, QList<SecretForm>> m_secrets; // name in the entry → its forms
    QSet<QString> m_routesRead;
    QStringList m_found;    // what was found where
    QStringList m_problems; // places that could not be read
    int m_places = 0;
    qint64 m_startedSecs = 0;
    std::unique_ptr<StreamTap> m_events;
};

} // namespace pando::test::attacks
