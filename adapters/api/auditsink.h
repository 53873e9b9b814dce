#pragma once
// The audit sink adapter interface: where the audit log is pushed so a SIEM keeps its own copy
// (a syslog collector, an HTTPS ingest endpoint). core/auditstream hands each sink the lines it
// has not yet delivered, in sequence order, from a durable cursor; a sink only has to put one
// batch on the wire and say whether the destination took it.
//
// Threading: deliver() is called from one thread at a time (the stream's worker for that sink)
// and may block for as long as the destination takes, looking at the cancel token while it waits.

#include "cancel.h"
#include "error.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace pando::adapters {

// One audit line as it leaves Pando. Mirrors core's AuditRecord field for field (adapters may not
// include core), plus the line's OCSF event when the sink asked for OCSF.
struct AuditLine {
    qint64 seq = 0; // 1, 2, 3, ... without gaps: the destination de-duplicates by it
    qint64 timeMs = 0;
    QString actor;
    QString action;
    QString object;
    QString outcome; // "success", "failure", "denied"
    QString detail;  // JSON text, may be empty
    QString requestId;
    QString source;
    QString prevHash;
    QString hash;
    QJsonObject ocsf; // filled by core only when settings().format is Ocsf
};

// What a sink wants sent and how. Core applies the filters (a line they refuse still moves the
// cursor, it is just not sent) and fills AuditLine::ocsf; the sink applies the field selection
// (adapters/kit/sinkkit does both halves' helpers).
struct AuditSinkSettings {
    enum class Format { Native, Ocsf };
    QStringList actionPrefixes; // empty: every action; else the action starts with one of them
    QStringList outcomes;       // empty: every outcome
    QStringList actors;         // empty: every actor; an entry ending in '*' is a prefix
    QStringList fields;         // empty: every field of the native line; "seq" is always sent
    Format format = Format::Native;
    int batchSize = 100; // lines per deliver() at most

    bool admits(const AuditLine &line) const
    {
        const auto anyPrefix = [](const QStringList &prefixes, const QString &value) {
            if (prefixes.isEmpty())
                return true;
            for (const QString &p : prefixes)
                if (value.startsWith(p))
                    return true;
            return false;
        };
        if (!anyPrefix(actionPrefixes, line.action))
            return false;
        if (!outcomes.isEmpty() && !outcomes.contains(line.outcome))
            return false;
        if (!actors.isEmpty()) {
            bool any = false;
            for (const QString &a : actors)
                any = any || (a.endsWith(QLatin1Char('*')) ? line.actor.startsWith(a.chopped(1)) : line.actor == a);
            if (!any)
                return false;
        }
        return true;
    }
};

class AuditSink {
public:
    virtual ~AuditSink() = default;
    // Unique within an install: it keys the sink's durable cursor.
    virtual QString name() const = 0;
    virtual const AuditSinkSettings &settings() const = 0;
    // Puts the batch (in seq order, never empty) on the wire. Success means the destination took
    // every line, so the cursor moves past them; any error means none count as delivered and the
    // same lines come again later (at least once: the destination de-duplicates by seq).
    // Unavailable/Timeout: the destination did not answer; Unauthorized/Failed: it refused.
    virtual Status deliver(const QList<AuditLine> &batch, const CancelToken &cancel) = 0;
};

} // namespace pando::adapters
