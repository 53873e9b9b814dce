// `var_sources:`: the credential managers a pipeline names, read as Concourse documents them, and
// their configs resolved in the order they depend on each other.
#include "core/pipelines/config/validate.h"

#include <QSet>

using namespace Qt::StringLiterals;

namespace pando::core::pipelines::internal {

namespace {

bool isPlaceholder(const DocNode &node)
{
    return node.kind == DocNode::Kind::Scalar && node.text.trimmed().startsWith(u"((") &&
           node.text.trimmed().endsWith(u"))");
}

// The keys of a vault var source Concourse documents, and the ones Pando reads.
const QStringList &vaultKeys()
{
    static const QStringList keys{u"url"_s,
                                  u"path_prefix"_s,
                                  u"lookup_templates"_s,
                                  u"shared_path"_s,
                                  u"namespace"_s,
                                  u"ca_cert"_s,
                                  u"client_cert"_s,
                                  u"client_key"_s,
                                  u"server_name"_s,
                                  u"insecure_skip_verify"_s,
                                  u"client_token"_s,
                                  u"auth_backend"_s,
                                  u"auth_params"_s,
                                  u"auth_max_ttl"_s,
                                  u"auth_retry_max"_s,
                                  u"auth_retry_initial"_s,
                                  u"login_timeout"_s,
                                  u"query_timeout"_s};
    return keys;
}

Status checkVaultConfig(const DocNode &config, const QString &path)
{
    PANDO_PIPE_TRY(keys, checkKeys(config, path, vaultKeys()));
    const DocNode *url = config.value(u"url"_s);
    if (isNull(url))
        return invalid(join(path, u"url"_s), u"a vault var source needs the url of the Vault server"_s,
                       u"url: https://vault.example.com:8200"_s);
    if (!isPlaceholder(*url)) {
        PANDO_PIPE_TRY(text, string(*url, join(path, u"url"_s)));
        if (!text->startsWith(u"https://") && !text->startsWith(u"http://"))
            return invalid(join(path, u"url"_s), u"\"%1\" is not an http:// or https:// URL"_s.arg(*text));
    }
    if (const DocNode *name = config.value(u"server_name"_s); !isNull(name))
        return invalid(join(path, u"server_name"_s),
                       u"Pando cannot present a TLS server name other than the url's host yet"_s,
                       u"put the name the certificate is for in url"_s);
    for (const QString &key :
         {u"auth_max_ttl"_s, u"auth_retry_max"_s, u"auth_retry_initial"_s, u"login_timeout"_s, u"query_timeout"_s}) {
        if (const DocNode *value = config.value(key); !isNull(value) && !isPlaceholder(*value)) {
            PANDO_PIPE_TRY(ms, duration(*value, join(path, key)));
        }
    }
    if (const DocNode *params = config.value(u"auth_params"_s); !isNull(params) && params->kind != DocNode::Kind::Map)
        return wrongType(*params, join(path, u"auth_params"_s), u"a mapping of the login's parameters"_s);
    if (const DocNode *backend = config.value(u"auth_backend"_s); !isNull(backend) && !isPlaceholder(*backend)) {
        PANDO_PIPE_TRY(text, string(*backend, join(path, u"auth_backend"_s)));
        if (text->isEmpty() || text->contains(u"..") || text->startsWith(u'/'))
            return invalid(join(path, u"auth_backend"_s), u"\"%1\" is not an auth method's mount path"_s.arg(*text));
    } else if (isNull(config.value(u"client_token"_s))) {
        return invalid(path, u"a vault var source needs client_token, or auth_backend with auth_params to log in"_s);
    }
    if (const DocNode *templates = config.value(u"lookup_templates"_s); !isNull(templates)) {
        PANDO_PIPE_TRY(list, stringList(*templates, join(path, u"lookup_templates"_s)));
        for (qsizetype i = 0; i < list->size(); ++i) {
            if (!list->at(i).contains(u"{{.Secret}}"))
                return invalid(at(join(path, u"lookup_templates"_s), i),
                               u"\"%1\" does not use {{.Secret}}"_s.arg(list->at(i)),
                               u"a template places the var's path: /{{.Team}}/{{.Pipeline}}/{{.Secret}}"_s);
        }
    }
    return {};
}

Result<VarSourceConfig> parseVarSource(const DocNode &node, const QString &path)
{
    PANDO_PIPE_TRY(keys, checkKeys(node, path, {u"name"_s, u"type"_s, u"config"_s}));
    VarSourceConfig source;
    source.path = path;
    PANDO_PIPE_TRY(name, requiredString(node, u"name"_s, path));
    PANDO_PIPE_TRY(okName, checkName(*name, join(path, u"name"_s), u"var source"_s));
    source.name = *name;
    PANDO_PIPE_TRY(type, requiredString(node, u"type"_s, path));
    source.type = *type;
    const QString configPath = join(path, u"config"_s);
    const DocNode *config = node.value(u"config"_s);
    if (isNull(config))
        return invalid(configPath, u"var source \"%1\" needs a config"_s.arg(source.name));
    if (config->kind != DocNode::Kind::Map)
        return wrongType(*config, configPath, u"a mapping"_s);
    source.config = *config;
    if (source.type == u"dummy") {
        PANDO_PIPE_TRY(keys2, checkKeys(*config, configPath, {u"vars"_s}));
        const DocNode *vars = config->value(u"vars"_s);
        if (isNull(vars) || vars->kind != DocNode::Kind::Map)
            return invalid(join(configPath, u"vars"_s),
                           u"a dummy var source needs vars: a mapping of names to values"_s);
        return source;
    }
    if (source.type == u"vault") {
        PANDO_PIPE_TRY(ok, checkVaultConfig(*config, configPath));
        return source;
    }
    return invalid(join(path, u"type"_s),
                   u"var source type \"%1\" is not supported here; Pando reads dummy and vault"_s.arg(source.type),
                   u"keep such credentials in Pando's secrets (pando secrets set) and write ((name))"_s);
}

// The declared sources in an order where each comes after the ones its config reads from.
Result<QList<qsizetype>> dependencyOrder(const QList<VarSourceConfig> &declared)
{
    QStringList names;
    for (const VarSourceConfig &source : declared)
        names << source.name;
    QList<QStringList> needs;
    for (const VarSourceConfig &source : declared) {
        QStringList uses;
        for (const QString &used : placeholderSources(source.config))
            if (names.contains(used))
                uses << used;
        needs << uses;
    }
    QList<qsizetype> order;
    QSet<QString> placed;
    while (order.size() < declared.size()) {
        const qsizetype before = order.size();
        for (qsizetype i = 0; i < declared.size(); ++i) {
            if (placed.contains(names[i]))
                continue;
            if (std::all_of(needs[i].cbegin(), needs[i].cend(), [&](const QString &n) { return placed.contains(n); })) {
                order << i;
                placed.insert(names[i]);
            }
        }
        if (order.size() == before) {
            QStringList waiting;
            qsizetype first = -1;
            for (qsizetype i = 0; i < declared.size(); ++i) {
                if (!placed.contains(names[i])) {
                    waiting << names[i];
                    first = first < 0 ? i : first;
                }
            }
            return invalid(join(declared[first].path, u"config"_s),
                           u"var sources %1 read their configs from each other in a cycle"_s.arg(waiting.join(u", "_s)),
                           u"give one of them its values directly, or from Pando's secrets"_s);
        }
    }
    return order;
}

} // namespace

void mergeReport(InterpolationReport &into, const InterpolationReport &from)
{
    const auto unite = [](QStringList &a, const QStringList &b) {
        a << b;
        a.sort();
        a.removeDuplicates();
    };
    unite(into.varsUsed, from.varsUsed);
    unite(into.secretsUsed, from.secretsUsed);
    unite(into.undefined, from.undefined);
    unite(into.secretValues, from.secretValues);
}

Result<QList<VarSourceConfig>> takeVarSources(DocNode &tree)
{
    QList<VarSourceConfig> declared;
    auto found = std::find_if(tree.entries.begin(), tree.entries.end(),
                              [](const auto &entry) { return entry.first == u"var_sources"; });
    if (found == tree.entries.end())
        return declared;
    const DocNode list = std::move(found->second);
    tree.entries.erase(found);
    if (list.kind == DocNode::Kind::Null)
        return declared;
    if (list.kind != DocNode::Kind::Sequence)
        return wrongType(list, u"var_sources"_s, u"a list of var sources"_s);
    for (size_t i = 0; i < list.items.size(); ++i) {
        const QString path = at(u"var_sources"_s, qsizetype(i));
        if (list.items[i].kind != DocNode::Kind::Map)
            return wrongType(list.items[i], path, u"a mapping with name, type and config"_s);
        PANDO_PIPE_TRY(source, parseVarSource(list.items[i], path));
        for (const VarSourceConfig &other : declared)
            if (other.name == source->name)
                return invalid(join(path, u"name"_s),
                               u"var source \"%1\" is already declared at %2"_s.arg(source->name, other.path));
        declared << *source;
    }
    return declared;
}

Result<QList<VarSourceConfig>> resolveVarSources(QList<VarSourceConfig> declared,
                                                 const InterpolationSources &interpolation, InterpolationReport &report)
{
    PANDO_PIPE_TRY(order, dependencyOrder(declared));
    for (const qsizetype i : std::as_const(*order)) {
        InterpolationSources sources = interpolation;
        sources.varSources = declared;
        DocNode config = declared[i].config;
        PANDO_PIPE_TRY(used, interpolate(config, sources, join(declared[i].path, u"config"_s)));
        mergeReport(report, *used);
        declared[i].config = std::move(config);
    }
    return declared;
}

} // namespace pando::core::pipelines::internal
