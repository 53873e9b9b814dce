#pragma once
// Package sinkkit holds what the audit sink kinds share: reading the settings that narrow and
// shape what core sends out of a sink's configuration, reading inline credentials out of plain
// configuration ("env:NAME", "file:/path", or the value itself), shaping one line into the JSON
// a destination receives, and loading a trusted certificate bundle.
//
// Threading: free functions without shared state; call them from any thread.

#include "adapters/api/auditsink.h"
#include "adapters/api/error.h"

#include <QJsonObject>
#include <QList>
#include <QSslCertificate>
#include <QString>

namespace pando::adapters::sinkkit {

// The native fields a line has, in the order they are sent.
const QStringList &nativeFields();

// Reads {"actions": [...], "outcomes": [...], "actors": [...], "fields": [...],
// "format": "native"|"ocsf", "batchSize": n}; every key is optional. `where` prefixes the
// field names in errors ("sinks.siem").
Result<AuditSinkSettings> parseSettings(const QJsonObject &config, const QString &where);

// A credential written in plain configuration: "env:NAME" reads the environment variable,
// "file:/path" reads the file (one trailing newline dropped), anything else is the value itself.
// A missing variable or unreadable file is an error naming `where`, never the value.
Result<QString> readCredential(const QString &value, const QString &where);

// The certificates of a PEM bundle; an empty or unreadable bundle is an error.
Result<QList<QSslCertificate>> loadCaBundle(const QString &path);

// RFC 3339 UTC time with milliseconds: "2023-11-14T22:13:20.123Z".
QString rfc3339(qint64 ms);

// The JSON a destination receives for one line: the OCSF event when the settings ask for OCSF
// (and core filled it), else the native fields the settings select ("seq" always), with
// "detail" as an object when it holds valid JSON.
QJsonObject shapeLine(const AuditLine &line, const AuditSinkSettings &settings);

} // namespace pando::adapters::sinkkit
