#include "core/pipelines/resource/timeresourcetype.h"

#include "core/common/goduration.h"

#include "core/pipelines/resource/versions.h"

#include <QDateTime>
#include <QDir>
#include <QJsonDocument>
#include <QSaveFile>

namespace pando::core::pipelines {

using namespace Qt::StringLiterals;
using adapters::Version;
using adapters::VersionMetadata;

namespace {

constexpr qint64 DayMs = 24LL * 3600 * 1000;

struct TimeSource {
    qint64 intervalMs = 0;
    std::optional<qint64> startMs; // time of day, UTC
    std::optional<qint64> stopMs;
};

std::optional<qint64> parseTimeOfDay(const QString &text)
{
    const QTime time = QTime::fromString(text, u"HH:mm"_s);
    if (!time.isValid())
        return std::nullopt;
    return qint64(time.msecsSinceStartOfDay());
}

Result<TimeSource> parseSource(const QJsonObject &source)
{
    TimeSource out;
    const QJsonValue interval = source.value(u"interval"_s);
    if (!interval.isString())
        return fail(ErrorCode::Invalid, u"the time resource needs an interval such as \"1m\" or \"1h30m\""_s,
                    u"source.interval"_s);
    const std::optional<qint64> ms = parseDurationMs(interval.toString());
    if (!ms || *ms < 1000)
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a duration of at least 1 s (write e.g. \"30s\", \"5m\", \"1h30m\")"_s.arg(
                        interval.toString()),
                    u"source.interval"_s);
    out.intervalMs = *ms;
    const QJsonValue start = source.value(u"start"_s);
    const QJsonValue stop = source.value(u"stop"_s);
    if (start.isUndefined() != stop.isUndefined())
        return fail(ErrorCode::Invalid, u"start and stop go together"_s, u"source"_s);
    if (!start.isUndefined()) {
        out.startMs = parseTimeOfDay(start.toString());
        out.stopMs = parseTimeOfDay(stop.toString());
        if (!out.startMs)
            return fail(ErrorCode::Invalid, u"start must be a time of day as HH:MM (UTC)"_s, u"source.start"_s);
        if (!out.stopMs)
            return fail(ErrorCode::Invalid, u"stop must be a time of day as HH:MM (UTC)"_s, u"source.stop"_s);
    }
    for (auto it = source.begin(); it != source.end(); ++it) {
        if (it.key() != u"interval"_s && it.key() != u"start"_s && it.key() != u"stop"_s)
            return fail(ErrorCode::Invalid,
                        u"unknown field \"%1\" (the time resource takes interval, start, stop)"_s.arg(it.key()),
                        u"source."_s + it.key());
    }
    return out;
}

bool insideWindow(const TimeSource &source, qint64 nowMs)
{
    if (!source.startMs || !source.stopMs)
        return true;
    const qint64 start = *source.startMs;
    const qint64 stop = *source.stopMs;
    const qint64 ofDay = ((nowMs % DayMs) + DayMs) % DayMs;
    if (start <= stop)
        return ofDay >= start && ofDay < stop;
    return ofDay >= start || ofDay < stop; // wraps past midnight
}

std::optional<qint64> parseVersionTime(const Version &version)
{
    const QDateTime time = QDateTime::fromString(version.value(u"time"_s), Qt::ISODateWithMs);
    if (!time.isValid())
        return std::nullopt;
    return time.toMSecsSinceEpoch();
}

Status writeFile(const QString &path, const QByteArray &data)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(data) != data.size() || !file.commit())
        return fail(ErrorCode::Internal, u"cannot write: %1"_s.arg(file.errorString()), path);
    return {};
}

} // namespace

std::optional<qint64> parseDurationMs(const QString &text)
{
    return parseGoDurationMs(text, qint64(366) * DayMs);
}

TimeResourceType::TimeResourceType(const Clock &clock) : m_clock(clock)
{}

Version TimeResourceType::versionAt(qint64 ms) const
{
    return Version{{u"time"_s, QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs)}};
}

Result<QList<Version>> TimeResourceType::check(const QJsonObject &source, const Version &from, const CancelToken &,
                                               const adapters::LogSink &)
{
    Result<TimeSource> parsed = parseSource(source);
    if (!parsed)
        return std::unexpected(parsed.error());
    const qint64 now = m_clock.nowMs();
    if (!insideWindow(*parsed, now))
        return QList<Version>{};
    const std::optional<qint64> last = parseVersionTime(from);
    if (last && now - *last < parsed->intervalMs)
        return QList<Version>{};
    return QList<Version>{versionAt(now)};
}

Result<VersionMetadata> TimeResourceType::in(const QJsonObject &source, const Version &version,
                                             const QJsonObject &params, const QString &dir,
                                             const adapters::BuildMetadata &, const CancelToken &,
                                             const adapters::LogSink &)
{
    if (!parseVersionTime(version))
        return fail(ErrorCode::Invalid,
                    u"the version's time \"%1\" is not an RFC 3339 time"_s.arg(version.value(u"time"_s)),
                    u"version.time"_s);
    if (!QDir(dir).exists())
        return fail(ErrorCode::Invalid, u"the directory %1 does not exist"_s.arg(dir), u"dir"_s);
    const QJsonObject request{{u"source"_s, source}, {u"version"_s, versionToJson(version)}, {u"params"_s, params}};
    if (Status ok = writeFile(QDir(dir).filePath(u"input"_s), QJsonDocument(request).toJson()); !ok)
        return std::unexpected(ok.error());
    if (Status ok = writeFile(QDir(dir).filePath(u"timestamp"_s), version.value(u"time"_s).toUtf8() + '\n'); !ok)
        return std::unexpected(ok.error());
    return VersionMetadata{version, {{u"time"_s, version.value(u"time"_s)}}};
}

Result<VersionMetadata> TimeResourceType::out(const QJsonObject &, const QJsonObject &, const QString &,
                                              const adapters::BuildMetadata &, const CancelToken &,
                                              const adapters::LogSink &)
{
    const Version version = versionAt(m_clock.nowMs());
    return VersionMetadata{version, {{u"time"_s, version.value(u"time"_s)}}};
}

} // namespace pando::core::pipelines
