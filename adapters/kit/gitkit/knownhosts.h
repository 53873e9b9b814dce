#pragma once
// Checks an ssh server's host key against an OpenSSH known_hosts file, so a git fetch over
// ssh talks only to a server whose key was pinned beforehand. Kept apart from GitMirrors so
// the matching rules (hashed names, "[host]:port", wildcards, @revoked) can be read in one place.

#include "adapters/api/error.h"

#include <QByteArray>
#include <QString>

namespace pando::adapters::git::detail {

// Succeeds when knownHostsPath lists host (on port) with exactly hostKey (the raw ssh key
// blob as sent by the server). Fails Unauthorized when the host is not listed, is listed with
// other keys only, or the key is marked @revoked; Unavailable when the file cannot be read.
Status checkKnownHost(const QString &knownHostsPath, const QString &host, int port, const QByteArray &hostKey);
// The same check over known_hosts lines held in memory (a source connection's pinned keys);
// where names them in errors.
Status checkKnownHostIn(const QByteArray &knownHosts, const QString &host, int port, const QByteArray &hostKey,
                        const QString &where);
inline constexpr qint64 MaxKnownHostsBytes = 1024 * 1024;

// The "SHA256:..." fingerprint of a raw key blob, as ssh-keygen -l prints it.
QString sshFingerprint(const QByteArray &hostKey);

} // namespace pando::adapters::git::detail
