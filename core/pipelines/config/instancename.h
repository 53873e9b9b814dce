#pragma once
// Instanced pipelines, as Concourse has them: pipelines of one name told apart by their instance
// vars (`fly set-pipeline -p preview -i branch=feature-1`, a set_pipeline step's instance_vars).
// Each instance is a pipeline of its own, named "GROUP/KEY:VALUE[,KEY:VALUE...]" as fly's -p
// flag writes it: keys in order, a value bare when it reads back as the same text, else quoted
// as JSON ("preview/branch:feature-1", "deploy/env:prod,region:\"eu,west\"", a '/' always
// quoted). Its instance vars
// are vars of its config, so ((branch)) is "feature-1" there.

#include "adapters/api/error.h"

#include <QJsonObject>
#include <QString>

#include <utility>

namespace pando::core::pipelines {

struct PipelineIdentity {
    QString group;            // the name before the '/', or the whole name
    QJsonObject instanceVars; // empty for a pipeline that is no instance
};

// The name of the instance of group with these vars (group itself when vars is empty). Values
// are strings, numbers or booleans; where names the vars in errors ("instance_vars", "-i").
Result<QString> instanceName(const QString &group, const QJsonObject &vars, const QString &where);

// Reads a pipeline name, plain or of an instance, in any order of its keys (as people type fly's
// -p flag). Errors name `where`.
Result<PipelineIdentity> parsePipelineName(const QString &text, const QString &where = QStringLiteral("name"));

// A name a pipeline can have: plain (1-100 of a-z A-Z 0-9 _ . -, not starting with . or -) or an
// instance's in its one written form. Another form of a valid instance name is refused with the
// form to use.
Status checkPipelineName(const QString &text, const QString &where = QStringLiteral("name"));

// A value as fly's -i reads it: true, false and numbers as themselves, a JSON-quoted string as
// that string, anything else as text.
QJsonValue instanceVarValue(const QString &text);

// PIPELINE/NAME (a job's or a resource's) split where the pipeline's name ends, an instance's
// name included: "ci/unit" is {"ci", "unit"}, "preview/branch:a/unit" {"preview/branch:a", "unit"},
// "preview/branch:a" {"preview/branch:a", ""}.
std::pair<QString, QString> splitPipelinePath(const QString &text);

// varsYaml with the instance vars set in it; a var given another value there is an error.
Result<QByteArray> withInstanceVars(const QByteArray &varsYaml, const QJsonObject &instanceVars);

} // namespace pando::core::pipelines
