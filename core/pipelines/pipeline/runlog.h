#pragma once
// What a run records as it goes: each step's state (the run_steps row, a "step" event) and each
// line of its output (an "output" event), masked for the secrets the run resolved, stored in
// order and published on the event bus as "run.event" for live followers.
//
// Threading: one RunLog per run, shared by the run's step threads (in_parallel): every method
// is thread-safe. Output is buffered per step and written in batches, at most BatchMs after the
// batch's first event: a thread of the log's own writes a batch that nothing else wrote by then,
// so a step that starts or prints a line and then goes quiet is seen at once, not when it ends.

#include "core/common/clock.h"
#include "core/events/eventbus.h"
#include "core/pipelines/redact/redactor.h"
#include "core/state/database.h"
#include "core/state/pipelinerecords.h"

#include <QHash>
#include <QMutex>
#include <chrono>
#include <condition_variable>
#include <thread>

namespace pando::core::pipelines {

Redactor makeRedactor(const QStringList &secretValues);
QString maskText(const Redactor &redactor, const QString &text);

class RunLog {
public:
    RunLog(Database &db, Clock &clock, EventBus &events, RunRecord run, Redactor redactor);
    ~RunLog();

    const RunRecord &run() const { return m_run; }
    Redactor redactor() const
    {
        QMutexLocker lock(&m_mutex);
        return m_redactor;
    }
    // Masks these values (all of them, the run's secrets included) in what is recorded from now
    // on: a load_var step's value that is not revealed.
    void maskFromNowOn(const QStringList &values)
    {
        QMutexLocker lock(&m_mutex);
        m_redactor = makeRedactor(values);
    }
    qint64 nowMs() const { return m_clock.nowMs(); }

    // Records the step's row as it is now and tells followers.
    void step(const RunStepRecord &step);
    // Raw output bytes of a step; masked and cut into lines here.
    void output(const QString &stepId, bool stderrStream, QByteArrayView data);
    // A line Pando itself says about a step ("fetching repo@abc123", "restored unchanged outputs").
    void note(const QString &stepId, const QString &text);
    // Writes what is buffered (a step's partial last line included).
    void flush(const QString &stepId = {});
    // The next seq for a new step row (plan order as steps start).
    int nextSeq();

private:
    struct StepOutput {
        RedactingStream stdoutStream, stderrStream;
        QByteArray stdoutLine, stderrLine; // a line not finished yet (already masked)
    };
    void append(const QString &stepId, const QString &type, const QJsonObject &data);
    void writeBatch();      // with m_mutex held
    void batchStarted();    // with m_mutex held: the first event of a batch sets its deadline
    void flushOnDeadline(); // the flusher thread's loop
    void lines(const QString &stepId, bool stderrStream, QByteArray &partial, const QByteArray &masked, bool final);

    Database &m_db;
    Clock &m_clock;
    EventBus &m_events;
    RunRecord m_run;
    Redactor m_redactor;
    mutable QMutex m_mutex;
    QHash<QString, std::shared_ptr<StepOutput>> m_outputs;
    QList<RunEventRecord> m_batch;
    qint64 m_batchStartedMs = 0;
    std::chrono::steady_clock::time_point m_deadline; // when the flusher writes the batch
    std::condition_variable_any m_wake;
    bool m_stopping = false;
    int m_seq = 0;
    std::thread m_flusher; // last: started when everything it uses exists
};

} // namespace pando::core::pipelines
