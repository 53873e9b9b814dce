#pragma once
// The AppSpec's secrets section: how the app's secrets (`pando secrets set APP NAME`, sealed in
// the state database) reach its container. A secret the section does not list becomes an
// environment variable of its own name; one listed with `file:` becomes a file instead (and no
// environment variable). Errors name the field and the line it was found at.

#include "adapters/api/error.h"
#include "core/spec/appspec.h"
#include "core/spec/yamlreader.h"

#include <QJsonObject>

namespace pando::core::detail {

Status readSecrets(const DocNode &root, AppSpec &spec);
Status checkSecrets(const QMap<QString, AppSpec::SecretFile> &secrets);
QJsonObject secretsJson(const QMap<QString, AppSpec::SecretFile> &secrets);

} // namespace pando::core::detail
