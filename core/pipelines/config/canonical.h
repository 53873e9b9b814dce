#pragma once
// JSON forms of the pipeline model: one plain form per type (what the API shows), a canonical
// byte form of any JSON value for content addressing (merkle hashes), and a line diff of two
// pipelines for `pando pipelines set`. The canonical form depends only on the values, never on
// the order keys were written in.

#include "core/pipelines/config/pipelineconfig.h"

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QStringList>

namespace pando::core::pipelines {

QJsonObject toJson(const TaskConfig &config);
QJsonObject toJson(const Step &step); // children and hooks included; no `path`/`line`
QJsonObject toJson(const ResolvedTask &task);
QJsonObject toJson(const ResourceType &type);
QJsonObject toJson(const Resource &resource);
QJsonObject toJson(const Job &job);
QJsonObject toJson(const Pipeline &pipeline);

// Sorted keys (by UTF-16 code unit), no whitespace, integers without a fraction, other numbers
// in the shortest form that reads back exactly, strings with only the escapes JSON requires.
QByteArray canonicalJson(const QJsonValue &value);
inline QByteArray canonicalJson(const QJsonObject &object)
{
    return canonicalJson(QJsonValue(object));
}

// A unified line diff ("+ " added, "- " removed, "  " context) of two texts' lines, with
// `context` unchanged lines around each change and "@@ line N @@" headers; empty when equal.
QStringList diffLines(const QStringList &before, const QStringList &after, int context = 3);

// What `pipelines set` shows: the config's own lines as the user wrote them (comments, order and
// anchors kept), then, when the vars changed, the names of those added (+), removed (-) and
// changed (~) under "@@ vars @@", never their values, which the one setting it may not have
// given. Empty when neither changed. Vars that do not parse count as changed as a whole.
QStringList setDiff(const QString &configBefore, const QString &configAfter, const QString &varsBefore,
                    const QString &varsAfter);

} // namespace pando::core::pipelines
