#include "runlog.h"

#include "core/pipelines/runview/runview.h"
#include "core/state/pipelinerepositories.h"

#include <QJsonDocument>

namespace pando::core::pipelines {

namespace {
constexpr qint64 BatchMs = 100;                 // output reaches the store and followers this often
constexpr qsizetype MaxLineBytes = 16LL * 1024; // a longer line is cut, so one line cannot eat memory
} // namespace

Redactor makeRedactor(const QStringList &secretValues)
{
    QList<QByteArray> values;
    for (const QString &v : secretValues)
        values.append(v.toUtf8());
    return Redactor(values);
}

QString maskText(const Redactor &redactor, const QString &text)
{
    return QString::fromUtf8(redactor.redact(text.toUtf8()));
}

RunLog::RunLog(Database &db, Clock &clock, EventBus &events, RunRecord run, Redactor redactor)
    : m_db(db), m_clock(clock), m_events(events), m_run(std::move(run)), m_redactor(std::move(redactor)),
      m_flusher([this] { flushOnDeadline(); })
{}

RunLog::~RunLog()
{
    {
        QMutexLocker lock(&m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    m_flusher.join();
    flush();
}

void RunLog::batchStarted()
{
    if (m_batchStartedMs != 0)
        return;
    m_batchStartedMs = m_clock.nowMs();
    // Real time, not the clock's: the deadline is about followers waiting, whatever a test's
    // clock says.
    m_deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(BatchMs);
    m_wake.notify_all();
}

void RunLog::flushOnDeadline()
{
    std::unique_lock<QMutex> lock(m_mutex);
    while (!m_stopping) {
        if (m_batchStartedMs == 0) {
            m_wake.wait(lock);
            continue;
        }
        if (m_wake.wait_until(lock, m_deadline) == std::cv_status::timeout && m_batchStartedMs != 0 &&
            std::chrono::steady_clock::now() >= m_deadline)
            writeBatch();
    }
}

int RunLog::nextSeq()
{
    QMutexLocker lock(&m_mutex);
    return m_seq++;
}

void RunLog::step(const RunStepRecord &step)
{
    if (auto saved = RunRepository(m_db).upsertStep(step); !saved)
        qWarning("run %s: recording step %s failed: %s", qPrintable(m_run.id), qPrintable(step.stepId),
                 qPrintable(saved.error().text()));
    QJsonObject data = toJson(step);
    data.insert(QStringLiteral("parent"), step.parentId);
    const bool ended = step.status != RunStepStatus::Running;
    // A step's end is a moment followers care about: its output goes out with it. A start
    // joins the batch (written within BatchMs), so short steps cost one write, not two.
    if (ended)
        flush(step.stepId);
    QMutexLocker lock(&m_mutex);
    m_batch.append(RunEventRecord{m_run.id, 0, m_clock.nowMs(), step.stepId, QStringLiteral("step"),
                                  QString::fromUtf8(QJsonDocument(data).toJson(QJsonDocument::Compact))});
    batchStarted();
    if (ended || m_clock.nowMs() - m_batchStartedMs >= BatchMs)
        writeBatch();
}

void RunLog::output(const QString &stepId, bool stderrStream, QByteArrayView data)
{
    QMutexLocker lock(&m_mutex);
    auto &out = m_outputs[stepId];
    if (!out)
        out =
            std::make_shared<StepOutput>(StepOutput{RedactingStream(m_redactor), RedactingStream(m_redactor), {}, {}});
    RedactingStream &stream = stderrStream ? out->stderrStream : out->stdoutStream;
    lines(stepId, stderrStream, stderrStream ? out->stderrLine : out->stdoutLine, stream.write(data), false);
    if (m_batchStartedMs > 0 && m_clock.nowMs() - m_batchStartedMs >= BatchMs)
        writeBatch();
}

void RunLog::note(const QString &stepId, const QString &text)
{
    QMutexLocker lock(&m_mutex);
    m_batch.append(RunEventRecord{
        m_run.id, 0, m_clock.nowMs(), stepId, QStringLiteral("output"),
        QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("stream"), QStringLiteral("pando")},
                                                    {QStringLiteral("text"), maskText(m_redactor, text)}})
                              .toJson(QJsonDocument::Compact))});
    batchStarted();
}

void RunLog::lines(const QString &stepId, bool stderrStream, QByteArray &partial, const QByteArray &masked, bool final)
{
    partial += masked;
    qsizetype start = 0;
    for (;;) {
        qsizetype newline = partial.indexOf('\n', start);
        const bool cut = newline < 0 && partial.size() - start > MaxLineBytes;
        if (newline < 0 && !cut && !(final && start < partial.size()))
            break;
        const qsizetype end = newline >= 0 ? newline : (cut ? start + MaxLineBytes : partial.size());
        QByteArray line = partial.mid(start, end - start);
        if (line.endsWith('\r'))
            line.chop(1);
        batchStarted();
        m_batch.append(RunEventRecord{
            m_run.id, 0, m_clock.nowMs(), stepId, QStringLiteral("output"),
            QString::fromUtf8(
                QJsonDocument(QJsonObject{{QStringLiteral("stream"),
                                           stderrStream ? QStringLiteral("stderr") : QStringLiteral("stdout")},
                                          {QStringLiteral("text"), QString::fromUtf8(line)}})
                    .toJson(QJsonDocument::Compact))});
        start = newline >= 0 ? end + 1 : end;
        if (start >= partial.size())
            break;
    }
    partial.remove(0, start);
}

void RunLog::flush(const QString &stepId)
{
    QMutexLocker lock(&m_mutex);
    for (auto it = m_outputs.begin(); it != m_outputs.end(); ++it) {
        if (!stepId.isEmpty() && it.key() != stepId)
            continue;
        StepOutput &out = **it;
        lines(it.key(), false, out.stdoutLine, out.stdoutStream.flush(), true);
        lines(it.key(), true, out.stderrLine, out.stderrStream.flush(), true);
    }
    writeBatch();
}

void RunLog::writeBatch()
{
    m_batchStartedMs = 0;
    if (m_batch.isEmpty())
        return;
    const QList<RunEventRecord> batch = std::exchange(m_batch, {});
    auto last = RunRepository(m_db).appendEvents(m_run.id, batch);
    if (!last) {
        qWarning("run %s: recording %lld events failed: %s", qPrintable(m_run.id), qlonglong(batch.size()),
                 qPrintable(last.error().text()));
        return;
    }
    qint64 seq = *last - batch.size();
    for (const RunEventRecord &e : batch) {
        m_events.publish(
            Event{EventType::RunEvent,
                  {},
                  {},
                  QJsonObject{{QStringLiteral("pipeline"), m_run.pipeline},
                              {QStringLiteral("run"), m_run.id},
                              {QStringLiteral("seq"), ++seq},
                              {QStringLiteral("step"), e.stepId},
                              {QStringLiteral("type"), e.type},
                              {QStringLiteral("data"), QJsonDocument::fromJson(e.dataJson.toUtf8()).object()}},
                  e.timeMs});
    }
}

} // namespace pando::core::pipelines
