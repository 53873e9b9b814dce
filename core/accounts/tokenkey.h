#pragma once
// Package tokenkey (part of accounts): the key that API token and session digests are made
// with. It lives in a file outside the database (mode 0600), so a copy of the database alone
// cannot be used to check guesses.

#include "adapters/api/error.h"

#include <QByteArray>
#include <QString>

namespace pando::core::detail {

// Reads the key at path, creating it (32 random bytes, 0600) when missing.
Result<QByteArray> loadOrCreateKey(const QString &path);
// Hex HMAC-SHA256 of the secret under the key.
QString tokenDigest(const QByteArray &key, const QString &secret);
// "pando_" + 43 characters of URL-safe base64 (256 random bits).
QString newTokenSecret();
// Writes data to path with mode 0600 from the start (never world-readable, not even briefly).
Status writePrivateFile(const QString &path, const QByteArray &data);

} // namespace pando::core::detail
