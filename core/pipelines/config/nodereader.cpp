#include "core/pipelines/config/nodereader.h"

#include "adapters/api/goduration.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <algorithm>
#include <vector>

using namespace Qt::StringLiterals;

namespace pando::core::pipelines::internal {

QString join(const QString &path, const QString &key)
{
    return path.isEmpty() ? key : path + u'.' + key;
}

QString at(const QString &path, qsizetype index)
{
    return path + u"[%1]"_s.arg(index);
}

QString describe(const DocNode &node)
{
    switch (node.kind) {
    case DocNode::Kind::Null:
        return u"nothing"_s;
    case DocNode::Kind::Scalar: {
        QString shown = node.text.left(40);
        shown.replace(u'\n', u"\\n"_s);
        return u"\"%1\"%2"_s.arg(shown, node.text.size() > 40 ? u"…"_s : QString());
    }
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

std::unexpected<Error> invalid(const QString &where, const QString &message, const QString &hint)
{
    return fail(ErrorCode::Invalid, message, where, hint);
}

QString closest(const QString &word, const QStringList &candidates)
{
    return detail::closestWord(word, candidates);
}

Status checkKeys(const DocNode &node, const QString &where, const QStringList &known)
{
    for (const auto &[key, value] : node.entries) {
        if (known.contains(key))
            continue;
        QString message = u"unknown key \"%1\""_s.arg(key);
        if (const QString best = closest(key, known); !best.isEmpty())
            message += u"; did you mean \"%1\"?"_s.arg(best);
        return invalid(where, message, u"known keys here: %1"_s.arg(known.join(u", "_s)));
    }
    return {};
}

bool isNull(const DocNode *node)
{
    return !node || node->kind == DocNode::Kind::Null;
}

Result<const DocNode *> mapping(const DocNode &parent, const QString &key, const QString &path)
{
    const DocNode *node = parent.value(key);
    if (isNull(node))
        return nullptr;
    if (node->kind != DocNode::Kind::Map)
        return wrongType(*node, join(path, key), u"a mapping"_s);
    return node;
}

Result<const DocNode *> sequence(const DocNode &parent, const QString &key, const QString &path)
{
    const DocNode *node = parent.value(key);
    if (isNull(node))
        return nullptr;
    if (node->kind != DocNode::Kind::Sequence)
        return wrongType(*node, join(path, key), u"a list"_s);
    return node;
}

Result<QString> string(const DocNode &node, const QString &path)
{
    if (node.kind == DocNode::Kind::Null)
        return QString();
    if (node.kind != DocNode::Kind::Scalar)
        return wrongType(node, path, u"a string"_s);
    return node.text;
}

Result<QString> requiredString(const DocNode &parent, const QString &key, const QString &path)
{
    const DocNode *node = parent.value(key);
    if (isNull(node))
        return invalid(path, u"\"%1\" is required"_s.arg(key));
    PANDO_PIPE_TRY(value, string(*node, join(path, key)));
    if (value->trimmed().isEmpty())
        return invalid(join(path, key), u"must not be empty"_s);
    return *value;
}

Result<bool> boolean(const DocNode &node, const QString &path)
{
    if (node.kind == DocNode::Kind::Null)
        return false;
    if (node.kind == DocNode::Kind::Scalar) {
        const QString v = node.text.trimmed().toLower();
        if (v == u"true")
            return true;
        if (v == u"false")
            return false;
    }
    return wrongType(node, path, u"true or false"_s);
}

Status booleans(const DocNode &parent, const QString &path, std::initializer_list<std::pair<QString, bool *>> flags)
{
    for (const auto &[key, flag] : flags) {
        const DocNode *value = parent.value(key);
        if (!value)
            continue;
        auto read = boolean(*value, join(path, key));
        if (!read)
            return std::unexpected(read.error());
        *flag = *read;
    }
    return {};
}

Result<int> integer(const DocNode &node, const QString &path, int min, int max)
{
    static const QRegularExpression digits(uR"(^-?[0-9]{1,9}\z)"_s);
    const QString expected = u"an integer from %1 to %2"_s.arg(min).arg(max);
    if (node.kind != DocNode::Kind::Scalar || !digits.match(node.text.trimmed()).hasMatch())
        return wrongType(node, path, expected);
    const int value = node.text.trimmed().toInt();
    if (value < min || value > max)
        return wrongType(node, path, expected);
    return value;
}

Result<QStringList> stringList(const DocNode &node, const QString &path)
{
    if (node.kind == DocNode::Kind::Null)
        return QStringList();
    if (node.kind != DocNode::Kind::Sequence)
        return wrongType(node, path, u"a list of strings"_s);
    QStringList out;
    for (size_t i = 0; i < node.items.size(); ++i) {
        const DocNode &item = node.items[i];
        if (item.kind != DocNode::Kind::Scalar)
            return wrongType(item, at(path, qsizetype(i)), u"a string"_s);
        out << item.text;
    }
    return out;
}

Result<QMap<QString, QString>> stringMap(const DocNode &node, const QString &path)
{
    QMap<QString, QString> out;
    if (node.kind == DocNode::Kind::Null)
        return out;
    if (node.kind != DocNode::Kind::Map)
        return wrongType(node, path, u"a mapping of names to values"_s);
    for (const auto &[key, value] : node.entries) {
        PANDO_PIPE_TRY(text, string(value, join(path, key)));
        out.insert(key, *text);
    }
    return out;
}

QJsonValue toJsonValue(const DocNode &node)
{
    switch (node.kind) {
    case DocNode::Kind::Null:
        return QJsonValue::Null;
    case DocNode::Kind::Scalar: {
        if (node.quoted)
            return node.text;
        static const QRegularExpression integerPattern(uR"(^-?[0-9]{1,15}\z)"_s);
        static const QRegularExpression realPattern(uR"(^-?[0-9]+\.[0-9]+([eE][-+]?[0-9]+)?\z)"_s);
        if (node.text == u"true" || node.text == u"True" || node.text == u"TRUE")
            return true;
        if (node.text == u"false" || node.text == u"False" || node.text == u"FALSE")
            return false;
        if (integerPattern.match(node.text).hasMatch())
            return node.text.toLongLong();
        if (realPattern.match(node.text).hasMatch())
            return node.text.toDouble();
        return node.text;
    }
    case DocNode::Kind::Sequence: {
        QJsonArray array;
        for (const auto &item : node.items)
            array.append(toJsonValue(item));
        return array;
    }
    case DocNode::Kind::Map: {
        QJsonObject object;
        for (const auto &[key, value] : node.entries)
            object.insert(key, toJsonValue(value));
        return object;
    }
    }
    return {};
}

Result<QJsonObject> jsonObject(const DocNode &node, const QString &path)
{
    if (node.kind == DocNode::Kind::Null)
        return QJsonObject();
    if (node.kind != DocNode::Kind::Map)
        return wrongType(node, path, u"a mapping"_s);
    return toJsonValue(node).toObject();
}

std::optional<qint64> parseDurationMs(const QString &text)
{
    // Longer than any limit a step may have; duration() says which limit.
    constexpr qint64 Longest = qint64(10) * 366 * 24 * 3600 * 1000;
    return adapters::parseGoDurationMs(QStringView(text).trimmed(), Longest);
}

Result<qint64> duration(const DocNode &node, const QString &path)
{
    const QString expected = u"a duration like \"30s\", \"5m\", \"1h30m\" or \"100ms\""_s;
    if (node.kind != DocNode::Kind::Scalar)
        return wrongType(node, path, expected);
    const auto ms = parseDurationMs(node.text);
    if (!ms)
        return wrongType(node, path, expected);
    if (*ms <= 0)
        return invalid(path, u"must be longer than zero"_s);
    return *ms;
}

std::optional<qint64> parseMemory(const QString &text)
{
    // As Concourse reads container_limits.memory: bytes, or a number with a unit whose
    // multiples are of 1024, in any case ("512MB", "1G", "1Gi", "32GB").
    static const QRegularExpression pattern(
        uR"(^([0-9]{1,12})\s*(B|K|KB|KI|KIB|M|MB|MI|MIB|G|GB|GI|GIB|T|TB|TI|TIB)?\z)"_s,
        QRegularExpression::CaseInsensitiveOption);
    const auto m = pattern.match(text.trimmed());
    if (!m.hasMatch())
        return std::nullopt;
    const qint64 n = m.captured(1).toLongLong();
    const QString unit = m.captured(2).toUpper();
    int shift = 0;
    if (!unit.isEmpty() && unit != u"B"_s)
        shift = 10 * (1 + int(QStringView(u"KMGT").indexOf(unit.front())));
    if (n > (qint64(1) << 50) >> shift)
        return std::nullopt;
    return n << shift;
}

QString withLocalVarsStubbed(const QString &text)
{
    static const QRegularExpression localVar(uR"(\(\(\s*\.:[^()]*\)\))"_s);
    return QString(text).replace(localVar, u"x"_s);
}

Status checkName(const QString &name, const QString &where, const QString &what)
{
    static const QRegularExpression pattern(uR"(^[a-zA-Z0-9_.][a-zA-Z0-9_.-]*\z)"_s);
    if (name.isEmpty())
        return invalid(where, u"a %1 name must not be empty"_s.arg(what));
    if (name.size() > 128)
        return invalid(where, u"a %1 name is at most 128 characters"_s.arg(what));
    if (!pattern.match(name).hasMatch()) {
        return invalid(
            where, u"invalid %1 name \"%2\": use letters, digits, '_', '.' and '-', not first '-'"_s.arg(what, name));
    }
    if (name == u"." || name == u"..")
        return invalid(where, u"invalid %1 name \"%2\""_s.arg(what, name));
    return {};
}

Status checkRelativePath(const QString &path, const QString &where)
{
    if (path.isEmpty())
        return invalid(where, u"must not be empty"_s);
    if (path.startsWith(u'/'))
        return invalid(where, u"\"%1\" must be relative to the task's work dir"_s.arg(path));
    for (const auto &segment : path.split(u'/')) {
        if (segment == u"..")
            return invalid(where, u"\"%1\" must not leave the task's work dir (\"..\")"_s.arg(path));
    }
    return {};
}

} // namespace pando::core::pipelines::internal
