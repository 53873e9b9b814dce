#include "auditstream.h"

#include "core/audit/ocsf.h"
#include "core/auditstream/cursorstore.h"

#include <QMutexLocker>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

adapters::AuditLine lineOf(const AuditRecord &record)
{
    adapters::AuditLine line;
    line.seq = record.seq;
    line.timeMs = record.timeMs;
    line.actor = record.actor;
    line.action = record.action;
    line.object = record.object;
    line.outcome = record.outcome;
    line.detail = record.detail;
    line.requestId = record.requestId;
    line.source = record.source;
    line.prevHash = record.prevHash;
    line.hash = record.hash;
    return line;
}

} // namespace

AuditStream::AuditStream(Database &db, Clock &clock, AuditStreamOptions options)
    : m_db(db), m_clock(clock), m_options(options)
{}

AuditStream::~AuditStream()
{
    stop();
}

Status AuditStream::addSink(std::shared_ptr<adapters::AuditSink> sink)
{
    if (!sink)
        return fail(ErrorCode::Invalid, u"no sink given"_s, u"audit sinks"_s);
    const QString name = sink->name();
    if (name.isEmpty())
        return fail(ErrorCode::Invalid, u"an audit sink needs a name"_s, u"audit sinks"_s);
    if (sink->settings().batchSize < 1)
        return fail(ErrorCode::Invalid, u"batch size must be at least 1"_s, u"audit sinks."_s + name);
    QMutexLocker lock(&m_mutex);
    if (m_running)
        return fail(ErrorCode::Conflict, u"add sinks before the stream starts"_s, u"audit sinks."_s + name);
    if (m_sinks.contains(name))
        return fail(ErrorCode::Conflict, u"two audit sinks are named "_s + name + u": they would share a cursor"_s,
                    u"audit sinks"_s);
    auto entry = std::make_shared<Entry>();
    entry->sink = std::move(sink);
    m_sinks.insert(name, entry);
    return {};
}

void AuditStream::start()
{
    QMutexLocker lock(&m_mutex);
    if (m_running)
        return;
    m_running = true;
    m_cancel = CancelToken();
    for (const auto &entry : std::as_const(m_sinks)) {
        Entry *e = entry.get();
        CancelToken cancel = m_cancel;
        entry->worker.reset(QThread::create([this, e, cancel] { run(e, cancel); }));
        entry->worker->setObjectName(u"auditsink:"_s + e->sink->name());
        entry->worker->start();
    }
}

void AuditStream::stop()
{
    QList<std::shared_ptr<Entry>> entries;
    {
        QMutexLocker lock(&m_mutex);
        if (!m_running)
            return;
        m_running = false;
        m_cancel.cancel();
        m_wake.wakeAll();
        entries = m_sinks.values();
    }
    for (const auto &entry : entries) {
        if (entry->worker) {
            entry->worker->wait();
            entry->worker.reset();
        }
    }
}

void AuditStream::notify()
{
    QMutexLocker lock(&m_mutex);
    ++m_generation;
    m_wake.wakeAll();
}

AuditStream::Entry *AuditStream::entry(const QString &sink)
{
    QMutexLocker lock(&m_mutex);
    auto it = m_sinks.find(sink);
    return it == m_sinks.end() ? nullptr : it->get();
}

Result<int> AuditStream::pumpOnce(const QString &sinkName, const CancelToken &cancel)
{
    Entry *e = entry(sinkName);
    if (!e)
        return fail(ErrorCode::NotFound, u"no audit sink is named "_s + sinkName, u"audit sinks"_s);
    QMutexLocker deliverLock(&e->deliverMutex);
    adapters::AuditSink &sink = *e->sink;
    const adapters::AuditSinkSettings &settings = sink.settings();
    SinkCursorStore store(m_db);
    auto cursor = store.cursor(sinkName);
    if (!cursor)
        return std::unexpected(cursor.error());
    auto records = store.linesAfter(cursor->lastSeq, settings.batchSize);
    if (!records)
        return std::unexpected(records.error());
    if (records->isEmpty())
        return 0;
    QList<adapters::AuditLine> batch;
    const bool ocsf = settings.format == adapters::AuditSinkSettings::Format::Ocsf;
    for (const AuditRecord &record : std::as_const(*records)) {
        adapters::AuditLine line = lineOf(record);
        if (!settings.admits(line))
            continue;
        if (ocsf)
            line.ocsf = ocsfEvent(record);
        batch.append(std::move(line));
    }
    // Lines the filters refuse still move the cursor: they are passed over, not pending.
    if (!batch.isEmpty()) {
        auto delivered = sink.deliver(batch, cancel);
        if (!delivered) {
            const QString text = delivered.error().text();
            qWarning("auditstream: delivering lines %lld..%lld to sink %s failed: %s", batch.first().seq,
                     batch.last().seq, qPrintable(sinkName), qPrintable(text));
            // The error is durable before the failure counts, so whoever sees the count sees why.
            if (auto kept = store.setError(sinkName, text, m_clock.nowMs()); !kept)
                qWarning("auditstream: %s", qPrintable(kept.error().text()));
            {
                QMutexLocker lock(&m_mutex);
                ++e->failures;
            }
            return std::unexpected(delivered.error());
        }
    }
    // A crash between the delivery and this write sends the batch again: at least once.
    if (auto moved = store.advance(sinkName, records->last().seq, m_clock.nowMs()); !moved)
        return std::unexpected(moved.error());
    {
        QMutexLocker lock(&m_mutex);
        e->failures = 0;
    }
    return int(records->size());
}

void AuditStream::run(Entry *e, const CancelToken &cancel)
{
    const QString name = e->sink->name();
    Sleeper &sleeper = m_options.sleeper ? *m_options.sleeper : SystemSleeper::instance();
    qint64 delay = std::max<qint64>(m_options.retryDelayMs, 1);
    while (!cancel.isCancelled()) {
        quint64 seen = 0;
        {
            QMutexLocker lock(&m_mutex);
            seen = m_generation;
        }
        auto moved = pumpOnce(name, cancel);
        if (cancel.isCancelled())
            break;
        if (!moved) {
            sleeper.sleep(delay, cancel);
            delay = std::min(delay * 2, std::max(m_options.maxRetryDelayMs, delay));
            continue;
        }
        delay = std::max<qint64>(m_options.retryDelayMs, 1);
        if (*moved > 0)
            continue; // a full batch may mean more is waiting
        QMutexLocker lock(&m_mutex);
        if (m_generation == seen && !cancel.isCancelled())
            m_wake.wait(&m_mutex, QDeadlineTimer(std::max<qint64>(m_options.pollMs, 1)));
    }
}

Result<AuditSinkStatus> AuditStream::status(const QString &sinkName)
{
    Entry *e = entry(sinkName);
    if (!e)
        return fail(ErrorCode::NotFound, u"no audit sink is named "_s + sinkName, u"audit sinks"_s);
    SinkCursorStore store(m_db);
    auto cursor = store.cursor(sinkName);
    if (!cursor)
        return std::unexpected(cursor.error());
    auto newest = store.newestSeq();
    if (!newest)
        return std::unexpected(newest.error());
    AuditSinkStatus status;
    status.sink = sinkName;
    status.cursor = cursor->lastSeq;
    status.newest = *newest;
    status.lag = std::max<qint64>(0, *newest - cursor->lastSeq);
    status.lastError = cursor->lastError;
    status.updatedMs = cursor->updatedMs;
    QMutexLocker lock(&m_mutex);
    status.failures = e->failures;
    return status;
}

Result<qint64> AuditStream::lag(const QString &sink)
{
    auto s = status(sink);
    if (!s)
        return std::unexpected(s.error());
    return s->lag;
}

} // namespace pando::core
