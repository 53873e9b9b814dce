#include "core/pipelines/resource/shellresourcetype.h"

#include "core/pipelines/resource/versions.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>

namespace pando::core::pipelines {

using namespace Qt::StringLiterals;
using adapters::OutputChunk;
using adapters::TaskSpec;
using adapters::Version;
using adapters::VersionMetadata;

namespace {

constexpr qsizetype QuoteBytes = 200;

// At most QuoteBytes of what a script printed, for error messages.
QString quote(const QByteArray &output)
{
    const QByteArray trimmed = output.trimmed();
    if (trimmed.isEmpty())
        return u"(nothing)"_s;
    QString text = QString::fromUtf8(trimmed.left(QuoteBytes));
    if (trimmed.size() > QuoteBytes)
        text += u"…"_s;
    return u"«"_s + text + u"»"_s;
}

QString jsonTypeName(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
        return u"null"_s;
    case QJsonValue::Bool:
        return u"a boolean"_s;
    case QJsonValue::Double:
        return u"a number"_s;
    case QJsonValue::String:
        return u"a string"_s;
    case QJsonValue::Array:
        return u"an array"_s;
    case QJsonValue::Object:
        return u"an object"_s;
    case QJsonValue::Undefined:
        break;
    }
    return u"nothing"_s;
}

// Splits stderr into lines for the LogSink, however the chunks are cut.
class LineSplitter {
public:
    explicit LineSplitter(const adapters::LogSink &sink) : m_sink(sink) {}
    void feed(const QByteArray &data)
    {
        m_pending += data;
        qsizetype start = 0;
        for (qsizetype nl = m_pending.indexOf('\n'); nl >= 0; nl = m_pending.indexOf('\n', start)) {
            emitLine(QByteArrayView(m_pending).sliced(start, nl - start));
            start = nl + 1;
        }
        m_pending.remove(0, start);
    }
    void finish()
    {
        if (!m_pending.isEmpty())
            emitLine(m_pending);
        m_pending.clear();
    }
    QString lastLine() const { return m_last; }

private:
    void emitLine(QByteArrayView line)
    {
        if (line.endsWith('\r'))
            line.chop(1);
        m_last = QString::fromUtf8(line);
        if (m_sink)
            m_sink(m_last);
    }
    const adapters::LogSink &m_sink;
    QByteArray m_pending;
    QString m_last;
};

} // namespace

ShellResourceType::ShellResourceType(QString name, adapters::TaskRunner &runner, QString image, ShellCommands commands)
    : m_name(std::move(name)), m_runner(runner), m_image(std::move(image)), m_commands(std::move(commands))
{}

QString ShellResourceType::stepName(Step step) const
{
    switch (step) {
    case Step::Check:
        return u"check"_s;
    case Step::In:
        return u"in"_s;
    case Step::Out:
        return u"out"_s;
    }
    return {};
}

Result<QByteArray> ShellResourceType::invoke(Step step, const QJsonObject &request, const QString &dir,
                                             const adapters::BuildMetadata &build, const CancelToken &cancel,
                                             const adapters::LogSink &log)
{
    const QString where = u"resource type %1, %2"_s.arg(m_name, stepName(step));
    const QStringList &command =
        step == Step::Check ? m_commands.check : (step == Step::In ? m_commands.in : m_commands.out);
    if (command.isEmpty())
        return fail(ErrorCode::Invalid, u"the resource type defines no %1 command"_s.arg(stepName(step)), where);

    TaskSpec spec;
    spec.image = m_image;
    spec.argv = command;
    spec.env = m_env;
    spec.env.insert(build);
    spec.stdinData = QJsonDocument(request).toJson(QJsonDocument::Compact) + '\n';
    spec.timeoutMs = step == Step::Check ? m_timeouts.checkMs : (step == Step::In ? m_timeouts.inMs : m_timeouts.outMs);

    // check has no directory of its own; host commands still need a work dir (and HOME).
    QTemporaryDir scratch;
    const bool inContainer = !m_image.isEmpty();
    if (step == Step::Check) {
        if (inContainer) {
            spec.workDir = u"/tmp"_s;
        } else {
            if (!scratch.isValid())
                return fail(ErrorCode::Internal,
                            u"cannot create a temporary directory: %1"_s.arg(scratch.errorString()), where);
            spec.workDir = scratch.path();
        }
    } else {
        const QString hostDir = QDir(dir).absolutePath();
        if (!QDir(hostDir).exists())
            return fail(ErrorCode::Invalid, u"the directory %1 does not exist"_s.arg(hostDir), where);
        if (inContainer) {
            const QString mounted = step == Step::In ? u"/tmp/build/get"_s : u"/tmp/build/put"_s;
            spec.mounts.append(adapters::Mount{hostDir, mounted, false});
            spec.workDir = mounted;
            spec.argv.append(mounted);
        } else {
            spec.workDir = hostDir;
            spec.argv.append(hostDir);
        }
    }

    QByteArray stdoutData;
    bool tooLarge = false;
    LineSplitter stderrLines(log);
    auto result = m_runner.run(spec, cancel, [&](const OutputChunk &chunk) {
        if (chunk.stderrStream) {
            stderrLines.feed(chunk.data);
            return;
        }
        if (stdoutData.size() + chunk.data.size() > m_maxOutput)
            tooLarge = true;
        else
            stdoutData += chunk.data;
    });
    stderrLines.finish();
    if (!result) {
        Error error = result.error();
        if (error.where.isEmpty())
            error.where = where;
        else
            error.where = where + u": "_s + error.where;
        return std::unexpected(error);
    }
    if (result->timedOut)
        return fail(ErrorCode::Timeout,
                    u"the %1 command did not finish within %2 s and was stopped"_s.arg(stepName(step))
                        .arg(spec.timeoutMs / 1000.0),
                    where, u"check the script for a hang, or raise the resource type's timeout"_s);
    if (result->exitCode != 0) {
        QString message = u"the %1 command exited with code %2"_s.arg(stepName(step)).arg(result->exitCode);
        if (!stderrLines.lastLine().isEmpty())
            message += u": "_s + stderrLines.lastLine().left(int(QuoteBytes));
        return fail(ErrorCode::Failed, message, where);
    }
    if (tooLarge)
        return fail(ErrorCode::TooLarge,
                    u"the %1 command printed more than %2 bytes"_s.arg(stepName(step)).arg(m_maxOutput), where);
    return stdoutData;
}

Result<QList<Version>> ShellResourceType::check(const QJsonObject &source, const Version &from,
                                                const CancelToken &cancel, const adapters::LogSink &log)
{
    QJsonObject request{{u"source"_s, source}};
    request.insert(u"version"_s, from.isEmpty() ? QJsonValue() : QJsonValue(versionToJson(from)));
    Result<QByteArray> output = invoke(Step::Check, request, {}, {}, cancel, log);
    if (!output)
        return std::unexpected(output.error());

    const QString where = u"resource type %1, check"_s.arg(m_name);
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(*output, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(ErrorCode::Failed,
                    u"check printed invalid JSON (%1 at byte %2): %3"_s.arg(parseError.errorString())
                        .arg(parseError.offset)
                        .arg(quote(*output)),
                    where);
    if (!doc.isArray())
        return fail(ErrorCode::Failed,
                    u"check must print a JSON array of versions, not an object: %1"_s.arg(quote(*output)), where);
    QList<Version> versions;
    const QJsonArray array = doc.array();
    for (qsizetype i = 0; i < array.size(); ++i) {
        const QJsonValue item = array.at(i);
        if (!item.isObject())
            return fail(ErrorCode::Failed,
                        u"check's version %1 is %2, not an object of strings: %3"_s.arg(i).arg(jsonTypeName(item),
                                                                                               quote(*output)),
                        where);
        Result<Version> version = versionFromJson(item, u"[%1]"_s.arg(i));
        if (!version)
            return fail(ErrorCode::Failed,
                        u"check's version %1: %2: %3"_s.arg(i).arg(version.error().message, quote(*output)), where);
        if (version->isEmpty())
            return fail(ErrorCode::Failed, u"check's version %1 is empty: %2"_s.arg(i).arg(quote(*output)), where);
        versions.append(*version);
    }
    return versionsAfter(versions, from);
}

Result<VersionMetadata> ShellResourceType::parseVersionMetadata(Step step, const QByteArray &output) const
{
    const QString where = u"resource type %1, %2"_s.arg(m_name, stepName(step));
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(output, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(ErrorCode::Failed,
                    u"%1 printed invalid JSON (%2 at byte %3): %4"_s.arg(stepName(step), parseError.errorString())
                        .arg(parseError.offset)
                        .arg(quote(output)),
                    where);
    if (!doc.isObject())
        return fail(ErrorCode::Failed,
                    u"%1 must print a JSON object {\"version\": ..., \"metadata\": [...]}: %2"_s.arg(stepName(step),
                                                                                                     quote(output)),
                    where);
    const QJsonObject object = doc.object();
    const QJsonValue versionValue = object.value(u"version"_s);
    if (!versionValue.isObject())
        return fail(ErrorCode::Failed,
                    u"%1's answer has no \"version\" object: %2"_s.arg(stepName(step), quote(output)), where);
    Result<Version> version = versionFromJson(versionValue, u"version"_s);
    if (!version)
        return fail(ErrorCode::Failed,
                    u"%1's version: %2: %3"_s.arg(stepName(step), version.error().message, quote(output)), where);
    if (version->isEmpty())
        return fail(ErrorCode::Failed, u"%1's version is empty: %2"_s.arg(stepName(step), quote(output)), where);
    VersionMetadata result;
    result.version = *version;
    const QJsonValue metadata = object.value(u"metadata"_s);
    if (!metadata.isUndefined() && !metadata.isNull()) {
        if (!metadata.isArray())
            return fail(
                ErrorCode::Failed,
                u"%1's \"metadata\" must be an array of {\"name\", \"value\"}: %2"_s.arg(stepName(step), quote(output)),
                where);
        const QJsonArray entries = metadata.toArray();
        for (qsizetype i = 0; i < entries.size(); ++i) {
            const QJsonObject entry = entries.at(i).toObject();
            const QJsonValue name = entry.value(u"name"_s);
            const QJsonValue value = entry.value(u"value"_s);
            if (!entries.at(i).isObject() || !name.isString() || !(value.isString() || value.isUndefined()))
                return fail(ErrorCode::Failed,
                            u"%1's metadata[%2] must be {\"name\": string, \"value\": string}: %3"_s.arg(stepName(step))
                                .arg(i)
                                .arg(quote(output)),
                            where);
            result.metadata.append({name.toString(), value.toString()});
        }
    }
    return result;
}

Result<VersionMetadata> ShellResourceType::in(const QJsonObject &source, const Version &version,
                                              const QJsonObject &params, const QString &dir,
                                              const adapters::BuildMetadata &build, const CancelToken &cancel,
                                              const adapters::LogSink &log)
{
    const QJsonObject request{{u"source"_s, source}, {u"version"_s, versionToJson(version)}, {u"params"_s, params}};
    Result<QByteArray> output = invoke(Step::In, request, dir, build, cancel, log);
    if (!output)
        return std::unexpected(output.error());
    return parseVersionMetadata(Step::In, *output);
}

Result<VersionMetadata> ShellResourceType::out(const QJsonObject &source, const QJsonObject &params,
                                               const QString &workDir, const adapters::BuildMetadata &build,
                                               const CancelToken &cancel, const adapters::LogSink &log)
{
    const QJsonObject request{{u"source"_s, source}, {u"params"_s, params}};
    Result<QByteArray> output = invoke(Step::Out, request, workDir, build, cancel, log);
    if (!output)
        return std::unexpected(output.error());
    return parseVersionMetadata(Step::Out, *output);
}

} // namespace pando::core::pipelines
