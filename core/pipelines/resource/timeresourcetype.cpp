#include "core/pipelines/resource/timeresourcetype.h"

#include "adapters/api/goduration.h"
#include "adapters/api/resourceio.h"

#include "core/pipelines/resource/versions.h"

#include <QDateTime>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTimeZone>

namespace pando::core::pipelines {

using namespace Qt::StringLiterals;
using adapters::Version;
using adapters::VersionMetadata;

namespace {

constexpr qint64 DayMs = 24LL * 3600 * 1000;

struct TimeSource {
    qint64 intervalMs = 0;         // 0: one version per window
    std::optional<qint64> startMs; // time of day in `zone`
    std::optional<qint64> stopMs;
    QTimeZone zone = QTimeZone::utc();
    QList<int> days;             // Qt's day numbers (1 Monday … 7 Sunday); empty: every day
    bool initialVersion = false; // a first check finds a version whatever the window says
};

// Concourse reads a time of day in Go's layouts: "15:04", "1504", "3:04 PM", "3PM", "3 PM".
std::optional<qint64> parseTimeOfDay(const QString &text)
{
    static const QRegularExpression form(uR"(^(\d{1,2}):?(\d{2})?\s*([AaPp][Mm])?$)"_s);
    const QRegularExpressionMatch m = form.match(text.trimmed());
    if (!m.hasMatch())
        return std::nullopt;
    int hour = m.captured(1).toInt();
    const int minute = m.captured(2).isEmpty() ? 0 : m.captured(2).toInt();
    const QString half = m.captured(3).toLower();
    if (m.captured(2).isEmpty() && half.isEmpty())
        return std::nullopt; // a bare "9" is no time of day
    if (!half.isEmpty()) {
        if (hour < 1 || hour > 12)
            return std::nullopt;
        hour = hour % 12 + (half == u"pm" ? 12 : 0);
    }
    if (hour > 23 || minute > 59)
        return std::nullopt;
    return qint64(hour) * 3600'000 + qint64(minute) * 60'000;
}

std::optional<int> parseDay(const QString &text)
{
    static const QStringList names{u"monday"_s, u"tuesday"_s,  u"wednesday"_s, u"thursday"_s,
                                   u"friday"_s, u"saturday"_s, u"sunday"_s};
    const qsizetype i = names.indexOf(text.trimmed().toLower());
    if (i < 0)
        return std::nullopt;
    return int(i) + 1;
}

Result<TimeSource> parseSource(const QJsonObject &source)
{
    static const QStringList keys{u"interval"_s, u"start"_s, u"stop"_s, u"location"_s, u"days"_s, u"initial_version"_s};
    for (auto it = source.begin(); it != source.end(); ++it) {
        if (!keys.contains(it.key()))
            return fail(ErrorCode::Invalid,
                        u"unknown field \"%1\" (the time resource takes %2)"_s.arg(it.key(), keys.join(u", "_s)),
                        u"source."_s + it.key());
    }
    TimeSource out;
    const QJsonValue interval = source.value(u"interval"_s);
    const QJsonValue start = source.value(u"start"_s);
    const QJsonValue stop = source.value(u"stop"_s);
    if (start.isUndefined() != stop.isUndefined())
        return fail(ErrorCode::Invalid, u"start and stop go together"_s, u"source"_s);
    if (interval.isUndefined() && start.isUndefined())
        return fail(ErrorCode::Invalid, u"the time resource needs an interval such as \"1m\", or start and stop"_s,
                    u"source.interval"_s);
    if (!interval.isUndefined()) {
        const std::optional<qint64> ms =
            interval.isString() ? parseDurationMs(interval.toString()) : std::optional<qint64>();
        if (!ms || *ms < 1000)
            return fail(ErrorCode::Invalid,
                        u"\"%1\" is not a duration of at least 1 s (write e.g. \"30s\", \"5m\", \"1h30m\")"_s.arg(
                            interval.toVariant().toString()),
                        u"source.interval"_s);
        out.intervalMs = *ms;
    }
    if (!start.isUndefined()) {
        out.startMs = parseTimeOfDay(start.toString());
        out.stopMs = parseTimeOfDay(stop.toString());
        const QString forms = u"a time of day such as \"15:04\", \"1504\" or \"3:04 PM\""_s;
        if (!out.startMs)
            return fail(ErrorCode::Invalid, u"start must be %1"_s.arg(forms), u"source.start"_s);
        if (!out.stopMs)
            return fail(ErrorCode::Invalid, u"stop must be %1"_s.arg(forms), u"source.stop"_s);
    }
    if (const QJsonValue location = source.value(u"location"_s); !location.isUndefined()) {
        out.zone = QTimeZone(location.toString().toUtf8());
        if (!location.isString() || !out.zone.isValid())
            return fail(ErrorCode::Invalid,
                        u"\"%1\" is not a time zone name such as \"America/New_York\" or \"UTC\""_s.arg(
                            location.toVariant().toString()),
                        u"source.location"_s);
    }
    if (const QJsonValue days = source.value(u"days"_s); !days.isUndefined()) {
        if (!days.isArray())
            return fail(ErrorCode::Invalid, u"days is a list of day names such as [Monday, Friday]"_s,
                        u"source.days"_s);
        const QJsonArray list = days.toArray();
        for (qsizetype i = 0; i < list.size(); ++i) {
            const std::optional<int> day = parseDay(list.at(i).toString());
            if (!day)
                return fail(
                    ErrorCode::Invalid,
                    u"\"%1\" is not a day of the week (Monday … Sunday)"_s.arg(list.at(i).toVariant().toString()),
                    u"source.days[%1]"_s.arg(i));
            out.days << *day;
        }
    }
    out.initialVersion = source.value(u"initial_version"_s).toBool();
    return out;
}

// Where now falls for the source: whether new versions may be made, and since when the current
// window has been open (its start, or midnight of a day with no window) in ms since the epoch.
struct Now {
    bool open = true;
    qint64 windowStartMs = 0;
};

Now placeNow(const TimeSource &source, qint64 nowMs)
{
    const QDateTime local = QDateTime::fromMSecsSinceEpoch(nowMs, source.zone);
    const qint64 ofDay = local.time().msecsSinceStartOfDay();
    Now now;
    QDate openedOn = local.date();
    if (source.startMs && source.stopMs) {
        const qint64 start = *source.startMs;
        const qint64 stop = *source.stopMs;
        if (start <= stop) {
            now.open = ofDay >= start && ofDay < stop;
        } else { // wraps past midnight: after midnight it opened the day before
            now.open = ofDay >= start || ofDay < stop;
            if (ofDay < stop)
                openedOn = openedOn.addDays(-1);
        }
        now.windowStartMs =
            QDateTime(openedOn, QTime::fromMSecsSinceStartOfDay(int(start)), source.zone).toMSecsSinceEpoch();
    } else {
        now.windowStartMs = QDateTime(openedOn, QTime(0, 0), source.zone).toMSecsSinceEpoch();
    }
    if (!source.days.isEmpty() && !source.days.contains(local.date().dayOfWeek()))
        now.open = false;
    return now;
}

std::optional<qint64> parseVersionTime(const Version &version)
{
    const QDateTime time = QDateTime::fromString(version.value(u"time"_s), Qt::ISODateWithMs);
    if (!time.isValid())
        return std::nullopt;
    return time.toMSecsSinceEpoch();
}

} // namespace

std::optional<qint64> parseDurationMs(const QString &text)
{
    return adapters::parseGoDurationMs(text, qint64(366) * DayMs);
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
    const std::optional<qint64> last = parseVersionTime(from);
    if (!last && parsed->initialVersion)
        return QList<Version>{versionAt(now)};
    const Now place = placeNow(*parsed, now);
    if (!place.open)
        return QList<Version>{};
    if (parsed->intervalMs > 0) {
        if (last && now - *last < parsed->intervalMs)
            return QList<Version>{};
    } else if (last && *last >= place.windowStartMs) {
        return QList<Version>{}; // one version per window: this one has its version
    }
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
    if (Status ok = adapters::writeResourceFile(QDir(dir).filePath(u"input"_s), QJsonDocument(request).toJson()); !ok)
        return std::unexpected(ok.error());
    if (Status ok =
            adapters::writeResourceFile(QDir(dir).filePath(u"timestamp"_s), version.value(u"time"_s).toUtf8() + '\n');
        !ok)
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
