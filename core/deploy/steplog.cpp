#include "core/deploy/steplog.h"
#include "core/state/repositories.h"

namespace pando::core {

namespace {
constexpr int BatchLines = 100;
constexpr qint64 BatchMs = 500;
} // namespace

StepLog::StepLog(Database &db, Clock &clock, QString deployId, int seq)
    : m_db(db), m_clock(clock), m_deployId(std::move(deployId)), m_seq(seq)
{
    m_sinceFlush.start();
}

StepLog::~StepLog()
{
    close();
}

void StepLog::close()
{
    if (!m_tail.empty()) {
        const qint64 left = m_added - HeadLines - qint64(m_tail.size());
        if (left > 0)
            m_held.append({m_seq, m_next++, m_clock.nowMs(), false, QStringLiteral("… %1 lines left out …").arg(left)});
        for (StepLogLine &line : m_tail) {
            line.line = m_next++;
            m_held.append(line);
        }
        m_tail.clear();
    }
    flush();
}

void StepLog::add(const QString &text, bool stderrStream)
{
    QString body = text;
    while (body.endsWith(QLatin1Char('\n')) || body.endsWith(QLatin1Char('\r')))
        body.chop(1);
    for (const QString &part : body.split(QLatin1Char('\n')))
        keep({m_seq, 0, m_clock.nowMs(), stderrStream, part});
    if (m_held.size() >= BatchLines || m_sinceFlush.elapsed() >= BatchMs)
        flush();
}

void StepLog::keep(StepLogLine line)
{
    ++m_added;
    if (m_added <= HeadLines) {
        line.line = m_next++;
        m_held.append(std::move(line));
        return;
    }
    m_tail.push_back(std::move(line));
    if (m_tail.size() > size_t(MaxLines - HeadLines - 1))
        m_tail.pop_front();
}

void StepLog::flush()
{
    m_sinceFlush.restart();
    if (m_held.isEmpty())
        return;
    if (auto written = DeployRepository(m_db).appendStepLog(m_deployId, m_held); !written)
        qWarning("deploy %s: keeping step %d's output failed: %s", qPrintable(m_deployId), m_seq,
                 qPrintable(written.error().text()));
    m_held.clear();
}

} // namespace pando::core
