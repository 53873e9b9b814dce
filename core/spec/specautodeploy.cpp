#include "core/spec/specautodeploy.h"

#include "core/spec/specrules.h"
#include "core/spec/yamlreader.h"

#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::core {

QString autoDeployModeName(AppSpec::Source::AutoDeploy::Mode mode)
{
    switch (mode) {
    case AppSpec::Source::AutoDeploy::Mode::Push:
        return u"push"_s;
    case AppSpec::Source::AutoDeploy::Mode::Poll:
        return u"poll"_s;
    case AppSpec::Source::AutoDeploy::Mode::Off:
        break;
    }
    return u"off"_s;
}

QString followedRef(const AppSpec::Source &source, const QString &pushedRef)
{
    static const QString heads = u"refs/heads/"_s;
    static const QString tags = u"refs/tags/"_s;
    if (source.autodeploy.tags.isEmpty()) {
        const QString branch = source.ref.startsWith(heads) ? source.ref.mid(heads.size()) : source.ref;
        return pushedRef == heads + branch ? branch : QString();
    }
    if (!pushedRef.startsWith(tags))
        return {};
    const QString tag = pushedRef.mid(tags.size());
    const QRegularExpression glob = QRegularExpression::fromWildcard(source.autodeploy.tags, Qt::CaseSensitive);
    return glob.match(tag).hasMatch() ? tag : QString();
}

namespace detail {

namespace {

const QString ModePath = u"source.autodeploy"_s;

Result<AppSpec::Source::AutoDeploy::Mode> readMode(const DocNode &node, const QString &where)
{
    const QStringList modes{u"off"_s, u"push"_s, u"poll"_s};
    const QString value = node.kind == DocNode::Kind::Scalar ? node.text.trimmed().toLower() : QString();
    // YAML 1.1 readers take a bare `off` for false: both spellings mean off.
    if (value == u"off" || value == u"false")
        return AppSpec::Source::AutoDeploy::Mode::Off;
    if (value == u"push")
        return AppSpec::Source::AutoDeploy::Mode::Push;
    if (value == u"poll")
        return AppSpec::Source::AutoDeploy::Mode::Poll;
    const QString best = value.isEmpty() ? QString() : closestWord(value, modes);
    return invalidAt(node, u"expected \"push\", \"poll\" or \"off\", got %1"_s.arg(shownValue(node)), where,
                     best.isEmpty() ? u"push: the forge's webhook tells Pando; poll: Pando asks the repository"_s
                                    : u"did you mean \"%1\"?"_s.arg(best));
}

} // namespace

Status checkAutoDeploy(const AppSpec::Source &source)
{
    const AppSpec::Source::AutoDeploy &autodeploy = source.autodeploy;
    if (autodeploy.mode == AppSpec::Source::AutoDeploy::Mode::Off)
        return {};
    if (autodeploy.everyMs < MinPollEveryMs || autodeploy.everyMs > MaxPollEveryMs)
        return fail(ErrorCode::Invalid, u"must be from 30s to 24h, got %1 ms"_s.arg(autodeploy.everyMs),
                    u"source.autodeploy.every"_s);
    if (!autodeploy.tags.isEmpty() && autodeploy.mode == AppSpec::Source::AutoDeploy::Mode::Poll)
        return fail(ErrorCode::Invalid, u"polling follows a branch; a tag pattern needs on: push"_s,
                    u"source.autodeploy.tags"_s, u"set on: push and add the forge's webhook, or leave tags out"_s);
    if (!autodeploy.tags.isEmpty()) {
        // What git allows in a tag name, and the glob's own * ? [ ].
        static const QRegularExpression glob(uR"(^[A-Za-z0-9._/*?\[\]+@=,-]{1,200}\z)"_s);
        if (!glob.match(autodeploy.tags).hasMatch() || autodeploy.tags.contains(u".."_s) ||
            autodeploy.tags.startsWith(u'/') || autodeploy.tags.startsWith(u'-'))
            return fail(ErrorCode::Invalid, u"%1 is not a tag pattern"_s.arg(quoted(autodeploy.tags)),
                        u"source.autodeploy.tags"_s,
                        u"a tag name with * and ? for any characters, like \"v*\" or \"release-*\""_s);
        return {};
    }
    static const QRegularExpression commit(uR"(^[0-9a-fA-F]{40}([0-9a-fA-F]{24})?\z)"_s);
    if (commit.match(source.ref).hasMatch() || source.ref.startsWith(u"refs/tags/"_s))
        return fail(ErrorCode::Invalid,
                    u"source.ref %1 does not move: auto-deploy follows a branch, or tags"_s.arg(quoted(source.ref)),
                    ModePath, u"set source.ref to a branch, or autodeploy.tags to a pattern like \"v*\""_s);
    return {};
}

Status readAutoDeploy(const DocNode &source, AppSpec &spec)
{
    const DocNode *node = source.value(u"autodeploy"_s);
    if (!node || node->kind == DocNode::Kind::Null)
        return {};
    AppSpec::Source::AutoDeploy &autodeploy = spec.source.autodeploy;
    if (node->kind == DocNode::Kind::Scalar) {
        auto mode = readMode(*node, ModePath);
        if (!mode)
            return std::unexpected(mode.error());
        autodeploy.mode = *mode;
    } else if (node->kind == DocNode::Kind::Map) {
        const QStringList known{u"on"_s, u"tags"_s, u"every"_s};
        for (const auto &[key, value] : node->entries) {
            if (known.contains(key))
                continue;
            const QString best = closestWord(key, known);
            return invalidAt(*node,
                             best.isEmpty() ? u"unknown field"_s : u"unknown field; did you mean \"%1\"?"_s.arg(best),
                             ModePath + u'.' + key, u"known fields here: on, tags, every"_s);
        }
        const DocNode *on = node->value(u"on"_s);
        if (!on || on->kind == DocNode::Kind::Null)
            return invalidAt(*node, u"missing required field (push or poll)"_s, ModePath + u".on"_s);
        auto mode = readMode(*on, ModePath + u".on"_s);
        if (!mode)
            return std::unexpected(mode.error());
        autodeploy.mode = *mode;
        if (const DocNode *tags = node->value(u"tags"_s); tags && tags->kind != DocNode::Kind::Null) {
            if (tags->kind != DocNode::Kind::Scalar)
                return invalidAt(*tags, u"expected a tag pattern like \"v*\", got %1"_s.arg(shownValue(*tags)),
                                 ModePath + u".tags"_s);
            autodeploy.tags = tags->text.trimmed();
        }
        if (const DocNode *every = node->value(u"every"_s); every && every->kind != DocNode::Kind::Null) {
            const auto ms =
                every->kind == DocNode::Kind::Scalar ? parseDurationMs(every->text.trimmed()) : std::nullopt;
            if (!ms || *ms < MinPollEveryMs || *ms > MaxPollEveryMs)
                return invalidAt(*every,
                                 u"expected a duration from 30s to 24h like \"5m\", got %1"_s.arg(shownValue(*every)),
                                 ModePath + u".every"_s);
            if (autodeploy.mode != AppSpec::Source::AutoDeploy::Mode::Poll)
                return invalidAt(*every, u"says how often to poll, but autodeploy is not on poll"_s,
                                 ModePath + u".every"_s, u"set on: poll, or leave every out"_s);
            autodeploy.everyMs = int(*ms);
        }
    } else {
        return invalidAt(*node, u"expected \"push\", \"poll\", \"off\" or a mapping, got a list"_s, ModePath);
    }
    if (auto ok = checkAutoDeploy(spec.source); !ok) {
        Error error = ok.error();
        if (const QString location = node->location(); !location.isEmpty())
            error.message += u" (%1)"_s.arg(location);
        return std::unexpected(error);
    }
    return {};
}

void insertAutoDeployJson(const AppSpec::Source::AutoDeploy &autodeploy, QJsonObject &source)
{
    if (autodeploy.mode == AppSpec::Source::AutoDeploy::Mode::Off)
        return;
    QJsonObject json{{u"on"_s, autoDeployModeName(autodeploy.mode)}};
    if (!autodeploy.tags.isEmpty())
        json.insert(u"tags"_s, autodeploy.tags);
    if (autodeploy.mode == AppSpec::Source::AutoDeploy::Mode::Poll)
        json.insert(u"every"_s, u"%1s"_s.arg(autodeploy.everyMs / 1000));
    source.insert(u"autodeploy"_s, json);
}

} // namespace detail

} // namespace pando::core
