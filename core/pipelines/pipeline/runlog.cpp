#include "runlog.h"

#include "core/pipelines/runview/runview.h"
#include "core/state/pipelinerepositories.h"

#include <QJsonDocument>

namespace pando::core::pipelines {

namespace {
constexpr qint64 BatchMs = 100;               // output reaches the store and followers this often
constexpr qsizetype MaxLineBytes = 16 * 1024; // a longer line is cut, so one line cannot eat memory
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
    : m_db(db), m_clock(clock), m_events(events), m_run(std::move(run)), m_redactor(std::move(redactor))
{}

RunLog::~RunLog()
{
    flush();
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
    const bool ended = step.status != QLatin1String("running");
    // A step's end is a moment followers care about: its output goes out with it. A start
    // waits for the next batch (at most BatchMs), so short steps cost one write, not two.
    if (ended)
        flush(step.stepId);
    QMutexLocker lock(&m_mutex);
    m_batch.append(RunEventRecord{m_run.id, 0, m_clock.nowMs(), step.stepId, QStringLiteral("step"),
                                  QString::fromUtf8(QJsonDocument(data).toJson(QJsonDocument::Compact))});
    if (m_batchStartedMs == 0)
        m_batchStartedMs = m_clock.nowMs();
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
    if (m_batchStartedMs == 0)
        m_batchStartedMs = m_clock.nowMs();
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
        if (m_batchStartedMs == 0)
            m_batchStartedMs = m_clock.nowMs();
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
            Event{QStringLiteral("run.event"),
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
