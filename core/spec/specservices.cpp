#include "core/spec/specservices.h"

#include "core/spec/specrules.h"

#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::core {

QStringList serviceKinds()
{
    return {u"postgres"_s, u"mysql"_s, u"mariadb"_s, u"redis"_s};
}

QStringList serviceVersions(const QString &kind)
{
    // Debian bookworm's versions: the images are built from its packages (docs/services.md).
    if (kind == u"postgres")
        return {u"15"_s};
    if (kind == u"mysql" || kind == u"mariadb")
        return {u"10.11"_s};
    if (kind == u"redis")
        return {u"7"_s};
    return {};
}

namespace detail {

Status readServices(const DocNode &root, AppSpec &spec)
{
    const DocNode *node = root.value(u"services"_s);
    if (!node || node->kind == DocNode::Kind::Null)
        return {};
    if (node->kind != DocNode::Kind::Map)
        return std::unexpected(at(Error{ErrorCode::Invalid,
                                        u"expected a mapping of slot names to services, like "
                                        u"{ db: { kind: postgres } }"_s,
                                        u"services"_s,
                                        {}},
                                  *node));
    if (node->entries.size() > size_t(MaxServiceSlots))
        return std::unexpected(
            at(Error{ErrorCode::Invalid,
                     u"%1 slots; an app may have at most %2"_s.arg(node->entries.size()).arg(MaxServiceSlots),
                     u"services"_s,
                     {}},
               *node));
    for (const auto &[slot, value] : node->entries) {
        const QString path = u"services."_s + slot;
        if (auto ok = checkServiceSlot(slot, path); !ok)
            return std::unexpected(at(ok.error(), value));
        if (value.kind != DocNode::Kind::Map)
            return std::unexpected(at(
                Error{ErrorCode::Invalid, u"expected a mapping like { kind: postgres, version: \"15\" }"_s, path, {}},
                value));
        const QStringList known{u"kind"_s, u"version"_s, u"user"_s, u"database"_s, u"password"_s, u"env"_s, u"seed"_s};
        for (const auto &[key, field] : value.entries) {
            if (known.contains(key))
                continue;
            const QString best = closestWord(key, known);
            return std::unexpected(
                at(Error{ErrorCode::Invalid,
                         u"unknown field%1"_s.arg(best.isEmpty() ? QString() : u"; did you mean \"%1\"?"_s.arg(best)),
                         path + u'.' + key, u"known fields here: "_s + known.join(u", "_s)},
                   field));
        }
        AppSpec::Service service;
        const DocNode *kind = value.value(u"kind"_s);
        if (!kind || kind->kind == DocNode::Kind::Null)
            return std::unexpected(at(Error{ErrorCode::Invalid,
                                            u"missing required field (one of %1)"_s.arg(serviceKinds().join(u", "_s)),
                                            path + u".kind"_s,
                                            {}},
                                      value));
        auto kindText =
            scalarText(*kind, path + u".kind"_s, u"a service kind (%1)"_s.arg(serviceKinds().join(u", "_s)));
        if (!kindText)
            return std::unexpected(kindText.error());
        if (auto ok = checkServiceKind(*kindText, path + u".kind"_s); !ok)
            return std::unexpected(at(ok.error(), *kind));
        service.kind = *kindText;
        service.version = serviceVersions(service.kind).value(0);
        if (const DocNode *version = value.value(u"version"_s); version && version->kind != DocNode::Kind::Null) {
            auto versionText = scalarText(*version, path + u".version"_s, u"a version like \"15\""_s);
            if (!versionText)
                return std::unexpected(versionText.error());
            if (auto ok = checkServiceVersion(service.kind, *versionText, path + u".version"_s); !ok)
                return std::unexpected(at(ok.error(), *version));
            service.version = *versionText;
        }
        for (const auto &[field, member] :
             {std::pair{u"user"_s, &service.user}, std::pair{u"database"_s, &service.database},
              std::pair{u"password"_s, &service.password}, std::pair{u"seed"_s, &service.seed}}) {
            const DocNode *given = value.value(field);
            if (!given || given->kind == DocNode::Kind::Null)
                continue;
            if (given->kind != DocNode::Kind::Scalar)
                return std::unexpected(
                    at(Error{ErrorCode::Invalid, u"expected a string"_s, path + u'.' + field, {}}, *given));
            *member = given->text;
        }
        if (const DocNode *env = value.value(u"env"_s); env && env->kind != DocNode::Kind::Null) {
            if (env->kind != DocNode::Kind::Map)
                return std::unexpected(at(Error{ErrorCode::Invalid,
                                                u"expected a mapping like { url: DATABASE_URL, host: PGHOST }"_s,
                                                path + u".env"_s,
                                                {}},
                                          *env));
            for (const auto &[part, name] : env->entries) {
                if (name.kind != DocNode::Kind::Scalar)
                    return std::unexpected(at(
                        Error{ErrorCode::Invalid, u"expected a variable name"_s, path + u".env."_s + part, {}}, name));
                service.env.insert(part, name.text.trimmed());
            }
        }
        if (auto ok = checkServiceSettings(service, path); !ok)
            return std::unexpected(at(ok.error(), value));
        spec.services.insert(slot, service);
    }
    return {};
}

Status checkServices(const QMap<QString, AppSpec::Service> &services)
{
    if (services.size() > MaxServiceSlots)
        return fail(ErrorCode::Invalid,
                    u"%1 slots; an app may have at most %2"_s.arg(services.size()).arg(MaxServiceSlots), u"services"_s);
    for (auto it = services.cbegin(); it != services.cend(); ++it) {
        const QString path = u"services."_s + it.key();
        if (auto ok = checkServiceSlot(it.key(), path); !ok)
            return ok;
        if (auto ok = checkServiceKind(it->kind, path + u".kind"_s); !ok)
            return ok;
        if (auto ok = checkServiceVersion(it->kind, it->version, path + u".version"_s); !ok)
            return ok;
        if (auto ok = checkServiceSettings(*it, path); !ok)
            return ok;
    }
    return {};
}

Status checkSeed(const QString &kind, const QString &seed, const QString &where)
{
    if (kind == u"redis")
        return fail(ErrorCode::Invalid, u"redis takes no seed file; only postgres, mysql and mariadb load one"_s, where,
                    u"leave it out, and let the app fill its cache"_s);
    return checkRelativePath(seed, where, u"repository"_s, true);
}

QStringList serviceEnvParts(const QString &kind)
{
    if (kind == u"redis")
        return {u"url"_s, u"host"_s, u"port"_s, u"user"_s, u"password"_s};
    return {u"url"_s, u"host"_s, u"port"_s, u"user"_s, u"password"_s, u"name"_s};
}

QString serviceEnvName(const QString &slot, const AppSpec::Service &service, const QString &part)
{
    return service.env.value(part, slot.toUpper() + u'_' + part.toUpper());
}

QStringList serviceEnvNames(const QString &slot, const AppSpec::Service &service)
{
    QStringList names;
    for (const QString &part : serviceEnvParts(service.kind))
        names << serviceEnvName(slot, service, part);
    return names;
}

Status checkServiceSettings(const AppSpec::Service &service, const QString &path)
{
    static const QRegularExpression identifier(uR"(^[A-Za-z_][A-Za-z0-9_]{0,62}\z)"_s);
    const bool redis = service.kind == u"redis";
    if (!service.user.isEmpty()) {
        if (redis)
            return fail(ErrorCode::Invalid, u"redis has no users here; the app authenticates with the password"_s,
                        path + u".user"_s);
        if (!identifier.match(service.user).hasMatch())
            return fail(ErrorCode::Invalid,
                        u"%1 is not a user name: letters, digits and _, not starting with a digit, at most 63"_s.arg(
                            quoted(service.user)),
                        path + u".user"_s);
    }
    if (!service.database.isEmpty()) {
        if (redis)
            return fail(ErrorCode::Invalid, u"redis has no named databases; the app gets database 0"_s,
                        path + u".database"_s);
        if (!identifier.match(service.database).hasMatch())
            return fail(
                ErrorCode::Invalid,
                u"%1 is not a database name: letters, digits and _, not starting with a digit, at most 63"_s.arg(
                    quoted(service.database)),
                path + u".database"_s);
    }
    if (!service.password.isEmpty()) {
        static const QRegularExpression visible(uR"(^[!-~]{1,128}\z)"_s);
        // Never quoted back: it is a password.
        if (!visible.match(service.password).hasMatch())
            return fail(ErrorCode::Invalid, u"a password here has 1 to 128 visible ASCII characters and no spaces"_s,
                        path + u".password"_s, u"leave it out and Pando makes a strong one"_s);
    }
    if (!service.seed.isEmpty()) {
        if (auto ok = checkSeed(service.kind, service.seed, path + u".seed"_s); !ok)
            return ok;
    }
    const QStringList parts = serviceEnvParts(service.kind);
    QStringList names;
    for (auto it = service.env.cbegin(); it != service.env.cend(); ++it) {
        const QString where = path + u".env."_s + it.key();
        if (!parts.contains(it.key()))
            return fail(ErrorCode::Invalid, u"%1 gives no %2"_s.arg(service.kind, quoted(it.key())), where,
                        u"the parts are %1"_s.arg(parts.join(u", "_s)));
        if (auto ok = checkVariableName(it.value(), where); !ok)
            return ok;
        if (names.contains(it.value()))
            return fail(ErrorCode::Invalid, u"%1 names two parts"_s.arg(it.value()), where);
        names << it.value();
    }
    return {};
}

QJsonObject servicesJson(const QMap<QString, AppSpec::Service> &services)
{
    QJsonObject out;
    for (auto it = services.cbegin(); it != services.cend(); ++it) {
        QJsonObject service{{u"kind"_s, it->kind}, {u"version"_s, it->version}};
        if (!it->user.isEmpty())
            service.insert(u"user"_s, it->user);
        if (!it->database.isEmpty())
            service.insert(u"database"_s, it->database);
        // A password the spec gives is the spec's; it is written back as given.
        if (!it->password.isEmpty())
            service.insert(u"password"_s, it->password);
        if (!it->seed.isEmpty())
            service.insert(u"seed"_s, it->seed);
        if (!it->env.isEmpty()) {
            QJsonObject env;
            for (auto e = it->env.cbegin(); e != it->env.cend(); ++e)
                env.insert(e.key(), e.value());
            service.insert(u"env"_s, env);
        }
        out.insert(it.key(), service);
    }
    return out;
}

} // namespace detail

} // namespace pando::core
