#include "core/spec/appspec.h"

#include "core/spec/specautodeploy.h"
#include "core/spec/specdisk.h"
#include "core/spec/specpreview.h"
#include "core/spec/specroute.h"
#include "core/spec/specrules.h"
#include "core/spec/specsecrets.h"
#include "core/spec/specservices.h"
#include "core/spec/specvolumes.h"
#include "core/spec/yamlreader.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <cmath>

using namespace Qt::StringLiterals;

namespace pando::core {

using detail::DocNode;
using detail::quoted;

namespace {

constexpr qint64 Ki = 1024;
constexpr qint64 Mi = Ki * 1024;
constexpr qint64 Gi = Mi * 1024;
constexpr qint64 Ti = Gi * 1024;

QString join(const QString &path, const QString &key)
{
    return path.isEmpty() ? key : path + u'.' + key;
}

// What a value was, for "expected X, got Y".
QString describe(const DocNode &node)
{
    switch (node.kind) {
    case DocNode::Kind::Null:
        return u"nothing"_s;
    case DocNode::Kind::Scalar:
        return quoted(node.text);
    case DocNode::Kind::Sequence:
        return u"a list"_s;
    case DocNode::Kind::Map:
        return u"a mapping"_s;
    }
    return {};
}

std::unexpected<Error> wrongType(const DocNode &node, const QString &path, const QString &expected)
{
    return fail(ErrorCode::Invalid, u"expected %1, got %2"_s.arg(expected, describe(node)), path);
}

// A mapping whose keys must all be known; the first unknown one is named with its full path.
Status checkFields(const DocNode &node, const QString &path, const QStringList &known)
{
    for (const auto &[key, value] : node.entries) {
        if (known.contains(key))
            continue;
        QString message = u"unknown field"_s;
        const QString best = detail::closestWord(key, known);
        if (!best.isEmpty())
            message += u"; did you mean \"%1\"?"_s.arg(best);
        return fail(ErrorCode::Invalid, message, join(path, key), u"known fields here: %1"_s.arg(known.join(u", "_s)));
    }
    return {};
}

// A section may be left out or empty (null); otherwise it must be a mapping.
Result<const DocNode *> section(const DocNode &parent, const QString &key, const QString &path)
{
    const DocNode *node = parent.value(key);
    if (!node || node->kind == DocNode::Kind::Null)
        return nullptr;
    if (node->kind != DocNode::Kind::Map)
        return wrongType(*node, join(path, key), u"a mapping"_s);
    return node;
}

Result<QString> text(const DocNode &node, const QString &path)
{
    if (node.kind == DocNode::Kind::Null)
        return QString();
    if (node.kind != DocNode::Kind::Scalar)
        return wrongType(node, path, u"a string"_s);
    return node.text;
}

Result<int> port(const DocNode &node, const QString &path)
{
    static const QRegularExpression digits(uR"(^[0-9]{1,5}\z)"_s);
    const QString value = node.text.trimmed();
    if (node.kind == DocNode::Kind::Scalar && digits.match(value).hasMatch()) {
        const int number = value.toInt();
        if (number >= 1 && number <= 65535)
            return number;
    }
    return wrongType(node, path, u"an integer 1-65535"_s);
}

Result<qint64> duration(const DocNode &node, const QString &path, qint64 minMs, qint64 maxMs, const QString &range)
{
    const QString expected = u"a duration like \"30s\", \"2m\" or an integer of seconds, %1"_s.arg(range);
    if (node.kind != DocNode::Kind::Scalar)
        return wrongType(node, path, expected);
    const auto ms = detail::parseDurationMs(node.text.trimmed());
    if (!ms || *ms < minMs || *ms > maxMs)
        return wrongType(node, path, expected);
    return *ms;
}

Result<QMap<QString, QString>> stringMap(const DocNode *node, const QString &path,
                                         Status (*checkKey)(const QString &, const QString &, const QString &))
{
    QMap<QString, QString> out;
    if (!node)
        return out;
    for (const auto &[key, value] : node->entries) {
        const QString at = join(path, key);
        // Numbers and booleans are written as text, so `PORT: 8080` and `DEBUG: true` just work.
        auto valueText = text(value, at);
        if (!valueText)
            return std::unexpected(valueText.error());
        if (auto ok = checkKey(key, *valueText, at); !ok)
            return std::unexpected(ok.error());
        out.insert(key, *valueText);
    }
    return out;
}

Status variableKey(const QString &key, const QString &, const QString &where)
{
    return detail::checkVariableName(key, where);
}

Status labelKey(const QString &key, const QString &value, const QString &where)
{
    return detail::checkLabel(key, value, where);
}

// `var` names the variable the macro declares, so it cannot be parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define PANDO_SPEC_TRY(var, expr)                                                                                      \
    auto var = (expr);                                                                                                 \
    if (!var)                                                                                                          \
        return std::unexpected(var.error());
// NOLINTEND(bugprone-macro-parentheses)

bool present(const DocNode &map, const QString &key)
{
    const DocNode *node = map.value(key);
    return node && node->kind != DocNode::Kind::Null;
}

Status readConnection(const DocNode &source, AppSpec &spec)
{
    if (const DocNode *connection = source.value(u"connection"_s);
        connection && connection->kind != DocNode::Kind::Null) {
        PANDO_SPEC_TRY(value, text(*connection, u"source.connection"_s));
        PANDO_SPEC_TRY(ok, detail::checkConnectionName(*value));
        spec.source.connection = *value;
    }
    return {};
}

// source.image: an image deployed as it is, pulled through a registry connection when its
// registry wants a login. Nothing that reads or builds a repository goes with it.
Status readImageSource(const DocNode &root, const DocNode &source, AppSpec &spec)
{
    for (const QString &field : {u"repo"_s, u"ref"_s, u"autodeploy"_s})
        if (present(source, field))
            return detail::invalidAt(*source.value(field),
                                     field == u"repo"_s ? u"a source is a git repository or an image, not both"_s
                                                        : u"an image source has no %1"_s.arg(field),
                                     u"source."_s + field,
                                     field == u"ref"_s ? u"put the tag in source.image (nginx:1.27)"_s
                                                       : u"remove source.%1, or deploy from a repository"_s.arg(field));
    for (const QString &section : {u"build"_s, u"preview"_s})
        if (present(root, section))
            return detail::invalidAt(*root.value(section),
                                     section == u"build"_s
                                         ? u"an image source is deployed as it is, not built"_s
                                         : u"previews are built from pull requests; an image source has none"_s,
                                     section, u"remove %1, or deploy from a repository"_s.arg(section));
    PANDO_SPEC_TRY(image, text(*source.value(u"image"_s), u"source.image"_s));
    PANDO_SPEC_TRY(imageOk, detail::checkImageReference(*image, u"source.image"_s));
    spec.source.image = *image;
    if (present(source, u"pull"_s)) {
        PANDO_SPEC_TRY(pull, text(*source.value(u"pull"_s), u"source.pull"_s));
        if (*pull == u"always")
            spec.source.pull = AppSpec::Source::Pull::Always;
        else if (*pull == u"missing")
            spec.source.pull = AppSpec::Source::Pull::Missing;
        else if (*pull != u"auto")
            return detail::invalidAt(*source.value(u"pull"_s),
                                     u"expected auto, always or missing, got %1"_s.arg(quoted(*pull)),
                                     u"source.pull"_s);
    }
    return readConnection(source, spec);
}

Status readSource(const DocNode &root, AppSpec &spec)
{
    PANDO_SPEC_TRY(node, section(root, u"source"_s, {}));
    if (*node) {
        PANDO_SPEC_TRY(known,
                       checkFields(**node, u"source"_s,
                                   {u"repo"_s, u"ref"_s, u"connection"_s, u"autodeploy"_s, u"image"_s, u"pull"_s}));
        if (present(**node, u"image"_s))
            return readImageSource(root, **node, spec);
        if (present(**node, u"pull"_s))
            return detail::invalidAt(*node.value()->value(u"pull"_s), u"only an image source is pulled"_s,
                                     u"source.pull"_s);
    }
    if (!*node || !present(**node, u"repo"_s))
        return fail(ErrorCode::Invalid,
                    u"missing required field (the git repository to deploy from, or source.image to deploy an image)"_s,
                    u"source.repo"_s);
    const DocNode &source = **node;
    PANDO_SPEC_TRY(repo, text(*source.value(u"repo"_s), u"source.repo"_s));
    PANDO_SPEC_TRY(repoOk, detail::checkRepo(*repo));
    spec.source.repo = *repo;
    if (const DocNode *ref = source.value(u"ref"_s); ref && ref->kind != DocNode::Kind::Null) {
        PANDO_SPEC_TRY(value, text(*ref, u"source.ref"_s));
        PANDO_SPEC_TRY(ok, detail::checkRef(*value));
        spec.source.ref = *value;
    }
    PANDO_SPEC_TRY(connected, readConnection(source, spec));
    return detail::readAutoDeploy(source, spec);
}

Status readBuild(const DocNode &root, AppSpec &spec)
{
    PANDO_SPEC_TRY(node, section(root, u"build"_s, {}));
    if (!*node)
        return {};
    const DocNode &build = **node;
    PANDO_SPEC_TRY(known, checkFields(build, u"build"_s, {u"dockerfile"_s, u"context"_s, u"args"_s, u"base"_s}));
    if (const DocNode *context = build.value(u"context"_s); context && context->kind != DocNode::Kind::Null) {
        PANDO_SPEC_TRY(value, text(*context, u"build.context"_s));
        PANDO_SPEC_TRY(ok, detail::checkRelativePath(*value, u"build.context"_s, u"repository"_s, false));
        spec.build.context = *value;
    }
    if (const DocNode *dockerfile = build.value(u"dockerfile"_s);
        dockerfile && dockerfile->kind != DocNode::Kind::Null) {
        PANDO_SPEC_TRY(value, text(*dockerfile, u"build.dockerfile"_s));
        PANDO_SPEC_TRY(ok, detail::checkRelativePath(*value, u"build.dockerfile"_s, u"build context"_s, true));
        spec.build.dockerfile = *value;
    }
    PANDO_SPEC_TRY(argsNode, section(build, u"args"_s, u"build"_s));
    PANDO_SPEC_TRY(args, stringMap(*argsNode, u"build.args"_s, variableKey));
    spec.build.args = *args;
    if (const DocNode *base = build.value(u"base"_s); base && base->kind != DocNode::Kind::Null) {
        PANDO_SPEC_TRY(value, text(*base, u"build.base"_s));
        spec.build.base = value->trimmed();
    }
    return {};
}

Status readResources(const DocNode &run, AppSpec &spec)
{
    PANDO_SPEC_TRY(node, section(run, u"resources"_s, u"run"_s));
    if (!*node)
        return {};
    const DocNode &resources = **node;
    PANDO_SPEC_TRY(known,
                   checkFields(resources, u"run.resources"_s,
                               {u"memory"_s, u"memoryBytes"_s, u"cpus"_s, u"disk"_s, u"diskBytes"_s, u"diskPolicy"_s}));
    PANDO_SPEC_TRY(disk, detail::readDisk(resources, spec));
    const QString memoryPath = u"run.resources.memory"_s;
    if (const DocNode *memory = resources.value(u"memory"_s); memory && memory->kind != DocNode::Kind::Null) {
        const auto bytes = memory->kind == DocNode::Kind::Scalar ? parseMemory(memory->text) : std::nullopt;
        if (!bytes)
            return wrongType(*memory, memoryPath, u"an amount like \"256Mi\", \"1Gi\", \"512M\" or bytes"_s);
        PANDO_SPEC_TRY(ok, detail::checkMemory(*bytes, memoryPath));
        spec.run.memoryBytes = *bytes;
    }
    // memoryBytes is what toJson() writes next to memory, so that its output reads back.
    if (const DocNode *raw = resources.value(u"memoryBytes"_s); raw && raw->kind != DocNode::Kind::Null) {
        const QString path = u"run.resources.memoryBytes"_s;
        static const QRegularExpression digits(uR"(^[0-9]{1,16}\z)"_s);
        if (raw->kind != DocNode::Kind::Scalar || !digits.match(raw->text.trimmed()).hasMatch())
            return wrongType(*raw, path, u"an integer number of bytes"_s);
        const qint64 bytes = raw->text.trimmed().toLongLong();
        if (spec.run.memoryBytes != 0 && spec.run.memoryBytes != bytes) {
            return fail(ErrorCode::Invalid,
                        u"%1 does not match memory (%2 = %3 bytes)"_s.arg(bytes).arg(
                            formatMemory(spec.run.memoryBytes), QString::number(spec.run.memoryBytes)),
                        path);
        }
        PANDO_SPEC_TRY(ok, detail::checkMemory(bytes, path));
        spec.run.memoryBytes = bytes;
    }
    if (const DocNode *cpus = resources.value(u"cpus"_s); cpus && cpus->kind != DocNode::Kind::Null) {
        static const QRegularExpression number(uR"(^[0-9]{1,6}(\.[0-9]{1,9})?\z)"_s);
        const QString value = cpus->text.trimmed();
        const double n = value.toDouble();
        if (cpus->kind != DocNode::Kind::Scalar || !number.match(value).hasMatch() || n <= 0 || n > detail::MaxCpus)
            return wrongType(*cpus, u"run.resources.cpus"_s, u"a number of CPUs greater than 0 and at most 1024"_s);
        spec.run.cpus = n;
    }
    return {};
}

Status readRestart(const DocNode &run, AppSpec &spec)
{
    const DocNode *restart = run.value(u"restart"_s);
    if (!restart || restart->kind == DocNode::Kind::Null)
        return {};
    const QStringList values{u"always"_s, u"on-failure"_s, u"never"_s};
    const QString value = restart->kind == DocNode::Kind::Scalar ? restart->text.trimmed() : QString();
    if (!values.contains(value)) {
        const QString best = value.isEmpty() ? QString() : detail::closestWord(value.toLower(), values);
        return fail(ErrorCode::Invalid,
                    u"expected \"always\", \"on-failure\" or \"never\", got %1"_s.arg(describe(*restart)),
                    u"run.restart"_s, best.isEmpty() ? QString() : u"did you mean \"%1\"?"_s.arg(best));
    }
    spec.run.restart = value == u"never"        ? AppSpec::Run::Restart::Never
                       : value == u"on-failure" ? AppSpec::Run::Restart::OnFailure
                                                : AppSpec::Run::Restart::Always;
    return {};
}

Result<int> wholeNumber(const DocNode &node, const QString &path, int min, int max)
{
    static const QRegularExpression digits(uR"(^[0-9]{1,9}\z)"_s);
    const QString value = node.text.trimmed();
    if (node.kind == DocNode::Kind::Scalar && digits.match(value).hasMatch()) {
        const int number = value.toInt();
        if (number >= min && number <= max)
            return number;
    }
    return wrongType(node, path, u"an integer %1-%2"_s.arg(min).arg(max));
}

Status readRun(const DocNode &root, AppSpec &spec)
{
    PANDO_SPEC_TRY(node, section(root, u"run"_s, {}));
    if (*node) {
        PANDO_SPEC_TRY(known,
                       checkFields(**node, u"run"_s,
                                   {u"port"_s, u"command"_s, u"env"_s, u"resources"_s, u"restart"_s, u"volumes"_s}));
    }
    // No run.port: the deploy takes the port the built image exposes (EXPOSE).
    if (!*node)
        return {};
    const DocNode &run = **node;
    if (const DocNode *given = run.value(u"port"_s); given && given->kind != DocNode::Kind::Null) {
        PANDO_SPEC_TRY(portValue, port(*given, u"run.port"_s));
        spec.run.port = *portValue;
    }

    if (const DocNode *command = run.value(u"command"_s); command && command->kind != DocNode::Kind::Null) {
        if (command->kind != DocNode::Kind::Sequence) {
            return fail(ErrorCode::Invalid,
                        u"expected an argv list of strings like [\"/bin/app\", \"--flag\"], got %1; commands are "
                        u"never run through a shell"_s.arg(describe(*command)),
                        u"run.command"_s);
        }
        for (size_t i = 0; i < command->items.size(); ++i) {
            const DocNode &item = command->items[i];
            const QString at = u"run.command[%1]"_s.arg(i);
            if (item.kind != DocNode::Kind::Scalar)
                return wrongType(item, at, u"a string"_s);
            if (i == 0 && item.text.isEmpty())
                return fail(ErrorCode::Invalid, u"the program to run must not be empty"_s, at);
            spec.run.command.append(item.text);
        }
    }
    PANDO_SPEC_TRY(envNode, section(run, u"env"_s, u"run"_s));
    PANDO_SPEC_TRY(env, stringMap(*envNode, u"run.env"_s, variableKey));
    spec.run.env = *env;
    PANDO_SPEC_TRY(restart, readRestart(run, spec));
    PANDO_SPEC_TRY(volumes, detail::readVolumes(run, spec));
    return readResources(run, spec);
}

Status readHealth(const DocNode &root, AppSpec &spec)
{
    PANDO_SPEC_TRY(node, section(root, u"health"_s, {}));
    if (!*node)
        return {};
    const DocNode &health = **node;
    PANDO_SPEC_TRY(
        known, checkFields(health, u"health"_s, {u"path"_s, u"timeout"_s, u"interval"_s, u"every"_s, u"failures"_s}));
    if (const DocNode *path = health.value(u"path"_s); path && path->kind != DocNode::Kind::Null) {
        PANDO_SPEC_TRY(value, text(*path, u"health.path"_s));
        PANDO_SPEC_TRY(ok, detail::checkHealthPath(*value));
        spec.health.path = *value;
    }
    if (const DocNode *timeout = health.value(u"timeout"_s); timeout && timeout->kind != DocNode::Kind::Null) {
        PANDO_SPEC_TRY(ms, duration(*timeout, u"health.timeout"_s, detail::MinHealthTimeoutSeconds * 1000LL,
                                    detail::MaxHealthTimeoutSeconds * 1000LL, u"from 1s to 1h"_s));
        spec.health.timeoutSeconds = int((*ms + 999) / 1000);
    }
    if (const DocNode *interval = health.value(u"interval"_s); interval && interval->kind != DocNode::Kind::Null) {
        PANDO_SPEC_TRY(ms, duration(*interval, u"health.interval"_s, detail::MinHealthIntervalMs,
                                    detail::MaxHealthIntervalMs, u"from 10ms to 60s"_s));
        spec.health.intervalMs = int(*ms);
    }
    if (const DocNode *every = health.value(u"every"_s); every && every->kind != DocNode::Kind::Null) {
        PANDO_SPEC_TRY(ms, duration(*every, u"health.every"_s, detail::MinHealthEveryMs, detail::MaxHealthEveryMs,
                                    u"from 100ms to 1h"_s));
        spec.health.everyMs = int(*ms);
    }
    if (const DocNode *failures = health.value(u"failures"_s); failures && failures->kind != DocNode::Kind::Null) {
        PANDO_SPEC_TRY(n, wholeNumber(*failures, u"health.failures"_s, 1, detail::MaxHealthFailures));
        spec.health.failures = *n;
    }
    return {};
}

Status readRoute(const DocNode &root, AppSpec &spec)
{
    PANDO_SPEC_TRY(node, section(root, u"route"_s, {}));
    if (!*node)
        return {};
    const DocNode &route = **node;
    PANDO_SPEC_TRY(
        known, checkFields(route, u"route"_s, {u"port"_s, u"domains"_s, u"paths"_s, u"tls"_s, u"moved"_s, u"auth"_s}));
    if (const DocNode *p = route.value(u"port"_s); p && p->kind != DocNode::Kind::Null) {
        PANDO_SPEC_TRY(value, port(*p, u"route.port"_s));
        spec.route.port = *value;
    }
    return detail::readRouteAddresses(route, spec);
}

Status readNetwork(const DocNode &root, AppSpec &spec)
{
    PANDO_SPEC_TRY(node, section(root, u"network"_s, {}));
    if (!*node)
        return {};
    const DocNode &network = **node;
    PANDO_SPEC_TRY(known, checkFields(network, u"network"_s, {u"egress"_s}));
    if (const DocNode *egress = network.value(u"egress"_s); egress && egress->kind != DocNode::Kind::Null) {
        const QString path = u"network.egress"_s;
        const QStringList values{u"all"_s, u"none"_s};
        if (egress->kind != DocNode::Kind::Scalar || !values.contains(egress->text.trimmed())) {
            const QString best = egress->kind == DocNode::Kind::Scalar
                                     ? detail::closestWord(egress->text.trimmed().toLower(), values)
                                     : QString();
            return fail(ErrorCode::Invalid, u"expected \"all\" or \"none\", got %1"_s.arg(describe(*egress)), path,
                        best.isEmpty() ? QString() : u"did you mean \"%1\"?"_s.arg(best));
        }
        spec.network.egress = egress->text.trimmed() == u"none" ? AppSpec::Egress::None : AppSpec::Egress::All;
    }
    return {};
}

Status readRuntime(const DocNode &root, AppSpec &spec)
{
    const DocNode *node = root.value(u"runtime"_s);
    if (!node || node->kind == DocNode::Kind::Null)
        return {};
    const QStringList kinds{u"docker"_s, u"incus"_s};
    if (node->kind != DocNode::Kind::Scalar || !kinds.contains(node->text.trimmed())) {
        const QString best = node->kind == DocNode::Kind::Scalar
                                 ? detail::closestWord(node->text.trimmed().toLower(), kinds)
                                 : QString();
        return fail(ErrorCode::Invalid, u"expected \"docker\" or \"incus\", got %1"_s.arg(describe(*node)),
                    u"runtime"_s, best.isEmpty() ? QString() : u"did you mean \"%1\"?"_s.arg(best));
    }
    spec.runtime = node->text.trimmed();
    return {};
}

Result<AppSpec> fromTree(const DocNode &root)
{
    if (root.kind != DocNode::Kind::Map) {
        return fail(
            ErrorCode::Invalid,
            u"the spec must be a mapping of fields (name, source, build, run, ...), got %1"_s.arg(describe(root)),
            root.location());
    }
    AppSpec spec;
    PANDO_SPEC_TRY(known,
                   checkFields(root, {},
                               {u"name"_s, u"source"_s, u"build"_s, u"run"_s, u"health"_s, u"route"_s, u"network"_s,
                                u"labels"_s, u"services"_s, u"secrets"_s, u"runtime"_s, u"preview"_s}));
    const DocNode *name = root.value(u"name"_s);
    if (!name || name->kind == DocNode::Kind::Null)
        return fail(ErrorCode::Invalid, u"missing required field (the app's name, a DNS label like \"hello\")"_s,
                    u"name"_s);
    PANDO_SPEC_TRY(nameText, text(*name, u"name"_s));
    PANDO_SPEC_TRY(nameOk, detail::checkName(*nameText));
    spec.name = *nameText;
    PANDO_SPEC_TRY(source, readSource(root, spec));
    PANDO_SPEC_TRY(build, readBuild(root, spec));
    PANDO_SPEC_TRY(run, readRun(root, spec));
    PANDO_SPEC_TRY(health, readHealth(root, spec));
    PANDO_SPEC_TRY(route, readRoute(root, spec));
    PANDO_SPEC_TRY(network, readNetwork(root, spec));
    PANDO_SPEC_TRY(runtime, readRuntime(root, spec));
    PANDO_SPEC_TRY(services, detail::readServices(root, spec));
    PANDO_SPEC_TRY(secrets, detail::readSecrets(root, spec));
    PANDO_SPEC_TRY(preview, detail::readPreview(root, spec));
    PANDO_SPEC_TRY(labelsNode, section(root, u"labels"_s, {}));
    PANDO_SPEC_TRY(labels, stringMap(*labelsNode, u"labels"_s, labelKey));
    spec.labels = *labels;
    // The walker checked each field as it went; this catches anything a rule adds later.
    PANDO_SPEC_TRY(valid, validateAppSpec(spec));
    return spec;
}

QJsonObject stringMapJson(const QMap<QString, QString> &map)
{
    QJsonObject out;
    for (auto it = map.cbegin(); it != map.cend(); ++it)
        out.insert(it.key(), it.value());
    return out;
}

// The exact text for an amount: the largest binary unit that divides it, else bytes.
QString exactMemory(qint64 bytes)
{
    for (const auto &[unit, suffix] : {std::pair{Ti, "Ti"}, {Gi, "Gi"}, {Mi, "Mi"}, {Ki, "Ki"}}) {
        if (bytes >= unit && bytes % unit == 0)
            return QString::number(bytes / unit) + QLatin1String(suffix);
    }
    return QString::number(bytes);
}

QString durationText(qint64 ms)
{
    if (ms % 1000 != 0)
        return u"%1ms"_s.arg(ms);
    return u"%1s"_s.arg(ms / 1000);
}

} // namespace

bool isValidAppName(const QString &name)
{
    static const QRegularExpression label(uR"(^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\z)"_s);
    return label.match(name).hasMatch();
}

std::optional<qint64> parseMemory(const QString &input)
{
    static const QRegularExpression amount(uR"(^([0-9]{1,16})(\.[0-9]{1,6})?\s*(Ki|Mi|Gi|Ti|K|k|M|G|T|B)?\z)"_s);
    const auto m = amount.match(input.trimmed());
    if (!m.hasMatch())
        return std::nullopt;
    const QString unit = m.captured(3);
    qint64 multiplier = 1;
    if (unit == u"Ki")
        multiplier = Ki;
    else if (unit == u"Mi")
        multiplier = Mi;
    else if (unit == u"Gi")
        multiplier = Gi;
    else if (unit == u"Ti")
        multiplier = Ti;
    else if (unit == u"K" || unit == u"k")
        multiplier = 1000;
    else if (unit == u"M")
        multiplier = 1000LL * 1000;
    else if (unit == u"G")
        multiplier = 1000LL * 1000 * 1000;
    else if (unit == u"T")
        multiplier = 1000LL * 1000 * 1000 * 1000;
    const qint64 whole = m.captured(1).toLongLong();
    if (whole > detail::MaxMemoryBytes * 2 / multiplier + 1)
        return detail::MaxMemoryBytes + 1; // too large; the range check says so
    qint64 bytes = whole * multiplier;
    if (!m.captured(2).isEmpty()) {
        if (multiplier == 1)
            return std::nullopt; // a fraction of a byte
        bytes += qint64(std::llround(m.captured(2).toDouble() * double(multiplier)));
    }
    return bytes;
}

QString formatMemory(qint64 bytes)
{
    for (const auto &[unit, suffix] : {std::pair{Ti, "Ti"}, {Gi, "Gi"}, {Mi, "Mi"}, {Ki, "Ki"}}) {
        if (bytes >= unit) {
            if (bytes % unit == 0)
                return QString::number(bytes / unit) + QLatin1String(suffix);
            return QString::number(double(bytes) / double(unit), 'f', 2).remove(QRegularExpression(u"\\.?0+$"_s)) +
                   QLatin1String(suffix);
        }
    }
    return QString::number(bytes);
}

QString restartName(AppSpec::Run::Restart restart)
{
    switch (restart) {
    case AppSpec::Run::Restart::OnFailure:
        return u"on-failure"_s;
    case AppSpec::Run::Restart::Never:
        return u"never"_s;
    case AppSpec::Run::Restart::Always:
        break;
    }
    return u"always"_s;
}

bool AppSpec::Source::pullsAlways() const
{
    if (pull != Pull::Auto)
        return pull == Pull::Always;
    // A digest names one image for good; a tag other than latest is taken to stay where it is.
    if (image.contains(u'@'))
        return false;
    const QString last = image.section(u'/', -1);
    return !last.contains(u':') || last.endsWith(u":latest"_s);
}

namespace {

QString pullName(AppSpec::Source::Pull pull)
{
    switch (pull) {
    case AppSpec::Source::Pull::Always:
        return u"always"_s;
    case AppSpec::Source::Pull::Missing:
        return u"missing"_s;
    case AppSpec::Source::Pull::Auto:
        break;
    }
    return u"auto"_s;
}

} // namespace

QString egressName(AppSpec::Egress egress)
{
    return egress == AppSpec::Egress::None ? u"none"_s : u"all"_s;
}

Result<AppSpec> parseAppSpec(const QByteArray &yaml)
{
    PANDO_SPEC_TRY(tree, detail::readYaml(yaml, {MaxSpecBytes, MaxSpecDepth}));
    return fromTree(*tree);
}

Result<AppSpec> parseAppSpecJson(const QByteArray &json)
{
    PANDO_SPEC_TRY(tree, detail::readJson(json, {MaxSpecBytes, MaxSpecDepth}));
    return fromTree(*tree);
}

Status validateAppSpec(const AppSpec &spec)
{
    PANDO_SPEC_TRY(name, detail::checkName(spec.name));
    if (spec.source.isImage()) {
        PANDO_SPEC_TRY(image, detail::checkImageReference(spec.source.image, u"source.image"_s));
        if (!spec.source.repo.isEmpty())
            return fail(ErrorCode::Invalid, u"a source is a git repository or an image, not both"_s, u"source.repo"_s);
    } else {
        PANDO_SPEC_TRY(repo, detail::checkRepo(spec.source.repo));
    }
    PANDO_SPEC_TRY(ref, detail::checkRef(spec.source.ref));
    if (!spec.source.connection.isEmpty()) {
        PANDO_SPEC_TRY(connection, detail::checkConnectionName(spec.source.connection));
    }
    PANDO_SPEC_TRY(autodeploy, detail::checkAutoDeploy(spec.source));
    PANDO_SPEC_TRY(context, detail::checkRelativePath(spec.build.context, u"build.context"_s, u"repository"_s, false));
    PANDO_SPEC_TRY(dockerfile,
                   detail::checkRelativePath(spec.build.dockerfile, u"build.dockerfile"_s, u"build context"_s, true));
    if (!spec.build.base.isEmpty()) {
        PANDO_SPEC_TRY(base, detail::checkImageReference(spec.build.base, u"build.base"_s));
    }
    for (auto it = spec.build.args.cbegin(); it != spec.build.args.cend(); ++it) {
        PANDO_SPEC_TRY(arg, detail::checkVariableName(it.key(), u"build.args."_s + it.key()));
    }
    if (spec.run.port < 0 || spec.run.port > 65535)
        return fail(ErrorCode::Invalid, u"expected an integer 1-65535, got %1"_s.arg(spec.run.port), u"run.port"_s);
    if (!spec.run.command.isEmpty() && spec.run.command.first().isEmpty())
        return fail(ErrorCode::Invalid, u"the program to run must not be empty"_s, u"run.command[0]"_s);
    for (auto it = spec.run.env.cbegin(); it != spec.run.env.cend(); ++it) {
        PANDO_SPEC_TRY(env, detail::checkVariableName(it.key(), u"run.env."_s + it.key()));
    }
    if (spec.run.memoryBytes != 0) {
        PANDO_SPEC_TRY(memory, detail::checkMemory(spec.run.memoryBytes, u"run.resources.memory"_s));
    }
    if (spec.run.cpus != 0) {
        PANDO_SPEC_TRY(cpus, detail::checkCpus(spec.run.cpus, u"run.resources.cpus"_s));
    }
    PANDO_SPEC_TRY(disk, detail::checkDisk(spec.run.diskBytes, spec.run.diskPolicy));
    PANDO_SPEC_TRY(health, detail::checkHealthPath(spec.health.path));
    if (spec.health.timeoutSeconds < detail::MinHealthTimeoutSeconds ||
        spec.health.timeoutSeconds > detail::MaxHealthTimeoutSeconds)
        return fail(ErrorCode::Invalid, u"must be from 1s to 1h, got %1s"_s.arg(spec.health.timeoutSeconds),
                    u"health.timeout"_s);
    if (spec.health.intervalMs < detail::MinHealthIntervalMs || spec.health.intervalMs > detail::MaxHealthIntervalMs)
        return fail(ErrorCode::Invalid, u"must be from 10ms to 60s, got %1ms"_s.arg(spec.health.intervalMs),
                    u"health.interval"_s);
    if (spec.health.everyMs < detail::MinHealthEveryMs || spec.health.everyMs > detail::MaxHealthEveryMs)
        return fail(ErrorCode::Invalid, u"must be from 100ms to 1h, got %1ms"_s.arg(spec.health.everyMs),
                    u"health.every"_s);
    if (spec.health.failures < 1 || spec.health.failures > detail::MaxHealthFailures)
        return fail(ErrorCode::Invalid, u"must be from 1 to 100, got %1"_s.arg(spec.health.failures),
                    u"health.failures"_s);
    if (spec.route.port < 0 || spec.route.port > 65535)
        return fail(ErrorCode::Invalid, u"expected an integer 1-65535, got %1"_s.arg(spec.route.port), u"route.port"_s);
    PANDO_SPEC_TRY(addresses, detail::checkRouteAddresses(spec.route));
    if (spec.network.egress != AppSpec::Egress::All && spec.network.egress != AppSpec::Egress::None)
        return fail(ErrorCode::Invalid, u"expected \"all\" or \"none\""_s, u"network.egress"_s);
    for (auto it = spec.labels.cbegin(); it != spec.labels.cend(); ++it) {
        PANDO_SPEC_TRY(label, detail::checkLabel(it.key(), it.value(), u"labels."_s + it.key()));
    }
    PANDO_SPEC_TRY(volumes, detail::checkVolumes(spec.run.volumes));
    PANDO_SPEC_TRY(services, detail::checkServices(spec.services));
    // A slot's variables are the service's to set (core/services).
    for (auto it = spec.services.cbegin(); it != spec.services.cend(); ++it) {
        for (const QString &name : detail::serviceEnvNames(it.key(), *it)) {
            if (spec.run.env.contains(name))
                return fail(ErrorCode::Invalid,
                            u"%1 is set by the service in slot %2; the app cannot set it too"_s.arg(name, it.key()),
                            u"run.env."_s + name,
                            u"rename the variable, or the slot (or name the part's variable in "
                            u"services.%1.env)"_s.arg(it.key()));
        }
    }
    PANDO_SPEC_TRY(secrets, detail::checkSecrets(spec.secrets));
    PANDO_SPEC_TRY(preview, detail::checkPreview(spec));
    return {};
}

QJsonObject AppSpec::toJson() const
{
    QJsonObject resources;
    if (run.memoryBytes > 0) {
        resources.insert(u"memory"_s, exactMemory(run.memoryBytes));
        resources.insert(u"memoryBytes"_s, run.memoryBytes);
    }
    if (run.cpus > 0)
        resources.insert(u"cpus"_s, run.cpus);
    detail::insertDiskJson(run, resources);
    QJsonObject route;
    if (this->route.port > 0)
        route.insert(u"port"_s, this->route.port);
    detail::insertRouteJson(this->route, route);
    QJsonObject runJson{{u"command"_s, QJsonArray::fromStringList(run.command)},
                        {u"env"_s, stringMapJson(run.env)},
                        {u"resources"_s, resources},
                        {u"restart"_s, restartName(run.restart)}};
    if (run.port > 0) // none: the port the built image exposes
        runJson.insert(u"port"_s, run.port);
    if (!run.volumes.isEmpty())
        runJson.insert(u"volumes"_s, detail::volumesJson(run.volumes));
    QJsonObject sourceJson = source.isImage()
                                 ? QJsonObject{{u"image"_s, source.image}, {u"pull"_s, pullName(source.pull)}}
                                 : QJsonObject{{u"repo"_s, source.repo}, {u"ref"_s, source.ref}};
    if (!source.connection.isEmpty())
        sourceJson.insert(u"connection"_s, source.connection);
    detail::insertAutoDeployJson(source.autodeploy, sourceJson);
    QJsonObject buildJson{
        {u"context"_s, build.context}, {u"dockerfile"_s, build.dockerfile}, {u"args"_s, stringMapJson(build.args)}};
    if (!build.base.isEmpty())
        buildJson.insert(u"base"_s, build.base);
    QJsonObject json{
        {u"name"_s, name},
        {u"source"_s, sourceJson},
        {u"run"_s, runJson},
        {u"health"_s, QJsonObject{{u"path"_s, health.path},
                                  {u"timeout"_s, durationText(qint64(health.timeoutSeconds) * 1000)},
                                  {u"interval"_s, durationText(health.intervalMs)},
                                  {u"every"_s, durationText(health.everyMs)},
                                  {u"failures"_s, health.failures}}},
        {u"route"_s, route},
        {u"network"_s, QJsonObject{{u"egress"_s, egressName(network.egress)}}},
        {u"labels"_s, stringMapJson(labels)},
        {u"services"_s, detail::servicesJson(services)},
        {u"secrets"_s, detail::secretsJson(secrets)},
    };
    if (!source.isImage()) // an image is not built
        json.insert(u"build"_s, buildJson);
    // The install's default runtime when the spec names none: the field stays out.
    if (!runtime.isEmpty())
        json.insert(u"runtime"_s, runtime);
    detail::insertPreviewJson(preview, json);
    return json;
}

} // namespace pando::core

#undef PANDO_SPEC_TRY
