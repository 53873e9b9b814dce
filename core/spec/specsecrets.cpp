#include "core/spec/specsecrets.h"

#include "core/spec/specrules.h"

#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::core::detail {

namespace {

constexpr qsizetype MaxPathLength = 1024;
constexpr qsizetype MaxNameLength = 128;
constexpr qint64 MaxId = 2147483647;

Status checkSecretName(const QString &name, const QString &where)
{
    if (auto ok = checkVariableName(name, where); !ok)
        return ok;
    if (name.size() > MaxNameLength)
        return fail(ErrorCode::Invalid, u"a secret name is at most %1 characters"_s.arg(MaxNameLength), where);
    return {};
}

Status checkPath(const QString &path, const QString &where)
{
    const QString expected = u"an absolute path in the container like /run/secrets/tls.key"_s;
    if (!path.startsWith(u'/') || path.size() < 2 || path.size() > MaxPathLength || path.endsWith(u'/'))
        return fail(ErrorCode::Invalid, u"expected %1, got %2"_s.arg(expected, quoted(path)), where);
    for (const QChar c : path) {
        if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            return fail(ErrorCode::Invalid, u"the path %1 contains a control character"_s.arg(quoted(path)), where);
    }
    const QStringList parts = path.mid(1).split(u'/');
    for (const QString &part : parts) {
        if (part.isEmpty() || part == u"." || part == u"..")
            return fail(ErrorCode::Invalid,
                        u"the path %1 must be plain: no empty, \".\" or \"..\" parts"_s.arg(quoted(path)), where);
    }
    static const QStringList kernel{u"proc"_s, u"sys"_s, u"dev"_s};
    if (kernel.contains(parts.first()))
        return fail(ErrorCode::Invalid,
                    u"the path %1 is under /%2, which the runtime mounts over"_s.arg(quoted(path), parts.first()),
                    where, u"use a path under /run/secrets"_s);
    return {};
}

Status checkMode(int mode, const QString &where)
{
    if (mode < 0 || mode > 0777 || (mode & 0444) == 0)
        return fail(ErrorCode::Invalid,
                    u"expected an octal file mode from \"0400\" to \"0777\" that someone can read, got \"%1\""_s.arg(
                        QString::number(mode, 8)),
                    where);
    return {};
}

Result<int> idValue(const DocNode &node, const QString &where)
{
    static const QRegularExpression digits(uR"(^[0-9]{1,10}\z)"_s);
    const QString expected = u"a numeric id from 0 to %1"_s.arg(MaxId);
    auto text = scalarText(node, where, expected);
    if (!text)
        return std::unexpected(text.error());
    if (!digits.match(*text).hasMatch() || text->toLongLong() > MaxId)
        return std::unexpected(
            at(Error{ErrorCode::Invalid, u"expected %1, got %2"_s.arg(expected, quoted(*text)), where, {}}, node));
    return int(text->toLongLong());
}

// /a/b and /a/b/c cannot both be files.
bool nested(const QString &a, const QString &b)
{
    return a == b || b.startsWith(a + u'/') || a.startsWith(b + u'/');
}

Status checkDistinct(const QMap<QString, AppSpec::SecretFile> &secrets, const QString &name, const QString &path)
{
    for (auto it = secrets.cbegin(); it != secrets.cend(); ++it) {
        if (it.key() != name && nested(it->path, path))
            return fail(ErrorCode::Invalid,
                        u"the path %1 collides with secret %2's %3"_s.arg(quoted(path), it.key(), quoted(it->path)),
                        u"secrets."_s + name + u".file"_s);
    }
    return {};
}

} // namespace

Status readSecrets(const DocNode &root, AppSpec &spec)
{
    const DocNode *node = root.value(u"secrets"_s);
    if (!node || node->kind == DocNode::Kind::Null)
        return {};
    if (node->kind != DocNode::Kind::Map)
        return std::unexpected(at(Error{ErrorCode::Invalid,
                                        u"expected a mapping of secret names to how each reaches the app, like "
                                        u"{ TLS_KEY: { file: /run/secrets/tls.key } }"_s,
                                        u"secrets"_s,
                                        {}},
                                  *node));
    const QStringList known{u"file"_s, u"mode"_s, u"uid"_s, u"gid"_s};
    for (const auto &[name, value] : node->entries) {
        const QString path = u"secrets."_s + name;
        if (auto ok = checkSecretName(name, path); !ok)
            return std::unexpected(at(ok.error(), value));
        if (value.kind != DocNode::Kind::Map)
            return std::unexpected(at(Error{ErrorCode::Invalid,
                                            u"expected a mapping like { file: /run/secrets/%1 }; a secret not listed "
                                            u"here is an environment variable"_s.arg(name.toLower()),
                                            path,
                                            {}},
                                      value));
        for (const auto &[key, field] : value.entries) {
            if (known.contains(key))
                continue;
            const QString best = closestWord(key, known);
            return std::unexpected(
                at(Error{ErrorCode::Invalid,
                         u"unknown field%1"_s.arg(best.isEmpty() ? QString() : u"; did you mean \"%1\"?"_s.arg(best)),
                         path + u'.' + key, u"known fields here: %1"_s.arg(known.join(u", "_s))},
                   field));
        }
        AppSpec::SecretFile file;
        const DocNode *fileNode = value.value(u"file"_s);
        if (!fileNode || fileNode->kind == DocNode::Kind::Null)
            return std::unexpected(at(Error{ErrorCode::Invalid,
                                            u"missing required field (the path the secret is written to in the "
                                            u"container)"_s,
                                            path + u".file"_s,
                                            {}},
                                      value));
        auto fileText = scalarText(*fileNode, path + u".file"_s, u"an absolute path like /run/secrets/tls.key"_s);
        if (!fileText)
            return std::unexpected(fileText.error());
        if (auto ok = checkPath(*fileText, path + u".file"_s); !ok)
            return std::unexpected(at(ok.error(), *fileNode));
        if (auto ok = checkDistinct(spec.secrets, name, *fileText); !ok)
            return std::unexpected(at(ok.error(), *fileNode));
        file.path = *fileText;
        if (const DocNode *mode = value.value(u"mode"_s); mode && mode->kind != DocNode::Kind::Null) {
            static const QRegularExpression octal(uR"(^0?[0-7]{3}\z)"_s);
            auto modeText = scalarText(*mode, path + u".mode"_s, u"an octal mode like \"0440\""_s);
            if (!modeText)
                return std::unexpected(modeText.error());
            if (!octal.match(*modeText).hasMatch())
                return std::unexpected(
                    at(Error{ErrorCode::Invalid,
                             u"expected an octal mode like \"0440\", got %1"_s.arg(quoted(*modeText)),
                             path + u".mode"_s,
                             {}},
                       *mode));
            file.mode = modeText->toInt(nullptr, 8);
            if (auto ok = checkMode(file.mode, path + u".mode"_s); !ok)
                return std::unexpected(at(ok.error(), *mode));
        }
        if (const DocNode *uid = value.value(u"uid"_s); uid && uid->kind != DocNode::Kind::Null) {
            auto id = idValue(*uid, path + u".uid"_s);
            if (!id)
                return std::unexpected(id.error());
            file.uid = *id;
        }
        if (const DocNode *gid = value.value(u"gid"_s); gid && gid->kind != DocNode::Kind::Null) {
            auto id = idValue(*gid, path + u".gid"_s);
            if (!id)
                return std::unexpected(id.error());
            file.gid = *id;
        }
        spec.secrets.insert(name, file);
    }
    return {};
}

Status checkSecrets(const QMap<QString, AppSpec::SecretFile> &secrets)
{
    for (auto it = secrets.cbegin(); it != secrets.cend(); ++it) {
        const QString path = u"secrets."_s + it.key();
        if (auto ok = checkSecretName(it.key(), path); !ok)
            return ok;
        if (auto ok = checkPath(it->path, path + u".file"_s); !ok)
            return ok;
        if (auto ok = checkDistinct(secrets, it.key(), it->path); !ok)
            return ok;
        if (auto ok = checkMode(it->mode, path + u".mode"_s); !ok)
            return ok;
        if (it->uid < 0 || it->gid < 0)
            return fail(ErrorCode::Invalid, u"expected a numeric id from 0 to %1"_s.arg(MaxId),
                        path + (it->uid < 0 ? u".uid"_s : u".gid"_s));
    }
    return {};
}

QJsonObject secretsJson(const QMap<QString, AppSpec::SecretFile> &secrets)
{
    QJsonObject out;
    for (auto it = secrets.cbegin(); it != secrets.cend(); ++it) {
        QJsonObject file{{u"file"_s, it->path}, {u"mode"_s, u"0%1"_s.arg(it->mode, 3, 8, QLatin1Char('0'))}};
        if (it->uid != 0)
            file.insert(u"uid"_s, it->uid);
        if (it->gid != 0)
            file.insert(u"gid"_s, it->gid);
        out.insert(it.key(), file);
    }
    return out;
}

} // namespace pando::core::detail
