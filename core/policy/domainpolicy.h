#pragma once
// Which names an install serves apps at, and the addresses an app gets from its spec. An
// administrator sets a base domain (an app that names no domain is NAME.BASE), the names apps may
// use (each one and everything under it; none listed: any name) and whether wildcards are
// allowed (GET/PUT /api/v1/settings, `pando settings set`). Two apps never hold one address: the
// same host and path, or paths where one is a prefix of the other on the same host (a request
// could go to either), are refused naming the app that holds it. docs/edge.md has the rules.
//
// Threading: values and pure functions; the read and write need the database.

#include "adapters/api/error.h"
#include "adapters/api/routing.h"
#include "core/spec/appspec.h"
#include "core/state/database.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <utility>

namespace pando::core::policy {

inline constexpr auto BaseDomainSetting = "edge.base_domain";
inline constexpr auto AllowedDomainsSetting = "edge.allowed_domains";
inline constexpr auto WildcardDomainsSetting = "edge.wildcard_domains";

struct DomainPolicy {
    QString baseDomain;     // ASCII lower case; empty: apps get no name unless their spec gives one
    QStringList allowed;    // ASCII lower case; empty: any name
    bool wildcards = false; // whether route.domains may hold "*.name"

    // Whether host (ASCII, "*." for a wildcard) is one apps may use: under the base domain or an
    // allowed name (any, when none is listed), and a wildcard only when they are allowed.
    Status permits(const QString &host, const QString &where) const;
    bool operator==(const DomainPolicy &) const = default;
};

Result<DomainPolicy> readDomainPolicy(Database &db);
// Stores every field; returns the setting names whose value changed.
Result<QStringList> writeDomainPolicy(Database &db, const DomainPolicy &policy, const QString &actor, qint64 nowMs);
// The policy's fields from what people write (Unicode names converted, case folded, duplicates
// dropped); Invalid at where ("base_domain", "allowed_domains[1]").
Result<QString> parseBaseDomain(const QString &text, const QString &where);
Result<QStringList> parseAllowedDomains(const QStringList &names, const QString &where);

// The addresses the spec asks for under the policy: each of route.domains (or NAME.BASE when it
// names none and there is a base domain) at each of route.paths ("/" when none), with its TLS
// mode. Invalid at the field when the policy refuses a name, or when paths are given with no
// domain to hold them. Empty when the app is reached on its stable port only.
Result<QList<adapters::Address>> appAddresses(const AppSpec &spec, const DomainPolicy &policy);

// Conflict, naming the other app and the address, when one of app's addresses is held by another
// app: the same host with the same path or a path one of which is a prefix of the other.
// Addresses that only redirect (moved) are not held: a new claim takes them over.
Status checkAddressClash(const QString &app, const QList<adapters::Address> &addresses,
                         const QList<std::pair<QString, QList<adapters::Address>>> &others);

} // namespace pando::core::policy
