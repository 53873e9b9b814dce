#pragma once
// The AppSpec's services section: slots an app's backing services fill (a PostgreSQL database,
// a Redis cache, ...), read from the document with each error naming the field and the line it
// was found at, checked again for a spec built in code, and written back as JSON.

#include "adapters/api/error.h"
#include "core/spec/appspec.h"
#include "core/spec/yamlreader.h"

#include <QJsonObject>

namespace pando::core::detail {

Status readServices(const DocNode &root, AppSpec &spec);
Status checkServices(const QMap<QString, AppSpec::Service> &services);
QJsonObject servicesJson(const QMap<QString, AppSpec::Service> &services);
// A slot's user, database, password and env names (redis: no user or database).
Status checkServiceSettings(const AppSpec::Service &service, const QString &path);
// A seed file for a service of kind, at where: a file of the repository, and a kind that loads one.
Status checkSeed(const QString &kind, const QString &seed, const QString &where);
// The parts of a kind's connection the app gets variables for: url, host, port, user, password
// (and name, the database, for the SQL kinds).
QStringList serviceEnvParts(const QString &kind);
// The variable the app gets for a part of a slot's connection: the name the slot's env gives it,
// else SLOT_PART (db, url → DB_URL); and every part's, for the slot's kind.
QString serviceEnvName(const QString &slot, const AppSpec::Service &service, const QString &part);
QStringList serviceEnvNames(const QString &slot, const AppSpec::Service &service);

} // namespace pando::core::detail
