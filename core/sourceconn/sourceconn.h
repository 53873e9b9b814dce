#pragma once
// Package sourceconn is the install's source connections: a forge (kind and base address,
// optionally one owner there) with a credential — an HTTPS token or an SSH deploy key with the
// host's keys pinned — that reads the repositories it covers. Credentials are sealed at rest with
// the install's seal key (core/pipelines/sealbox), bound to the connection's name, and never
// leave core except as the SourceCredential of one fetch. Which connection reads a repository is
// decided here (adapters/api/repoaddress.h says what covers what); who may use one is the
// engine's rule (administrators all, others those they hold a grant on).
//
// Nothing here logs, and no error text contains a credential.
//
// Threading: a ConnectionStore is a borrowed view over a Database and a SealBox, both safe to
// use from any thread; make one per call.

#include "adapters/api/error.h"
#include "adapters/api/repoaddress.h"
#include "adapters/api/source.h"
#include "core/common/clock.h"
#include "core/pipelines/sealbox/sealbox.h"
#include "core/state/database.h"

#include <QList>
#include <QString>
#include <optional>

namespace pando::core::sourceconn {

inline constexpr qsizetype MaxTokenBytes = 4096;
inline constexpr qsizetype MaxKeyBytes = 16 * 1024;
inline constexpr int MaxConnections = 200;

enum class AuthKind { Token, SshKey };
QString authKindName(AuthKind kind); // "token", "ssh-key"

// A connection as lists show it: everything but the credential.
struct Connection {
    QString name;
    adapters::ForgeScope scope;
    AuthKind auth = AuthKind::Token;
    QString username;    // sent with the token, or the ssh user; empty: the forge's default
    QString knownHosts;  // ssh-key: the pinned host keys (known_hosts lines); not secret
    QString fingerprint; // ssh-key: the public key's SHA256 fingerprint, to find it on the forge
    QString createdBy;
    qint64 createdMs = 0;
    qint64 updatedMs = 0;
    qint64 checkedMs = 0; // the last test; 0 never
    QString checkResult;  // what it said: "ok: …" or why it failed
    bool isToken() const { return auth == AuthKind::Token; }
};

// What adding one takes. secret is the token or the private key's text.
struct ConnectionInput {
    QString name;
    adapters::ForgeScope scope;
    AuthKind auth = AuthKind::Token;
    QString username;
    QByteArray secret;
    QString knownHosts;
};

// A connection's name: a DNS label, 1-63 characters of [a-z0-9-].
Status checkConnectionName(const QString &name);
// Every rule for a new connection, each error naming its field: name, url, owner, token or
// ssh_key (the secret's size, text, and for a key its form and that it has no passphrase: a
// deploy key is used unattended), known_hosts (required for a key, one host key per line),
// username (required for a token on generic and Gitea hosts).
Status checkConnectionInput(const ConnectionInput &input);
// The SHA256 fingerprint ("SHA256:…") of an OpenSSH private key's public half, read from the
// key's unencrypted public section; empty for a PEM key, whose public half is not stored apart.
QString keyFingerprint(QByteArrayView privateKey);

// Which of the candidates reads repo: the one covering it most closely. nullopt when none
// covers it; Conflict, naming them, when two cover it equally.
Result<std::optional<Connection>> choose(const QList<Connection> &candidates, const QString &repo);

class ConnectionStore {
public:
    ConnectionStore(Database &db, const pipelines::SealBox &seal, Clock &clock) : m_db(db), m_seal(seal), m_clock(clock)
    {}

    // Checks, seals and stores a new connection; Conflict when the name is taken.
    Result<Connection> add(const ConnectionInput &input, const QString &createdBy);
    // By name.
    Result<QList<Connection>> list();
    // NotFound names it.
    Result<Connection> find(const QString &name);
    // NotFound names it; Conflict, naming them, while apps read their source through it.
    Status remove(const QString &name);
    // The names of the apps that read their source through it.
    Result<QStringList> appsUsing(const QString &name);
    // The credential one fetch offers, opened. The caller wipes it.
    Result<adapters::SourceCredential> credential(const QString &name);
    // Records what the last test said.
    Status recordCheck(const QString &name, const QString &result);

private:
    Database &m_db;
    const pipelines::SealBox &m_seal;
    Clock &m_clock;
};

// The associated data a credential is sealed under: "source-connection", name.
QByteArray sealContext(const QString &name);

} // namespace pando::core::sourceconn
