#include "sinkkit.h"

#include <QDateTime>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace pando::adapters::sinkkit {

namespace {

Result<QStringList> stringList(const QJsonObject &config, const QString &key, const QString &where)
{
    const QJsonValue value = config.value(key);
    if (value.isUndefined() || value.isNull())
        return QStringList{};
    const QString at = where + u'.' + key;
    if (value.isString())
        return QStringList{value.toString()};
    if (!value.isArray())
        return fail(ErrorCode::Invalid, u"expected a list of strings"_s, at);
    QStringList out;
    const QJsonArray array = value.toArray();
    for (qsizetype i = 0; i < array.size(); ++i) {
        if (!array.at(i).isString() || array.at(i).toString().isEmpty())
            return fail(ErrorCode::Invalid, u"expected a non-empty string"_s, at + u'[' + QString::number(i) + u']');
        out.append(array.at(i).toString());
    }
    return out;
}

} // namespace

const QStringList &nativeFields()
{
    static const QStringList fields = {u"seq"_s,    u"time"_s,     u"actor"_s,  u"action"_s,
                                       u"object"_s, u"outcome"_s,  u"detail"_s, u"requestId"_s,
                                       u"source"_s, u"prevHash"_s, u"hash"_s};
    return fields;
}

Result<AuditSinkSettings> parseSettings(const QJsonObject &config, const QString &where)
{
    AuditSinkSettings settings;
    auto actions = stringList(config, u"actions"_s, where);
    if (!actions)
        return std::unexpected(actions.error());
    settings.actionPrefixes = *actions;
    auto outcomes = stringList(config, u"outcomes"_s, where);
    if (!outcomes)
        return std::unexpected(outcomes.error());
    static const QStringList knownOutcomes = {u"success"_s, u"failure"_s, u"denied"_s};
    for (const QString &o : *outcomes)
        if (!knownOutcomes.contains(o))
            return fail(ErrorCode::Invalid, u"unknown outcome \""_s + o + u"\" (success, failure, denied)"_s,
                        where + u".outcomes"_s);
    settings.outcomes = *outcomes;
    auto actors = stringList(config, u"actors"_s, where);
    if (!actors)
        return std::unexpected(actors.error());
    settings.actors = *actors;
    auto fields = stringList(config, u"fields"_s, where);
    if (!fields)
        return std::unexpected(fields.error());
    for (const QString &f : *fields)
        if (!nativeFields().contains(f))
            return fail(ErrorCode::Invalid, u"unknown field \""_s + f + u"\" ("_s + nativeFields().join(u", "_s) + u')',
                        where + u".fields"_s);
    settings.fields = *fields;
    const QString format = config.value(u"format"_s).toString(u"native"_s);
    if (format == u"native"_s)
        settings.format = AuditSinkSettings::Format::Native;
    else if (format == u"ocsf"_s)
        settings.format = AuditSinkSettings::Format::Ocsf;
    else
        return fail(ErrorCode::Invalid, u"unknown format \""_s + format + u"\" (native, ocsf)"_s, where + u".format"_s);
    if (config.contains(u"batchSize"_s)) {
        const int size = config.value(u"batchSize"_s).toInt(-1);
        if (size < 1 || size > 10000)
            return fail(ErrorCode::Invalid, u"must be between 1 and 10000"_s, where + u".batchSize"_s);
        settings.batchSize = size;
    }
    // Other keys (url, host, token, ...) belong to the sink itself, which checks them.
    return settings;
}

Result<QString> readCredential(const QString &value, const QString &where)
{
    if (value.startsWith(u"env:"_s)) {
        const QString name = value.mid(4);
        if (name.isEmpty())
            return fail(ErrorCode::Invalid, u"\"env:\" needs a variable name"_s, where);
        if (!qEnvironmentVariableIsSet(name.toLocal8Bit().constData()))
            return fail(ErrorCode::Invalid, u"environment variable "_s + name + u" is not set"_s, where);
        return qEnvironmentVariable(name.toLocal8Bit().constData());
    }
    if (value.startsWith(u"file:"_s)) {
        const QString path = value.mid(5);
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return fail(ErrorCode::Invalid, u"cannot read credential file "_s + path + u": "_s + file.errorString(),
                        where);
        QByteArray bytes = file.readAll();
        if (bytes.endsWith('\n'))
            bytes.chop(1);
        if (bytes.endsWith('\r'))
            bytes.chop(1);
        return QString::fromUtf8(bytes);
    }
    return value;
}

Result<QList<QSslCertificate>> loadCaBundle(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Invalid, u"cannot read the CA bundle: "_s + file.errorString(), path);
    const QList<QSslCertificate> certs = QSslCertificate::fromData(file.readAll(), QSsl::Pem);
    if (certs.isEmpty())
        return fail(ErrorCode::Invalid, u"the CA bundle holds no PEM certificate"_s, path);
    return certs;
}

QString rfc3339(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(u"yyyy-MM-ddTHH:mm:ss.zzzZ"_s);
}

QJsonObject shapeLine(const AuditLine &line, const AuditSinkSettings &settings)
{
    if (settings.format == AuditSinkSettings::Format::Ocsf && !line.ocsf.isEmpty())
        return line.ocsf;
    const auto want = [&](const QString &field) {
        return settings.fields.isEmpty() || field == u"seq"_s || settings.fields.contains(field);
    };
    QJsonObject out;
    out.insert(u"seq"_s, line.seq);
    if (want(u"time"_s)) {
        out.insert(u"time"_s, rfc3339(line.timeMs));
        out.insert(u"timeMs"_s, line.timeMs);
    }
    const std::pair<QString, const QString *> texts[] = {
        {u"actor"_s, &line.actor},         {u"action"_s, &line.action},
        {u"object"_s, &line.object},       {u"outcome"_s, &line.outcome},
        {u"requestId"_s, &line.requestId}, {u"source"_s, &line.source},
        {u"prevHash"_s, &line.prevHash},   {u"hash"_s, &line.hash}};
    for (const auto &[key, value] : texts)
        if (want(key))
            out.insert(key, *value);
    if (want(u"detail"_s) && !line.detail.isEmpty()) {
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(line.detail.toUtf8(), &error);
        // Detail that is not a JSON object still goes out, as the text it is.
        if (error.error == QJsonParseError::NoError && doc.isObject())
            out.insert(u"detail"_s, doc.object());
        else
            out.insert(u"detail"_s, line.detail);
    }
    return out;
}

} // namespace pando::adapters::sinkkit
