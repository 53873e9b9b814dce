#pragma once
// The built-in `time` resource type, as Concourse's: a new version whenever `interval` has passed
// since the last one, or once per daily window, only on some days. Versions are {"time": RFC
// 3339 UTC}.
//
//   source: interval: "1m" | "1h30m" | "90s" (Go-style durations; at least 1 s); without it,
//             start and stop are required and each window gets one version
//           start, stop: a time of day ("15:04", "1504", "3:04 PM", "3PM") in `location` — both
//             or neither; the window may wrap past midnight
//           location: an IANA time zone name (default UTC)
//           days: [Monday, …] the days (in location) versions are made on; default every day
//           initial_version: true — a first check finds a version whatever the window says
//   in:     writes the version's time into `timestamp` and the request into `input` (JSON)
//   out:    a new version for the current time
//
// Time comes from a core::Clock so tests move it by hand. Threading: calls are stateless and
// may be made from any thread.

#include "adapters/api/resourcetype.h"
#include "core/common/clock.h"

#include <optional>

namespace pando::core::pipelines {

// "1h30m", "90s", "1.5h", "250ms" → milliseconds, as Go reads them (adapters/api/goduration.h), at
// most a year; nullopt when malformed.
std::optional<qint64> parseDurationMs(const QString &text);

class TimeResourceType final : public adapters::ResourceType {
public:
    explicit TimeResourceType(const Clock &clock = SystemClock::instance());

    QString name() const override { return QStringLiteral("time"); }
    Result<QList<adapters::Version>> check(const QJsonObject &source, const adapters::Version &from,
                                           const CancelToken &cancel, const adapters::LogSink &log) override;
    Result<adapters::VersionMetadata> in(const QJsonObject &source, const adapters::Version &version,
                                         const QJsonObject &params, const QString &dir,
                                         const adapters::BuildMetadata &build, const CancelToken &cancel,
                                         const adapters::LogSink &log) override;
    Result<adapters::VersionMetadata> out(const QJsonObject &source, const QJsonObject &params, const QString &workDir,
                                          const adapters::BuildMetadata &build, const CancelToken &cancel,
                                          const adapters::LogSink &log) override;

private:
    adapters::Version versionAt(qint64 ms) const;
    const Clock &m_clock;
};

} // namespace pando::core::pipelines
