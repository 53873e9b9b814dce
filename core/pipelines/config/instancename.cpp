#include "core/pipelines/config/instancename.h"

#include "core/pipelines/config/nodereader.h"
#include "core/pipelines/template/interpolate.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::core::pipelines {

namespace {

constexpr qsizetype MaxNameLength = 255;
constexpr qsizetype MaxValueLength = 200;

bool isGroupName(const QString &name)
{
    static const QRegularExpression re(u"^[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,99}$"_s);
    return re.match(name).hasMatch();
}

bool isKey(const QString &key)
{
    static const QRegularExpression re(u"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$"_s);
    return re.match(key).hasMatch();
}

// What a bare value reads back as: a number, true or false, else the text itself.
QJsonValue bareValue(const QString &text)
{
    if (text == u"true"_s || text == u"false"_s)
        return text == u"true"_s;
    static const QRegularExpression number(u"^-?(0|[1-9][0-9]{0,14})(\\.[0-9]+)?$"_s);
    if (number.match(text).hasMatch())
        return text.toDouble();
    return text;
}

// A scalar as JSON writes it: 3, true, "a,b".
QString jsonText(const QJsonValue &value)
{
    const QByteArray json = QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(json.mid(1, json.size() - 2));
}

QString valueText(const QJsonValue &value)
{
    if (!value.isString())
        return jsonText(value);
    QString text = value.toString();
    // No '/' bare: PIPELINE/JOB must stay readable ("preview/branch:\"feature/login\"/deploy").
    static const QRegularExpression plain(u"^[a-zA-Z0-9_.+@-]+$"_s);
    if (plain.match(text).hasMatch() && bareValue(text) == QJsonValue(text))
        return text;
    return jsonText(text);
}

Status checkGroup(const QString &group, const QString &where)
{
    if (isGroupName(group))
        return {};
    return fail(
        ErrorCode::Invalid,
        u"pipeline name \"%1\" must be 1-100 of a-z A-Z 0-9 _ . - and not start with . or -"_s.arg(group.left(100)),
        where);
}

} // namespace

QJsonValue instanceVarValue(const QString &text)
{
    if (text.size() >= 2 && text.startsWith(u'"') && text.endsWith(u'"')) {
        const QJsonDocument parsed = QJsonDocument::fromJson(u"[%1]"_s.arg(text).toUtf8());
        if (parsed.isArray() && parsed.array().at(0).isString())
            return parsed.array().at(0);
    }
    return bareValue(text);
}

Result<QString> instanceName(const QString &group, const QJsonObject &vars, const QString &where)
{
    if (Status ok = checkGroup(group, where); !ok)
        return std::unexpected(ok.error());
    if (vars.isEmpty())
        return group;
    QStringList pairs;
    for (auto it = vars.begin(); it != vars.end(); ++it) { // QJsonObject keeps its keys sorted
        if (!isKey(it.key()))
            return fail(ErrorCode::Invalid,
                        u"\"%1\" is not an instance var name: a letter or _, then letters, digits, _ and -"_s.arg(
                            it.key().left(64)),
                        where);
        const QJsonValue value = it.value();
        if (!value.isString() && !value.isDouble() && !value.isBool())
            return fail(ErrorCode::Invalid, u"instance var %1 must be a string, a number or a boolean"_s.arg(it.key()),
                        where, u"instance vars name an instance; put structured values in vars:"_s);
        const QString text = value.toString();
        if (value.isString() &&
            (text.isEmpty() || text.size() > MaxValueLength ||
             std::any_of(text.begin(), text.end(), [](QChar c) { return c.unicode() < 0x20 || c.unicode() == 0x7f; })))
            return fail(ErrorCode::Invalid,
                        u"instance var %1 must be 1-%2 characters without control characters"_s.arg(it.key()).arg(
                            MaxValueLength),
                        where);
        pairs << it.key() + u':' + valueText(value);
    }
    const QString name = group + u'/' + pairs.join(u',');
    if (name.size() > MaxNameLength)
        return fail(
            ErrorCode::Invalid,
            u"the instance's name \"%1...\" is longer than %2 characters"_s.arg(name.left(60)).arg(MaxNameLength),
            where);
    return name;
}

Result<PipelineIdentity> parsePipelineName(const QString &text, const QString &where)
{
    const qsizetype slash = text.indexOf(u'/');
    PipelineIdentity identity;
    identity.group = slash < 0 ? text : text.left(slash);
    if (Status ok = checkGroup(identity.group, where); !ok)
        return std::unexpected(ok.error());
    if (slash < 0)
        return identity;
    const auto bad = [&](const QString &why) {
        return fail(ErrorCode::Invalid, u"\"%1\" is not an instance's name: %2"_s.arg(text.left(MaxNameLength), why),
                    where, u"write GROUP/KEY:VALUE[,KEY:VALUE], e.g. preview/branch:feature-1"_s);
    };
    qsizetype i = slash + 1;
    while (true) {
        const qsizetype colon = text.indexOf(u':', i);
        if (colon < 0)
            return bad(u"a KEY:VALUE pair has no ':'"_s);
        const QString key = text.mid(i, colon - i);
        if (!isKey(key))
            return bad(u"\"%1\" is not a var name"_s.arg(key));
        if (identity.instanceVars.contains(key))
            return bad(u"%1 is given twice"_s.arg(key));
        i = colon + 1;
        QJsonValue value;
        if (i < text.size() && text.at(i) == u'"') {
            // A JSON string: up to the quote no backslash escapes.
            qsizetype end = i + 1;
            while (end < text.size() && text.at(end) != u'"')
                end += text.at(end) == u'\\' ? 2 : 1;
            if (end >= text.size())
                return bad(u"a quoted value has no closing quote"_s);
            const QJsonDocument parsed = QJsonDocument::fromJson(u"[%1]"_s.arg(text.mid(i, end - i + 1)).toUtf8());
            if (!parsed.isArray() || !parsed.array().at(0).isString())
                return bad(u"a quoted value is not a JSON string"_s);
            value = parsed.array().at(0);
            i = end + 1;
        } else {
            qsizetype end = text.indexOf(u',', i);
            if (end < 0)
                end = text.size();
            value = bareValue(text.mid(i, end - i));
            i = end;
        }
        identity.instanceVars.insert(key, value);
        if (i >= text.size())
            break;
        if (text.at(i) != u',')
            return bad(u"pairs are separated by ','"_s);
        ++i;
    }
    // The values' rules are instanceName's.
    if (Result<QString> named = instanceName(identity.group, identity.instanceVars, where); !named)
        return std::unexpected(named.error());
    return identity;
}

Status checkPipelineName(const QString &text, const QString &where)
{
    Result<PipelineIdentity> identity = parsePipelineName(text, where);
    if (!identity)
        return std::unexpected(identity.error());
    Result<QString> canonical = instanceName(identity->group, identity->instanceVars, where);
    if (!canonical)
        return std::unexpected(canonical.error());
    if (*canonical != text)
        return fail(ErrorCode::Invalid, u"the instance is named \"%1\", not \"%2\""_s.arg(*canonical, text), where,
                    u"keys in order, values bare where they read back the same"_s);
    return {};
}

std::pair<QString, QString> splitPipelinePath(const QString &text)
{
    const qsizetype slash = text.indexOf(u'/');
    if (slash < 0)
        return {text, {}};
    // The segment after the group is an instance's vars when it holds a ':' before its end.
    bool quoted = false;
    qsizetype end = slash + 1;
    for (; end < text.size(); ++end) {
        const QChar c = text.at(end);
        if (quoted && c == u'\\') {
            ++end;
            continue;
        }
        if (c == u'"')
            quoted = !quoted;
        else if (c == u'/' && !quoted)
            break;
    }
    const QString segment = text.mid(slash + 1, end - slash - 1);
    if (!segment.contains(u':'))
        return {text.left(slash), text.mid(slash + 1)};
    return {text.left(end), end < text.size() ? text.mid(end + 1) : QString()};
}

Result<QByteArray> withInstanceVars(const QByteArray &varsYaml, const QJsonObject &instanceVars)
{
    if (instanceVars.isEmpty())
        return varsYaml;
    QJsonObject root;
    if (!varsYaml.trimmed().isEmpty()) {
        auto read = readVarsFile(varsYaml);
        if (!read)
            return std::unexpected(read.error());
        root = internal::toJsonValue(*read).toObject();
    }
    for (auto it = instanceVars.begin(); it != instanceVars.end(); ++it) {
        const QJsonValue given = root.value(it.key());
        // A var file's "1" and an instance's 1 are the same value as text.
        if (!given.isUndefined() && given != it.value() &&
            given.toVariant().toString() != it.value().toVariant().toString())
            return fail(ErrorCode::Invalid,
                        u"var %1 is given as %2 and as the instance var %3"_s.arg(
                            it.key(),
                            QString::fromUtf8(QJsonDocument(QJsonArray{given}).toJson(QJsonDocument::Compact)),
                            valueText(it.value())),
                        u"vars"_s, u"leave it out of the vars: the instance's value is the one its config sees"_s);
        root.insert(it.key(), it.value());
    }
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

} // namespace pando::core::pipelines
