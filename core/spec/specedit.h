#pragma once
// Changes to an AppSpec's text that keep the rest of it as its writer wrote it (comments, order,
// quoting): what `pando apps env set|unset` sends through the spec revision path. The edited
// text is read back and must say exactly what was asked and nothing else, or the edit is refused
// rather than guessed.
//
// Threading: pure functions, any thread.

#include "adapters/api/error.h"

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <optional>

namespace pando::core {

struct EnvEdit {
    QMap<QString, QString> set; // name → value
    QStringList unset;
};

struct EnvChange {
    QString name;
    std::optional<QString> before; // nullopt: added
    std::optional<QString> after;  // nullopt: removed
    bool operator==(const EnvChange &) const = default;
};

// What edit changes in env, in name order: a variable set to the value it has, or unset when it
// is not there, is no change.
QList<EnvChange> envChanges(const QMap<QString, QString> &env, const EnvEdit &edit);

// The spec text with run.env changed as edit says: lines of variables it changes replaced, of
// those it removes taken out, new ones added after the last (with run: and env: when the spec
// has none). A spec written as JSON is rewritten as indented JSON. Errors: the spec's own
// (it must parse), the changed spec's rules (a variable name at "run.env.NAME", a variable a
// service injects, ...), and Invalid at "run.env" when it is written in a form this cannot change
// in place (a flow mapping such as
// `run: {env: {A: b}}`), with what to do instead.
Result<QByteArray> editRunEnv(const QByteArray &specText, const EnvEdit &edit);

} // namespace pando::core
