#include "core/pipelines/template/interpolate.h"

#include <QMap>
#include <QRegularExpression>
#include <QSet>

using namespace Qt::StringLiterals;

namespace pando::core::pipelines {

using detail::DocNode;

namespace {

// "((" name "))" with optional blanks inside; the name itself is checked separately so that a
// malformed one is an error instead of text left alone.
const QRegularExpression &placeholderPattern()
{
    static const QRegularExpression pattern(uR"(\(\(([^()]*)\)\))"_s);
    return pattern;
}

struct Reference {
    QString source;     // "", "vars", "secrets", "." (a run's local var, from load_var) or a var source
    QString name;       // the vars key, secret name or var source path
    QStringList fields; // into a mapping
    QString written;    // as written inside the parentheses, trimmed
    const VarSourceConfig *varSource = nullptr; // the declared var source `source` names
};

// Where ch first occurs outside double quotes in text: -1 when it does not, -2 when a quote is
// left open.
qsizetype indexOutsideQuotes(QStringView text, QChar ch)
{
    bool quoted = false;
    qsizetype found = -1;
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text[i] == u'"')
            quoted = !quoted;
        else if (text[i] == ch && !quoted && found < 0)
            found = i;
    }
    return quoted ? -2 : found;
}

// text split at each '.' outside double quotes, the quotes taken off; nullopt when a segment is
// empty or not a name.
std::optional<QStringList> splitSegments(QStringView text)
{
    static const QRegularExpression pathName(uR"(^[a-zA-Z0-9_/-]+\z)"_s);
    static const QRegularExpression fieldName(uR"(^[a-zA-Z0-9_-]+\z)"_s);
    QStringList segments;
    while (true) {
        const qsizetype dot = indexOutsideQuotes(text, u'.');
        const QStringView segment = dot < 0 ? text : text.left(dot);
        if (segment.size() >= 2 && segment.startsWith(u'"') && segment.endsWith(u'"')) {
            if (segment.size() == 2 || segment.mid(1, segment.size() - 2).contains(u'"'))
                return std::nullopt;
            segments << segment.mid(1, segment.size() - 2).toString();
        } else if ((segments.isEmpty() ? pathName : fieldName).match(segment).hasMatch()) {
            segments << segment.toString();
        } else {
            return std::nullopt;
        }
        if (dot < 0)
            return segments;
        text = text.mid(dot + 1);
    }
}

Result<Reference> parseReference(const QString &inside, const QList<VarSourceConfig> &declared, const QString &where)
{
    static const QRegularExpression sourceName(uR"(^(?:\.|[a-zA-Z0-9_][a-zA-Z0-9_.-]*)\z)"_s);
    Reference ref;
    ref.written = inside.trimmed();
    const auto invalidReference = [&ref, &where](const QString &why) {
        return fail(ErrorCode::Invalid, u"invalid var reference \"((%1))\": %2"_s.arg(ref.written, why), where,
                    u"write ((name)), ((name.field)), ((source:path.field)) or ((\"dotted.name\".field))"_s);
    };
    const qsizetype colon = indexOutsideQuotes(ref.written, u':');
    if (colon == -2)
        return invalidReference(u"a double quote is not closed"_s);
    if (colon >= 0) {
        ref.source = ref.written.left(colon);
        if (!sourceName.match(ref.source).hasMatch())
            return invalidReference(u"\"%1\" is not a var source name"_s.arg(ref.source));
    }
    const auto segments = splitSegments(QStringView(ref.written).mid(colon + 1));
    if (!segments)
        return invalidReference(u"each part between dots must be a name, or text in double quotes"_s);
    ref.name = segments->first();
    ref.fields = segments->mid(1);
    if (ref.source.isEmpty() || ref.source == u".")
        return ref;
    for (const VarSourceConfig &source : declared) {
        if (source.name == ref.source) {
            ref.varSource = &source;
            return ref;
        }
    }
    if (ref.source != u"vars" && ref.source != u"secrets" && ref.source != u"secret")
        return fail(ErrorCode::Invalid, u"unknown var source \"%1\" in \"((%2))\""_s.arg(ref.source, ref.written),
                    where, u"declare it under var_sources, or use vars: or secrets:"_s);
    return ref;
}

class Interpolator {
public:
    explicit Interpolator(const InterpolationSources &sources) : m_sources(sources) {}

    Status walk(DocNode &node, const QString &path, int depth = 0)
    {
        switch (node.kind) {
        case DocNode::Kind::Null:
            return {};
        case DocNode::Kind::Scalar:
            return scalar(node, path, depth);
        case DocNode::Kind::Sequence:
            for (size_t i = 0; i < node.items.size(); ++i) {
                if (auto ok = walk(node.items[i], path + u"[%1]"_s.arg(i), depth + 1); !ok)
                    return ok;
            }
            return {};
        case DocNode::Kind::Map:
            // Keys are never interpolated: a key decides what a value means.
            for (auto &[key, value] : node.entries) {
                if (auto ok = walk(value, path.isEmpty() ? key : path + u'.' + key, depth + 1); !ok)
                    return ok;
            }
            return {};
        }
        return {};
    }

    InterpolationReport report()
    {
        InterpolationReport out;
        out.varsUsed = sorted(m_vars);
        out.secretsUsed = sorted(m_secrets);
        out.undefined = sorted(m_undefined);
        out.secretValues = QStringList(m_secretValues.begin(), m_secretValues.end());
        return out;
    }

private:
    static QStringList sorted(const QSet<QString> &set)
    {
        QStringList list(set.begin(), set.end());
        list.sort();
        return list;
    }

    struct Size {
        qsizetype bytes = 0;
        int nodes = 0;
        int depth = 0; // 0 for a scalar
    };
    static Size sizeOf(const DocNode &node)
    {
        Size size{node.text.size(), 1, 0};
        auto add = [&size](const DocNode &child) {
            const Size c = sizeOf(child);
            size.bytes += c.bytes;
            size.nodes += c.nodes;
            size.depth = qMax(size.depth, c.depth + 1);
        };
        for (const DocNode &item : node.items)
            add(item);
        for (const auto &[key, value] : node.entries) {
            size.bytes += key.size();
            add(value);
        }
        return size;
    }

    // Counts what one use of ref adds; an error once the file's expansions pass the limits.
    Status account(const Reference &ref, const DocNode &value, const QString &path, int depth)
    {
        const Size size = sizeOf(value);
        m_addedBytes += size.bytes;
        m_addedNodes += size.nodes;
        const ExpansionLimits &limits = m_sources.limits;
        if (depth + size.depth > limits.maxDepth)
            return fail(ErrorCode::TooLarge,
                        u"var \"%1\" nests %2 levels deep here, more than the %3 allowed"_s.arg(ref.written)
                            .arg(depth + size.depth)
                            .arg(limits.maxDepth),
                        path);
        if (m_addedBytes > limits.maxBytes || m_addedNodes > limits.maxNodes)
            return fail(ErrorCode::TooLarge,
                        u"expanding \"((%1))\" here takes the file past its expansion limit (%2 MiB and %3 values "
                        "added by vars, counting every use)"_s.arg(ref.written)
                            .arg(limits.maxBytes / (qsizetype{1024} * 1024))
                            .arg(limits.maxNodes),
                        path, u"use a large var in fewer places, or make it smaller"_s);
        return {};
    }

    Status scalar(DocNode &node, const QString &path, int depth)
    {
        if (!node.text.contains(u"(("))
            return {};
        const QString &text = node.text;
        auto it = placeholderPattern().globalMatch(text);
        if (!it.hasNext())
            return {};
        const auto first = placeholderPattern().match(text);
        // A value that is exactly one placeholder takes the var's value whole, type included.
        if (first.capturedStart() == 0 && first.capturedLength() == text.size()) {
            auto ref = parseReference(first.captured(1), m_sources.varSources, path);
            if (!ref)
                return std::unexpected(ref.error());
            auto value = resolve(*ref, path);
            if (!value)
                return std::unexpected(value.error());
            std::optional<DocNode> &resolved = *value;
            if (!resolved)
                return {}; // left as written (allowUndefined)
            if (auto ok = account(*ref, *resolved, path, depth); !ok)
                return ok;
            const int line = node.line;
            const int column = node.column;
            node = std::move(*resolved);
            node.line = line;
            node.column = column;
            return {};
        }
        QString out;
        qsizetype last = 0;
        while (it.hasNext()) {
            const auto m = it.next();
            out += QStringView(text).mid(last, m.capturedStart() - last);
            last = m.capturedEnd();
            auto ref = parseReference(m.captured(1), m_sources.varSources, path);
            if (!ref)
                return std::unexpected(ref.error());
            auto value = resolve(*ref, path);
            if (!value)
                return std::unexpected(value.error());
            const std::optional<DocNode> &resolved = *value;
            if (!resolved) {
                out += m.captured(0);
                continue;
            }
            const DocNode &v = *resolved;
            if (auto ok = account(*ref, v, path, depth); !ok)
                return ok;
            if (v.kind == DocNode::Kind::Sequence || v.kind == DocNode::Kind::Map) {
                return fail(ErrorCode::Invalid,
                            u"var \"%1\" is a %2; inside longer text only a single value can be used"_s.arg(
                                ref->written, v.kind == DocNode::Kind::Map ? u"mapping"_s : u"list"_s),
                            path);
            }
            out += v.text;
        }
        out += QStringView(text).mid(last);
        node.text = out;
        node.quoted = true; // text built from pieces is a string, whatever it looks like
        return {};
    }

    // nullopt: undefined and allowed to stay so.
    Result<std::optional<DocNode>> resolve(const Reference &ref, const QString &path)
    {
        if (ref.source == u".") {
            // A run's local var: its value exists once a load_var step ran, so before that the
            // placeholder stays as written.
            if (!m_sources.locals)
                return std::optional<DocNode>();
            const DocNode *value = m_sources.locals->value(ref.name);
            if (!value && m_sources.otherLocalsStay)
                return std::optional<DocNode>();
            if (!value)
                return fail(ErrorCode::Invalid,
                            u"undefined local var \"%1\": no load_var step of this run set it before"_s.arg(ref.name),
                            path, u"load it first: - load_var: %1"_s.arg(ref.name));
            auto field = descend(*value, ref, path);
            if (!field)
                return std::unexpected(field.error());
            return std::optional<DocNode>(*field);
        }
        if (ref.varSource)
            return fromVarSource(ref, path);
        const bool tryVars = ref.source.isEmpty() || ref.source == u"vars";
        const bool trySecrets = ref.source.isEmpty() || ref.source.startsWith(u"secret");
        if (tryVars && m_sources.vars.kind == DocNode::Kind::Map) {
            if (const DocNode *value = m_sources.vars.value(ref.name)) {
                auto field = descend(*value, ref, path);
                if (!field)
                    return std::unexpected(field.error());
                m_vars.insert(ref.name);
                return std::optional<DocNode>(*field);
            }
        }
        if (trySecrets && m_sources.secrets) {
            auto secret = lookupSecret(ref.name);
            if (secret) {
                m_secrets.insert(ref.name);
                if (m_sources.secretMode == InterpolationSources::SecretMode::Placeholder) {
                    DocNode kept;
                    kept.kind = DocNode::Kind::Scalar;
                    kept.text = u"(("_s + ref.written + u"))"_s;
                    kept.quoted = true;
                    if (!ref.fields.isEmpty()) {
                        auto tree = detail::readYaml(secret->toUtf8());
                        if (!tree || !descend(*tree, ref, path))
                            return std::unexpected(missingField(ref, path));
                    }
                    return std::optional<DocNode>(kept);
                }
                noteSecretValue(*secret);
                if (ref.fields.isEmpty()) {
                    DocNode value;
                    value.kind = DocNode::Kind::Scalar;
                    value.text = *secret;
                    value.quoted = true;
                    return std::optional<DocNode>(value);
                }
                // A secret holding a mapping is stored as JSON (or YAML) text.
                auto tree = detail::readYaml(secret->toUtf8());
                if (!tree)
                    return std::unexpected(missingField(ref, path));
                auto field = descend(*tree, ref, path);
                if (!field)
                    return std::unexpected(field.error());
                if (field->kind == DocNode::Kind::Scalar)
                    noteSecretValue(field->text);
                return std::optional<DocNode>(*field);
            }
        }
        if (trySecrets && m_sources.secretRefusal) {
            if (std::optional<Error> refused = m_sources.secretRefusal(ref.name)) {
                refused->where = path;
                return std::unexpected(*refused);
            }
        }
        if (m_sources.allowUndefined) {
            m_undefined.insert(ref.written);
            return std::optional<DocNode>();
        }
        QString from = tryVars && trySecrets ? u"the vars file or the secrets"_s
                       : tryVars             ? u"the vars file"_s
                                             : u"the secrets"_s;
        return fail(ErrorCode::Invalid, u"undefined var \"%1\": not found in %2"_s.arg(ref.written, from), path,
                    u"pass a vars file with -l, or store a secret by that name"_s);
    }

    // A var source's var, read when the run reads the pipeline; until then it stays as written.
    Result<std::optional<DocNode>> fromVarSource(const Reference &ref, const QString &path)
    {
        if (!m_sources.readVarSource)
            return std::optional<DocNode>();
        const VarSourceConfig &source = *ref.varSource;
        const QString key = source.name + u'\n' + ref.name;
        auto cached = m_varSourceCache.constFind(key);
        if (cached == m_varSourceCache.cend()) {
            auto read =
                source.type == u"dummy" ? readDummy(source, ref.name) : m_sources.readVarSource(source, ref.name);
            if (!read) {
                Error error = read.error();
                error.message =
                    u"reading \"((%1))\" from var source \"%2\": %3"_s.arg(ref.written, source.name, error.message);
                error.where = path;
                return std::unexpected(error);
            }
            cached = m_varSourceCache.insert(key, *read);
        }
        const std::optional<DocNode> &value = *cached;
        if (!value)
            return fail(ErrorCode::Invalid,
                        u"var \"%1\" is not in var source \"%2\" (%3)"_s.arg(ref.name, source.name, source.type), path,
                        source.type == u"dummy"
                            ? u"add it to %1.config.vars"_s.arg(source.path)
                            : u"store it in %1 under one of the paths the source looks in"_s.arg(source.type));
        auto field = descend(*value, ref, path);
        if (!field)
            return std::unexpected(field.error());
        // A dummy source's values are written in the pipeline for anyone to read; anything else
        // came from a credential manager and is masked wherever the run shows it.
        if (source.type != u"dummy")
            noteSecretLeaves(*field);
        return std::optional<DocNode>(*field);
    }

    static Result<std::optional<DocNode>> readDummy(const VarSourceConfig &source, const QString &name)
    {
        const DocNode *vars = source.config.value(u"vars"_s);
        const DocNode *value = vars && vars->kind == DocNode::Kind::Map ? vars->value(name) : nullptr;
        return value ? std::optional<DocNode>(*value) : std::nullopt;
    }

    void noteSecretLeaves(const DocNode &node)
    {
        if (node.kind == DocNode::Kind::Scalar)
            noteSecretValue(node.text);
        for (const DocNode &item : node.items)
            noteSecretLeaves(item);
        for (const auto &entry : node.entries)
            noteSecretLeaves(entry.second);
    }

    static Error missingField(const Reference &ref, const QString &path)
    {
        return Error{
            ErrorCode::Invalid, u"var \"%1\" has no field \"%2\""_s.arg(ref.name, ref.fields.join(u'.')), path, {}};
    }

    static Result<DocNode> descend(const DocNode &root, const Reference &ref, const QString &path)
    {
        const DocNode *node = &root;
        for (const QString &field : ref.fields) {
            const DocNode *next = node->kind == DocNode::Kind::Map ? node->value(field) : nullptr;
            if (!next)
                return std::unexpected(missingField(ref, path));
            node = next;
        }
        return *node;
    }

    void noteSecretValue(const QString &value)
    {
        m_secretValues.insert(value);
        if (m_sources.substituted)
            m_sources.substituted(value);
    }

    std::optional<QString> lookupSecret(const QString &name)
    {
        if (auto it = m_secretCache.constFind(name); it != m_secretCache.cend())
            return *it;
        std::optional<QString> value = m_sources.secrets(name);
        m_secretCache.insert(name, value);
        return value;
    }

    const InterpolationSources &m_sources;
    QMap<QString, std::optional<QString>> m_secretCache;
    QMap<QString, std::optional<DocNode>> m_varSourceCache; // "source\npath" → what it read
    QSet<QString> m_vars;
    QSet<QString> m_secrets;
    QSet<QString> m_undefined;
    QSet<QString> m_secretValues;
    qsizetype m_addedBytes = 0;
    int m_addedNodes = 0;
};

} // namespace

Result<InterpolationReport> interpolate(DocNode &tree, const InterpolationSources &sources, const QString &rootPath)
{
    Interpolator interpolator(sources);
    if (auto ok = interpolator.walk(tree, rootPath); !ok)
        return std::unexpected(ok.error());
    return interpolator.report();
}

Result<DocNode> readVarsFile(const QByteArray &yaml)
{
    detail::ReaderLimits limits;
    limits.document = u"vars file"_s;
    limits.aliases = true;
    auto tree = detail::readYaml(yaml, limits);
    if (!tree)
        return tree;
    if (tree->kind != DocNode::Kind::Map)
        return fail(ErrorCode::Invalid, u"a vars file must be a mapping of names to values"_s, tree->location());
    return tree;
}

QStringList placeholderSources(const DocNode &tree)
{
    QStringList sources;
    if (tree.kind == DocNode::Kind::Scalar) {
        for (const QString &inside : placeholderNames(tree.text)) {
            const qsizetype colon = indexOutsideQuotes(inside, u':');
            if (colon > 0 && inside.left(colon) != u".")
                sources << inside.left(colon);
        }
    }
    for (const DocNode &item : tree.items)
        sources << placeholderSources(item);
    for (const auto &entry : tree.entries)
        sources << placeholderSources(entry.second);
    sources.sort();
    sources.removeDuplicates();
    return sources;
}

QStringList placeholderNames(const QString &text)
{
    QStringList names;
    for (auto it = placeholderPattern().globalMatch(text); it.hasNext();)
        names << it.next().captured(1).trimmed();
    return names;
}

} // namespace pando::core::pipelines
