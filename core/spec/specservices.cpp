#include "core/spec/specservices.h"

#include "core/spec/specrules.h"

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
        for (const auto &[key, field] : value.entries) {
            if (key == u"kind" || key == u"version")
                continue;
            const QString best = closestWord(key, {u"kind"_s, u"version"_s});
            return std::unexpected(
                at(Error{ErrorCode::Invalid,
                         u"unknown field%1"_s.arg(best.isEmpty() ? QString() : u"; did you mean \"%1\"?"_s.arg(best)),
                         path + u'.' + key, u"known fields here: kind, version"_s},
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
    }
    return {};
}

QJsonObject servicesJson(const QMap<QString, AppSpec::Service> &services)
{
    QJsonObject out;
    for (auto it = services.cbegin(); it != services.cend(); ++it)
        out.insert(it.key(), QJsonObject{{u"kind"_s, it->kind}, {u"version"_s, it->version}});
    return out;
}

} // namespace detail

} // namespace pando::core
