#include "qml/apps/spectext.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QStringList>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

// A string YAML reads back as the same string without quotes: starts like a word or a path, holds
// no ": " or " #", and is not one of YAML's words for booleans and null.
bool isPlain(const QString &text)
{
    static const QRegularExpression plain(uR"(^[A-Za-z_/.][A-Za-z0-9_./@:+~-]*\z)"_s);
    static const QStringList reserved{u"true"_s, u"false"_s, u"yes"_s, u"no"_s, u"on"_s,
                                      u"off"_s,  u"null"_s,  u"y"_s,   u"n"_s,  u"~"_s};
    return plain.match(text).hasMatch() && !reserved.contains(text.toLower()) && !text.endsWith(u':');
}

QString scalar(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Bool:
        return value.toBool() ? u"true"_s : u"false"_s;
    case QJsonValue::Double: {
        const double d = value.toDouble();
        if (d == double(qint64(d)))
            return QString::number(qint64(d));
        return QString::number(d, 'g', 15);
    }
    case QJsonValue::String: {
        QString text = value.toString();
        if (isPlain(text))
            return text;
        // JSON's double-quoted string is YAML's too.
        const QByteArray quoted = QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact);
        return QString::fromUtf8(quoted.mid(1, quoted.size() - 2));
    }
    default:
        return u"null"_s;
    }
}

QString key(const QString &name)
{
    return isPlain(name) ? name : scalar(QJsonValue(name));
}

void write(QStringList &out, const QString &indent, const QString &lead, const QJsonValue &value);

// The spec reference's order for the top level; nested maps come in the JSON's (sorted) order.
QStringList orderedKeys(const QJsonObject &object, bool topLevel)
{
    QStringList keys = object.keys();
    if (!topLevel)
        return keys;
    static const QStringList order{u"name"_s,    u"source"_s,  u"build"_s,    u"run"_s,     u"health"_s, u"route"_s,
                                   u"network"_s, u"runtime"_s, u"services"_s, u"secrets"_s, u"labels"_s};
    std::stable_sort(keys.begin(), keys.end(), [](const QString &a, const QString &b) {
        const qsizetype ia = order.indexOf(a), ib = order.indexOf(b);
        return (ia < 0 ? order.size() : ia) < (ib < 0 ? order.size() : ib);
    });
    return keys;
}

void writeObject(QStringList &out, const QString &indent, const QJsonObject &object, bool topLevel = false)
{
    for (const QString &name : orderedKeys(object, topLevel))
        write(out, indent, key(name) + u':', object.value(name));
}

// lead is "key:" or "-"; the value follows on the same line when it is a scalar or empty.
void write(QStringList &out, const QString &indent, const QString &lead, const QJsonValue &value)
{
    if (value.isObject() && !value.toObject().isEmpty()) {
        out << indent + lead;
        writeObject(out, indent + u"  "_s, value.toObject());
    } else if (value.isArray() && !value.toArray().isEmpty()) {
        out << indent + lead;
        for (const QJsonValue item : value.toArray())
            write(out, indent + u"  "_s, u"-"_s, item);
    } else if (value.isObject()) {
        out << indent + lead + u" {}"_s;
    } else if (value.isArray()) {
        out << indent + lead + u" []"_s;
    } else {
        out << indent + lead + u' ' + scalar(value);
    }
}

} // namespace

QString specYaml(const QJsonObject &spec)
{
    QStringList out;
    writeObject(out, {}, spec, true);
    return out.join(u'\n') + u'\n';
}

} // namespace pando::desktop
