#pragma once
// What `pando` prints: aligned tables and key/value blocks for people, the API's JSON with
// --json, and errors as one line on stderr ("pando: <where>: <message>", then "hint: ...").

#include "adapters/api/error.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace pando::cli {

void printOut(const QString &text); // adds a newline; replaces a pending status line
// A line that the next output replaces ("  … build" while a step runs). Only on a terminal;
// elsewhere nothing is printed, so logs and pipes get finished lines only.
void printStatus(const QString &text);
bool stdoutIsTerminal();
// One line of a unified diff, coloured on a terminal unless NO_COLOR is set.
QString colouredDiffLine(const QString &line);
void printErr(const QString &text); // adds a newline
void printJson(const QJsonObject &object);
void printError(const Error &error);

// Columns separated by two spaces, each as wide as its widest cell; the last is not padded.
QString table(const QStringList &headers, const QList<QStringList> &rows);
// "key:  value" lines with the values aligned.
QString keyValues(const QList<std::pair<QString, QString>> &pairs);

// A JSON field as text, as a number, or "-" for an empty text.
QString str(const QJsonObject &o, const char *key);
qint64 num(const QJsonObject &o, const char *key);
QString orDash(const QString &value);

QString duration(qint64 ms);  // "850ms", "3.2s", "1m05s"
QString timestamp(qint64 ms); // local "yyyy-MM-dd HH:mm:ss"; "-" for 0
// What `runs show` and `runs watch` say of a run whose output its job's build_log_retention removed.
QString logRemovedNote(qint64 removedMs);
QString shortCommit(const QString &commit);

} // namespace pando::cli
