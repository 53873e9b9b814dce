#include "auditwiring.h"

#include "adapters/auditsink/https/httpssink.h"
#include "adapters/auditsink/syslog/syslogsink.h"
#include "core/engine/enginewiring.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <atomic>

namespace pando::wiring {

namespace {

// A sink as the stream sees it, plus what the API reports about it: its kind, and when its
// destination last took a batch (the durable cursor keeps only when it last changed).
class ReportedSink final : public adapters::AuditSink {
public:
    ReportedSink(std::shared_ptr<adapters::AuditSink> sink, QString kind, core::Clock &clock)
        : m_sink(std::move(sink)), m_kind(std::move(kind)), m_clock(clock)
    {}
    QString name() const override { return m_sink->name(); }
    const adapters::AuditSinkSettings &settings() const override { return m_sink->settings(); }
    Status deliver(const QList<adapters::AuditLine> &batch, const CancelToken &cancel) override
    {
        Status delivered = m_sink->deliver(batch, cancel);
        if (delivered)
            m_lastDeliveryMs = m_clock.nowMs();
        return delivered;
    }
    const QString &kind() const { return m_kind; }
    qint64 lastDeliveryMs() const { return m_lastDeliveryMs; }

private:
    std::shared_ptr<adapters::AuditSink> m_sink;
    QString m_kind;
    core::Clock &m_clock;
    std::atomic<qint64> m_lastDeliveryMs = 0;
};

// The sinks the file names, made but not started, each with its kind.
Result<QList<std::pair<QString, std::shared_ptr<adapters::AuditSink>>>> readSinks(const QString &configPath)
{
    QFile file(configPath);
    if (!file.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Invalid, QStringLiteral("cannot read %1: %2").arg(configPath, file.errorString()),
                    configPath);
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(file.read(qint64{1024} * 1024), &parseError);
    if (doc.isNull())
        return fail(ErrorCode::Invalid,
                    QStringLiteral("not JSON: %1 at offset %2").arg(parseError.errorString()).arg(parseError.offset),
                    configPath);
    const QJsonArray sinks = doc.object().value(QStringLiteral("sinks")).toArray();
    QList<std::pair<QString, std::shared_ptr<adapters::AuditSink>>> made;
    for (qsizetype i = 0; i < sinks.size(); ++i) {
        const QJsonObject config = sinks[i].toObject();
        const QString where = QStringLiteral("%1: sinks[%2]").arg(configPath).arg(i);
        const QString kind = config.value(QStringLiteral("kind")).toString();
        QJsonObject rest = config;
        rest.remove(QStringLiteral("kind"));
        if (kind == QLatin1String("syslog")) {
            auto parsed = adapters::syslog::SyslogSinkConfig::fromJson(rest, where);
            if (!parsed)
                return std::unexpected(parsed.error());
            made.append({kind, std::make_shared<adapters::syslog::SyslogSink>(*parsed)});
        } else if (kind == QLatin1String("https")) {
            auto parsed = adapters::https::HttpsSinkConfig::fromJson(rest, where);
            if (!parsed)
                return std::unexpected(parsed.error());
            made.append({kind, std::make_shared<adapters::https::HttpsSink>(*parsed)});
        } else {
            return fail(ErrorCode::Invalid,
                        QStringLiteral("kind must be \"syslog\" or \"https\", got \"%1\"").arg(kind),
                        where + QStringLiteral(".kind"));
        }
    }
    return made;
}

} // namespace

Status checkAuditSinks(const QString &configPath)
{
    auto sinks = readSinks(configPath);
    if (!sinks)
        return std::unexpected(sinks.error());
    return {};
}

Result<std::shared_ptr<core::AuditStream>> startAuditSinks(core::Engine &engine, const QString &configPath)
{
    auto sinks = readSinks(configPath);
    if (!sinks)
        return std::unexpected(sinks.error());
    auto stream =
        std::make_shared<core::AuditStream>(core::wiringParts(engine).database, core::wiringParts(engine).clock);
    QList<std::shared_ptr<ReportedSink>> reported;
    for (const auto &[kind, sink] : std::as_const(*sinks)) {
        auto wrapped = std::make_shared<ReportedSink>(sink, kind, core::wiringParts(engine).clock);
        if (auto added = stream->addSink(wrapped); !added)
            return std::unexpected(added.error());
        reported.append(wrapped);
    }
    stream->start();
    // GET /api/v1/audit/sinks; once the stream is gone there is nothing to report.
    engine.setAuditSinkReporter(
        [weak = std::weak_ptr<core::AuditStream>(stream), reported]() -> Result<QList<core::AuditSinkReport>> {
            QList<core::AuditSinkReport> list;
            const std::shared_ptr<core::AuditStream> s = weak.lock();
            if (!s)
                return list;
            for (const std::shared_ptr<ReportedSink> &sink : reported) {
                auto status = s->status(sink->name());
                if (!status)
                    return std::unexpected(status.error());
                list.append(core::AuditSinkReport{sink->name(), sink->kind(), status->cursor, status->newest,
                                                  status->lag, status->lastError, sink->lastDeliveryMs(),
                                                  status->updatedMs, status->failures});
            }
            return list;
        });
    // The stream is cued after each commit; a stream gone first is simply not cued.
    core::wiringParts(engine).audit.setCommittedHook([weak = std::weak_ptr<core::AuditStream>(stream)] {
        if (auto s = weak.lock())
            s->notify();
    });
    return stream;
}

} // namespace pando::wiring
