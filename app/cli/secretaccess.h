#pragma once
// `pando secrets access` and the READ BY column of `pando secrets list`: which pipelines may read
// an install-wide secret (docs/pipelines.md, "Which secrets a pipeline may read").

#include "cli.h"

#include <QJsonObject>
#include <QList>
#include <QStringList>

namespace pando::cli {

// NAME and READ BY rows of the install's secrets (GET /api/v1/secrets's "access").
QList<QStringList> accessRows(const QJsonObject &answer);
// `pando secrets access NAME [PIPELINE...] [--all-pipelines]`.
void setSecretAccess(Cli &cli);

} // namespace pando::cli
