#include "auditwiring.h"

#include "adapters/auditsink/https/httpssink.h"
#include "adapters/auditsink/syslog/syslogsink.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

namespace pando::wiring {

Result<std::shared_ptr<core::AuditStream>> startAuditSinks(core::Engine &engine, const QString &configPath)
{
    QFile file(configPath);
    if (!file.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Invalid, QStringLiteral("cannot read %1: %2").arg(configPath, file.errorString()),
                    QStringLiteral("--audit-sinks"));
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(file.read(1024 * 1024), &parseError);
    if (doc.isNull())
        return fail(ErrorCode::Invalid, QStringLiteral("not JSON: %1 at offset %2").arg(parseError.errorString()).arg(parseError.offset),
                    configPath);
    const QJsonArray sinks = doc.object().value(QStringLiteral("sinks")).toArray();
    auto stream = std::make_shared<core::AuditStream>(engine.database(), engine.clock());
    for (qsizetype i = 0; i < sinks.size(); ++i) {
        const QJsonObject config = sinks[i].toObject();
        const QString where = QStringLiteral("%1: sinks[%2]").arg(configPath).arg(i);
        const QString kind = config.value(QStringLiteral("kind")).toString();
        QJsonObject rest = config;
        rest.remove(QStringLiteral("kind"));
        std::shared_ptr<adapters::AuditSink> sink;
        if (kind == QLatin1String("syslog")) {
            auto parsed = adapters::syslog::SyslogSinkConfig::fromJson(rest, where);
            if (!parsed)
                return std::unexpected(parsed.error());
            sink = std::make_shared<adapters::syslog::SyslogSink>(*parsed);
        } else if (kind == QLatin1String("https")) {
            auto parsed = adapters::https::HttpsSinkConfig::fromJson(rest, where);
            if (!parsed)
                return std::unexpected(parsed.error());
            sink = std::make_shared<adapters::https::HttpsSink>(*parsed);
        } else {
            return fail(ErrorCode::Invalid, QStringLiteral("kind must be \"syslog\" or \"https\", got \"%1\"").arg(kind),
                        where + QStringLiteral(".kind"));
        }
        if (auto added = stream->addSink(sink); !added)
            return std::unexpected(added.error());
    }
    stream->start();
    // The stream is cued after each commit; a stream gone first is simply not cued.
    engine.audit().setCommittedHook([weak = std::weak_ptr<core::AuditStream>(stream)] {
        if (auto s = weak.lock())
            s->notify();
    });
    return stream;
}

} // namespace pando::wiring
