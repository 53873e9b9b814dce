#pragma once
// Package connections (QML module Pando.Connections): the installs this desktop can show — this
// computer's own engine and any number of remote ones — and adding a remote one by pasting a
// pairing link:
//   pando://HOST:PORT/pair?fp=<SHA-256 of the server certificate, 64 hex digits>&token=<code>
// This header reads such a link, saying which part of it is wrong.

#include "adapters/api/error.h"

#include <QString>
#include <QUrl>

namespace pando::desktop {

struct PairingLink {
    QString host;
    int port = 0;
    QString fingerprint;  // 64 lowercase hex digits
    QString token;        // "pandopair_…"
    QUrl baseUrl() const; // https://HOST:PORT
};

// Errors name the part: "link", "scheme", "host", "port", "path", "fp", "token".
Result<PairingLink> parsePairingLink(const QString &text);

// A fingerprint as a 17x9 "drunken bishop" picture (as OpenSSH draws host keys), so the person
// serving and the person pairing can compare it at a glance; empty for an empty fingerprint.
QString fingerprintArt(const QString &fingerprintHex);

} // namespace pando::desktop
